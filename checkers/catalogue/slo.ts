import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, isClient, parseOptions, result } from './common.ts';
import { endTime, groupFigures, type RunSpan, runSpan } from './latency.ts';

/**
 * Metric SLO thresholds (oracle pattern 4): p99 latency, error rate, a throughput floor and the longest
 * outage, fixed in the plan before the run, measured over the whole run window (first invocation to last
 * completion). A run shorter than `minDurationS` is unknown: a short window is this pattern's failure mode.
 */
export const sloOptionsSchema = z
  .strictObject({
    p99Ms: z.number().positive().optional(),
    maxErrorRate: z.number().min(0).max(1).optional(),
    minThroughput: z.number().nonnegative().optional(),
    /**
     * The longest stretch without an acknowledged (ok) op, in seconds: between two of them, or from the
     * last one to the end of the run (a database that never serves again). Not before the first: that
     * is the clients starting. Unlike the error rate it does not shrink when the ops that fail hang for
     * their whole timeout, and unlike the throughput floor it does not move with the host's load.
     */
    maxOutageS: z.number().positive().optional(),
    minDurationS: z.number().nonnegative().default(0),
    /** Restrict to these fs (default: every client op). */
    f: z.array(z.string()).optional(),
  })
  .refine(
    (o) =>
      o.p99Ms !== undefined ||
      o.maxErrorRate !== undefined ||
      o.minThroughput !== undefined ||
      o.maxOutageS !== undefined,
    {
      // With no threshold the checker would judge nothing and pass: an SLO is its threshold.
      message:
        'an SLO needs a threshold fixed before the run: p99Ms, maxErrorRate, minThroughput or maxOutageS',
    },
  );
export type SloOptions = z.input<typeof sloOptionsSchema>;

/** The longest stretch of the run (seconds, and where it began) with no ok op, from the first ok on. */
export function longestOutage(
  ops: readonly Operation[],
  span: RunSpan,
): { seconds: number; fromS: number; toS: number } {
  const oks = ops
    .filter((op) => isClient(op) && op.type === 'ok')
    .map((op) => endTime(op) ?? op.invokeTime)
    .sort((a, b) => a - b);
  const edges = oks.length === 0 ? [span.start, span.end] : [...oks, Math.max(span.end, oks.at(-1) ?? 0)];
  let best = { from: edges[0] as number, to: edges[0] as number };
  for (let i = 1; i < edges.length; i++)
    if ((edges[i] as number) - (edges[i - 1] as number) > best.to - best.from)
      best = { from: edges[i - 1] as number, to: edges[i] as number };
  const sec = (ns: number) => (ns - span.start) / 1e9;
  return { seconds: (best.to - best.from) / 1e9, fromS: sec(best.from), toS: sec(best.to) };
}

const SCOPE =
  'Whole-window aggregates: a short outage inside an otherwise fast run can pass; thresholds must come from the plan, which this checker cannot verify.';

export const sloChecker: Checker<SloOptions> = {
  name: 'slo',
  check(ops: readonly Operation[], rawOptions: SloOptions) {
    // The schema refuses options with no threshold (also at `plan check`).
    const o = parseOptions('slo', sloOptionsSchema, rawOptions);
    const fSet = o.f ? new Set(o.f) : null;
    const selected = fSet === null ? ops : ops.filter((op) => !isClient(op) || fSet.has(op.f));
    const span = runSpan(selected);
    if (span === null) return result('slo', 'unknown', 'slo: no client ops', SCOPE, [], { opsConsumed: 0 });
    const g = groupFigures(selected, () => 'all', span).get('all');
    const seconds = (span.end - span.start) / 1e9;
    if (g === undefined) return result('slo', 'unknown', 'slo: no client ops', SCOPE, [], { opsConsumed: 0 });
    const stats = {
      opsConsumed: g.ops,
      windowSeconds: seconds,
      p99Ms: g.latency.p99,
      errorRate: g.errorRate,
      throughput: g.throughput,
    };
    if (seconds < o.minDurationS) {
      return result(
        'slo',
        'unknown',
        `slo: run window ${seconds.toFixed(1)} s is shorter than the plan's minimum ${o.minDurationS} s`,
        SCOPE,
        [],
        stats,
      );
    }
    const anomalies: Anomaly[] = [];
    const checks: string[] = [];
    if (o.p99Ms !== undefined) {
      const ok = g.latency.p99 <= o.p99Ms;
      checks.push(`p99 ${g.latency.p99.toFixed(1)} ms ${ok ? '<=' : '>'} ${o.p99Ms} ms`);
      if (!ok)
        anomalies.push({
          type: 'p99-exceeded',
          explanation: `p99 latency ${g.latency.p99.toFixed(3)} ms exceeds ${o.p99Ms} ms`,
          value: g.latency.p99,
          threshold: o.p99Ms,
        });
    }
    if (o.maxErrorRate !== undefined) {
      const ok = g.errorRate <= o.maxErrorRate;
      checks.push(
        `error rate ${(g.errorRate * 100).toFixed(2)}% ${ok ? '<=' : '>'} ${(o.maxErrorRate * 100).toFixed(2)}%`,
      );
      if (!ok)
        anomalies.push({
          type: 'error-rate-exceeded',
          explanation: `error rate ${g.errorRate} exceeds ${o.maxErrorRate} (${g.fail} fail, ${g.info} info)`,
          value: g.errorRate,
          threshold: o.maxErrorRate,
        });
    }
    if (o.minThroughput !== undefined) {
      const ok = g.throughput >= o.minThroughput;
      checks.push(`throughput ${g.throughput.toFixed(1)} ok/s ${ok ? '>=' : '<'} ${o.minThroughput}`);
      if (!ok)
        anomalies.push({
          type: 'throughput-below-floor',
          explanation: `throughput ${g.throughput.toFixed(3)} ok/s is below ${o.minThroughput}`,
          value: g.throughput,
          threshold: o.minThroughput,
        });
    }
    if (o.maxOutageS !== undefined) {
      const out = longestOutage(selected, span);
      const ok = out.seconds <= o.maxOutageS;
      checks.push(
        `longest stretch without an ok op ${out.seconds.toFixed(1)} s (${out.fromS.toFixed(1)}–${out.toS.toFixed(1)} s) ${ok ? '<=' : '>'} ${o.maxOutageS} s`,
      );
      if (!ok)
        anomalies.push({
          type: 'outage-exceeded',
          explanation: `no op was acknowledged for ${out.seconds.toFixed(1)} s (${out.fromS.toFixed(1)}–${out.toS.toFixed(1)} s into the run${out.toS >= seconds - 1e-9 ? ', until it ended' : ''}), longer than ${o.maxOutageS} s`,
          value: out.seconds,
          threshold: o.maxOutageS,
        });
    }
    return result(
      'slo',
      anomalies.length === 0,
      `slo: ${fmt(g.ops)} ops over ${seconds.toFixed(1)} s: ${checks.join(', ')}`,
      SCOPE,
      anomalies,
      stats,
    );
  },
};
