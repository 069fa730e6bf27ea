import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { z } from 'zod';
import { checkers } from '../../../checkers/registry.ts';
import type { CheckResult } from '../../../checkers/types.ts';
import { type LedgerTimes, readLedger } from '../../../nemeses/ledger.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import type { HistoryEvent } from '../../core/history/event.ts';
import type { Operation } from '../../core/history/operation.ts';
import { pairEvents } from '../../core/history/pair.ts';
import { loadHistory } from '../../core/history/read.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import type { Binding } from '../plan/binding.ts';
import { countFailovers, readPrimariesSamples } from '../test/primaries-sampler.ts';
import type { FaultEvidenceRecord, OracleResult, ThroughputWindow } from '../verdict/evidence.ts';
import { opsByEventIndex, resultHeadline } from '../verdict/headline.ts';
import {
  type FaultWindowTimes,
  faultEvidenceFromRecord,
  historyFacts,
  isPermanent,
  markRecovering,
  recoveryAfterHeal,
  type SutLogMatch,
  scanSutLog,
  throughputWindows,
  withExposure,
} from '../verdict/measure.ts';
import {
  type ClockReadings,
  clockReadingsSchema,
  type WireCount,
  wireCountSchema,
} from '../verdict/run-readings.ts';

/**
 * What one runner run (a run directory written by `runTest`) proves, as the verdict engine's evidence
 * pieces: fault windows with their landing signals (times in seconds from the start of the workload),
 * oracle results, history facts, throughput per window and recovery after heal, SUT log matches, and
 * per-window metrics (throughput, latency percentiles, error rate) for `metrics/`.
 */
export interface RunMeasurement {
  ops: number;
  faults: FaultEvidenceRecord[];
  oracles: OracleResult[];
  history: ReturnType<typeof historyFacts> & { path: string };
  throughput: ThroughputWindow[];
  recovery: ReturnType<typeof recoveryAfterHeal>;
  sutLog: { filesScanned: number; matches: SutLogMatch[]; expected: number };
  metrics: MetricsWindow[];
  summary: MetricsSummary;
  /** Did the declared checker find a violation (valid false)? */
  violation: boolean;
  /** Seconds the main (client) phase ran: its time limit when ops were still flowing at the end. */
  workloadS: number;
  /**
   * Failovers counted from the database's primaries sampled during the run (primaries.jsonl), with
   * the leaders seen; null when the database reports no primaries (or nothing was sampled).
   */
  failovers: { count: number; samples: number; leaders: string[] } | null;
}

export interface MetricsWindow {
  startS: number;
  endS: number;
  faultActive: boolean;
  ops: number;
  opsPerSec: number;
  errorRate: number;
  latencyMs: { p50: number | null; p99: number | null; max: number | null };
}

/** The figures a nightly comparison needs: counts, and throughput and latency with and without faults. */
export interface MetricsSummary {
  ops: number;
  ok: number;
  fail: number;
  info: number;
  opsPerSec: number;
  latencyMs: { p50: number | null; p99: number | null };
  /** Windows with no fault active, and windows with one (null when there were none). */
  healthy: PhaseFigures | null;
  faulted: PhaseFigures | null;
}
export interface PhaseFigures {
  seconds: number;
  opsPerSec: number;
  latencyMs: { p50: number | null; p99: number | null };
}

const WINDOW_S = 2;

/**
 * What a measurement reads of the scenario: its declared checkers (and their options), its recovery
 * budget and rate, and its model when it names one (a plan's binding; `faultline test` names no model).
 */
export type MeasureSpec = Pick<Binding, 'checkers' | 'checkerOptions' | 'recoveryBudgetS' | 'rate'> & {
  model?: Binding['model'];
};

/** `durationS` = the workload's time limit: windows cover the workload phase, not recovery and final reads. */
export async function measureRun(
  runDir: string,
  binding: MeasureSpec,
  durationS: number,
  logNoise: readonly RegExp[] = [],
): Promise<RunMeasurement> {
  const historyPath = join(runDir, 'history.jsonl');
  const paired = pairEvents(await loadHistory(historyPath, { format: 'jsonl' }));
  const ops = paired.ops;
  const records = (readJsonOrNull(join(runDir, 'faults.json')) as FaultRecord[] | null) ?? [];
  const ledger = readLedgerTimes(join(runDir, 'ledger.jsonl'));
  const workloadStart = workloadStartOf(paired.events, ledger);
  const recorded = records.map((r) => faultEvidenceFromRecord(r, workloadStart));
  // The windows as the history marks them: from when the driver holds the fault active (after inject
  // returns) to when its heal is done. Ops in these windows must carry fault_epoch.
  const sec = (iso: string | undefined) =>
    iso === undefined ? null : Math.max(0, (Date.parse(iso) - workloadStart.getTime()) / 1000);
  const healedAt = healCompletions(paired.events);
  const times = recorded.map((f, i): FaultWindowTimes => {
    const startS = sec(ledger.injected.get(f.id)) ?? f.startS;
    // The nemesis acts on the nodes from its plan's ledger entry on (the lazy filesystem's rolling
    // restart happens inside its inject): the rate is judged as under the fault from then.
    const planned = sec(ledger.planned.get(f.id));
    const acting = planned !== null && planned < startS ? { actingFromS: planned } : {};
    // Damage nothing undoes: in force while it is dealt (until its landing evidence is taken), not to
    // the final heal that closes its window without restoring anything.
    if (records[i] && isPermanent(records[i]))
      return {
        id: f.id,
        startS,
        ...acting,
        endS: Math.max(startS, sec(ledger.evidence.get(f.id)) ?? startS),
        permanent: true,
      };
    return {
      id: f.id,
      startS,
      ...acting,
      endS: healedAt.get(f.id) ?? (ledger.healed.has(f.id) ? sec(ledger.healed.get(f.id)) : f.endS),
    };
  });
  const client = ops.filter((o) => o.process !== 'nemesis');
  const faults = recorded.map((f, i) => withExposure(f, times[i] ?? f, client));
  // The main phase ran to its time limit when client ops were still being invoked in its last second.
  const mainInvokes = client.map((o) => o.invokeTime / 1e9).filter((t) => t < durationS);
  const lastInvoke = mainInvokes.length > 0 ? Math.max(...mainInvokes) : 0;
  const workloadS = lastInvoke >= durationS - 1 ? durationS : lastInvoke;
  const windows = throughputWindows(ops, { windowS: WINDOW_S, durationS, faults: times });
  const historyEnd = Math.max(0, ...client.map((o) => (o.completeTime ?? o.infoTime ?? 0) / 1e9));
  const recovery = recoveryAfterHeal(ops, windows, times, {
    endS: historyEnd,
    budgetS: binding.recoveryBudgetS ?? null,
    intendedOpsPerSec: binding.rate ?? null,
  });
  const throughput = markRecovering(windows, recovery);
  const results =
    (readJsonOrNull(join(runDir, 'results.json')) as { results: CheckResult[] } | null)?.results ?? [];
  const opsByF = new Map<string, number>();
  for (const o of client) opsByF.set(o.f, (opsByF.get(o.f) ?? 0) + 1);
  const headlines = {
    ops: opsByEventIndex(client),
    faults: new Map(
      // `times` is `faults` mapped, index for index.
      faults.map((f, i) => {
        // Permanent damage was never healed: no "after it healed" for it.
        const endS = times[i]?.permanent ? null : times[i]?.endS;
        return [f.id, { what: f.what, healedAtNs: typeof endS === 'number' ? endS * 1e9 : null }];
      }),
    ),
  };
  const oracles = results.map((r) => ({
    ...oracleFrom(r, binding, opsByF),
    ...drawnBy(r, runDir),
    headline: resultHeadline(r.anomalies, headlines),
  }));
  return {
    ops: client.length,
    faults,
    oracles,
    history: { ...historyFacts(ops, times, recorderFacts(runDir)), path: historyPath },
    throughput,
    recovery,
    sutLog: scanLogs(runDir, logNoise),
    metrics: metricsWindows(client, throughput),
    summary: metricsSummary(client, throughput),
    violation: oracles.some((o) => o.declared && o.valid === false),
    workloadS,
    failovers: failoversOf(join(runDir, 'primaries.jsonl')),
  };
}

/** The recorder's clock readings (clock.json) and the client's wire count (wire.json), when written. */
function recorderFacts(runDir: string): { clockReadings: ClockReadings | null; wire: WireCount | null } {
  const parse = <T>(schema: z.ZodType<T>, file: string): T | null => {
    const r = schema.safeParse(readJsonOrNull(join(runDir, file)));
    return r.success ? r.data : null;
  };
  return {
    clockReadings: parse(clockReadingsSchema, 'clock.json'),
    wire: parse(wireCountSchema, 'wire.json'),
  };
}

function failoversOf(path: string): RunMeasurement['failovers'] {
  const samples = readPrimariesSamples(path);
  if (!samples?.some((s) => s.primaries.length > 0)) return null;
  return {
    count: countFailovers(samples),
    samples: samples.length,
    leaders: [...new Set(samples.flatMap((s) => s.primaries))].sort(),
  };
}

/**
 * When each window stopped being marked: the history time of the stop op's completion naming it as
 * healed (the ledger's heal entry comes later, after its fsync).
 */
function healCompletions(events: readonly HistoryEvent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) {
    if (e.process !== 'nemesis' || e.type === 'invoke') continue;
    const healed = (e.value as { healed?: unknown } | null)?.healed;
    if (Array.isArray(healed))
      for (const id of healed) if (typeof id === 'string' && !out.has(id)) out.set(id, e.time / 1e9);
  }
  return out;
}

/**
 * Wall times of the ledger's injected / evidence / heal entries per fault id, read by the ledger's own
 * reader (a torn last line skipped); a run that injected nothing has no ledger.
 */
function readLedgerTimes(path: string): LedgerTimes {
  if (!existsSync(path))
    return { planned: new Map(), injected: new Map(), evidence: new Map(), healed: new Map() };
  return readLedger(path).times;
}

/**
 * The wall-clock instant the workload began (history times are monotonic ns from that instant): the
 * driver writes a fault's evidence entry to the ledger and completes the nemesis op at once, so the
 * entry's wall time minus the op's completion time anchors the two clocks (to a few ms).
 */
function workloadStartOf(events: readonly HistoryEvent[], ledger: LedgerTimes): Date {
  for (const e of events) {
    if (e.process !== 'nemesis' || e.type === 'invoke') continue;
    const id = (e.value as { id?: unknown } | null)?.id;
    const at = typeof id === 'string' ? ledger.evidence.get(id) : undefined;
    if (at) return new Date(Date.parse(at) - e.time / 1e6);
  }
  return new Date(0);
}

/** The binding and a result may use different names for one checker (linearizable / linearizability). */
function sameChecker(a: string, b: string): boolean {
  return (checkers.canonical(a) ?? a) === (checkers.canonical(b) ?? b);
}

function oracleFrom(r: CheckResult, binding: MeasureSpec, opsByF: ReadonlyMap<string, number>): OracleResult {
  const declared = binding.checkers.some((c) => sameChecker(c, r.checker));
  const types = [...new Set(r.anomalies.map((a) => String((a as { type?: unknown }).type ?? 'anomaly')))];
  return {
    checker: r.checker,
    declared,
    ran: r.error === undefined,
    valid: r.valid,
    evidence: r.evidence,
    scope: r.scope,
    opsConsumed: Math.max(0, Math.round(Number(r.stats.opsConsumed) || 0)),
    anomalies: r.anomalies.length,
    anomalyTypes: types,
    subset: subsetOf(r.checker, binding, opsByF),
    mismatch: mismatchOf(r.checker, binding),
    error: r.error ?? null,
    headline: null,
    focus: null,
    pages: [],
  };
}

/**
 * The pages a checker drew (relative to the run dir), each with its key's verdict, and the op to open
 * them at: the first anomaly's first op, on its key's page.
 */
export function drawnBy(r: CheckResult, runDir: string): Pick<OracleResult, 'focus' | 'pages'> {
  const sanitize = (k: string) => k.replace(/[^A-Za-z0-9_.-]/g, '_') || '_';
  const byDir = new Map<string, string>();
  for (const list of [r.stats.keys, r.stats.invalidKeys, r.stats.unknownKeys])
    if (Array.isArray(list)) for (const k of list) byDir.set(sanitize(String(k)), String(k));
  const invalid = new Set((r.stats.invalidKeys as unknown[] | undefined)?.map(String) ?? []);
  const unknown = new Set((r.stats.unknownKeys as unknown[] | undefined)?.map(String) ?? []);
  const pages = (r.artifacts ?? [])
    .filter((a) => a.endsWith('.html'))
    .map((a) => {
      const path = relative(runDir, a);
      const dir = /(?:^|\/)independent\/([^/]+)\//.exec(path)?.[1];
      if (dir === undefined) return { key: null, valid: r.valid, path };
      const key = byDir.get(dir) ?? dir;
      return { key, valid: invalid.has(key) ? false : unknown.has(key) ? ('unknown' as const) : true, path };
    })
    .sort((a, b) => keyOrder.compare(a.key ?? '', b.key ?? ''));
  const first = r.anomalies[0];
  const op = first?.ops?.[0];
  const key = first?.key === undefined ? null : String(first.key);
  const focus =
    op === undefined
      ? null
      : {
          op,
          related: (first?.ops ?? []).slice(1),
          key,
          page: (pages.find((p) => p.key === key) ?? pages.find((p) => p.key === null))?.path ?? null,
        };
  return { focus, pages };
}

const keyOrder = new Intl.Collator('en', { numeric: true });

/**
 * The part of the history a checker saw, when it can see only part: it reads some op functions
 * (`consumes`) and the history holds others, which it never looked at (decision tree step 7 names them).
 */
function subsetOf(checker: string, binding: MeasureSpec, opsByF: ReadonlyMap<string, number>): string | null {
  const canonical = checkers.canonical(checker) ?? checker;
  const options = binding.checkerOptions?.[checker] ?? binding.checkerOptions?.[canonical] ?? {};
  const reads = checkers.get(canonical)?.consumes?.(options) ?? null;
  if (!reads) return null;
  const unread = [...opsByF].filter(([f]) => !reads.includes(f));
  if (unread.length === 0) return null;
  const n = unread.reduce((k, [, c]) => k + c, 0);
  return `${reads.join('/')} ops only; ${n} ${unread.map(([f]) => f).join('/')} op(s) unchecked`;
}

/**
 * A checker that cannot tell pass from fail for the plan's model (decision tree step 6): a
 * linearizability checker on a session claim judges a stronger property than the one claimed.
 */
function mismatchOf(checker: string, binding: MeasureSpec): string | null {
  const canonical = checkers.canonical(checker) ?? checker;
  if (binding.model === 'session' && canonical === (checkers.canonical('linearizable') ?? 'linearizable'))
    return 'a linearizability checker on a session claim: a stale read a session allows would fail it';
  return null;
}

/** SUT logs the runner collected into <runDir>/<node>/. */
function scanLogs(runDir: string, noise: readonly RegExp[]): RunMeasurement['sutLog'] {
  let filesScanned = 0;
  let expected = 0;
  const matches: SutLogMatch[] = [];
  for (const node of readdirSync(runDir)) {
    const dir = join(runDir, node);
    if (!statSync(dir).isDirectory()) continue;
    for (const f of readdirSync(dir)) {
      const path = join(dir, f);
      if (!statSync(path).isFile()) continue;
      filesScanned++;
      const found = scanSutLog(readFileSync(path, 'utf8'), node, path, noise);
      matches.push(...found.matches);
      expected += found.expected;
    }
  }
  return { filesScanned, matches, expected };
}

function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

const latencies = (ops: readonly Operation[]) =>
  ops
    .filter((o) => o.type === 'ok' && o.completeTime !== null)
    .map((o) => ((o.completeTime as number) - o.invokeTime) / 1e6)
    .sort((a, b) => a - b);

function metricsSummary(client: readonly Operation[], windows: readonly ThroughputWindow[]): MetricsSummary {
  const count = (t: string) => client.filter((o) => o.type === t).length;
  const phase = (faulted: boolean): PhaseFigures | null => {
    const ws = windows.filter((w) => w.faultActive === faulted);
    if (ws.length === 0) return null;
    const seconds = ws.reduce((n, w) => n + (w.endS - w.startS), 0);
    const inPhase = client.filter((o) => {
      const t = (o.completeTime ?? o.infoTime ?? -1) / 1e9;
      return ws.some((w) => t >= w.startS && t < w.endS);
    });
    const lat = latencies(inPhase);
    return {
      seconds,
      opsPerSec: ws.reduce((n, w) => n + w.ops, 0) / seconds,
      latencyMs: { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) },
    };
  };
  const lat = latencies(client);
  const seconds = windows.reduce((n, w) => n + (w.endS - w.startS), 0);
  return {
    ops: client.length,
    ok: count('ok'),
    fail: count('fail'),
    info: count('info'),
    opsPerSec: seconds > 0 ? windows.reduce((n, w) => n + w.ops, 0) / seconds : 0,
    latencyMs: { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) },
    healthy: phase(false),
    faulted: phase(true),
  };
}

/** Throughput, latency percentiles (ok ops) and error rate (fail + info) per window. */
function metricsWindows(client: readonly Operation[], windows: readonly ThroughputWindow[]): MetricsWindow[] {
  return windows.map((w) => {
    const inWin = client.filter((o) => {
      const t = (o.completeTime ?? o.infoTime ?? -1) / 1e9;
      return t >= w.startS && t < w.endS;
    });
    const lat = inWin
      .filter((o) => o.type === 'ok' && o.completeTime !== null)
      .map((o) => ((o.completeTime as number) - o.invokeTime) / 1e6)
      .sort((a, b) => a - b);
    const errors = inWin.filter((o) => o.type !== 'ok').length;
    return {
      startS: w.startS,
      endS: w.endS,
      faultActive: w.faultActive,
      ops: w.ops,
      opsPerSec: w.ops / (w.endS - w.startS),
      errorRate: inWin.length === 0 ? 0 : errors / inWin.length,
      latencyMs: { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), max: lat.at(-1) ?? null },
    };
  });
}
