import type { Operation } from '../../src/core/history/operation.ts';
import { isClient, quantileSorted } from './common.ts';

/**
 * Latency and throughput arithmetic shared by perf, slo and fairness.
 *
 * Latency is measured from the op's *intended* start (the generator's schedule, recorded by the runner as
 * `intendedTime`, not when a free worker got to it), falling back to the invocation time for histories
 * that do not record it, so a stalled system cannot hide its queueing delay (no coordinated omission). Ops that timed out (info) count with the time the client gave up, a
 * lower bound: dropping them would hide exactly the slowest ops. Ops never completed are not counted.
 */

/** Where an op's latency is measured from: its intended start when recorded, else its invocation. */
export function startTime(op: Operation): number {
  return op.intendedTime ?? op.invokeTime;
}

export const PERCENTILES = [
  ['p50', 0.5],
  ['p90', 0.9],
  ['p99', 0.99],
  ['p99.9', 0.999],
] as const;

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  'p99.9': number;
  max: number;
  mean: number;
}

/** Summary of latencies in ms, nearest-rank percentiles; sorts `values` in place. */
export function summarise(values: Float64Array): LatencySummary {
  values.sort();
  const n = values.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i] as number;
  const s: LatencySummary = {
    count: n,
    p50: Number.NaN,
    p90: Number.NaN,
    p99: Number.NaN,
    'p99.9': Number.NaN,
    max: n === 0 ? Number.NaN : (values[n - 1] as number),
    mean: n === 0 ? Number.NaN : sum / n,
  };
  for (const [name, q] of PERCENTILES) s[name] = quantileSorted(values, q);
  return s;
}

/** A growable Float64 buffer: avoids a JS array of boxed numbers per group on million-op histories. */
export class F64Buffer {
  private buf = new Float64Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** End of an op for latency: completion, or the give-up time of an info op; null when unknown. */
export function endTime(op: Operation): number | null {
  return op.completeTime ?? op.infoTime;
}

export interface RunSpan {
  /** First client invocation (ns). */
  start: number;
  /** Last client completion or invocation (ns). */
  end: number;
}

export function runSpan(ops: readonly Operation[]): RunSpan | null {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const op of ops) {
    if (!isClient(op)) continue;
    if (op.invokeTime < start) start = op.invokeTime;
    const e = endTime(op) ?? op.invokeTime;
    if (e > end) end = e;
  }
  return Number.isFinite(start) ? { start, end } : null;
}

export interface GroupFigures {
  ops: number;
  ok: number;
  fail: number;
  info: number;
  /** (fail + info) / ops. */
  errorRate: number;
  /** ok ops per second over the whole run span. */
  throughput: number;
  latency: LatencySummary;
}

/**
 * Per-group figures in one pass. `groupOf` returns the group name of a client op, or null to skip it.
 * Throughput divides by the whole run span, so every group is measured over the same window.
 */
export function groupFigures(
  ops: readonly Operation[],
  groupOf: (op: Operation) => string | null,
  span: RunSpan,
): Map<string, GroupFigures> {
  const acc = new Map<string, { ops: number; ok: number; fail: number; info: number; lat: F64Buffer }>();
  for (const op of ops) {
    if (!isClient(op)) continue;
    const g = groupOf(op);
    if (g === null) continue;
    let a = acc.get(g);
    if (a === undefined) {
      a = { ops: 0, ok: 0, fail: 0, info: 0, lat: new F64Buffer() };
      acc.set(g, a);
    }
    a.ops++;
    a[op.type]++;
    const e = endTime(op);
    if (e !== null) a.lat.push((e - startTime(op)) / 1e6);
  }
  const seconds = Math.max(1e-9, (span.end - span.start) / 1e9);
  const out = new Map<string, GroupFigures>();
  for (const [g, a] of acc) {
    out.set(g, {
      ops: a.ops,
      ok: a.ok,
      fail: a.fail,
      info: a.info,
      errorRate: a.ops === 0 ? 0 : (a.fail + a.info) / a.ops,
      throughput: a.ok / seconds,
      latency: summarise(a.lat.view()),
    });
  }
  return out;
}
