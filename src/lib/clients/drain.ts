import { errorMessage } from '../../core/util/errors.ts';
import type { Completion } from './types.ts';

/** How many elements one drain takes at most: a queue still being filled cannot keep it going forever. */
export const DRAIN_MAX = 1_000_000;

/**
 * The queue workload's final `drain` for a client of any queue: `take()` (one element off the queue, or
 * null when it is empty) until the queue is empty, at most `max` elements, as `ok` with the elements.
 *
 * A drain that breaks off after taking elements is `info` listing them: they are gone from the queue
 * whatever became of the last take, so it must never be recorded as failed. One that breaks off before
 * taking anything rethrows, for the client to classify as it classifies a dequeue. Past `max` it is
 * `info` too: the queue was not seen empty.
 */
export async function drainQueue<T>(take: () => Promise<T | null>, max = DRAIN_MAX): Promise<Completion> {
  const taken: T[] = [];
  try {
    for (let i = 0; i < max; i++) {
      const v = await take();
      if (v === null) return { type: 'ok', value: taken };
      taken.push(v);
    }
  } catch (err) {
    if (taken.length === 0) throw err;
    return {
      type: 'info',
      value: taken,
      error: `indeterminate: drain stopped after ${taken.length} elements: ${errorMessage(err)}`,
    };
  }
  return {
    type: 'info',
    value: taken,
    error: `drain stopped after ${max} elements, the queue not yet empty`,
  };
}
