import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Remote } from '../../core/control/types.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { Binding, TierName } from '../plan/binding.ts';
import type { ResolvedScenario } from '../plan/schema.ts';
import type { SessionLogWriter } from '../report/session-log.ts';
import { runTest } from '../run/test-run.ts';
import type { FaultEvidenceRecord, ScenarioEvidenceInput, SeedRun } from '../verdict/evidence.ts';
import {
  type FaultWindow,
  faultWindows,
  type KindParams,
  nemesisPlanFor,
  type ReplayFile,
} from './fault-windows.ts';
import { reduceSchedule, reductionLine } from './reduce.ts';
import { measureRun, type RunMeasurement } from './run-evidence.ts';
import { sutFor } from './sut.ts';

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
  seed: number;
  log: SessionLogWriter;
  print: (line: string) => void;
  signal: AbortSignal;
  maxReductionRuns: number;
  /** A reduced schedule to run instead of the plan's windows. */
  replay?: ReplayFile;
  harnessVersion: string;
}

export interface ScenarioRunOutcome {
  evidence: ScenarioEvidenceInput;
  /** Set for a reproducible FAIL: "N→k events over M re-runs" and the reduced schedule file. */
  reduction: { line: string; path: string; events: string[] } | null;
  failSeed: number | null;
}

/**
 * Client op timeout. Short enough that clients cut off by a partition keep issuing ops (their reads are
 * what a stale-read negative control needs to see), long enough for etcd and Redis on a healthy cluster.
 */
const OP_TIMEOUT_MS = 1500;
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

export async function runScenario(o: ScenarioRunOptions): Promise<ScenarioRunOutcome> {
  const { sc, binding } = o;
  const tierNums = sc.tiers[o.tier] ?? sc.tiers.smoke;
  const durationS = o.replay?.durationS ?? tierNums?.durationS ?? 30;
  const seedsWanted = o.replay ? 1 : (tierNums?.seeds ?? 1);
  const windows: FaultWindow[] = o.replay
    ? o.replay.windows
    : faultWindows(binding.nemesis, durationS, tierNums?.faultWindows ?? Number.POSITIVE_INFINITY);
  const dirName = sc.id.replace(/\//g, '-');
  const artifacts = join(o.sessionDir, 'artifacts', dirName);
  mkdirSync(artifacts, { recursive: true });
  const nodes = o.remote.nodes.map((n) => n.name);
  const startedAt = new Date().toISOString();
  const notes: string[] = [];

  await o.log.event(
    sc.id,
    'start',
    `tier ${o.tier}: ${nodes.length} nodes × ${durationS}s × ${windows.length} fault window(s) × ${seedsWanted} seed(s)`,
  );
  const pre = await preconditions(o.remote, windows);
  await o.log.event(sc.id, 'preconditions', pre.notes.join('; '));
  if (!pre.clusterUp)
    return {
      evidence: {
        scenario: sc.id,
        attempted: true,
        capabilitiesMissing: [{ name: 'cluster reachable', reason: pre.notes.join('; ') }],
        startedAt,
        endedAt: new Date().toISOString(),
      },
      reduction: null,
      failSeed: null,
    };
  if (!pre.faultPlane) notes.push(`fault plane check failed: ${pre.notes.join('; ')}`);

  const sut = await sutFor(binding, o.remote, sc.id);
  const extra = await kindParams(o, windows, dirName);
  let runSeq = 0;
  const runOnce = async (seed: number, ws: readonly FaultWindow[], label: string) => {
    const runDir = join(artifacts, `${String(++runSeq).padStart(2, '0')}-${label}-seed-${seed}`);
    const done = await o.log.starting(
      sc.id,
      `${label} (seed ${seed}, ${ws.length} fault window(s))`,
      durationS + RECOVERY_S + 20,
    );
    let last = 0;
    const result = await runTest({
      remote: o.remote,
      db: sut.db,
      makeClient: sut.makeClient,
      workload: binding.workload,
      // Naming the clock class makes the runner start the DB through the libfaketime wrapper, so a
      // clock fault acts on the DB's own clock (the schedule itself is the plan's, below).
      faults: ws.some((w) => w.step.kind === 'clock') ? ['clock'] : [],
      nemesisIntervalS: 0,
      ...(ws.length > 0 && { faultSchedule: nemesisPlanFor(ws, extra), nemesisDelayS: 0 }),
      timeLimitS: durationS,
      concurrency: binding.concurrency,
      rate: binding.rate ?? 100,
      seed,
      outDir: runDir,
      opTimeoutMs: OP_TIMEOUT_MS,
      recoveryS: RECOVERY_S,
      signal: o.signal,
      onProgress: (p) => {
        if (p.elapsedS - last < 5) return;
        last = p.elapsedS;
        o.print(
          `  ${sc.id} ${label}: ${p.elapsedS.toFixed(0)}s ${p.stats.invoked} ops (${p.opsPerSec.toFixed(0)}/s) faults: ${p.faults.join('; ') || 'none'}`,
        );
      },
      meta: { plan: o.planPath, scenario: sc.id, tier: o.tier, dbOptions: binding.dbOptions },
    });
    const m = await measureRun(result.runDir, binding, durationS);
    if (ws.length > 0) await quiesce(o, ws);
    for (const f of m.faults)
      await o.log.event(
        sc.id,
        `fault injected: ${f.kind}${f.topology ? ` ${f.topology}` : f.action ? ` ${f.action}` : ''}`,
        `${f.id} on ${f.nodes.join(', ') || '—'} at ${f.startS.toFixed(1)}s: ${f.landed ? 'landed' : `NOT proven (${f.reason ?? 'no evidence'})`}; ${signalSummary(f.signals)}`,
      );
    const oracleLine = m.oracles.map((x) => `${x.checker} ${validWord(x.valid)}`).join(', ') || 'none ran';
    await o.log.event(sc.id, `oracle: ${oracleLine}`, m.oracles.map((x) => x.evidence).join(' | '));
    await done(`${m.violation ? 'violation' : 'no violation'}, ${m.ops} ops`);
    return { runDir: result.runDir, m };
  };

  const seeds: SeedRun[] = [];
  let primary: { runDir: string; m: RunMeasurement } | null = null;
  let reduction: ScenarioRunOutcome['reduction'] = null;
  let failSeed: number | null = null;
  for (let i = 0; i < seedsWanted && !o.signal.aborted; i++) {
    const seed = o.seed + i;
    let run: { runDir: string; m: RunMeasurement };
    try {
      run = await runOnce(seed, windows, 'run');
    } catch (err) {
      notes.push(`seed ${seed}: run failed: ${errorMessage(err)}`);
      await o.log.event(sc.id, 'run failed', errorMessage(err));
      seeds.push({ seed, outcome: 'unknown', rerun: 'not-attempted', reproducer: null });
      continue;
    }
    primary ??= run;
    if (!run.m.violation) {
      const unknown = run.m.oracles.some((x) => x.declared && x.valid === 'unknown');
      seeds.push({ seed, outcome: unknown ? 'unknown' : 'pass', rerun: 'not-attempted', reproducer: null });
      continue;
    }
    // FAIL: the same seed, config and fault schedule again.
    primary = run;
    failSeed = seed;
    if (o.signal.aborted) {
      seeds.push({ seed, outcome: 'fail', rerun: 'not-attempted', reproducer: null });
      break;
    }
    await o.log.event(sc.id, 'FAIL: re-running with the same seed, config and fault schedule', run.runDir);
    // A re-run that found nothing but was not identical (its checker could not decide, or its faults did
    // not all land) says nothing either way: run it again, bounded.
    let again: { runDir: string; m: RunMeasurement } | null = null;
    let why: string | null = null;
    for (let attempt = 1; attempt <= MAX_RERUNS && !o.signal.aborted; attempt++) {
      again = await runOnce(seed, windows, 'rerun').catch((err) => {
        notes.push(`re-run failed: ${errorMessage(err)}`);
        return null;
      });
      why = again ? notIdentical(run.m, again.m) : 'the re-run failed';
      if (!why) break;
      notes.push(`re-run ${attempt}: ${why}; ${attempt < MAX_RERUNS ? 'running again' : 'giving up'}`);
      await o.log.event(sc.id, 're-run not identical', `${why}; ${again?.runDir ?? ''}`);
    }
    const reproduced = again?.m.violation === true;
    const rerunVerdict = why ? 'not-attempted' : reproduced ? 'reproduced' : 'not-reproduced';
    await o.log.event(
      sc.id,
      reproduced
        ? 'FAIL reproduced'
        : rerunVerdict === 'not-attempted'
          ? 'FAIL re-run inconclusive'
          : 'FAIL not reproduced',
      again?.runDir ?? '',
    );
    let reproducer: string | null = null;
    if (reproduced) {
      reduction = await reduce(o, seed, windows, durationS, runOnce, artifacts);
      reproducer = `faultline run ${o.planPath} --scenario ${sc.id} --seed ${seed} --replay ${reduction.path}`;
      await o.log.event(sc.id, `reduced: ${reduction.line}`, reduction.path);
    }
    seeds.push({ seed, outcome: 'fail', rerun: rerunVerdict, reproducer });
    break;
  }

  const endedAt = new Date().toISOString();
  if (!primary) {
    return {
      evidence: {
        scenario: sc.id,
        attempted: !o.signal.aborted || seeds.length > 0,
        notRunReason: o.signal.aborted ? 'interrupted or out of time before the workload ran' : null,
        seeds,
        faultsScheduled: windows.length,
        notes,
        startedAt,
        endedAt,
      },
      reduction,
      failSeed,
    };
  }
  const m = primary.m;
  copyRunFiles(primary.runDir, o.sessionDir, dirName);
  writeFileSync(
    join(o.sessionDir, 'metrics', `${dirName}.json`),
    `${JSON.stringify(
      {
        scenario: sc.id,
        windowS: 2,
        baselineOpsPerSec: m.recovery?.baselineOpsPerSec ?? baselineNoFault(m),
        afterHealOpsPerSec: m.recovery?.afterHealOpsPerSec ?? null,
        windows: m.metrics,
      },
      null,
      2,
    )}\n`,
  );
  const landedTopologies = m.faults.filter((f) => f.landed && f.topology).map((f) => f.topology as string);
  if (o.signal.aborted) notes.push('the session was interrupted or ran out of time during this scenario');
  return {
    evidence: {
      scenario: sc.id,
      attempted: true,
      ran: { nodes: nodes.length, durationS: m.workloadS, topologies: landedTopologies },
      seeds,
      faultsScheduled: windows.length,
      faults: m.faults,
      oracles: m.oracles,
      history: { ...m.history, hiddenRetries: sut.hiddenRetries },
      intendedOpsPerSec: binding.rate ?? null,
      throughput: m.throughput,
      recovery: m.recovery,
      sutLog: m.sutLog,
      baseline: {
        harnessVersion: o.harnessVersion,
        currentHarnessVersion: o.harnessVersion,
        capturedAt: startedAt,
      },
      declarations: pre.faultPlane
        ? {}
        : { RF4: { status: 'checked', evidence: 'fault plane probe failed before the run' } },
      startedAt,
      endedAt,
      artifacts: artifactList(primary.runDir, o.sessionDir),
      runDir: relative(o.sessionDir, primary.runDir),
      notes: [...notes, ...pre.notes.map((n) => `precondition: ${n}`)],
    },
    reduction,
    failSeed,
  };
}

/**
 * Quiescence after heal: every nemesis kind used sweeps every node (its rules, qdiscs, paused pids,
 * offsets). What was left behind is undone and named on the timeline, never ignored.
 */
async function quiesce(o: ScenarioRunOptions, ws: readonly FaultWindow[]): Promise<void> {
  const { nemesisOfKind } = await import('../../../nemeses/registry.ts');
  const kinds = [...new Set(ws.map((w) => w.step.kind))];
  const left: string[] = [];
  for (const kind of kinds) {
    const nemesis = await nemesisOfKind(kind);
    const res = await o.remote.onNodes(
      o.remote.nodes.map((n) => n.name),
      (n) => nemesis.verifyClean(o.remote, n),
    );
    for (const r of res) {
      if (!r.ok) left.push(`${kind} on ${r.node}: sweep failed (${errorMessage(r.error)})`);
      else if (r.value && (!r.value.clean || r.value.fixed.length > 0))
        left.push(`${kind} on ${r.node}: ${[...r.value.fixed, ...r.value.found].join(', ')}`);
    }
  }
  await o.log.event(
    o.sc.id,
    left.length === 0
      ? 'quiesce: all faults healed and verified clean'
      : 'quiesce: leftovers found and undone',
    left.length === 0 ? `${kinds.join(', ')} swept on ${o.remote.nodes.length} nodes` : left.join('; '),
  );
}

/**
 * Clock faults on nodes that share the control host's kernel clock (local clusters), or when the plan's
 * Faults field names libfaketime, go through libfaketime. The runner supplies the wrapper's offset file
 * (it overrides `name`); this adds the DB's binary, so the nemesis can tell whether libfaketime can affect
 * it at all (a Go binary it cannot).
 */
async function kindParams(
  o: ScenarioRunOptions,
  windows: readonly FaultWindow[],
  name: string,
): Promise<KindParams> {
  if (!windows.some((w) => w.step.kind === 'clock')) return {};
  const shared = o.remote.nodes.every((n) => n.sharedKernelClock === true);
  if (!shared && !/faketime/i.test(o.sc.scenario.faults ?? '')) return {};
  const bin = o.binding.db === 'etcd' ? 'etcd' : 'redis-server';
  const first = o.remote.nodes[0]?.name as string;
  const found = await o.remote
    .exec(first, `command -v ${bin}`, { timeoutMs: 10_000 })
    .then((r) => r.stdout.trim())
    .catch(() => '');
  return { clock: { mode: 'faketime', name: `fl-${name}`, binary: found || `/usr/bin/${bin}` } };
}

/** The landing signals, injector side first: "injector n1 FAULTLINE DROP packets 0→19 ✓; victim …". */
function signalSummary(signals: readonly FaultEvidenceRecord['signals'][number][]): string {
  if (signals.length === 0) return 'no landing signal';
  const show = (v: unknown) => (v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  return [...signals]
    .sort((a, b) => (a.side === b.side ? 0 : a.side === 'injector' ? -1 : 1))
    .slice(0, 4)
    .map((x) => {
      const change =
        x.before !== undefined || x.during !== undefined ? ` ${show(x.before)}→${show(x.during)}` : '';
      return `${x.side} ${x.node} ${x.signal}${change} ${x.landed ? '✓' : '✗'}`.slice(0, 160);
    })
    .join('; ');
}

function validWord(v: unknown): string {
  return v === true ? 'valid' : v === false ? 'INVALID' : 'unknown';
}

function baselineNoFault(m: RunMeasurement): number | null {
  const rates = m.throughput.filter((w) => !w.faultActive).map((w) => w.ops / (w.endS - w.startS));
  if (rates.length === 0) return null;
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)] as number;
}

/** Cluster reachable on every node; for network faults, a FAULTLINE test chain created, listed, removed. */
async function preconditions(
  remote: Remote,
  windows: readonly FaultWindow[],
): Promise<{ clusterUp: boolean; faultPlane: boolean; notes: string[] }> {
  const nodes = remote.nodes.map((n) => n.name);
  const notes: string[] = [];
  const up = await remote.onNodes(nodes, (n) => remote.exec(n, 'true', { timeoutMs: 15_000 }));
  const down = up.filter((r) => !r.ok);
  if (down.length > 0) {
    notes.push(`unreachable: ${down.map((d) => `${d.node} (${errorMessage(d.error)})`).join(', ')}`);
    return { clusterUp: false, faultPlane: false, notes };
  }
  notes.push(`cluster up (${nodes.length} nodes answer)`);
  if (!windows.some((w) => w.step.kind === 'partition')) {
    notes.push('fault plane: no network fault in this run');
    return { clusterUp: true, faultPlane: true, notes };
  }
  const chain = `FLPROBE${process.pid % 100000}`;
  const script = `PATH="$PATH:/usr/sbin:/sbin"; iptables -w -N ${chain} && iptables -w -A ${chain} -j RETURN && iptables -w -S ${chain} | grep -c RETURN; iptables -w -F ${chain}; iptables -w -X ${chain}; ! iptables -w -S ${chain} >/dev/null 2>&1`;
  const res = await remote.onNodes(nodes, (n) => remote.exec(n, script, { sudo: true, timeoutMs: 15_000 }));
  const bad = res.filter((r) => !r.ok);
  if (bad.length > 0) {
    notes.push(
      `fault plane NOT responsive on ${bad.map((b) => `${b.node} (${errorMessage(b.error)})`).join(', ')}`,
    );
    return { clusterUp: true, faultPlane: false, notes };
  }
  notes.push(
    `fault plane responsive: test chain ${chain} applied, seen and removed on ${nodes.length} nodes`,
  );
  return { clusterUp: true, faultPlane: true, notes };
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
  writeFileSync(path, `${JSON.stringify({ ...file, reduction: reductionLine(r), log: r.log }, null, 2)}\n`);
  // The full op-level schedule of the smallest reproducing run, for `faultline test --replay`.
  if (lastReproducing && existsSync(join(lastReproducing, 'schedule.json')))
    copyFileSync(join(lastReproducing, 'schedule.json'), join(artifacts, 'reduced-ops-schedule.json'));
  return { line: reductionLine(r), path, events: r.events.map((w) => w.event) };
}

/** Node logs into logs/<scenario>/<node>/, history/ledger/schedule stay in artifacts/<scenario>/<run>/. */
function copyRunFiles(runDir: string, sessionDir: string, dirName: string): void {
  for (const entry of readdirSync(runDir)) {
    const p = join(runDir, entry);
    if (statSync(p).isDirectory()) cpSync(p, join(sessionDir, 'logs', dirName, entry), { recursive: true });
  }
}

function artifactList(runDir: string, sessionDir: string): { label: string; path: string }[] {
  const out: { label: string; path: string }[] = [];
  for (const [label, file] of [
    ['history', 'history.jsonl'],
    ['fault ledger', 'ledger.jsonl'],
    ['faults with landing evidence', 'faults.json'],
    ['schedule', 'schedule.json'],
    ['checker results', 'results.json'],
  ] as const) {
    const p = join(runDir, file);
    if (existsSync(p)) out.push({ label, path: relative(sessionDir, p) });
  }
  for (const f of readdirSync(runDir)) {
    if (/\.(html|svg|txt)$/.test(f)) out.push({ label: f, path: relative(sessionDir, join(runDir, f)) });
  }
  return out;
}
