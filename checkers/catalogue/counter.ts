import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import { addIntegers, compareIntegers, exactInteger, integerValue } from '../../src/core/history/values.ts';
import { UserError } from '../../src/core/util/errors.ts';
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
  sample,
} from './common.ts';

/**
 * Jepsen's `counter`: `add` ops with a numeric delta and `read` ops returning the counter. Replaying the
 * history in event order, a read's lower bound is the sum of ok adds completed before the read was
 * invoked, its upper bound the sum of every add not known to have failed that was invoked before the read
 * completed. Each ok read must lie within [lower, upper]. A negative delta bounds the other side the
 * other way round: every decrement not known to have failed and invoked before the read completed may
 * have taken effect (it lowers the lower bound), and only one acknowledged before the read was invoked
 * surely did (it lowers the upper bound). Bounds are exact integers at any size (bigints past 2^53), so a
 * read that differs from them only beyond a double's precision is still out of bounds.
 */
export const counterOptionsSchema = z.strictObject({
  addF: z.string().default('add'),
  readF: z.string().default('read'),
  /** The counter's value before the first op. */
  initial: z.number().default(0),
  /** Jepsen calls a counter history without reads valid; set this to get 'unknown' instead. */
  requireReads: z.boolean().default(false),
});
export type CounterOptions = z.input<typeof counterOptionsSchema>;

type Int = number | bigint;
type JsonInt = ReturnType<typeof integerValue>;

const SCOPE =
  'Checks bounds only: a read inside [acked, attempted] passes even if it is not linearizable (e.g. a decrease between two reads of in-flight adds); lost increments never read are invisible.';

export const counterChecker: Checker<CounterOptions> = {
  name: 'counter',
  check(ops: readonly Operation[], rawOptions: CounterOptions) {
    const o = parseOptions('counter', counterOptionsSchema, rawOptions);
    const byId = opsById(ops);
    const order = eventOrder(ops);
    if (!Number.isSafeInteger(o.initial))
      throw new UserError(`counter: initial ${o.initial} is not an integer within ±(2^53 − 1)`);
    // Sums of the deltas up (≥ 0) and down (< 0): acknowledged so far, and invoked so far (not failed).
    let upAcked: Int = 0;
    let upInvoked: Int = 0;
    let downAcked: Int = 0;
    let downInvoked: Int = 0;
    // What each read needs from its invocation, by op id: the increments and the decrements acknowledged
    // by then (the first surely count towards its lower bound, the second towards its upper bound).
    const ackedAtInvoke = new Map<number, [Int, Int]>();
    const bound = (up: Int, down: Int): Int => addIntegers(o.initial, addIntegers(up, down));
    const anomalies: Anomaly[] = [];
    const readsSample: [JsonInt, unknown, JsonInt][] = [];
    let reads = 0;
    let adds = 0;
    let errors = 0;
    let maxAbsError = 0;
    let maxRelError = 0;
    for (let i = 0; i < order.length; i++) {
      const code = order[i] as number;
      const op = byId[code >> 1] as Operation;
      const isCompletion = (code & 1) === 1;
      if (!isClient(op)) continue;
      if (op.f === o.addF) {
        if (op.type === 'fail') continue;
        const d = exactInteger(op.input);
        if (d === null)
          throw new Error(
            `counter: add op ${op.invokeIndex} has a delta that is not an integer: ${JSON.stringify(op.input)}`,
          );
        const up = compareIntegers(d, 0) >= 0;
        if (!isCompletion) {
          adds++;
          if (up) upInvoked = addIntegers(upInvoked, d);
          else downInvoked = addIntegers(downInvoked, d);
        } else if (op.type === 'ok') {
          if (up) upAcked = addIntegers(upAcked, d);
          else downAcked = addIntegers(downAcked, d);
        }
      } else if (op.f === o.readF) {
        if (!isCompletion) {
          ackedAtInvoke.set(op.id, [upAcked, downAcked]);
          continue;
        }
        if (op.type !== 'ok') {
          ackedAtInvoke.delete(op.id);
          continue;
        }
        reads++;
        const [upBefore, downBefore] = ackedAtInvoke.get(op.id) ?? [upAcked, downAcked];
        ackedAtInvoke.delete(op.id);
        const lo = bound(upBefore, downInvoked);
        const hi = bound(upInvoked, downBefore);
        const v = exactInteger(op.output);
        if (readsSample.length < 16) readsSample.push([integerValue(lo), op.output, integerValue(hi)]);
        if (v === null || compareIntegers(v, lo) < 0 || compareIntegers(v, hi) > 0) {
          errors++;
          if (v !== null) {
            const below = compareIntegers(v, lo) < 0;
            // Error sizes are statistics: a double is precise enough for them.
            const err = Number(below ? BigInt(lo) - BigInt(v) : BigInt(v) - BigInt(hi));
            if (err > maxAbsError) maxAbsError = err;
            const rel = err / Math.max(1, Math.abs(Number(below ? lo : hi)));
            if (rel > maxRelError) maxRelError = rel;
          }
          if (anomalies.length < MAX_ANOMALIES)
            pushCapped(anomalies, {
              type: 'out-of-bounds-read',
              explanation: `read op ${op.invokeIndex} returned ${v === null ? JSON.stringify(op.output) : String(v)}, outside [${lo}, ${hi}] (acked sum before it began, attempted sum before it ended)`,
              ops: [op.invokeIndex],
              lower: integerValue(lo),
              value: op.output,
              upper: integerValue(hi),
            });
        }
      }
    }
    const valid = errors > 0 ? false : reads === 0 && o.requireReads ? 'unknown' : true;
    return result(
      'counter',
      valid,
      `counter: ${fmt(adds)} adds, ${fmt(reads)} ok reads: ${fmt(errors)} outside [acked, attempted]${reads === 0 ? ' (no ok read: no bound was checked)' : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: adds + reads,
        reads,
        adds,
        errorCount: errors,
        maxAbsoluteError: maxAbsError,
        maxRelativeError: maxRelError,
        readsSample: sample(readsSample, 16),
        finalBounds: [integerValue(bound(upAcked, downInvoked)), integerValue(bound(upInvoked, downAcked))],
      },
    );
  },
};
