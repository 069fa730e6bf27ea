import { z } from 'zod';
import type { Operation } from '../../src/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  isClient,
  parseOptions,
  pushCapped,
  result,
  sample,
  valueKey,
} from './common.ts';

/**
 * Jepsen's `total-queue`, over multisets: attempted = every enqueue invocation, acknowledged = ok
 * enqueues, dequeued = ok dequeue values plus every element of ok `drain` ops.
 * lost = acknowledged − dequeued; unexpected = dequeued but never attempted; duplicated = dequeued more
 * often than attempted; recovered = dequeued although the enqueue was not acknowledged.
 * Valid: no lost and no unexpected (duplicates fail only with `duplicatesInvalid`, since at-least-once
 * queues may redeliver). A drain that did not complete ok makes the verdict unknown: its elements are
 * unknowable, so "lost" could not be told apart from "drained but unrecorded".
 */
export const totalQueueOptionsSchema = z.strictObject({
  enqueueF: z.string().default('enqueue'),
  dequeueF: z.string().default('dequeue'),
  drainF: z.string().default('drain'),
  duplicatesInvalid: z.boolean().default(false),
});
export type TotalQueueOptions = z.input<typeof totalQueueOptionsSchema>;

const SCOPE =
  'Counts only: order of delivery, and when a message was lost or duplicated, are invisible; a message dequeued by an op whose response was lost (info) counts as lost.';

function bump(m: Map<unknown, number>, k: unknown): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

export const totalQueueChecker: Checker<TotalQueueOptions> = {
  name: 'total-queue',
  check(ops: readonly Operation[], rawOptions: TotalQueueOptions) {
    const o = parseOptions('total-queue', totalQueueOptionsSchema, rawOptions);
    const attempts = new Map<unknown, number>();
    const acks = new Map<unknown, number>();
    const dequeued = new Map<unknown, number>();
    const values = new Map<unknown, unknown>();
    const crashedDrains: number[] = [];
    let consumed = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      if (op.f === o.enqueueF) {
        consumed++;
        const k = valueKey(op.input);
        values.set(k, op.input);
        bump(attempts, k);
        if (op.type === 'ok') bump(acks, k);
      } else if (op.f === o.dequeueF) {
        consumed++;
        if (op.type !== 'ok' || op.output === null || op.output === undefined) continue;
        const k = valueKey(op.output);
        if (!values.has(k)) values.set(k, op.output);
        bump(dequeued, k);
      } else if (op.f === o.drainF) {
        consumed++;
        if (op.type === 'info') crashedDrains.push(op.id);
        if (op.type !== 'ok') continue;
        const items = collectionItems(op.output);
        if (items === null)
          throw new Error(`total-queue: drain op ${op.id} returned ${JSON.stringify(op.output)}, not a list`);
        for (const v of items) {
          const k = valueKey(v);
          if (!values.has(k)) values.set(k, v);
          bump(dequeued, k);
        }
      }
    }
    const lost: unknown[] = [];
    const unexpected: unknown[] = [];
    const duplicated: unknown[] = [];
    const recovered: unknown[] = [];
    let lostCount = 0;
    let unexpectedCount = 0;
    let duplicatedCount = 0;
    let recoveredCount = 0;
    for (const [k, a] of acks) {
      const d = dequeued.get(k) ?? 0;
      if (d < a) {
        lostCount += a - d;
        lost.push(values.get(k));
      }
    }
    let dequeuedTotal = 0;
    for (const [k, d] of dequeued) {
      dequeuedTotal += d;
      const att = attempts.get(k) ?? 0;
      const ack = acks.get(k) ?? 0;
      if (att === 0) {
        unexpectedCount += d;
        unexpected.push(values.get(k));
        continue;
      }
      if (d > att) {
        duplicatedCount += d - att;
        duplicated.push(values.get(k));
      }
      if (d > ack) {
        recoveredCount += Math.min(d, att) - ack;
        if (Math.min(d, att) > ack) recovered.push(values.get(k));
      }
    }
    const anomalies: Anomaly[] = [];
    for (const v of sample(lost, 50)) {
      pushCapped(anomalies, {
        type: 'lost',
        explanation: `acknowledged enqueue of ${JSON.stringify(v)} was never dequeued`,
        value: v,
      });
    }
    for (const v of sample(unexpected, 25)) {
      pushCapped(anomalies, {
        type: 'unexpected',
        explanation: `${JSON.stringify(v)} was dequeued but never enqueued`,
        value: v,
      });
    }
    for (const v of sample(duplicated, 25)) {
      pushCapped(anomalies, {
        type: 'duplicated',
        explanation: `${JSON.stringify(v)} was dequeued more often than it was enqueued`,
        value: v,
      });
    }
    let valid: true | false | 'unknown' = !(
      lostCount > 0 ||
      unexpectedCount > 0 ||
      (o.duplicatesInvalid && duplicatedCount > 0)
    );
    if (valid === true && crashedDrains.length > 0) valid = 'unknown';
    if (valid === true && dequeuedTotal === 0 && acks.size > 0) valid = 'unknown';
    let attemptedTotal = 0;
    for (const c of attempts.values()) attemptedTotal += c;
    let ackedTotal = 0;
    for (const c of acks.values()) ackedTotal += c;
    return result(
      'total-queue',
      valid,
      `total-queue: ${fmt(attemptedTotal)} attempted enqueues, ${fmt(ackedTotal)} acked, ${fmt(dequeuedTotal)} dequeued: ${fmt(lostCount)} lost, ${fmt(unexpectedCount)} unexpected, ${fmt(duplicatedCount)} duplicated, ${fmt(recoveredCount)} recovered${crashedDrains.length ? `, ${crashedDrains.length} drains with unknown outcome` : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: consumed,
        attemptedCount: attemptedTotal,
        acknowledgedCount: ackedTotal,
        dequeuedCount: dequeuedTotal,
        lostCount,
        unexpectedCount,
        duplicatedCount,
        recoveredCount,
        crashedDrains: sample(crashedDrains, 16),
        lost: sample(lost, 48),
        unexpected: sample(unexpected, 48),
        duplicated: sample(duplicated, 48),
        recovered: sample(recovered, 48),
      },
    );
  },
};
