import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  intervalText,
  isClient,
  parseOptions,
  result,
  SlotArray,
  sample,
  ValueIndex,
} from './common.ts';

/**
 * Jepsen's `set` checker: `add` ops of one element each, then a final `read` of the whole set.
 * attempts = every add invocation, acked = ok adds; lost = acked before the final read began but absent
 * from it, unexpected = read but never attempted, recovered = read although the add was not acknowledged.
 * An add acknowledged only after the final read was invoked (concurrent with it, or invoked after it, as
 * when a killed run leaves adds behind its last read) may take effect after the read: absent, it is
 * `unverified`, never lost. Valid when nothing is lost or unexpected; unknown when no read ever succeeded.
 */
export const setOptionsSchema = z.strictObject({
  addF: z.string().default('add'),
  readF: z.string().default('read'),
});
export type SetOptions = z.input<typeof setOptionsSchema>;

const SCOPE =
  'Looks only at the last ok read: elements lost and later re-added, stale intermediate reads, ordering, and adds acknowledged after the final read began (unverified) are invisible; use set-full for reads throughout the run.';

export const setChecker: Checker<SetOptions> = {
  name: 'set',
  check(ops: readonly Operation[], rawOptions: SetOptions) {
    const o = parseOptions('set', setOptionsSchema, rawOptions);
    // Per element slot: bit 1 = attempted, bit 2 = acknowledged.
    const index = new ValueIndex();
    const flags = new SlotArray();
    /** Per slot: the op that first acknowledged the add (its event index) and that ack's completion index. */
    const ackOp: number[] = [];
    const ackDone: number[] = [];
    let acked = 0;
    let finalRead: Operation | null = null;
    let consumed = 0;
    let reads = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      if (op.f === o.addF) {
        consumed++;
        const i = index.intern(op.input);
        const before = flags.get(i);
        if (op.type === 'ok' && (before & 2) === 0) {
          acked++;
          ackOp[i] = op.invokeIndex;
          ackDone[i] = op.completeIndex ?? op.invokeIndex;
          flags.set(i, before | 3);
        } else {
          flags.set(i, before | 1);
          // Of several acks for one element, the earliest completion is the one the read must show.
          if (op.type === 'ok' && (op.completeIndex ?? op.invokeIndex) < (ackDone[i] as number)) {
            ackOp[i] = op.invokeIndex;
            ackDone[i] = op.completeIndex ?? op.invokeIndex;
          }
        }
      } else if (op.f === o.readF) {
        consumed++;
        if (op.type === 'ok') {
          reads++;
          // The final read is the ok read that completed last, as in Jepsen (history order).
          if (finalRead === null || (op.completeIndex ?? 0) > (finalRead.completeIndex ?? 0)) finalRead = op;
        }
      }
    }
    const attempted = index.size;
    const stats = {
      opsConsumed: consumed,
      attemptCount: attempted,
      acknowledgedCount: acked,
      reads,
    };
    if (finalRead === null) {
      return result(
        'set',
        'unknown',
        `set: ${fmt(attempted)} attempted adds, ${fmt(acked)} acked, no ok read: nothing to compare`,
        SCOPE,
        [],
        stats,
      );
    }
    const items = collectionItems(finalRead.output);
    if (items === null) {
      throw new Error(
        `set: final read (op ${finalRead.invokeIndex}) returned ${JSON.stringify(finalRead.output)}, not a set`,
      );
    }
    const lost: unknown[] = [];
    const unverified: unknown[] = [];
    let firstLostAck = -1;
    const unexpected: unknown[] = [];
    const recovered: unknown[] = [];
    let okCount = 0;
    let seenCount = 0;
    // Bit 4 marks an element as read; elements outside the index are unexpected.
    const extra = new ValueIndex();
    for (const v of items) {
      const i = index.slot(v);
      if (i === -1) {
        if (extra.slot(v) === -1) {
          extra.intern(v);
          unexpected.push(v);
          seenCount++;
        }
        continue;
      }
      const f = flags.get(i);
      if (f & 4) continue;
      flags.set(i, f | 4);
      seenCount++;
      okCount++;
      if ((f & 2) === 0) recovered.push(index.values[i]);
    }
    for (let i = 0; i < attempted; i++) {
      const f = flags.get(i);
      if ((f & 2) !== 0 && (f & 4) === 0) {
        // Only an add acknowledged before the read was invoked must be in it (real-time order).
        if ((ackDone[i] as number) >= finalRead.invokeIndex) {
          unverified.push(index.values[i]);
          continue;
        }
        if (lost.length === 0) firstLostAck = ackOp[i] ?? -1;
        lost.push(index.values[i]);
      }
    }
    const anomalies: Anomaly[] = [];
    if (lost.length > 0) {
      anomalies.push({
        type: 'lost',
        explanation: `${fmt(lost.length)} acknowledged add${lost.length === 1 ? ' is' : 's are'} missing from the final read (op ${finalRead.invokeIndex}): ${intervalText(lost)}; ${JSON.stringify(lost[0])} was acknowledged by op ${firstLostAck}`,
        ops: [finalRead.invokeIndex, firstLostAck],
        elements: sample(lost, 48),
      });
    }
    if (unexpected.length > 0) {
      anomalies.push({
        type: 'unexpected',
        explanation: `the final read (op ${finalRead.invokeIndex}) holds ${fmt(unexpected.length)} element${unexpected.length === 1 ? '' : 's'} no add ever attempted: ${intervalText(unexpected)}`,
        ops: [finalRead.invokeIndex],
        elements: sample(unexpected, 48),
      });
    }
    const valid = lost.length === 0 && unexpected.length === 0;
    return result(
      'set',
      valid,
      `set: ${fmt(attempted)} attempted adds, ${fmt(acked)} acked, final read of ${fmt(seenCount)} elements (op ${finalRead.invokeIndex}): ${fmt(lost.length)} lost, ${fmt(unexpected.length)} unexpected, ${fmt(recovered.length)} recovered${unverified.length > 0 ? `, ${fmt(unverified.length)} acked after the final read began and absent from it (unverified)` : ''}`,
      SCOPE,
      anomalies,
      {
        ...stats,
        okCount,
        lostCount: lost.length,
        unexpectedCount: unexpected.length,
        recoveredCount: recovered.length,
        unverifiedCount: unverified.length,
        lost: intervalText(lost),
        unexpected: intervalText(unexpected),
        recovered: intervalText(recovered),
        unverified: intervalText(unverified),
      },
    );
  },
};
