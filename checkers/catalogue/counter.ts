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
  sample,
} from './common.ts';

/**
 * Jepsen's `counter`: `add` ops with a numeric delta and `read` ops returning the counter. Replaying the
 * history in event order, a read's lower bound is the sum of ok adds completed before the read was
 * invoked, its upper bound the sum of every add not known to have failed that was invoked before the read
 * completed. Each ok read must lie within [lower, upper]. Negative deltas are supported by widening the
 * other side (an uncertain decrement lowers the lower bound until acknowledged).
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

const SCOPE =
  'Checks bounds only: a read inside [acked, attempted] passes even if it is not linearizable (e.g. a decrease between two reads of in-flight adds); lost increments never read are invisible.';

export const counterChecker: Checker<CounterOptions> = {
  name: 'counter',
  check(ops: readonly Operation[], rawOptions: CounterOptions) {
    const o = parseOptions('counter', counterOptionsSchema, rawOptions);
    const byId = opsById(ops);
    const order = eventOrder(ops);
    let lower = o.initial;
    let upper = o.initial;
    // Lower bound captured at each read's invocation, by op id.
    const lowerAtInvoke = new Map<number, number>();
    const anomalies: Anomaly[] = [];
    const readsSample: [number, unknown, number][] = [];
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
        const d = op.input;
        if (typeof d !== 'number')
          throw new Error(`counter: add op ${op.invokeIndex} has non-numeric delta ${JSON.stringify(d)}`);
        if (!isCompletion) {
          adds++;
          if (d >= 0) upper += d;
          else lower += d;
        } else if (op.type === 'ok') {
          if (d >= 0) lower += d;
          else upper += d;
        }
      } else if (op.f === o.readF) {
        if (!isCompletion) {
          lowerAtInvoke.set(op.id, lower);
          continue;
        }
        if (op.type !== 'ok') {
          lowerAtInvoke.delete(op.id);
          continue;
        }
        reads++;
        const lo = lowerAtInvoke.get(op.id) ?? lower;
        lowerAtInvoke.delete(op.id);
        const hi = upper;
        const v = op.output;
        if (readsSample.length < 16) readsSample.push([lo, v, hi]);
        if (typeof v !== 'number' || v < lo || v > hi) {
          errors++;
          let err = Number.NaN;
          if (typeof v === 'number') {
            err = v < lo ? lo - v : v - hi;
            if (err > maxAbsError) maxAbsError = err;
            const rel = err / Math.max(1, Math.abs(v < lo ? lo : hi));
            if (rel > maxRelError) maxRelError = rel;
          }
          if (anomalies.length < MAX_ANOMALIES)
            pushCapped(anomalies, {
              type: 'out-of-bounds-read',
              explanation: `read op ${op.invokeIndex} returned ${JSON.stringify(v)}, outside [${lo}, ${hi}] (acked sum before it began, attempted sum before it ended)`,
              ops: [op.invokeIndex],
              lower: lo,
              value: v,
              upper: hi,
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
        finalBounds: [lower, upper],
      },
    );
  },
};
