import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  isClient,
  MAX_ANOMALIES,
  parseOptions,
  pushCapped,
  result,
  SlotArray,
  sample,
  ValueIndex,
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

export const totalQueueChecker: Checker<TotalQueueOptions> = {
  name: 'total-queue',
  check(ops: readonly Operation[], rawOptions: TotalQueueOptions) {
    const o = parseOptions('total-queue', totalQueueOptionsSchema, rawOptions);
    // Multisets as counts per interned value slot.
    const index = new ValueIndex();
    const attempts = new SlotArray();
    const acks = new SlotArray();
    const dequeued = new SlotArray();
    const crashedDrains: number[] = [];
    /** Per slot: the op that first acknowledged an enqueue of the value (its event index). */
    const ackOp: number[] = [];
    let consumed = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      if (op.f === o.enqueueF) {
        consumed++;
        const i = index.intern(op.input);
        attempts.add(i, 1);
        if (op.type === 'ok') {
          acks.add(i, 1);
          ackOp[i] ??= op.invokeIndex;
        }
      } else if (op.f === o.dequeueF) {
        consumed++;
        if (op.type !== 'ok' || op.output === null || op.output === undefined) continue;
        dequeued.add(index.intern(op.output), 1);
      } else if (op.f === o.drainF) {
        consumed++;
        if (op.type === 'info') crashedDrains.push(op.invokeIndex);
        if (op.type !== 'ok') continue;
        const items = collectionItems(op.output);
        if (items === null)
          throw new Error(
            `total-queue: drain op ${op.invokeIndex} returned ${JSON.stringify(op.output)}, not a list`,
          );
        for (const v of items) {
          dequeued.add(index.intern(v), 1);
        }
      }
    }
    const lost: { value: unknown; ack: number }[] = [];
    const unexpected: unknown[] = [];
    const duplicated: unknown[] = [];
    const recovered: unknown[] = [];
    let lostCount = 0;
    let unexpectedCount = 0;
    let duplicatedCount = 0;
    let recoveredCount = 0;
    let dequeuedTotal = 0;
    let attemptedTotal = 0;
    let ackedTotal = 0;
    for (let i = 0; i < index.size; i++) {
      const att = attempts.get(i);
      const ack = acks.get(i);
      const d = dequeued.get(i);
      const v = index.values[i];
      attemptedTotal += att;
      ackedTotal += ack;
      dequeuedTotal += d;
      if (d < ack) {
        lostCount += ack - d;
        lost.push({ value: v, ack: ackOp[i] ?? -1 });
      }
      if (d === 0) continue;
      if (att === 0) {
        unexpectedCount += d;
        unexpected.push(v);
        continue;
      }
      if (d > att) {
        duplicatedCount += d - att;
        duplicated.push(v);
      }
      if (Math.min(d, att) > ack) {
        recoveredCount += Math.min(d, att) - ack;
        recovered.push(v);
      }
    }
    const anomalies: Anomaly[] = [];
    for (const { value, ack } of sample(lost, 50)) {
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'lost',
          explanation: `lost element ${JSON.stringify(value)}: its enqueue was acknowledged (op ${ack}) but it was never dequeued`,
          ops: [ack],
          value,
        });
    }
    for (const v of sample(unexpected, 25)) {
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'unexpected',
          explanation: `${JSON.stringify(v)} was dequeued but never enqueued`,
          value: v,
        });
    }
    for (const v of sample(duplicated, 25)) {
      if (anomalies.length < MAX_ANOMALIES)
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
    if (valid === true && dequeuedTotal === 0 && ackedTotal > 0) valid = 'unknown';
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
        lost: sample(lost, 48).map((l) => l.value),
        unexpected: sample(unexpected, 48),
        duplicated: sample(duplicated, 48),
        recovered: sample(recovered, 48),
      },
    );
  },
};
