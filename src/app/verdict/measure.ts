import { describeFaultRecord } from '../../../nemeses/describe.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import type { Operation } from '../../core/history/operation.ts';
import type { FaultEvidenceRecord, HistoryFacts, ThroughputWindow } from './evidence.ts';
import { HISTORY_FIELDS } from './evidence.ts';

/**
 * Turning raw run output into the evidence facts the audits read: throughput per window (with fault
 * windows marked), history facts (which of the 11 fields are really there), recovery after heal, and
 * SUT log lines that betray swallowed errors. Times in a faultline history are monotonic nanoseconds
 * since the run started.
 */

export interface FaultWindowTimes {
  id: string;
  startS: number;
  /** Null when the window was never healed (it stays active to the end). */
  endS: number | null;
}

const NS = 1e9;

function isClient(op: Operation): boolean {
  return op.process !== 'nemesis';
}

function overlaps(a0: number, a1: number, f: FaultWindowTimes): boolean {
  return a0 < (f.endS ?? Number.POSITIVE_INFINITY) && f.startS < a1;
}

/** Completed client ops per window of `windowS` seconds, each marked when a fault window overlaps it. */
export function throughputWindows(
  ops: readonly Operation[],
  opts: { windowS: number; durationS?: number; faults: readonly FaultWindowTimes[] },
): ThroughputWindow[] {
  let end = opts.durationS ?? 0;
  const counts: number[] = [];
  for (const op of ops) {
    if (!isClient(op)) continue;
    const t = op.completeTime ?? op.infoTime;
    if (t === null) continue;
    const s = t / NS;
    if (opts.durationS === undefined) end = Math.max(end, s);
    const i = Math.floor(s / opts.windowS);
    counts[i] = (counts[i] ?? 0) + 1;
  }
  const n = Math.max(1, Math.ceil(end / opts.windowS));
  const out: ThroughputWindow[] = [];
  for (let i = 0; i < n; i++) {
    const startS = i * opts.windowS;
    const endS = startS + opts.windowS;
    out.push({
      startS,
      endS,
      ops: counts[i] ?? 0,
      faultActive: opts.faults.some((f) => overlaps(startS, endS, f)),
    });
  }
  return out;
}

/** Which history fields are present on every op that needs them, and what makes the history weak. */
export function historyFacts(
  ops: readonly Operation[],
  faults: readonly FaultWindowTimes[],
  clock: HistoryFacts['clock'] = 'unknown',
): HistoryFacts {
  const client = ops.filter(isClient);
  const present = new Set<string>(HISTORY_FIELDS);
  const weaknesses: string[] = [];
  const noCompletion = client.filter(
    (o) => (o.type === 'ok' || o.type === 'fail') && o.completeTime === null,
  ).length;
  if (noCompletion > 0) {
    present.delete('invoke_ts/complete_ts');
    weaknesses.push(`${noCompletion} completed op(s) lack complete_ts`);
  }
  if (client.some((o) => o.node === null)) present.delete('node_seen');
  const keyed = (o: Operation) => o.key !== undefined || (Array.isArray(o.input) && o.input.length === 2);
  if (client.length > 0 && !client.some(keyed)) present.delete('key');
  const duringFault = client.filter((o) =>
    faults.some((f) => overlaps(o.invokeTime / NS, o.invokeTime / NS + 1e-9, f)),
  );
  const unmarked = duringFault.filter((o) => o.faultEpoch === null || o.faultEpoch.length === 0).length;
  if (unmarked > 0) {
    present.delete('fault_epoch');
    weaknesses.push(`${unmarked} op(s) invoked during a fault window lack fault_epoch`);
  }
  return {
    ops: client.length,
    fieldsPresent: HISTORY_FIELDS.filter((f) => present.has(f)),
    weaknesses,
    clock,
    hiddenRetries: null,
    path: null,
  };
}

/**
 * Baseline = median rate of the windows before the first fault; after heal = mean rate of the windows
 * that start at least `settleS` after the last fault ended. Null when either side has no window.
 */
export function recoveryAfterHeal(
  windows: readonly ThroughputWindow[],
  faults: readonly FaultWindowTimes[],
  settleS = 0,
): { baselineOpsPerSec: number; afterHealOpsPerSec: number; measuredAfterS: number } | null {
  if (faults.length === 0) return null;
  const first = Math.min(...faults.map((f) => f.startS));
  const last = Math.max(...faults.map((f) => f.endS ?? Number.POSITIVE_INFINITY));
  if (!Number.isFinite(last)) return null;
  const rate = (w: ThroughputWindow) => w.ops / (w.endS - w.startS);
  const before = windows.filter((w) => w.endS <= first).map(rate);
  const after = windows.filter((w) => w.startS >= last + settleS);
  if (before.length === 0 || after.length === 0) return null;
  const sorted = [...before].sort((a, b) => a - b);
  return {
    baselineOpsPerSec: sorted[Math.floor(sorted.length / 2)]!,
    afterHealOpsPerSec: after.map(rate).reduce((s, r) => s + r, 0) / after.length,
    measuredAfterS: after[0]!.startS - last,
  };
}

/** Swallowed exceptions, panics and "Internal error" (red flag 7). */
export const SUT_LOG_PATTERN = /\bpanic(ked)?\b|\bfatal\b|internal error|unhandled exception|\bSIGSEGV\b/i;
/** Matches kept per file: enough to cite, bounded for huge logs. */
const MAX_MATCHES = 50;

export interface SutLogMatch {
  node: string;
  file: string;
  line: number;
  text: string;
}

/**
 * The lines of one SUT log that match SUT_LOG_PATTERN: `matches` (at most MAX_MATCHES kept) and
 * `expected`, how many matched one of the database's declared `logNoise` patterns instead.
 */
export function scanSutLog(
  text: string,
  node: string,
  file: string,
  noise: readonly RegExp[] = [],
): { matches: SutLogMatch[]; expected: number } {
  const matches: SutLogMatch[] = [];
  let expected = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && matches.length < MAX_MATCHES; i++) {
    const l = lines[i]!;
    if (!SUT_LOG_PATTERN.test(l)) continue;
    if (noise.some((re) => re.test(l))) expected++;
    else matches.push({ node, file, line: i + 1, text: l.trim().slice(0, 300) });
  }
  return { matches, expected };
}

/**
 * A nemesis ledger record (nemeses/types.ts) as evidence: times become seconds from the start of the
 * workload, the spec's topology/action are lifted out of the FaultSpec, and the evidence signals are
 * kept as they are. A record without evidence has not landed.
 */
export function faultEvidenceFromRecord(record: FaultRecord, workloadStartedAt: Date): FaultEvidenceRecord {
  const sec = (iso: string | undefined) =>
    iso === undefined ? null : Math.max(0, (Date.parse(iso) - workloadStartedAt.getTime()) / 1000);
  const topology = record.spec.params?.topology;
  const ev = record.evidence;
  return {
    id: record.id,
    kind: record.spec.kind,
    action: record.spec.action,
    topology: typeof topology === 'string' ? topology : null,
    what: describeFaultRecord(record).what,
    nodes: record.nodes,
    startS: sec(record.injectedAt) ?? 0,
    endS: sec(record.healedAt),
    landed: ev?.landed ?? false,
    reason: ev ? (ev.reason ?? null) : 'no landing evidence was collected',
    substitute: null,
    signals: ev?.signals ?? [],
    healed: record.healedAt !== undefined,
    afterHeal: record.afterHeal
      ? { landed: record.afterHeal.landed, reason: record.afterHeal.reason ?? null }
      : null,
  };
}
