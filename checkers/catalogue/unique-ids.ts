import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, isClient, parseOptions, result, SlotArray, ValueIndex } from './common.ts';

/**
 * Jepsen's `unique-ids`: `generate` ops each return an id; valid iff no acknowledged id repeats.
 * Reports attempted/acknowledged counts, the duplicated ids (most frequent first, up to 48) and the
 * numeric range.
 */
export const uniqueIdsOptionsSchema = z.strictObject({ f: z.string().default('generate') });
export type UniqueIdsOptions = z.input<typeof uniqueIdsOptionsSchema>;

const SCOPE =
  'Sees only acknowledged ids: an id handed out twice where one response was lost (info) is invisible, and nothing is said about ordering or gaps.';

export const uniqueIdsChecker: Checker<UniqueIdsOptions> = {
  name: 'unique-ids',
  check(ops: readonly Operation[], rawOptions: UniqueIdsOptions) {
    const o = parseOptions('unique-ids', uniqueIdsOptionsSchema, rawOptions);
    const index = new ValueIndex();
    const count = new SlotArray();
    const firstOp = new SlotArray();
    const secondOp = new SlotArray();
    let attempted = 0;
    let acked = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    let dupOccurrences = 0;
    for (const op of ops) {
      if (!isClient(op) || op.f !== o.f) continue;
      attempted++;
      if (op.type !== 'ok') continue;
      acked++;
      const id = op.output;
      if (typeof id === 'number') {
        if (id < min) min = id;
        if (id > max) max = id;
      }
      const i = index.intern(id);
      const c = count.get(i);
      count.set(i, c + 1);
      if (c === 0) firstOp.set(i, op.invokeIndex);
      else {
        if (c === 1) secondOp.set(i, op.invokeIndex);
        dupOccurrences++;
      }
    }
    const duplicated: { id: unknown; count: number; firstOp: number; secondOp: number }[] = [];
    if (dupOccurrences > 0) {
      for (let i = 0; i < index.size; i++) {
        const c = count.get(i);
        if (c > 1)
          duplicated.push({
            id: index.values[i],
            count: c,
            firstOp: firstOp.get(i),
            secondOp: secondOp.get(i),
          });
      }
      duplicated.sort((a, b) => b.count - a.count);
    }
    const anomalies: Anomaly[] = duplicated.slice(0, 48).map((d) => ({
      type: 'duplicated',
      explanation: `duplicated id ${JSON.stringify(d.id)}: op ${d.firstOp} and op ${d.secondOp} were both acknowledged with it${d.count > 2 ? ` (${d.count} ops in all)` : ''}`,
      ops: [d.secondOp, d.firstOp],
      id: d.id,
      count: d.count,
    }));
    const valid = duplicated.length > 0 ? false : acked === 0 ? 'unknown' : true;
    return result(
      'unique-ids',
      valid,
      `unique-ids: ${fmt(attempted)} attempted, ${fmt(acked)} acknowledged ids: ${fmt(duplicated.length)} duplicated`,
      SCOPE,
      anomalies,
      {
        opsConsumed: attempted,
        attemptedCount: attempted,
        acknowledgedCount: acked,
        duplicatedCount: duplicated.length,
        duplicated: duplicated.slice(0, 48),
        range: Number.isFinite(min) ? [min, max] : null,
      },
    );
  },
};
