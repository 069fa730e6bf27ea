import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, parseOptions, result } from './common.ts';
import { groupFigures, runSpan } from './latency.ts';

/**
 * Per-group fairness (oracle pattern 14) with the plan-declared formulas:
 *   worst_group_p99 / aggregate_p99 <= worstP99Ratio
 *   min_group_throughput >= minGroupThroughput       (ok ops/s over the whole run window)
 *   error_rate_by_group == 0                          (when errorFree)
 *   repeat_spread <= maxRepeatSpread                   ((max − min) / median of `repeatValues`, one per
 *                                                      repeat of the scenario, this run's included)
 * Groups are by process, node, f or key (the dimension must match the claim). A threshold that cannot
 * be evaluated (one group, fewer than two repeats) makes the verdict unknown, not true.
 */
export const fairnessOptionsSchema = z
  .strictObject({
    groupBy: z.enum(['process', 'node', 'f', 'key']).default('node'),
    worstP99Ratio: z.number().positive().optional(),
    minGroupThroughput: z.number().nonnegative().optional(),
    errorFree: z.boolean().optional(),
    maxRepeatSpread: z.number().nonnegative().optional(),
    repeatValues: z.array(z.number()).optional(),
  })
  .refine(
    (o) =>
      o.worstP99Ratio !== undefined ||
      o.minGroupThroughput !== undefined ||
      o.errorFree !== undefined ||
      o.maxRepeatSpread !== undefined,
    {
      // With no formula the checker would compare nothing and pass.
      message:
        'fairness needs a threshold fixed before the run: worstP99Ratio, minGroupThroughput, errorFree or maxRepeatSpread',
    },
  );
export type FairnessOptions = z.input<typeof fairnessOptionsSchema>;

const SCOPE =
  'Compares groups along one dimension over the whole window: unfairness along another dimension, or inside a short part of the run, is invisible.';

function groupFn(by: 'process' | 'node' | 'f' | 'key'): (op: Operation) => string | null {
  switch (by) {
    case 'process':
      return (op) => String(op.process);
    case 'node':
      return (op) => op.node;
    case 'f':
      return (op) => op.f;
    case 'key':
      return (op) => op.key ?? null;
  }
}

export const fairnessChecker: Checker<FairnessOptions> = {
  name: 'fairness',
  check(ops: readonly Operation[], rawOptions: FairnessOptions) {
    // The schema refuses options with no threshold (also at `plan check`).
    const o = parseOptions('fairness', fairnessOptionsSchema, rawOptions);
    const span = runSpan(ops);
    if (span === null)
      return result('fairness', 'unknown', 'fairness: no client ops', SCOPE, [], { opsConsumed: 0 });
    const groups = groupFigures(ops, groupFn(o.groupBy), span);
    const aggregate = groupFigures(ops, () => 'all', span).get('all');
    const consumed = [...groups.values()].reduce((n, g) => n + g.ops, 0);
    const anomalies: Anomaly[] = [];
    const checks: string[] = [];
    let undecided: string[] = [];
    if (groups.size < 2)
      undecided.push(`only ${groups.size} ${o.groupBy} group${groups.size === 1 ? '' : 's'}`);
    const entries = [...groups];
    if (o.worstP99Ratio !== undefined && aggregate !== undefined && groups.size >= 2) {
      const [worstName, worst] = entries.reduce((a, b) => (b[1].latency.p99 > a[1].latency.p99 ? b : a));
      const ratio = worst.latency.p99 / aggregate.latency.p99;
      const ok = ratio <= o.worstP99Ratio;
      checks.push(
        `worst p99 ${worstName} / aggregate = ${ratio.toFixed(2)} ${ok ? '<=' : '>'} ${o.worstP99Ratio}`,
      );
      if (!ok)
        anomalies.push({
          type: 'p99-ratio',
          explanation: `${o.groupBy} ${worstName} has p99 ${worst.latency.p99.toFixed(1)} ms, ${ratio.toFixed(2)}× the aggregate ${aggregate.latency.p99.toFixed(1)} ms`,
          group: worstName,
          ratio,
        });
    }
    if (o.minGroupThroughput !== undefined && groups.size >= 1) {
      const [minName, min] = entries.reduce((a, b) => (b[1].throughput < a[1].throughput ? b : a));
      const ok = min.throughput >= o.minGroupThroughput;
      checks.push(
        `min throughput ${minName} ${min.throughput.toFixed(1)} ok/s ${ok ? '>=' : '<'} ${o.minGroupThroughput}`,
      );
      if (!ok)
        anomalies.push({
          type: 'group-throughput',
          explanation: `${o.groupBy} ${minName} got ${min.throughput.toFixed(3)} ok/s, below ${o.minGroupThroughput}`,
          group: minName,
          throughput: min.throughput,
        });
    }
    if (o.errorFree) {
      const bad = entries.filter(([, g]) => g.errorRate > 0);
      checks.push(`${bad.length} groups with errors`);
      for (const [name, g] of bad)
        anomalies.push({
          type: 'group-errors',
          explanation: `${o.groupBy} ${name}: error rate ${(g.errorRate * 100).toFixed(2)}% (${g.fail} fail, ${g.info} info)`,
          group: name,
          errorRate: g.errorRate,
        });
    }
    if (o.maxRepeatSpread !== undefined) {
      const vals = (o.repeatValues ?? []).slice().sort((a, b) => a - b);
      if (vals.length < 2) undecided.push('repeat_spread needs at least 2 repeat values');
      else {
        const median =
          vals.length % 2
            ? (vals[(vals.length - 1) / 2] as number)
            : ((vals[vals.length / 2 - 1] as number) + (vals[vals.length / 2] as number)) / 2;
        const spread = ((vals[vals.length - 1] as number) - (vals[0] as number)) / (median || 1);
        const ok = spread <= o.maxRepeatSpread;
        checks.push(`repeat spread ${spread.toFixed(3)} ${ok ? '<=' : '>'} ${o.maxRepeatSpread}`);
        if (!ok)
          anomalies.push({
            type: 'repeat-spread',
            explanation: `repeats spread ${spread.toFixed(3)} of the median, above ${o.maxRepeatSpread}`,
            spread,
          });
      }
    }
    // Only thresholds that needed 2+ groups are blocked by a single group.
    if (groups.size >= 2 || (o.worstP99Ratio === undefined && o.errorFree === undefined))
      undecided = undecided.filter((u) => !u.startsWith('only'));
    const valid = anomalies.length > 0 ? false : undecided.length > 0 ? 'unknown' : true;
    return result(
      'fairness',
      valid,
      `fairness: ${fmt(consumed)} ops in ${groups.size} ${o.groupBy} groups: ${[...checks, ...undecided].join(', ')}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: consumed,
        groupBy: o.groupBy,
        groups: Object.fromEntries(
          entries.map(([n, g]) => [
            n,
            { ops: g.ops, errorRate: g.errorRate, throughput: g.throughput, p99Ms: g.latency.p99 },
          ]),
        ),
        aggregateP99Ms: aggregate?.latency.p99 ?? null,
      },
    );
  },
};
