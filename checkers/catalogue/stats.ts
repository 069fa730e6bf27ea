import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, isClient, parseOptions, result } from './common.ts';

/**
 * Jepsen's `stats`: ok / fail / info counts overall and per f (client ops only). An f that never
 * succeeded means the workload never exercised that path, so no other oracle could have failed on it:
 * the verdict is then unknown, not true.
 */
export const statsOptionsSchema = z.strictObject({});
export type StatsOptions = z.input<typeof statsOptionsSchema>;

interface Counts {
  count: number;
  ok: number;
  fail: number;
  info: number;
}

const SCOPE = 'Counts outcomes only: says nothing about whether any ok result was correct.';

export const statsChecker: Checker<StatsOptions> = {
  name: 'stats',
  check(ops: readonly Operation[], rawOptions: StatsOptions) {
    parseOptions('stats', statsOptionsSchema, rawOptions);
    const total: Counts = { count: 0, ok: 0, fail: 0, info: 0 };
    const byF = new Map<string, Counts>();
    for (const op of ops) {
      if (!isClient(op)) continue;
      let c = byF.get(op.f);
      if (c === undefined) {
        c = { count: 0, ok: 0, fail: 0, info: 0 };
        byF.set(op.f, c);
      }
      c.count++;
      c[op.type]++;
      total.count++;
      total[op.type]++;
    }
    const never = [...byF].filter(([, c]) => c.ok === 0).map(([f]) => f);
    const anomalies: Anomaly[] = never.map((f) => ({
      type: 'never-succeeded',
      explanation: `no ${f} op ever succeeded (${byF.get(f)?.count} attempted)`,
      f,
    }));
    const valid = total.count === 0 || never.length > 0 ? 'unknown' : true;
    const perF = [...byF].map(([f, c]) => `${f} ${fmt(c.ok)}/${fmt(c.fail)}/${fmt(c.info)}`).join(', ');
    return result(
      'stats',
      valid,
      `stats: ${fmt(total.count)} client ops, ${fmt(total.ok)} ok, ${fmt(total.fail)} fail, ${fmt(total.info)} info${perF ? ` (ok/fail/info: ${perF})` : ''}`,
      SCOPE,
      anomalies,
      { opsConsumed: total.count, ...total, byF: Object.fromEntries(byF) },
    );
  },
};
