import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { clientOnlyRefusal } from '../../../nemeses/registry.ts';
import { loadReplayFile, type ReplayFile } from '../../../nemeses/schedule.ts';
import type { SshCliOptions } from '../../core/control/ssh-cli-options.ts';
import { abortReason, EXIT, errorMessage, UserError } from '../../core/util/errors.ts';
import { teeLogToFile } from '../../core/util/log.ts';
import { packageRoot, packageVersion } from '../../core/util/package-info.ts';
import { type ClientEndpoint, clientOnlyInventory } from '../../lib/clusters/client-only.ts';
import { leaseCommandCluster } from '../../lib/clusters/cluster-lease.ts';
import { type ConnectedCluster, connectCluster } from '../../lib/clusters/connect-cluster.ts';
import { armBinding, type TierName } from '../plan/binding.ts';
import { blocking, checkPlan } from '../plan/check-plan.ts';
import { type ExpectationEnv, expectationCell } from '../plan/expectation.ts';
import { type LoadedPlan, loadPlan } from '../plan/load.ts';
import { formatProblem } from '../plan/problem.ts';
import type { Plan, ResolvedScenario } from '../plan/schema.ts';
import { scalePlanTime, timeScaleText } from '../plan/time-scale.ts';
import type { SessionVerdict } from '../plan/verdict-states.ts';
import { writeScenarioFinding } from '../report/findings-markdown.ts';
import type { JunitInconclusiveAs } from '../report/junit.ts';
import { ControlLog, createSessionDir, DEBUG_LOG, SSH_LOG_DIR } from '../report/session-dir.ts';
import { SessionLogWriter } from '../report/session-log.ts';
import { type Finding, findingSchema, type SessionRecord } from '../report/types.ts';
import { writeSessionReports } from '../report/write-all.ts';
import { recordSessionIndex } from '../store/index-file.ts';
import { NOT_IN_SHARD, NOT_SELECTED } from '../verdict/aggregate.ts';
import { parseEvidence, type ScenarioEvidence, type ScenarioEvidenceInput } from '../verdict/evidence.ts';
import { decidePlan } from '../verdict/plan-verdicts.ts';
import { type EarlierBaseline, loadEarlierBaselines } from './baseline.ts';
import { missingFor, needsOf, probeNeeds, type ReconciledNeed, reconcile } from './capability-probe.ts';
import { dryRunRows } from './dry-run.ts';
import { findingFor } from './findings.ts';
import { installMissing } from './install.ts';
import { reproducerCommand } from './reproducer.ts';
import { runScenario } from './scenario-run.ts';
import { planCopyName, SESSION_FILE_VERSION, type SessionFile, writeSessionFile } from './session-file.ts';
import {
  planHash,
  type ShardSpec,
  seedBaseFromHash,
  shardUnits,
  type Unit,
  unitName,
  unitsOf,
} from './shards.ts';
import { discoverToolbox } from './toolbox.ts';

/**
 * `faultline run PLAN`: plan in, session directory and findings out (spec §6–§7). Validate the plan
 * (exit 3 when it must not run) → session dir → toolbox discovery → capability probe → each scenario in
 * plan order (arms as their own rows) → verdicts → reports. Ctrl-C or the global deadline stops new
 * work, lets the runner heal and close the history, and still writes the report for what ran.
 */
export interface RunPlanOptions {
  plan: string;
  /** Host-key flags (--accept-new-host-keys …); the inventory's policy otherwise. */
  ssh?: SshCliOptions;
  inventory?: string;
  local?: number;
  /** A client-only run (`--no-ssh --nodes host:port,…`): the database's endpoints by node. */
  endpoints?: Record<string, ClientEndpoint>;
  clusterName: string;
  keepCluster: boolean;
  /** With `local`: how long to wait for another run holding the cluster to finish, s (0: refuse at once). */
  clusterWaitS?: number;
  tier: TierName;
  scenarios: string[];
  out: string;
  sutRepo?: string;
  seed?: number;
  skip: string[];
  assume: string[];
  install: boolean;
  yes: boolean;
  onMissing: 'inconclusive' | 'substitute' | 'wait';
  deadlineS?: number;
  maxReductionRuns: number;
  replay?: string;
  /** `--shard K/N`: run this shard's share of the plan's (row, seed) units. */
  shard?: ShardSpec;
  /** `--dry-run`: print the units this run (or shard) would run, and stop before any cluster work. */
  dryRun?: boolean;
  /** `--baseline`: an earlier session (or its metrics/ directory) whose baselines RF9 compares with. */
  baseline?: string;
  /** How junit.xml reports INCONCLUSIVE / PARTIAL / NOT-RUN rows (default: error). */
  junitInconclusiveAs?: JunitInconclusiveAs;
  /** `--trust-plan-modules`: import the plan's own `module:` bindings (docs/security.md). */
  trustPlanModules?: boolean;
  /** `--trust-plan-commands`: run the plan's landing `command:` signals on the nodes (docs/security.md). */
  trustPlanCommands?: boolean;
  /** `--time-scale K`: the plan's durations stretched by K and its rate divided by K (time-scale.ts). */
  timeScale?: number;
  /** `--plugin` paths, as given (they go into the reproducer). */
  plugins?: string[];
  /** Where the run was started from: the reproducer's paths are relative to it (default: the cwd). */
  cwd?: string;
  /** Ask the operator (terminal on both ends, and no --yes). */
  interactive: boolean;
  print: (line: string) => void;
}

export type Reduction = { line: string; path: string; events: string[] };

export interface RunPlanResult {
  exitCode: number;
  sessionDir: string | null;
  verdict: SessionVerdict | null;
  rows: { scenario: string; verdict: string; expected: string; tier: string; reason: string }[];
  /** `--dry-run`: the units this run or shard would run. */
  units?: { row: string; seed: number; budgetS: number }[];
}

/**
 * Exit codes: DONE 0 (every row passed or met its expected verdict), FAIL 1 (a reproducible FAIL nobody
 * expected, or an unmet expectation), INCONCLUSIVE / DONE_WITH_CONCERNS / BLOCKED 2, plan must not run 3.
 */
export function exitCodeFor(verdict: SessionVerdict): number {
  if (verdict === 'DONE') return EXIT.valid;
  if (verdict === 'FAIL') return EXIT.invalid;
  return EXIT.unknown;
}

/** What the passes of one session share. */
interface Session {
  o: RunPlanOptions;
  plan: LoadedPlan;
  selected: ResolvedScenario[];
  replay: ReplayFile | undefined;
  /** Per row, the earlier session's baseline (`--baseline`); empty without it. */
  baselines: Map<string, EarlierBaseline>;
  sessionDir: string;
  record: SessionRecord;
  log: SessionLogWriter;
  /** Ctrl-C or the global deadline: no new scenario starts, a running one stops and heals. */
  abort: AbortController;
  reductions: Map<string, Reduction | null>;
  /** Set when literally nothing could run (the cluster was unreachable). */
  blocked?: string;
  /** What conditional expected verdicts can name about the cluster; unknown until connected. */
  env: ExpectationEnv;
  /** Seed i of a row is seedBase + i (the replay's seed, --seed, the plan's hash for a shard, or random). */
  seedBase: number;
  planHash: string;
  /** The (row, seed) units this session runs: a shard's share, or every unit. */
  units: Unit[];
}

/** What a session is started from: the plan as read and the work chosen, before any directory exists. */
type SessionInputs = Pick<
  Session,
  'o' | 'plan' | 'selected' | 'replay' | 'baselines' | 'seedBase' | 'planHash' | 'units'
>;

export async function runPlan(o: RunPlanOptions): Promise<RunPlanResult> {
  const planned = await loadPlan(o.plan, { trustPlanModules: o.trustPlanModules === true });
  // The plan is checked as written; the scale applies to how it runs, after.
  const problems = checkPlan(planned);
  if (blocking(problems)) {
    const errors = problems.filter((p) => p.severity === 'error');
    o.print(`${o.plan}: the plan must not run (${errors.length} error(s)); hand it back to design:`);
    for (const p of problems) o.print(`  ${formatProblem(o.plan, p)}`);
    return { exitCode: EXIT.planMustNotRun, sessionDir: null, verdict: null, rows: [] };
  }
  const plan = scalePlanTime(planned, o.timeScale ?? 1);
  const selected = selectScenarios(plan, o.scenarios);
  // Read first, before the inventory and any cluster work: a missing or malformed baseline file is bad input, named.
  const baselines = o.baseline
    ? loadEarlierBaselines(
        o.baseline,
        selected
          .flatMap((sc) => leafRows(plan, sc))
          .filter((row) => row.binding)
          .map((row) => row.id),
      )
    : new Map<string, EarlierBaseline>();
  // A client-only run reaches no node: a step that acts on the nodes is refused before anything runs.
  if (o.endpoints || (o.inventory && clientOnlyInventory(o.inventory)))
    for (const row of selected.flatMap((sc) => leafRows(plan, sc))) {
      const b = row.binding && (row.arm ? armBinding(row.binding, row.arm.surface) : row.binding);
      const why = b ? clientOnlyRefusal(b.nemesis) : null;
      if (why)
        throw new UserError(
          `${o.plan}: ${row.id}: ${why}; a client-only run (--no-ssh) allows only proxy steps on client links (leave it out with --scenario)`,
        );
    }
  // Each row's fault schedule built as the run builds it: a step the engine rejects is a plan error.
  const schedules = dryRunRows(
    o.plan,
    selected.flatMap((sc) => leafRows(plan, sc)),
    o.tier,
  );
  if (schedules.errors.length > 0) {
    o.print(
      `${o.plan}: the plan must not run (${schedules.errors.length} error(s)); hand it back to design:`,
    );
    for (const e of schedules.errors) o.print(`  ${e}`);
    return { exitCode: EXIT.planMustNotRun, sessionDir: null, verdict: null, rows: [] };
  }
  const replay = o.replay ? await loadReplayFile(o.replay) : undefined;
  if (replay && o.shard) throw new UserError('--replay runs one reduced schedule: it does not take --shard');
  const hash = planHash(readFileSync(o.plan));
  const seedBase =
    replay?.seed ?? o.seed ?? (o.shard || o.dryRun ? seedBaseFromHash(hash) : randomInt(1, 2 ** 31 - 1));
  const allUnits = unitsOf(
    selected.flatMap((sc) => leafRows(plan, sc)),
    o.tier,
    seedBase,
  );
  const units = o.shard ? shardUnits(allUnits, o.shard) : allUnits;
  if (o.dryRun) return dryRun(o, hash, seedBase, allUnits, units, schedules.lines);
  if (replay && !selected.some((s) => s.id === replay.scenario))
    throw new UserError(
      `--replay ${o.replay}: it is for ${replay.scenario}; add --scenario ${replay.scenario}`,
    );
  const releaseLease = await leaseCommandCluster(o, o.print);
  try {
    return await runSession({ o, plan, selected, replay, baselines, seedBase, planHash: hash, units });
  } finally {
    releaseLease();
  }
}

/** The session itself: its directory, the cluster, every unit, the verdicts and reports. */
async function runSession(inputs: SessionInputs): Promise<RunPlanResult> {
  const { o, plan, selected, units } = inputs;
  const session = await startSession(inputs);
  const untee = teeLogToFile(join(session.sessionDir, DEBUG_LOG));
  if (o.timeScale !== undefined && o.timeScale !== 1) {
    const k = o.timeScale;
    const line = `every duration in the plan ×${k} (runs, fault windows, op timeout, recovery budget), its rate ÷${k}: the load is not the plan's own`;
    session.o.print(`time scale ${k}×: ${line}`);
    await session.log.event('session', `time scale ${k}×`, line);
  }
  try {
    await discoverToolboxPass(session);
    const stopInterrupts = installInterrupts(session);
    let cluster: ConnectedCluster | null = null;
    try {
      if (units.length === 0) {
        // More shards than units: this one has nothing to run, and needs no cluster.
        o.print(`shard ${o.shard?.index}/${o.shard?.count}: no units fall to this shard; nothing to run`);
        for (const sc of selected)
          for (const row of leafRows(plan, sc))
            session.record.evidence.push(
              parseEvidence({ scenario: row.id, attempted: false, notRunReason: NOT_IN_SHARD }),
            );
      } else {
        cluster = await connectPass(session);
        if (cluster) await runScenarios(session, cluster);
      }
    } finally {
      stopInterrupts();
      await cluster?.close({ keepCluster: o.keepCluster });
    }
    return await finishSession(session);
  } finally {
    untee();
  }
}

/** The session directory and its record, with an empty timeline; the log is written on every event. */
async function startSession(inputs: SessionInputs): Promise<Session> {
  const { plan } = inputs;
  let { o } = inputs;
  const started = new Date();
  const sessionDir = await createSessionDir(o.out, plan.slug, started);
  // Everything printed from here on is kept in the session too (logs/control.log).
  const control = new ControlLog(sessionDir);
  const print = o.print;
  o = {
    ...o,
    print: (line) => {
      print(line);
      control.write(line);
    },
  };
  const record = newSessionRecord(plan, {
    startedAt: started.toISOString(),
    sessionDir,
    operator: operator('faultline run'),
  });
  o.print(`session: ${sessionDir}`);
  if (o.shard)
    o.print(
      `shard ${o.shard.index}/${o.shard.count} of plan sha256 ${inputs.planHash.slice(0, 12)}…: ${inputs.units.length} unit(s), base seed ${inputs.seedBase}`,
    );
  copyFileSync(o.plan, join(sessionDir, planCopyName(o.plan)));
  return {
    ...inputs,
    o,
    sessionDir,
    record,
    log: new SessionLogWriter(record),
    abort: new AbortController(),
    reductions: new Map(),
    env: { sharedClock: null },
  };
}

/** A session's record before anything ran: no evidence, every precondition unknown, the verdicts of nothing. */
export function newSessionRecord(
  plan: Plan,
  at: Pick<SessionRecord, 'startedAt' | 'sessionDir' | 'operator'>,
): SessionRecord {
  return {
    plan,
    ...at,
    commit: commitUnderTest(plan),
    toolbox: [],
    capabilities: [],
    preconditions: {
      clusterUp: null,
      observabilityLive: null,
      baselineCaptured: null,
      faultPlaneResponsive: null,
    },
    timeline: [],
    evidence: [],
    verdicts: decidePlan(plan, []),
    findings: [],
    artifacts: [],
  };
}

/** Toolbox discovery of --sut-repo, before any scenario. */
async function discoverToolboxPass({ o, record, log }: Session): Promise<void> {
  if (o.sutRepo) {
    const found = discoverToolbox(resolve(o.sutRepo));
    record.toolbox = found.map((t) => ({
      path: t.path,
      role: t.harness ? `${t.role} — existing harness, listed for reuse` : t.role,
    }));
    await log.event('session', 'toolbox discovered', `${found.length} item(s) in ${o.sutRepo}`);
  } else {
    record.toolbox = [{ path: '(none scanned)', role: 'no --sut-repo given' }];
    await log.event('session', 'toolbox discovery skipped', 'no --sut-repo given');
  }
}

/** Ctrl-C and the global deadline abort the session; a second Ctrl-C exits at once. Returns the undo. */
function installInterrupts({ o, abort }: Session): () => void {
  const onSigint = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) {
      o.print(
        'second interrupt: exiting now; if faults remain: faultline heal --ledger <run>/ledger.jsonl --inventory FILE',
      );
      process.exit(130);
    }
    o.print(
      'interrupt: stopping the workload, healing faults, writing the report for what ran (Ctrl-C again to quit now)',
    );
    abort.abort(new Error(`interrupted (${signal})`));
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  const deadline =
    o.deadlineS !== undefined
      ? setTimeout(() => {
          o.print(`deadline of ${o.deadlineS}s reached: stopping`);
          abort.abort(new Error(`the session deadline of ${o.deadlineS}s was reached`));
        }, o.deadlineS * 1000)
      : undefined;
  return () => {
    if (deadline) clearTimeout(deadline);
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  };
}

/** Reach the nodes; an unreachable cluster blocks the session (BLOCKED), other bad input is thrown. */
async function connectPass(s: Session): Promise<ConnectedCluster | null> {
  const { o, record, log } = s;
  const done = await log.starting('session', 'cluster connect', 30);
  try {
    const cluster = await connectCluster(
      {
        ...(o.inventory !== undefined && { inventory: o.inventory }),
        ...(o.local !== undefined && { local: o.local }),
        ...(o.endpoints && { endpoints: o.endpoints }),
        clusterName: o.clusterName,
      },
      {
        ...(o.ssh && { ssh: o.ssh }),
        remote: { logDir: join(s.sessionDir, SSH_LOG_DIR) },
        localLifetime: 'session',
        log: o.print,
      },
    );
    record.preconditions.clusterUp = true;
    s.env = { sharedClock: cluster.remote.nodes.some((n) => n.sharedKernelClock === true) };
    await done(`ok: ${cluster.description}`);
    return cluster;
  } catch (err) {
    record.preconditions.clusterUp = false;
    await done(`failed: ${errorMessage(err)}`);
    if (err instanceof UserError && !/ssh|connect|reach/i.test(err.message)) throw err;
    s.blocked = `the cluster could not be reached: ${errorMessage(err)}`;
    return null;
  }
}

/** The capability probe, then each selected scenario in plan order (arms as their own rows). */
async function runScenarios(s: Session, cluster: ConnectedCluster): Promise<void> {
  const { o, plan, record, log } = s;
  const reconciled = await capabilityProbe(o, plan, s.selected, cluster, log);
  record.capabilities = reconciled.map((r) => r.row);
  await log.event('session', 'capability matrix', `${reconciled.filter((r) => !r.present).length} missing`);
  const start = Date.now();
  for (const sc of s.selected) {
    for (const row of leafRows(plan, sc)) {
      const mine = s.units.filter((u) => u.row === row.id);
      if (mine.length === 0) {
        // Another shard runs this row's units.
        record.evidence.push(
          parseEvidence({ scenario: row.id, attempted: false, notRunReason: NOT_IN_SHARD }),
        );
        continue;
      }
      const ev = await runRow(s, cluster, row, reconciled, {
        seedBase: s.seedBase,
        start,
        ...(o.shard && { seedIndices: mine.map((u) => u.seedIndex) }),
      });
      record.evidence.push(parseEvidence(ev.evidence));
      s.reductions.set(row.id, ev.reduction);
    }
    record.verdicts = decidePlan(plan, record.evidence, undefined, s.env);
    refreshFindings(record, s.reductions);
    refreshPreconditions(record);
    await writeScenarioFinding(record, sc.id);
    const d = record.verdicts.rows.find((r) => r.scenario === sc.id);
    await log.event(sc.id, `verdict: ${d?.verdict ?? '?'}`, d?.reasons[0] ?? '');
    o.print(`${sc.id}: ${d?.verdict ?? '?'} — ${d?.reasons[0] ?? ''}`);
  }
}

type RowOutcome = { evidence: ScenarioEvidenceInput; reduction: Reduction | null };

/** One row (a scenario or an arm): not run, INCONCLUSIVE-env, or run within its own budget. */
async function runRow(
  s: Session,
  cluster: ConnectedCluster,
  row: ResolvedScenario,
  caps: readonly ReconciledNeed[],
  at: { seedBase: number; start: number; seedIndices?: number[] },
): Promise<RowOutcome> {
  const { o, log, abort } = s;
  const binding = row.binding && (row.arm ? armBinding(row.binding, row.arm.surface) : row.binding);
  const notRun = (reason: string): RowOutcome => ({
    evidence: {
      scenario: row.id,
      attempted: false,
      notRunReason: reason,
      stoppedEarly: abortReason(abort.signal),
    },
    reduction: null,
  });
  if (!binding) return notRun('no executable binding (faultline block)');
  if (abort.signal.aborted)
    return notRun(
      `not attempted: ${errorMessage(abort.signal.reason)} after ${((Date.now() - at.start) / 1000).toFixed(0)}s`,
    );
  const missing = missingFor(row.id, caps);
  if (missing.length > 0) {
    await log.event(row.id, 'INCONCLUSIVE-env', missing.map((m) => m.name).join(', '));
    return {
      evidence: {
        scenario: row.id,
        attempted: true,
        capabilitiesMissing: missing,
        substitutions: caps.filter((c) => c.substitute).map((c) => `${c.need.name}: ${c.substitute}`),
      },
      reduction: null,
    };
  }
  o.print(`${row.id} ${row.name}: running at ${o.tier} tier`);
  const budget = scenarioBudget(s, row);
  const r: RowOutcome = await runScenario({
    sc: row,
    binding,
    tier: o.tier,
    remote: cluster.remote,
    sessionDir: s.sessionDir,
    planPath: o.plan,
    seed: at.seedBase,
    ...(at.seedIndices && { seedIndices: at.seedIndices }),
    log,
    print: o.print,
    signal: budget.signal,
    maxReductionRuns: o.maxReductionRuns,
    reproducer: (fail) => reproducerCommand(o, fail, o.cwd),
    ...(s.replay && s.replay.scenario === row.id && { replay: s.replay }),
    harnessVersion: harnessVersion(),
    ...(s.baselines.has(row.id) && { earlierBaseline: s.baselines.get(row.id) }),
    ...(o.trustPlanCommands && { trustPlanCommands: true }),
  })
    .catch(async (err: unknown) => {
      await log.event(row.id, 'scenario error', errorMessage(err));
      return {
        evidence: {
          scenario: row.id,
          attempted: true,
          notes: [`the scenario errored before evidence was complete: ${errorMessage(err)}`],
        },
        reduction: null,
      };
    })
    .finally(budget.dispose);
  const subs = caps.filter((c) => c.substitute && c.need.usedBy.includes(row.id.split('/')[0] as string));
  if (subs.length > 0) r.evidence.substitutions = subs.map((c) => `${c.need.name}: ${c.substitute}`);
  return r;
}

/**
 * The scenario's own budget from its tier: every planned run, plus set-up slack; then it stops and gets
 * the verdict its evidence supports, never a hang. Follows the session's abort too.
 */
function scenarioBudget(s: Session, row: ResolvedScenario): { signal: AbortSignal; dispose: () => void } {
  const { o, abort } = s;
  const tierNums = row.tiers[o.tier] ?? row.tiers.smoke;
  const runs = (tierNums?.seeds ?? 1) + 3 + o.maxReductionRuns;
  const budgetS = ((tierNums?.durationS ?? 30) + 120) * runs;
  const scenarioAbort = new AbortController();
  const follow = () => scenarioAbort.abort(abort.signal.reason);
  abort.signal.addEventListener('abort', follow);
  const timer = setTimeout(() => {
    o.print(`${row.id}: scenario budget of ${budgetS}s spent: stopping it`);
    scenarioAbort.abort(new Error(`scenario budget of ${budgetS}s spent`));
  }, budgetS * 1000);
  return {
    signal: scenarioAbort.signal,
    dispose: () => {
      clearTimeout(timer);
      abort.signal.removeEventListener('abort', follow);
    },
  };
}

/** Verdicts for every row (not selected ones NOT-RUN), the reports, and the result the CLI prints. */
async function finishSession(s: Session): Promise<RunPlanResult> {
  const { record, log, o } = s;
  await decideSession(record, s.selected, s.reductions, log, { env: s.env, blocked: s.blocked });
  try {
    await writeSessionReports(record, {
      ...(o.junitInconclusiveAs && { junitInconclusiveAs: o.junitInconclusiveAs }),
    });
    writeSessionFile(s.sessionDir, sessionFileOf(s));
    // The store's summary line, so `sessions` and `serve` need not parse report.json again.
    const unindexed = recordSessionIndex(s.sessionDir);
    if (unindexed) o.print(unindexed);
  } catch (err) {
    const { renderReport } = await import('../report/findings-markdown.ts');
    o.print(`the report could not be written (${errorMessage(err)}); its text follows:`);
    o.print(renderReport(record));
  }
  return sessionResult(record);
}

/**
 * The verdicts of a session whose evidence is in: rows the selection left out get NOT-RUN "not
 * selected" evidence and, like another shard's rows, are not judged; then findings, preconditions,
 * the artifact list and the session verdict on the timeline. `faultline run` and `sessions merge` both
 * end here.
 */
export async function decideSession(
  record: SessionRecord,
  selected: readonly ResolvedScenario[],
  reductions: ReadonlyMap<string, Reduction | null>,
  log: SessionLogWriter,
  at: { env: ExpectationEnv; blocked: string | undefined },
): Promise<void> {
  const { plan } = record;
  const left = plan.resolved.filter((r) => !selected.some((x) => x.id === (r.parentId ?? r.id)));
  for (const r of left)
    record.evidence.push(parseEvidence({ scenario: r.id, attempted: false, notRunReason: NOT_SELECTED }));
  const unselected = new Set([
    ...left.map((r) => r.id),
    ...record.evidence.filter((e) => e.notRunReason === NOT_IN_SHARD).map((e) => e.scenario),
  ]);
  record.verdicts = decidePlan(plan, record.evidence, at.blocked, { ...at.env, unselected });
  refreshFindings(record, reductions);
  refreshPreconditions(record);
  record.artifacts = sessionArtifacts(record);
  await log.event(
    'session',
    `session verdict: ${record.verdicts.session.verdict}`,
    record.verdicts.session.headline,
  );
}

/** The exit code, the session and the verdict table's rows, as the CLI prints them. */
export function sessionResult(record: SessionRecord): RunPlanResult {
  return {
    exitCode: exitCodeFor(record.verdicts.session.verdict),
    sessionDir: record.sessionDir,
    verdict: record.verdicts.session.verdict,
    rows: record.verdicts.rows.map((d) => ({
      scenario: d.scenario,
      verdict: `${d.verdict}${d.release ? ' (release)' : ''}`,
      expected: expectationCell(d),
      tier: d.tierMet ?? '—',
      reason: d.reasons[0] ?? '',
    })),
  };
}

/** What `session.json` keeps of this session: enough to judge it again, alone or merged with shards. */
function sessionFileOf(s: Session): SessionFile {
  const { o, plan, record } = s;
  return {
    version: SESSION_FILE_VERSION,
    plan: { path: o.plan, copy: planCopyName(o.plan), slug: plan.slug, sha256: s.planHash },
    dir: s.sessionDir,
    tier: o.tier,
    seedBase: s.seedBase,
    timeScale: o.timeScale ?? 1,
    shard: o.shard ?? null,
    mergedFrom: [],
    units: s.units.map((u) => ({ row: u.row, seed: u.seed })),
    selected: s.selected.map((sc) => sc.id),
    startedAt: record.startedAt,
    endedAt: new Date().toISOString(),
    commit: record.commit,
    operator: record.operator,
    toolbox: record.toolbox,
    capabilities: record.capabilities,
    preconditions: record.preconditions,
    timeline: record.timeline,
    sharedClock: s.env.sharedClock,
    blocked: s.blocked ?? null,
    evidence: record.evidence,
    reductions: Object.fromEntries(s.reductions),
    findings: record.findings,
  };
}

/** `--dry-run`: the units, their seeds and budgets, and which shard runs each; nothing else happens. */
function dryRun(
  o: RunPlanOptions,
  hash: string,
  seedBase: number,
  all: readonly Unit[],
  mine: readonly Unit[],
  schedules: readonly string[],
): RunPlanResult {
  const shard = o.shard ?? { index: 1, count: 1 };
  const budget = (us: readonly Unit[]) => us.reduce((n, u) => n + u.costS, 0);
  o.print(
    `plan ${o.plan} (sha256 ${hash}), tier ${o.tier}, base seed ${seedBase}${timeScaleText(o.timeScale)}: ${all.length} unit(s), ${budget(all)}s budgeted`,
  );
  o.print(
    `shard ${shard.index}/${shard.count}: ${mine.length} unit(s), ${budget(mine)}s budgeted${o.seed === undefined ? ` (an unsharded run with --seed ${seedBase} runs the same seeds)` : ''}`,
  );
  for (const u of mine) o.print(`  ${unitName(u)} (${u.costS}s)`);
  for (const l of schedules) o.print(`  ${l}`);
  return {
    exitCode: EXIT.valid,
    sessionDir: null,
    verdict: null,
    rows: [],
    units: mine.map((u) => ({ row: u.row, seed: u.seed, budgetS: u.costS })),
  };
}

/** The session's reports, then every row's own artifacts. */
function sessionArtifacts(record: SessionRecord): SessionRecord['artifacts'] {
  return [
    { label: 'findings report (page)', path: 'findings/report.html' },
    { label: 'findings report', path: 'findings/report.md' },
    { label: 'report data', path: 'findings/report.json' },
    { label: 'JUnit', path: 'junit.xml' },
    ...record.evidence.flatMap((e) =>
      e.artifacts.map((a) => ({ label: `${e.scenario} ${a.label}`, path: a.path })),
    ),
  ];
}

export function selectScenarios(plan: LoadedPlan, wanted: readonly string[]): ResolvedScenario[] {
  const top = plan.resolved.filter((r) => r.parentId === null);
  if (wanted.length === 0) return top;
  const out: ResolvedScenario[] = [];
  for (const w of wanted) {
    const id = w.split('/')[0] as string;
    const hit = top.find((s) => s.id.toLowerCase() === id.toLowerCase());
    if (!hit)
      throw new UserError(
        `--scenario ${w}: no such scenario in ${plan.source.path} (have ${top.map((s) => s.id).join(', ')})`,
      );
    if (!out.includes(hit)) out.push(hit);
  }
  return plan.resolved.filter((r) => r.parentId === null && out.includes(r));
}

/** The rows a scenario runs as: its arms (each tagged with its id), or itself. */
export function leafRows(plan: LoadedPlan, sc: ResolvedScenario): ResolvedScenario[] {
  const arms = plan.resolved.filter((r) => r.parentId === sc.id);
  return arms.length > 0 ? arms : [sc];
}

function refreshFindings(
  record: SessionRecord,
  reductions: ReadonlyMap<string, { line: string; path: string; events: string[] } | null>,
): void {
  const out: Finding[] = [];
  for (const d of record.verdicts.rows) {
    if (!d.verdict.startsWith('FAIL-')) continue;
    const ev = record.evidence.find((e) => e.scenario === d.scenario);
    const sc = record.plan.resolved.find((r) => r.id === d.scenario);
    if (!ev || !sc) continue;
    out.push(findingSchema.parse(findingFor(out.length + 1, d, sc, ev, reductions.get(d.scenario) ?? null)));
  }
  record.findings = out;
}

/** Preconditions over the scenarios that ran: baseline captured, fault plane responsive. */
function refreshPreconditions(record: SessionRecord): void {
  const ran = record.evidence.filter((e: ScenarioEvidence) => e.attempted && e.throughput.length > 0);
  if (ran.length === 0) return;
  record.preconditions.baselineCaptured = ran.every((e) =>
    e.throughput.some((w) => !w.faultActive && w.ops > 0),
  );
  record.preconditions.observabilityLive = ran.every((e) => e.sutLog !== null && e.sutLog.filesScanned > 0);
  const withFaults = ran.filter((e) => e.faultsScheduled > 0);
  if (withFaults.length > 0)
    record.preconditions.faultPlaneResponsive = withFaults.every(
      (e) => !e.notes.some((n) => /fault plane (check failed|NOT responsive)/.test(n)),
    );
}

async function capabilityProbe(
  o: RunPlanOptions,
  plan: LoadedPlan,
  selected: readonly ResolvedScenario[],
  cluster: ConnectedCluster,
  log: SessionLogWriter,
): Promise<ReconciledNeed[]> {
  const needs = needsOf(
    plan,
    selected.map((s) => s.id),
  );
  const skip = new Set(o.skip);
  const assume = new Set(o.assume);
  if (o.interactive && needs.length > 0) {
    o.print('this plan needs:');
    for (const n of needs)
      o.print(
        `  - ${n.name}${n.versionFloor ? ` ≥ ${n.versionFloor}` : ''} (used by ${n.usedBy.join(', ')})`,
      );
    const answer = await ask(
      'which are NOT available or should be skipped? (comma-separated, Enter for none) ',
    );
    for (const s of answer
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean))
      skip.add(s);
  }
  const done = await log.starting('session', 'capability probe', 20);
  const probeOptions = { ...(o.trustPlanCommands && { trustPlanCommands: true }) };
  if (cluster.endpoints) {
    // Nothing can be probed or installed without SSH: the service at the endpoints is taken as given.
    const given = reconcile(
      needs,
      new Map(),
      { skip, assume: new Set(needs.map((n) => n.name)) },
      o.onMissing,
    );
    for (const r of given)
      if (r.present) r.row.source = 'client-only run (no SSH): not probed, taken as given with the endpoints';
    await done(`client-only: ${given.length} need(s) not probed`);
    return given;
  }
  let probed = await probeNeeds(cluster.remote, needs, probeOptions);
  let reconciled = reconcile(needs, probed, { skip, assume }, o.onMissing);
  const installable = reconciled.filter((r) => !r.present && r.install && !skip.has(r.need.name));
  for (const r of reconciled)
    if (!r.present && r.installRefused)
      o.print(`missing ${r.need.name}: install hint not run: ${r.installRefused}`);
  const installed = await installMissing(cluster.remote, installable, {
    install: o.install,
    yes: o.yes,
    ...(o.interactive && { ask }),
    print: o.print,
  });
  if (installed.ran.length > 0) {
    for (const name of installed.ran)
      await log.event(
        'session',
        `installed: ${name}`,
        installable.find((r) => r.need.name === name)?.install ?? '',
      );
    probed = await probeNeeds(cluster.remote, needs, probeOptions);
    reconciled = reconcile(needs, probed, { skip, assume }, o.onMissing);
  }
  if (o.onMissing === 'wait' && reconciled.some((r) => !r.present)) {
    if (o.interactive) {
      await ask('install what is missing on the nodes, then press Enter to probe again ');
      probed = await probeNeeds(cluster.remote, needs, probeOptions);
      reconciled = reconcile(needs, probed, { skip, assume }, o.onMissing);
    } else {
      for (const r of reconciled.filter((x) => !x.present))
        r.row.source += '; --on-missing wait needs a terminal: treated as inconclusive';
    }
  }
  await done(`${reconciled.filter((r) => r.present).length}/${reconciled.length} present`);
  return reconciled;
}

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/** The plan's "Change under test", else the faultline checkout's commit (the harness under test). */
export function commitUnderTest(plan: Pick<Plan, 'header'>): string {
  const change = plan.header.changeUnderTest;
  return change && !/^N\/A/i.test(change) ? change : `${change ?? 'N/A'} (harness ${harnessHead()})`;
}

/**
 * The harness itself (RF9 re-baselines when it changed): faultline's version and its checkout's
 * commit, never the commit of the system under test.
 */
export function harnessVersion(): string {
  return `faultline ${packageVersion} ${harnessHead()}`;
}

let head: string | undefined;
function harnessHead(): string {
  if (head !== undefined) return head;
  try {
    head = execFileSync('git', ['-C', packageRoot, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    head = 'unknown'; // not a git checkout (an installed package)
  }
  return head;
}

/** Who ran the command: the user, and the command (`faultline run`, `faultline test`). */
export function operator(command: string): string {
  try {
    return `${userInfo().username} (${command})`;
  } catch {
    return command;
  }
}
