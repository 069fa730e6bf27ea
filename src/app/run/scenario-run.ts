import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { DeclaredSignal } from '../../../nemeses/declared-signal.ts';
import { type HealReport, sweepLeftovers } from '../../../nemeses/heal.ts';
import {
  checkStepTargets,
  type FaultWindow,
  faultWindows,
  type ReplayFile,
  windowSchedule,
} from '../../../nemeses/schedule.ts';
import type { Remote } from '../../core/control/types.ts';
import { logNoiseOf } from '../../core/database/capabilities.ts';
import { makeOutputDir, writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import { ClientOnlyRemote, checkEndpoints } from '../../lib/clusters/client-only.ts';
import { bindDatabase, type DatabaseBinding } from '../../lib/database-factory.ts';
import { resolveArtifactPaths } from '../../lib/databases/artifact.ts';
import { type Binding, bindingCheckers, type TierName } from '../plan/binding.ts';
import { parseLandingSignals } from '../plan/landing-signal.ts';
import { scenarioDirName } from '../plan/resolve.ts';
import type { ResolvedScenario } from '../plan/schema.ts';
import { DEFAULT_OP_TIMEOUT_MS } from '../plan/time-scale.ts';
import { gatePlanCommands } from '../plugin/trust.ts';
import { signalChange } from '../report/cells.ts';
import type { SessionLogWriter } from '../report/session-log.ts';
import { runTest } from '../test/test-run.ts';
import type { FaultEvidenceRecord, ScenarioEvidenceInput, SeedRun } from '../verdict/evidence.ts';
import type { EarlierBaseline } from './baseline.ts';
import { missingDbCapabilities } from './database-capabilities.ts';
import { reduceSchedule, reductionLine } from './reduce.ts';
import { measureRun, type RunMeasurement } from './run-evidence.ts';
import { type Run, scenarioEvidence, seedOutcome } from './scenario-evidence.ts';

/**
 * One scenario (or arm) of a session, in the order of spec §7 item 4: preconditions (cluster up, fault
 * plane responsive: a test rule applied, seen and removed) → workload with the faults on the plan's
 * schedule (limited to the tier's windows) → landing evidence from the nemeses → heal and recovery (the
 * runner) → oracles → evidence. A FAIL is re-run with the same seed, config and fault schedule, and a
 * reproducible one is reduced. Returns the evidence record; the caller decides the verdict.
 */
export interface ScenarioRunOptions {
  sc: ResolvedScenario;
  binding: Binding;
  tier: TierName;
  remote: Remote;
  sessionDir: string;
  planPath: string;
  /** The base seed: seed i of the tier is seed + i. */
  seed: number;
  /** Which of the tier's seeds to run (0-based; a shard's share); every one when absent. */
  seedIndices?: readonly number[];
  log: SessionLogWriter;
  print: (line: string) => void;
  signal: AbortSignal;
  maxReductionRuns: number;
  /** The command that re-runs a reproducible FAIL from its reduced schedule, as printed. */
  reproducer: (fail: { scenario: string; seed: number; replayPath: string }) => string;
  /** A reduced schedule to run instead of the plan's windows. */
  replay?: ReplayFile;
  harnessVersion: string;
  /** RF9's baseline from an earlier session (`--baseline`), read and validated before the run. */
  earlierBaseline?: EarlierBaseline;
  /** `--trust-plan-commands`: run the plan's landing `command:` signals (docs/security.md). */
  trustPlanCommands?: boolean;
}

export interface ScenarioRunOutcome {
  evidence: ScenarioEvidenceInput;
  /** Set for a reproducible FAIL: "N→k events over M re-runs" and the reduced schedule file. */
  reduction: { line: string; path: string; events: string[] } | null;
  failSeed: number | null;
}

const RECOVERY_S = 3;
/** Identical re-runs of a FAIL, when a re-run's checker could not decide. */
const MAX_RERUNS = 3;

/**
 * Why a re-run that found nothing is not an identical re-run of the FAIL (null when it is, or when it
 * reproduced): its declared checker could not decide (budget), or fewer of its fault windows landed.
 */
function notIdentical(first: RunMeasurement, again: RunMeasurement): string | null {
  if (again.violation) return null;
  if (again.oracles.some((x) => x.declared && x.valid === 'unknown'))
    return 'the declared checker could not decide';
  const landed = (m: RunMeasurement) => m.faults.filter((f) => f.landed).length;
  if (landed(again) < landed(first))
    return `only ${landed(again)} of ${landed(first)} fault window(s) landed`;
  return null;
}

/** What the passes of one scenario share. */
interface ScenarioState {
  o: ScenarioRunOptions;
  durationS: number;
  seedsWanted: number;
  windows: FaultWindow[];
  /** The scenario id as a directory name (arms: S5-api). */
  dirName: string;
  artifacts: string;
  nodes: string[];
  startedAt: string;
  notes: string[];
  faultPlaneOk: boolean;
  preNotes: string[];
  sut: DatabaseBinding;
}

type RunOnce = (seed: number, ws: readonly FaultWindow[], label: string) => Promise<Run>;

export async function runScenario(o: ScenarioRunOptions): Promise<ScenarioRunOutcome> {
  const prepared = await prepareScenario(o);
  if ('outcome' in prepared) return prepared.outcome;
  const s = prepared.state;
  const runOnce = runner(s);
  const { seeds, primary, runs, reduction, failSeed } = await runSeeds(s, runOnce);
  return { evidence: evidenceOf(s, primary, seeds, runs), reduction, failSeed };
}

/**
 * Tier numbers, fault windows, the artifacts directory, the preconditions (cluster up, fault plane
 * responsive), the SUT, and the checks that must pass before anything runs: every target names a node
 * of the cluster, and the database has every capability the faults need (else INCONCLUSIVE-env).
 */
async function prepareScenario(
  o: ScenarioRunOptions,
): Promise<{ state: ScenarioState } | { outcome: ScenarioRunOutcome }> {
  const { sc, binding } = o;
  const tierNums = sc.tiers[o.tier] ?? sc.tiers.smoke;
  const durationS = o.replay?.durationS ?? tierNums?.durationS ?? 30;
  const seedsWanted = o.replay ? 1 : (tierNums?.seeds ?? 1);
  const windows: FaultWindow[] = o.replay
    ? o.replay.windows
    : faultWindows(binding.nemesis, durationS, tierNums?.faultWindows ?? Number.POSITIVE_INFINITY);
  const dirName = scenarioDirName(sc.id);
  const artifacts = join(o.sessionDir, 'artifacts', dirName);
  makeOutputDir(artifacts);
  const nodes = o.remote.nodes.map((n) => n.name);
  const startedAt = new Date().toISOString();
  const inconclusive = (missing: { name: string; reason: string }[]) => ({
    outcome: {
      evidence: {
        scenario: sc.id,
        attempted: true,
        capabilitiesMissing: missing,
        startedAt,
        endedAt: new Date().toISOString(),
      },
      reduction: null,
      failSeed: null,
    },
  });
  await o.log.event(
    sc.id,
    'start',
    `tier ${o.tier}: ${nodes.length} nodes × ${durationS}s × ${windows.length} fault window(s) × ${seedsWanted} seed(s)`,
  );
  const pre = await preconditions(o.remote, windows);
  await o.log.event(sc.id, 'preconditions', pre.notes.join('; '));
  for (const n of pre.toPrint) o.print(`${sc.id} ${n}`);
  if (!pre.clusterUp) return inconclusive([{ name: 'cluster reachable', reason: pre.notes.join('; ') }]);
  if (pre.leftovers.length > 0)
    return inconclusive([{ name: 'nodes clean of earlier faults', reason: pre.leftovers.join('; ') }]);
  const sut = await bindDatabase(
    {
      db: binding.db,
      ...(binding.client && { client: binding.client }),
      workload: binding.workload,
      // A tarball or binary path in a plan is relative to the plan.
      dbOptions: resolveArtifactPaths(binding.dbOptions, dirname(resolve(o.planPath))),
      clientOptions: binding.clientOptions,
      where: `${sc.id}: binding`,
      // A client-only run: the database is the service at the endpoints (nothing set up or torn down).
      ...(o.remote instanceof ClientOnlyRemote && { endpoints: o.remote.endpoints }),
    },
    o.remote,
  );
  const steps = windows.map((w) => w.step);
  checkStepTargets(steps, nodes, `${sc.id}: binding`);
  const lacking = missingDbCapabilities(sut.db, steps, o.remote);
  if (lacking.length > 0) {
    await o.log.event(sc.id, 'INCONCLUSIVE-env', lacking.map((c) => `${c.name}: ${c.reason}`).join('; '));
    return inconclusive(lacking);
  }
  const notes = pre.faultPlane ? [] : [`fault plane check failed: ${pre.notes.join('; ')}`];
  return {
    state: {
      o,
      durationS,
      seedsWanted,
      windows,
      dirName,
      artifacts,
      nodes,
      startedAt,
      notes,
      faultPlaneOk: pre.faultPlane,
      preNotes: pre.notes,
      sut,
    },
  };
}

/** One run of the scenario (run, rerun or reduce) with these windows: runTest, measure, log. */
function runner(s: ScenarioState): RunOnce {
  const { o, durationS } = s;
  const { sc, binding } = o;
  let runSeq = 0;
  return async (seed, ws, label) => {
    const runDir = join(s.artifacts, `${String(++runSeq).padStart(2, '0')}-${label}-seed-${seed}`);
    const done = await o.log.starting(
      sc.id,
      `${label} (seed ${seed}, ${ws.length} fault window(s))`,
      durationS + RECOVERY_S + 20,
    );
    let last = 0;
    const result = await runTest({
      remote: o.remote,
      db: s.sut.db,
      makeClient: s.sut.makeClient,
      clientRoutable: s.sut.routable,
      workload: binding.workload,
      checkers: (w) => bindingCheckers(binding, w),
      faults: [],
      nemesisIntervalS: 0,
      ...(ws.length > 0 && { faultSchedule: windowSchedule(ws, durationS, seed) }),
      timeLimitS: durationS,
      concurrency: binding.concurrency,
      rate: binding.rate ?? 100,
      seed,
      outDir: runDir,
      opTimeoutMs: binding.opTimeout ?? DEFAULT_OP_TIMEOUT_MS,
      recoveryS: RECOVERY_S,
      signal: o.signal,
      declaredSignals: declaredSignalsOf(sc, o.trustPlanCommands === true),
      onProgress: (p) => {
        // --quiet (log level warn or above) drops progress lines; verdicts still print.
        if (p.elapsedS - last < 5 || !log().isLevelEnabled('info')) return;
        last = p.elapsedS;
        o.print(
          `  ${sc.id} ${label}: ${p.elapsedS.toFixed(0)}s ${p.stats.invoked} ops (${p.opsPerSec.toFixed(0)}/s) faults: ${p.faults.join('; ') || 'none'}`,
        );
      },
      meta: { plan: o.planPath, scenario: sc.id, tier: o.tier, dbOptions: binding.dbOptions },
    });
    const m = await measureRun(result.runDir, binding, durationS, logNoiseOf(s.sut.db));
    if (result.heal) await logQuiesce(o, result.heal);
    await logRun(o, m);
    await done(`${m.violation ? 'violation' : 'no violation'}, ${m.ops} ops`);
    return { runDir: result.runDir, m };
  };
}

/**
 * The landing signals the scenario's (or arm's) §7.M declares in a form the engine reads, its shell
 * commands refused unless the operator trusts the plan's commands (`gatePlanCommands`).
 */
function declaredSignalsOf(sc: ResolvedScenario, trustCommands: boolean): DeclaredSignal[] {
  return gatePlanCommands(
    parseLandingSignals(sc.model?.nemesisLandingEvidence ?? null).signals,
    trustCommands,
  );
}

/** The timeline lines of one run: each fault with its landing signals, then the oracles. */
export async function logRun(
  o: { log: SessionLogWriter; sc: { id: string } },
  m: RunMeasurement,
): Promise<void> {
  for (const f of m.faults)
    await o.log.event(
      o.sc.id,
      `fault injected: ${f.kind}${f.topology ? ` ${f.topology}` : f.action ? ` ${f.action}` : ''}`,
      `${f.id} on ${f.nodes.join(', ') || '—'} at ${f.startS.toFixed(1)}s: ${f.landed ? 'landed' : `NOT proven (${f.reason ?? 'no evidence'})`}; ${signalSummary(f.signals)}`,
    );
  const oracleLine = m.oracles.map((x) => `${x.checker} ${validWord(x.valid)}`).join(', ') || 'none ran';
  await o.log.event(o.sc.id, `oracle: ${oracleLine}`, m.oracles.map((x) => x.evidence).join(' | '));
}

interface SeedsOutcome {
  seeds: SeedRun[];
  primary: Run | null;
  /** Every seed's first run (not its re-runs), in seed order: each is judged. */
  runs: { seed: number; run: Run }[];
  reduction: ScenarioRunOutcome['reduction'];
  failSeed: number | null;
}

/** Seed after seed until the tier's count, or the first FAIL (re-run, then reduced when it recurs). */
async function runSeeds(s: ScenarioState, runOnce: RunOnce): Promise<SeedsOutcome> {
  const { o } = s;
  const out: SeedsOutcome = { seeds: [], primary: null, runs: [], reduction: null, failSeed: null };
  const indices = o.seedIndices ?? Array.from({ length: s.seedsWanted }, (_, i) => i);
  for (const i of indices) {
    if (o.signal.aborted) break;
    const seed = o.seed + i;
    let run: Run;
    try {
      run = await runOnce(seed, s.windows, 'run');
    } catch (err) {
      s.notes.push(`seed ${seed}: run failed: ${errorMessage(err)}`);
      await o.log.event(o.sc.id, 'run failed', errorMessage(err));
      out.seeds.push({
        seed,
        outcome: 'unknown',
        rerun: 'not-attempted',
        reproducer: null,
        error: errorMessage(err),
      });
      continue;
    }
    out.primary ??= run;
    out.runs.push({ seed, run });
    if (!run.m.violation) {
      out.seeds.push({ seed, outcome: seedOutcome(run.m), rerun: 'not-attempted', reproducer: null });
      continue;
    }
    out.primary = run;
    out.failSeed = seed;
    if (o.signal.aborted) {
      out.seeds.push({ seed, outcome: 'fail', rerun: 'not-attempted', reproducer: null });
      break;
    }
    const confirmed = await confirmFail(s, runOnce, run, seed);
    out.reduction = confirmed.reduction;
    out.seeds.push({ seed, outcome: 'fail', rerun: confirmed.rerun, reproducer: confirmed.reproducer });
    break;
  }
  return out;
}

/**
 * A FAIL runs again with the same seed, config and fault schedule. A re-run that found nothing but was
 * not identical (its checker could not decide, or its faults did not all land) says nothing either way:
 * it runs again, bounded. A reproduced FAIL is reduced.
 */
async function confirmFail(
  s: ScenarioState,
  runOnce: RunOnce,
  run: Run,
  seed: number,
): Promise<{
  rerun: SeedRun['rerun'];
  reproducer: string | null;
  reduction: ScenarioRunOutcome['reduction'];
}> {
  const { o } = s;
  const id = o.sc.id;
  await o.log.event(id, 'FAIL: re-running with the same seed, config and fault schedule', run.runDir);
  let again: Run | null = null;
  let why: string | null = null;
  for (let attempt = 1; attempt <= MAX_RERUNS && !o.signal.aborted; attempt++) {
    again = await runOnce(seed, s.windows, 'rerun').catch((err) => {
      s.notes.push(`re-run failed: ${errorMessage(err)}`);
      return null;
    });
    why = again ? notIdentical(run.m, again.m) : 'the re-run failed';
    if (!why) break;
    s.notes.push(`re-run ${attempt}: ${why}; ${attempt < MAX_RERUNS ? 'running again' : 'giving up'}`);
    await o.log.event(id, 're-run not identical', `${why}; ${again?.runDir ?? ''}`);
  }
  const reproduced = again?.m.violation === true;
  const rerun = why ? 'not-attempted' : reproduced ? 'reproduced' : 'not-reproduced';
  await o.log.event(
    id,
    reproduced
      ? 'FAIL reproduced'
      : rerun === 'not-attempted'
        ? 'FAIL re-run inconclusive'
        : 'FAIL not reproduced',
    again?.runDir ?? '',
  );
  if (!reproduced) return { rerun, reproducer: null, reduction: null };
  const reduction = await reduce(o, seed, s.windows, s.durationS, runOnce, s.artifacts);
  await o.log.event(id, `reduced: ${reduction.line}`, reduction.path);
  return {
    rerun,
    reproducer: o.reproducer({ scenario: id, seed, replayPath: reduction.path }),
    reduction,
  };
}

/** The evidence record of the scenario (./scenario-evidence.ts), from the state its passes share. */
function evidenceOf(
  s: ScenarioState,
  primary: Run | null,
  seeds: SeedRun[],
  runs: SeedsOutcome['runs'],
): ScenarioEvidenceInput {
  const { o } = s;
  return scenarioEvidence(
    {
      scenario: o.sc.id,
      dirName: s.dirName,
      sessionDir: o.sessionDir,
      nodes: s.nodes.length,
      db: s.sut.db,
      hiddenRetries: s.sut.hiddenRetries,
      rate: o.binding.rate ?? null,
      harnessVersion: o.harnessVersion,
      earlierBaseline: o.earlierBaseline,
      signal: o.signal,
      startedAt: s.startedAt,
      faultsScheduled: s.windows.length,
      faultPlaneOk: s.faultPlaneOk,
      notes: s.notes,
      preNotes: s.preNotes,
      copyNodeLogs: true,
    },
    primary,
    seeds,
    runs,
  );
}

/**
 * Quiescence after heal: the runner healed every fault and swept every node with every nemesis used
 * (rules, qdiscs, paused pids, offsets). What was left behind was undone and is named on the timeline.
 */
async function logQuiesce(o: ScenarioRunOptions, heal: HealReport): Promise<void> {
  const left = [
    ...heal.faults
      .filter((f) => !f.healed)
      .map((f) => `${f.id} (${f.kind}): not healed${f.error ? `: ${f.error}` : ''}`),
    ...heal.sweep
      .filter((x) => !x.clean || x.fixed.length > 0 || x.error)
      .map(
        (x) =>
          `${x.kind} on ${x.node}: ${x.error ? `sweep failed (${x.error})` : [...x.fixed, ...x.found].join(', ')}`,
      ),
  ];
  const kinds = [...new Set(heal.sweep.map((x) => x.kind))];
  await o.log.event(
    o.sc.id,
    left.length === 0
      ? 'quiesce: all faults healed and verified clean'
      : 'quiesce: leftovers found and undone',
    left.length === 0 ? `${kinds.join(', ')} swept on ${o.remote.nodes.length} nodes` : left.join('; '),
  );
}

/** The landing signals, injector side first: "injector n1 FAULTLINE DROP packets 0→19 ✓; victim …". */
function signalSummary(signals: readonly FaultEvidenceRecord['signals'][number][]): string {
  if (signals.length === 0) return 'no landing signal';
  return [...signals]
    .sort((a, b) => (a.side === b.side ? 0 : a.side === 'injector' ? -1 : 1))
    .slice(0, 4)
    .map((x) => `${x.side} ${x.node} ${x.signal}${signalChange(x)} ${x.landed ? '✓' : '✗'}`.slice(0, 200))
    .join('; ');
}

function validWord(v: unknown): string {
  return v === true ? 'valid' : v === false ? 'INVALID' : 'unknown';
}

interface Preconditions {
  clusterUp: boolean;
  faultPlane: boolean;
  /** Every finding, in order, for the session log and the verdict's reasons. */
  notes: string[];
  /** Faults an earlier run left that could not be undone. */
  leftovers: string[];
  /** The findings the run prints as it goes: what the sweep undid or could not undo. */
  toPrint: string[];
}

/**
 * Cluster reachable on every node; no fault an earlier run left in force (the sweep undoes what it
 * finds; what it cannot undo keeps the scenario from running); for network faults, a FAULTLINE test chain
 * created, listed, removed.
 */
async function preconditions(remote: Remote, windows: readonly FaultWindow[]): Promise<Preconditions> {
  const nodes = remote.nodes.map((n) => n.name);
  const notes: string[] = [];
  const leftovers: string[] = [];
  // What the sweep found is printed as well as kept: a user should see that nodes were not clean.
  const toPrint: string[] = [];
  if (remote instanceof ClientOnlyRemote) {
    // No SSH: the cluster is up when every endpoint takes a TCP connection; the proxy needs nothing on a node.
    const rows = await checkEndpoints(remote.endpoints);
    const down = rows.filter((r) => !r.reachable);
    if (down.length > 0) {
      notes.push(`unreachable: ${down.map((d) => `${d.node} ${d.endpoint} (${d.error})`).join(', ')}`);
      return { clusterUp: false, faultPlane: false, notes, leftovers, toPrint };
    }
    notes.push(
      `client-only: ${rows.length} endpoint(s) take a TCP connection; fault plane: the proxy (control node)`,
    );
    return { clusterUp: true, faultPlane: true, notes, leftovers, toPrint };
  }
  const up = await remote.onNodes(nodes, (n) => remote.exec(n, 'true', { timeoutMs: 15_000 }));
  const down = up.filter((r) => !r.ok);
  if (down.length > 0) {
    notes.push(`unreachable: ${down.map((d) => `${d.node} (${errorMessage(d.error)})`).join(', ')}`);
    return { clusterUp: false, faultPlane: false, notes, leftovers, toPrint };
  }
  notes.push(`cluster up (${nodes.length} nodes answer)`);
  const swept = await sweepLeftovers(remote, nodes);
  for (const u of swept.undone) toPrint.push(`left by an earlier run: ${u}`);
  if (!swept.clean) {
    leftovers.push(...swept.left);
    toPrint.push(`NOT clean of an earlier run's faults: ${swept.left.join('; ')}`);
    notes.push(...toPrint);
    return { clusterUp: true, faultPlane: false, notes, leftovers, toPrint };
  }
  notes.push(...toPrint);
  if (swept.undone.length === 0) notes.push('no fault left by an earlier run');
  if (!windows.some((w) => w.step.kind === 'partition')) {
    notes.push('fault plane: no network fault in this run');
    return { clusterUp: true, faultPlane: true, notes, leftovers, toPrint };
  }
  const chain = `FLPROBE${process.pid % 100000}`;
  const script = `PATH="$PATH:/usr/sbin:/sbin"; iptables -w -N ${chain} && iptables -w -A ${chain} -j RETURN && iptables -w -S ${chain} | grep -c RETURN; iptables -w -F ${chain}; iptables -w -X ${chain}; ! iptables -w -S ${chain} >/dev/null 2>&1`;
  const res = await remote.onNodes(nodes, (n) => remote.exec(n, script, { sudo: true, timeoutMs: 15_000 }));
  const bad = res.filter((r) => !r.ok);
  if (bad.length > 0) {
    notes.push(
      `fault plane NOT responsive on ${bad.map((b) => `${b.node} (${errorMessage(b.error)})`).join(', ')}`,
    );
    return { clusterUp: true, faultPlane: false, notes, leftovers, toPrint };
  }
  notes.push(
    `fault plane responsive: test chain ${chain} applied, seen and removed on ${nodes.length} nodes`,
  );
  return { clusterUp: true, faultPlane: true, notes, leftovers, toPrint };
}

async function reduce(
  o: ScenarioRunOptions,
  seed: number,
  windows: readonly FaultWindow[],
  durationS: number,
  runOnce: (
    seed: number,
    ws: readonly FaultWindow[],
    label: string,
  ) => Promise<{ runDir: string; m: RunMeasurement }>,
  artifacts: string,
): Promise<{ line: string; path: string; events: string[] }> {
  let lastReproducing: string | null = null;
  const r = await reduceSchedule(
    [...windows],
    async (candidate) => {
      if (o.signal.aborted) return false;
      const run = await runOnce(seed, candidate, 'reduce').catch(() => null);
      if (run?.m.violation) lastReproducing = run.runDir;
      return run?.m.violation === true;
    },
    { maxReruns: o.maxReductionRuns, label: (w) => `${w.event}:${w.step.kind}@${w.startS}s` },
  );
  const file: ReplayFile = {
    plan: o.planPath,
    scenario: o.sc.id,
    seed,
    durationS,
    windows: r.events.map((w) => ({ event: w.event, step: w.step, startS: w.startS, endS: w.endS })),
  };
  const path = join(artifacts, 'reduced-schedule.json');
  writeFileAtomicSync(
    path,
    `${JSON.stringify({ ...file, reduction: reductionLine(r), log: r.log }, null, 2)}\n`,
  );
  // The full op-level schedule of the smallest reproducing run, for `faultline test --replay`.
  if (lastReproducing && existsSync(join(lastReproducing, 'schedule.json')))
    copyFileSync(join(lastReproducing, 'schedule.json'), join(artifacts, 'reduced-ops-schedule.json'));
  return { line: reductionLine(r), path, events: r.events.map((w) => w.event) };
}
