import { z } from 'zod';
import type { Operation } from '../../src/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { eventOrder, fmt, isClient, opsById, parseOptions, pushCapped, result, valueKey } from './common.ts';

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
    const pending = new Map<unknown, number>();
    const everEnqueued = new Set<unknown>();
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
        const k = valueKey(op.input);
        pending.set(k, (pending.get(k) ?? 0) + 1);
        everEnqueued.add(k);
      } else if (op.f === o.dequeueF && completion && op.type === 'ok') {
        if (op.output === null || op.output === undefined) continue; // empty queue
        dequeues++;
        const k = valueKey(op.output);
        const c = pending.get(k) ?? 0;
        if (c > 0) {
          if (c === 1) pending.delete(k);
          else pending.set(k, c - 1);
          continue;
        }
        const kind = everEnqueued.has(k) ? 'duplicated' : 'unexpected';
        if (kind === 'duplicated') duplicated++;
        else unexpected++;
        pushCapped(anomalies, {
          type: kind,
          explanation:
            kind === 'duplicated'
              ? `dequeue op ${op.id} returned ${JSON.stringify(op.output)}, which was already dequeued as often as it was enqueued`
              : `dequeue op ${op.id} returned ${JSON.stringify(op.output)}, which no enqueue invoked before it had sent`,
          ops: [op.id],
          value: op.output,
        });
      }
    }
    let remaining = 0;
    for (const c of pending.values()) remaining += c;
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
