import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from '../../checkers/types.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import type { Operation } from '../history/operation.ts';
import { pairEvents } from '../history/pair.ts';
import { loadHistory } from '../history/read.ts';
import type { Binding } from '../plan/binding.ts';
import type { FaultEvidenceRecord, OracleResult, ThroughputWindow } from '../verdict/evidence.ts';
import {
  faultEvidenceFromRecord,
  historyFacts,
  recoveryAfterHeal,
  scanSutLog,
  throughputWindows,
} from '../verdict/index.ts';

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
  sutLog: { filesScanned: number; matches: ReturnType<typeof scanSutLog> };
  metrics: MetricsWindow[];
  /** Did the declared checker find a violation (valid false)? */
  violation: boolean;
  /** Seconds the main (client) phase ran: its time limit when ops were still flowing at the end. */
  workloadS: number;
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

const WINDOW_S = 2;

/** `durationS` = the workload's time limit: windows cover the workload phase, not recovery and final reads. */
export async function measureRun(
  runDir: string,
  binding: Binding,
  durationS: number,
): Promise<RunMeasurement> {
  const historyPath = join(runDir, 'history.jsonl');
  const paired = pairEvents(await loadHistory(historyPath, { format: 'jsonl' }));
  const ops = paired.ops;
  const records = readJson<FaultRecord[]>(join(runDir, 'faults.json')) ?? [];
  const workloadStart = workloadStartOf(ops, records);
  const faults = records.map((r) => faultEvidenceFromRecord(r, workloadStart));
  const times = faults.map((f) => ({ id: f.id, startS: f.startS, endS: f.endS }));
  const client = ops.filter((o) => o.process !== 'nemesis');
  // The main phase ran to its time limit when client ops were still being invoked in its last second.
  const mainInvokes = client.map((o) => o.invokeTime / 1e9).filter((t) => t < durationS);
  const lastInvoke = mainInvokes.length > 0 ? Math.max(...mainInvokes) : 0;
  const workloadS = lastInvoke >= durationS - 1 ? durationS : lastInvoke;
  const throughput = throughputWindows(ops, { windowS: WINDOW_S, durationS, faults: times });
  const results = readJson<{ results: CheckResult[] }>(join(runDir, 'results.json'))?.results ?? [];
  const oracles = results.map((r) => oracleFrom(r, binding));
  return {
    ops: client.length,
    faults,
    oracles,
    history: { ...historyFacts(ops, times), path: historyPath },
    throughput,
    recovery: recoveryAfterHeal(throughput, times, WINDOW_S),
    sutLog: scanLogs(runDir),
    metrics: metricsWindows(client, throughput),
    violation: oracles.some((o) => o.declared && o.valid === false),
    workloadS,
  };
}

function readJson<T>(path: string): T | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/**
 * The wall-clock instant the workload began: a fault record's injection time minus the history time of
 * the nemesis op that opened it (history times are monotonic ns from the start of the workload).
 */
function workloadStartOf(ops: readonly Operation[], records: readonly FaultRecord[]): Date {
  for (const op of ops) {
    if (op.process !== 'nemesis') continue;
    const id = (op.output as { id?: unknown } | null)?.id;
    const rec = records.find((r) => r.id === id);
    if (rec) return new Date(Date.parse(rec.injectedAt) - op.invokeTime / 1e6);
  }
  const first = records[0];
  return first ? new Date(Date.parse(first.injectedAt)) : new Date(0);
}

/** Checker names differ slightly between the binding and the catalogue (linearizable / linearizability). */
function sameChecker(a: string, b: string): boolean {
  const stem = (s: string) => s.toLowerCase().replace(/(ability|able|ity)$/, '');
  return stem(a) === stem(b);
}

function oracleFrom(r: CheckResult, binding: Binding): OracleResult {
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
    subset: null,
    mismatch: null,
    error: r.error ?? null,
  };
}

/** SUT logs the runner collected into <runDir>/<node>/. */
function scanLogs(runDir: string): { filesScanned: number; matches: ReturnType<typeof scanSutLog> } {
  let filesScanned = 0;
  const matches: ReturnType<typeof scanSutLog> = [];
  for (const node of readdirSync(runDir)) {
    const dir = join(runDir, node);
    if (!statSync(dir).isDirectory()) continue;
    for (const f of readdirSync(dir)) {
      const path = join(dir, f);
      if (!statSync(path).isFile()) continue;
      filesScanned++;
      matches.push(...scanSutLog(readFileSync(path, 'utf8'), node, path));
    }
  }
  return { filesScanned, matches };
}

function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
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
