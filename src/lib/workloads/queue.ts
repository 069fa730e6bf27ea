import { mix, repeat, untilOk } from '../../core/generator/index.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/**
 * Jepsen's queue workload: unique integers enqueued, dequeues mixed in, and after the heal a final
 * `drain` that empties the queue, repeated until one completes ok (a drain sent to a node still
 * restarting fails; without an ok drain every element left in the queue would look lost). Op shapes (what a client implements):
 *
 * - `{f: 'enqueue', value: n}` → `ok` once the queue acknowledged n (a publisher confirm), `fail` only
 *   when it certainly was not enqueued, `info` when unknown;
 * - `{f: 'dequeue', value: null}` → `ok` with the element taken, or `ok` with `null` when the queue was
 *   empty; `info` when an element may have been taken but the answer was lost;
 * - `{f: 'drain', value: null}` → `ok` with the list of every element taken until the queue was empty
 *   (`[]` for an empty queue); `info` when it broke off, listing the elements it took (`drainQueue` in
 *   src/lib/clients/drain.ts, `faultline/clients` for a plugin): `total-queue` counts them, and one more
 *   take as unknown.
 *
 * Checked by `queue` (every dequeue came from an enqueue) and `total-queue` (every acknowledged enqueue
 * was dequeued or drained: lost, duplicated, unexpected, recovered counts).
 */
export function queueWorkload(_o: WorkloadOptions): Workload {
  let next = 0;
  return {
    name: 'queue',
    generator: () =>
      mix([repeat(() => ({ f: 'enqueue', value: next++ })), repeat({ f: 'dequeue', value: null })]),
    finalGenerator: () => untilOk(repeat({ f: 'drain', value: null })),
    checkers: [
      { name: 'queue', options: {} },
      { name: 'total-queue', options: {} },
    ],
    clientOptions: {},
  };
}
