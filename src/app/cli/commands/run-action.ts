import { appendFileSync } from 'node:fs';
import { parseDuration } from '../../../core/util/duration.ts';
import { errorMessage, UserError } from '../../../core/util/errors.ts';
import { pathName } from '../../../core/util/paths.ts';
import { endpointsFromList } from '../../../lib/clusters/client-only.ts';
import { TIER_NAMES, type TierName } from '../../plan/binding.ts';
import { parseTimeScale } from '../../plan/time-scale.ts';
import { JUNIT_INCONCLUSIVE_AS, type JunitInconclusiveAs } from '../../report/junit.ts';
import { ControlLog } from '../../report/session-dir.ts';
import { type RunPlanOptions, type RunPlanResult, runPlan } from '../../run/plan-run.ts';
import { parseShard } from '../../run/shards.ts';
import { nonNegativeInt } from '../int-flags.ts';
import { sshCliOptionsFrom } from '../ssh-flags.ts';

/** Flags → RunPlanOptions (bad values are UserErrors: exit 254), then the run and the verdict table. */
export function parseRunFlags(plan: string, f: Record<string, unknown>): RunPlanOptions {
  if (f.inventory && f.local) throw new UserError('--inventory and --local exclude each other');
  const clientOnly = f.ssh === false;
  if (clientOnly && (f.inventory || f.local))
    throw new UserError(
      `--no-ssh: give the endpoints with --nodes host:port,… (${f.local ? '--local builds nodes over SSH' : 'an inventory says ssh: false itself'})`,
    );
  if (clientOnly && f.nodes === undefined)
    throw new UserError('--no-ssh: name the database endpoints with --nodes host:port,…');
  if (!clientOnly && f.nodes !== undefined)
    throw new UserError('--nodes goes with --no-ssh (a client-only run)');
  if (!f.inventory && !f.local && !clientOnly && f.dryRun !== true)
    throw new UserError(
      'say where the nodes are: --inventory FILE, --local N or --no-ssh --nodes host:port,…',
    );
  const tier = String(f.tier ?? 'smoke');
  if (!(TIER_NAMES as readonly string[]).includes(tier))
    throw new UserError(`--tier: "${tier}" is not a tier (smoke, hardening, release)`);
  const onMissing = String(f.onMissing ?? 'inconclusive');
  if (!['inconclusive', 'substitute', 'wait'].includes(onMissing))
    throw new UserError(`--on-missing: "${onMissing}" (inconclusive, substitute or wait)`);
  const o: RunPlanOptions = {
    plan,
    clusterName: String(f.clusterName ?? 'faultline-run'),
    keepCluster: f.keepCluster === true,
    tier: tier as TierName,
    scenarios: (f.scenario as string[] | undefined) ?? [],
    out: String(f.out ?? './test-sessions/'),
    skip: (f.skip as string[] | undefined) ?? [],
    assume: (f.assume as string[] | undefined) ?? [],
    install: f.install === true,
    yes: f.yes === true,
    onMissing: onMissing as RunPlanOptions['onMissing'],
    maxReductionRuns: nonNegativeInt(f.maxReductionRuns ?? '6', '--max-reduction-runs'),
    interactive: f.yes !== true && process.stdin.isTTY === true && process.stderr.isTTY === true,
    print: (line) => process.stderr.write(`${line}\n`),
    ssh: sshCliOptionsFrom(f),
  };
  if (f.inventory) o.inventory = String(f.inventory);
  if (clientOnly) o.endpoints = endpointsFromList(String(f.nodes), '--nodes');
  if (f.local !== undefined) {
    const n = nonNegativeInt(f.local, '--local');
    if (n < 1) throw new UserError('--local: at least 1 node');
    o.local = n;
    pathName('cluster', o.clusterName);
  }
  if (f.clusterWait !== undefined) o.clusterWaitS = nonNegativeInt(f.clusterWait, '--cluster-wait');
  if (f.sutRepo) o.sutRepo = String(f.sutRepo);
  if (f.seed !== undefined) o.seed = nonNegativeInt(f.seed, '--seed');
  if (f.deadline !== undefined) o.deadlineS = parseDuration(String(f.deadline), '--deadline') / 1000;
  if (f.replay) o.replay = String(f.replay);
  if (f.shard !== undefined) o.shard = parseShard(String(f.shard));
  if (f.dryRun === true) o.dryRun = true;
  if (f.baseline !== undefined) o.baseline = String(f.baseline);
  if (f.junitInconclusive !== undefined) o.junitInconclusiveAs = junitAs(f.junitInconclusive);
  if (Array.isArray(f.plugin) && f.plugin.length > 0) o.plugins = f.plugin.map(String);
  if (f.trustPlanModules === true) o.trustPlanModules = true;
  if (f.trustPlanCommands === true) o.trustPlanCommands = true;
  if (f.timeScale !== undefined) o.timeScale = parseTimeScale(String(f.timeScale));
  return o;
}

function junitAs(v: unknown): JunitInconclusiveAs {
  const as = String(v ?? 'error');
  if (!(JUNIT_INCONCLUSIVE_AS as readonly string[]).includes(as))
    throw new UserError(`--junit-inconclusive: "${as}" (error or failure)`);
  return as as JunitInconclusiveAs;
}

export async function runCommand(plan: string, flags: Record<string, unknown>): Promise<number> {
  return report(await runPlan(parseRunFlags(plan, flags)), flags);
}

/** `faultline sessions merge`: the shards' sessions into one, reported like a run. */
export async function mergeCommand(dirs: string[], flags: Record<string, unknown>): Promise<number> {
  const { mergeSessions } = await import('../../run/merge.ts');
  return report(
    await mergeSessions({
      dirs,
      out: String(flags.out ?? './test-sessions/'),
      junitInconclusiveAs: junitAs(flags.junitInconclusive),
      print: (line) => process.stderr.write(`${line}\n`),
    }),
    flags,
  );
}

/** The verdict table (or JSON) on stdout, kept in the session, and the GitHub job summary. */
async function report(r: RunPlanResult, flags: Record<string, unknown>): Promise<number> {
  const out = flags.json === true ? `${JSON.stringify(r)}\n` : verdictTable(r);
  process.stdout.write(out);
  if (r.sessionDir) new ControlLog(r.sessionDir).write(out);
  const summaryFile = process.env.GITHUB_STEP_SUMMARY;
  if (summaryFile && r.sessionDir) {
    try {
      appendFileSync(summaryFile, stepSummary(r));
    } catch (err) {
      process.stderr.write(
        `faultline: $GITHUB_STEP_SUMMARY (${summaryFile}) could not be written: ${errorMessage(err)}\n`,
      );
    }
  }
  return r.exitCode;
}

/**
 * The Markdown a GitHub Actions job shows on its summary page ($GITHUB_STEP_SUMMARY): the session
 * verdict, one row per scenario with its expectation, and where the session is.
 */
export function stepSummary(r: RunPlanResult): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
  const mark = (x: RunPlanResult['rows'][number]) =>
    x.expected.endsWith('(UNMET)')
      ? '❌'
      : x.expected.endsWith('(met)') || x.verdict.startsWith('PASS-')
        ? '✅'
        : x.verdict.startsWith('FAIL-')
          ? '❌'
          : '⚠️';
  return [
    `### faultline: ${r.verdict ?? '—'} (exit ${r.exitCode})`,
    '',
    '| | Scenario | Verdict | Expected | Tier met | Why |',
    '|---|---|---|---|---|---|',
    ...r.rows.map(
      (x) =>
        `| ${mark(x)} | ${cell(x.scenario)} | ${cell(x.verdict)} | ${cell(x.expected)} | ${cell(x.tier)} | ${cell(x.reason)} |`,
    ),
    '',
    `Session: \`${r.sessionDir}\` (report: \`findings/report.md\`, JUnit: \`junit.xml\`)`,
    '',
    '',
  ].join('\n');
}

/** The verdict table and where the report is. */
export function verdictTable(r: RunPlanResult): string {
  if (r.sessionDir === null) return '';
  const head = ['Scenario', 'Verdict', 'Expected', 'Tier met', 'Why'];
  const rows = r.rows.map((x) => [
    x.scenario,
    x.verdict,
    x.expected,
    x.tier,
    // Never cut: a FAIL's reason is the one sentence that says what failed.
    x.reason,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(w[i] as number))).join('  ');
  return [
    '',
    fmt(head),
    fmt(w.map((n) => '-'.repeat(Math.min(n, 60)))),
    ...rows.map(fmt),
    '',
    `session verdict: ${r.verdict ?? '—'} (exit ${r.exitCode})`,
    `report: ${r.sessionDir}/findings/report.html (also report.md, report.json)`,
    '',
  ].join('\n');
}
