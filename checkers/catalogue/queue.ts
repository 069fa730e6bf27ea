import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  eventOrder,
  fmt,
  isClient,
  MAX_ANOMALIES,
  opsById,
  parseOptions,
  pushCapped,
  result,
  SlotArray,
  ValueIndex,
} from './common.ts';

/**
 * Jepsen's `queue` with an unordered-queue model, in O(n): replaying events in order, each enqueue
 * invocation (not known to have failed) puts its value in a multiset, and each ok dequeue must take a value
 * that is in it. A value never enqueued is `unexpected`; one enqueued but already consumed is `duplicated`.
 * Unlike Jepsen, enqueues that definitely failed are not assumed to have happened.
 */
export const queueOptionsSchema = z.strictObject({
  enqueueF: z.string().default('enqueue'),
  dequeueF: z.string().default('dequeue'),
});
export type QueueOptions = z.input<typeof queueOptionsSchema>;

const SCOPE =
  'Unordered model: FIFO order violations and acknowledged enqueues that are never dequeued (lost) are invisible; use total-queue for loss and linearizable with a fifo model for order.';

export const queueChecker: Checker<QueueOptions> = {
  name: 'queue',
  check(ops: readonly Operation[], rawOptions: QueueOptions) {
    const o = parseOptions('queue', queueOptionsSchema, rawOptions);
    const byId = opsById(ops);
    const order = eventOrder(ops);
    // Per value slot: how many enqueued and not yet dequeued; slots exist only for enqueued values.
    const index = new ValueIndex();
    const pending = new SlotArray();
    const anomalies: Anomaly[] = [];
    let enqueues = 0;
    let dequeues = 0;
    let unexpected = 0;
    let duplicated = 0;
    for (let i = 0; i < order.length; i++) {
      const code = order[i] as number;
      const op = byId[code >> 1] as Operation;
      if (!isClient(op)) continue;
      const completion = (code & 1) === 1;
      if (op.f === o.enqueueF && !completion && op.type !== 'fail') {
        enqueues++;
        pending.add(index.intern(op.input), 1);
      } else if (op.f === o.dequeueF && completion && op.type === 'ok') {
        if (op.output === null || op.output === undefined) continue; // empty queue
        dequeues++;
        const i = index.slot(op.output);
        if (i !== -1 && pending.get(i) > 0) {
          pending.add(i, -1);
          continue;
        }
        const kind = i !== -1 ? 'duplicated' : 'unexpected';
        if (kind === 'duplicated') duplicated++;
        else unexpected++;
        if (anomalies.length < MAX_ANOMALIES)
          pushCapped(anomalies, {
            type: kind,
            explanation:
              kind === 'duplicated'
                ? `dequeue op ${op.invokeIndex} returned ${JSON.stringify(op.output)}, which was already dequeued as often as it was enqueued`
                : `dequeue op ${op.invokeIndex} returned ${JSON.stringify(op.output)}, which no enqueue invoked before it had sent`,
            ops: [op.invokeIndex],
            value: op.output,
          });
      }
    }
    let remaining = 0;
    for (let i = 0; i < index.size; i++) remaining += pending.get(i);
    const bad = unexpected + duplicated;
    const valid = bad > 0 ? false : dequeues === 0 ? 'unknown' : true;
    return result(
      'queue',
      valid,
      `queue: ${fmt(enqueues)} enqueues, ${fmt(dequeues)} ok dequeues: ${fmt(unexpected)} unexpected, ${fmt(duplicated)} duplicated, ${fmt(remaining)} left in the model queue`,
      SCOPE,
      anomalies,
      {
        opsConsumed: enqueues + dequeues,
        enqueues,
        dequeues,
        unexpected,
        duplicated,
        finalQueueSize: remaining,
      },
    );
  },
};
