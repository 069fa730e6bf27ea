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
 * queues may redeliver).
 *
 * Real time and crashes bound what "lost" may claim:
 *  - only an enqueue acknowledged before the queue was last seen empty must have been consumed: before
 *    the last ok drain began, or the last ok dequeue that returned nothing. One acknowledged later (as
 *    when a killed run leaves enqueues behind its final drain), or any when the queue was never seen
 *    empty, may still sit in the queue, and counts as `unverified`, never lost;
 *  - a dequeue or drain whose outcome is unknown (info) may have taken messages nobody recorded: a
 *    crashed drain any number, a crashed dequeue one. When they can account for every missing message
 *    the verdict is unknown, not a loss; beyond that, the excess is reported lost.
 *  - a drain cut off after taking elements, whose info completion lists them (as `drainQueue` records
 *    it), took those (they count as dequeued) and at most one more, the take whose answer was lost: it
 *    counts as a crashed dequeue. An info drain without a list, or one invoked with a list (an echo of
 *    its input cannot be told from what it took), may have taken any number.
 */
export const totalQueueOptionsSchema = z.strictObject({
  enqueueF: z.string().default('enqueue'),
  dequeueF: z.string().default('dequeue'),
  drainF: z.string().default('drain'),
  duplicatesInvalid: z.boolean().default(false),
});
export type TotalQueueOptions = z.input<typeof totalQueueOptionsSchema>;

const SCOPE =
  'Counts only: order of delivery, and when a message was lost or duplicated, are invisible; a message possibly taken by a dequeue or drain whose response was lost (info) is unknown, not lost (a drain cut off that lists what it took leaves one message unknown, one that does not any number), and enqueues acknowledged after the queue was last seen empty (the last drain, or a dequeue of nothing) are not judged.';

/**
 * The elements a drain cut off took, when its info completion lists them; null when it may have taken
 * any number (no list, or a drain invoked with a list, whose echoed input would read as one).
 */
function cutDrainTaken(op: Operation): unknown[] | null {
  if (collectionItems(op.input) !== null) return null;
  return collectionItems(op.infoValue);
}

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
    const crashedDequeues: number[] = [];
    /** Drains cut off that listed what they took: each leaves at most one element unknown. */
    const cutDrains: number[] = [];
    /** Per slot: the op that first acknowledged an enqueue of the value (its event index). */
    const ackOp: number[] = [];
    /** Acknowledged enqueues as [slot, completion index]: which must have been consumed is known at the end. */
    const ackedAt: number[] = [];
    /**
     * Invocation index of the last op that saw the queue empty (an ok drain, or an ok dequeue of
     * nothing): whatever was acknowledged before it began must have been taken by then.
     */
    let emptyAt = Number.NEGATIVE_INFINITY;
    let consumed = 0;
    const sawEmpty = (op: Operation) => {
      if (op.invokeIndex > emptyAt) emptyAt = op.invokeIndex;
    };
    for (const op of ops) {
      if (!isClient(op)) continue;
      if (op.f === o.enqueueF) {
        consumed++;
        const i = index.intern(op.input);
        attempts.add(i, 1);
        if (op.type === 'ok') {
          acks.add(i, 1);
          ackOp[i] ??= op.invokeIndex;
          ackedAt.push(i, op.completeIndex ?? op.invokeIndex);
        }
      } else if (op.f === o.dequeueF) {
        consumed++;
        if (op.type === 'info') crashedDequeues.push(op.invokeIndex);
        if (op.type !== 'ok') continue;
        if (op.output === null || op.output === undefined) {
          sawEmpty(op);
          continue;
        }
        dequeued.add(index.intern(op.output), 1);
      } else if (op.f === o.drainF) {
        consumed++;
        if (op.type === 'info') {
          const taken = cutDrainTaken(op);
          if (taken === null) crashedDrains.push(op.invokeIndex);
          else {
            cutDrains.push(op.invokeIndex);
            for (const v of taken) dequeued.add(index.intern(v), 1);
          }
          continue;
        }
        if (op.type !== 'ok') continue;
        sawEmpty(op);
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
    // Acks that must have been consumed: those completed before the queue was last seen empty.
    const required = new SlotArray();
    let unverifiedTotal = 0;
    for (let k = 0; k < ackedAt.length; k += 2) {
      if ((ackedAt[k + 1] as number) < emptyAt) required.add(ackedAt[k] as number, 1);
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
      const req = required.get(i);
      const d = dequeued.get(i);
      const v = index.values[i];
      attemptedTotal += att;
      ackedTotal += ack;
      dequeuedTotal += d;
      if (d < req) {
        lostCount += req - d;
        lost.push({ value: v, ack: ackOp[i] ?? -1 });
      }
      unverifiedTotal += Math.max(0, ack - Math.max(d, req));
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
    // Messages a crashed consumer may have taken: any number for a drain, one per dequeue or cut-off drain.
    const oneEach = crashedDequeues.length + cutDrains.length;
    const explainable = crashedDrains.length > 0 ? Number.POSITIVE_INFINITY : oneEach;
    const lossUnknown = lostCount > 0 && lostCount <= explainable;
    for (const { value, ack } of sample(lossUnknown ? [] : lost, 50)) {
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'lost',
          explanation: `lost element ${JSON.stringify(value)}: its enqueue was acknowledged (op ${ack}) before the queue was last seen empty (op ${emptyAt}), but it was never dequeued${oneEach > 0 ? ` (${fmt(lostCount)} missing, at most ${fmt(oneEach)} explained by crashed dequeues and cut-off drains)` : ''}`,
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
      (lostCount > 0 && !lossUnknown) ||
      unexpectedCount > 0 ||
      (o.duplicatesInvalid && duplicatedCount > 0)
    );
    if (valid === true && (lossUnknown || crashedDrains.length > 0)) valid = 'unknown';
    if (valid === true && dequeuedTotal === 0 && ackedTotal > 0) valid = 'unknown';
    return result(
      'total-queue',
      valid,
      `total-queue: ${fmt(attemptedTotal)} attempted enqueues, ${fmt(ackedTotal)} acked, ${fmt(dequeuedTotal)} dequeued: ${fmt(lostCount)} ${lossUnknown ? 'missing (unknown: crashed dequeues/drains may have taken them)' : 'lost'}, ${fmt(unexpectedCount)} unexpected, ${fmt(duplicatedCount)} duplicated, ${fmt(recoveredCount)} recovered${crashedDrains.length ? `, ${crashedDrains.length} drains with unknown outcome` : ''}${cutDrains.length ? `, ${cutDrains.length} drains cut off (what they listed counted, one more each unknown)` : ''}${crashedDequeues.length ? `, ${crashedDequeues.length} dequeues with unknown outcome` : ''}${unverifiedTotal ? `, ${fmt(unverifiedTotal)} acked after the queue was last seen empty (unverified)` : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: consumed,
        attemptedCount: attemptedTotal,
        acknowledgedCount: ackedTotal,
        dequeuedCount: dequeuedTotal,
        lostCount: lossUnknown ? 0 : lostCount,
        missingUnknownCount: lossUnknown ? lostCount : 0,
        unverifiedCount: unverifiedTotal,
        unexpectedCount,
        duplicatedCount,
        recoveredCount,
        crashedDrains: sample(crashedDrains, 16),
        crashedDequeues: sample(crashedDequeues, 16),
        cutDrains: sample(cutDrains, 16),
        lost: sample(lossUnknown ? [] : lost, 48).map((l) => l.value),
        missingUnknown: sample(lossUnknown ? lost : [], 48).map((l) => l.value),
        unexpected: sample(unexpected, 48),
        duplicated: sample(duplicated, 48),
        recovered: sample(recovered, 48),
      },
    );
  },
};
