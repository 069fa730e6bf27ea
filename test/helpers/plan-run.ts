import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

/**
 * A shipped plan run end to end on a fresh local cluster by `bin/faultline.js`, as the example
 * smokes (test/examples/) run them: the exit code, the report's rows by scenario id, the session
 * directory and the run's output. The cluster is taken down afterwards whatever happened.
 */
const root = new URL('../../', import.meta.url).pathname;
const bin = join(root, 'bin/faultline.js');
/** FAULTLINE_TEST_CLUSTER_PREFIX (e.g. `ci-`) keeps concurrent runs of a suite on distinct clusters. */
const clusterPrefix = process.env.FAULTLINE_TEST_CLUSTER_PREFIX ?? '';

export interface ScenarioRow {
  id: string;
  verdict: string;
  headline: string;
  oracleEvidence: string;
  expected: string[] | null;
  expectationMet: boolean | null;
  counts: { ops: number; ok: number };
}

export interface PlanRunOptions {
  scenarios?: string[];
  /** Nodes of the local cluster; 3 unless said. */
  nodes?: number;
  reductions: number;
  seed: number;
  /** How the plan's plugin is allowed in: `--trust-plan-modules` or `--plugin <path>` (code the operator vouches for). */
  pluginArgs: string[];
}

/** An example's npm dependencies, installed when the checkout's `npm ci` has not linked them. */
export async function ensureExampleDependencies(example: string, module: string): Promise<void> {
  const dir = join(root, 'examples', example);
  if (existsSync(join(dir, 'node_modules', module)) || existsSync(join(root, 'node_modules', module))) return;
  await execa('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir });
}

export async function runShippedPlan(plan: string, cluster: string, opts: PlanRunOptions) {
  const out = mkdtempSync(join(tmpdir(), 'fl-plan-'));
  const started = Date.now();
  const name = `${clusterPrefix}${cluster}`;
  try {
    const r = await execa(
      'node',
      [
        bin,
        '--log-level',
        'warn',
        'run',
        join(root, 'plans', plan),
        ...opts.pluginArgs,
        '--local',
        String(opts.nodes ?? 3),
        '--cluster-name',
        name,
        ...(opts.scenarios ? ['--scenario', opts.scenarios.join(',')] : []),
        '--tier',
        'smoke',
        '--seed',
        String(opts.seed),
        '--yes',
        '--max-reduction-runs',
        String(opts.reductions),
        '--out',
        out,
      ],
      { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
    );
    const session = /^report: (.+)\/findings\/report\.(?:md|html)\b/m.exec(r.stdout)?.[1];
    if (!session) throw new Error(`no report (exit ${r.exitCode}): ${r.stdout}\n${r.stderr}`);
    const json = JSON.parse(readFileSync(join(session, 'findings/report.json'), 'utf8')) as {
      scenarios: ScenarioRow[];
    };
    return {
      exitCode: r.exitCode,
      rows: new Map(json.scenarios.map((s) => [s.id, s])),
      session,
      output: `${r.stdout}\n${r.stderr}`,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await execa('node', [bin, 'cluster', 'down', '--name', name], {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    });
  }
}

export type PlanRun = Awaited<ReturnType<typeof runShippedPlan>>;

/** Every scenario of a whole-plan run met the verdict its plan declares, and `faultline run` exited 0. */
export function expectAllMet(t: import('ava').ExecutionContext, r: PlanRun): void {
  for (const row of r.rows.values()) {
    t.log(`${row.id} ${row.verdict} (expected ${row.expected?.join(' or ') ?? '—'}): ${row.headline}`);
    t.true(row.expectationMet === true, `${row.id}: ${row.verdict}, expected ${row.expected?.join(' or ')}`);
  }
  t.log(`whole plan in ${r.seconds}s`);
  t.is(r.exitCode, 0, r.output);
}
