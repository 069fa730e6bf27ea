import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  isClient,
  isPlainMap,
  MAX_ANOMALIES,
  parseOptions,
  pushCapped,
  result,
  ValueIndex,
  valueKey,
} from './common.ts';
import { finalStateSourceSchema, finalStates } from './final-state.ts';

/**
 * No-lost-ack (oracle pattern 10): every input of an acknowledged write (ok completion) must be present
 * in the final state of every replica at quiescence. Timed-out (info) writes are neither acked nor
 * rejected: they may be present or absent. A write that definitely failed but is present, with no other
 * non-failed write of the same value, is reported as `rejected-present`.
 *
 * A dump is either a collection (membership of the write's input) or a map. In a map, the write's key is
 * `op.key`, or the first element of a `[k, v]` input; a collection value is checked by membership, a scalar
 * value by equality, and an acked write whose key now holds another value counts as `superseded`, not
 * lost, when a write of that value to that key, not known to have failed, may have taken effect after it:
 * one that had not completed when it was invoked (so also one that never completed). A write that
 * completed before it began cannot have overwritten it, nor can a value nobody wrote.
 */
export const noLostAckOptionsSchema = z.strictObject({
  ...finalStateSourceSchema,
  writeF: z.array(z.string()).default(['add', 'append', 'write', 'enqueue', 'put', 'insert']),
});
export type NoLostAckOptions = z.input<typeof noLostAckOptionsSchema>;

const SCOPE =
  'Needs writes with distinct values and a dump at quiescence: a write lost and rewritten with the same value, loss in an unchecked replica, and ordering are invisible; timed-out writes are not judged.';

interface WriteRef {
  key: string | null;
  value: unknown;
}

function writeRef(op: Operation): WriteRef {
  if (op.key !== undefined) return { key: op.key, value: op.input };
  if (Array.isArray(op.input) && op.input.length === 2)
    return { key: String(op.input[0]), value: op.input[1] };
  return { key: null, value: op.input };
}

export const noLostAckChecker: Checker<NoLostAckOptions> = {
  name: 'no-lost-ack',
  check(ops: readonly Operation[], rawOptions: NoLostAckOptions) {
    const o = parseOptions('no-lost-ack', noLostAckOptionsSchema, rawOptions);
    const writeF = new Set(o.writeF);
    const fs = finalStates(ops, o);
    const acked: Operation[] = [];
    const failed: Operation[] = [];
    // Per (key, value): the non-failed writes of it, to tell a superseded write from a lost one.
    const writersOf = new Map<unknown, Operation[]>();
    const nonFailedValues = new Set<unknown>();
    let timedOut = 0;
    for (const op of ops) {
      if (!isClient(op) || !writeF.has(op.f)) continue;
      if (op.type === 'ok') acked.push(op);
      else if (op.type === 'fail') failed.push(op);
      else timedOut++;
      if (op.type !== 'fail') {
        const ref = writeRef(op);
        if (ref.key !== null) {
          const k = valueKey([ref.key, ref.value]);
          const list = writersOf.get(k);
          if (list) list.push(op);
          else writersOf.set(k, [op]);
        }
      }
    }
    // Values some non-failed write may have put there: only needed to judge failed writes.
    if (failed.length > 0) {
      for (const op of ops) {
        if (!isClient(op) || !writeF.has(op.f) || op.type === 'fail') continue;
        const ref = writeRef(op);
        nonFailedValues.add(valueKey(ref.key === null ? ref.value : [ref.key, ref.value]));
      }
    }
    // The writes judged and the final reads looked at (a read that did not answer ok is no dump, but was read).
    const consumed = acked.length + failed.length + timedOut + fs.finalReads;
    if (fs.dumps.length === 0) {
      return result(
        'no-lost-ack',
        'unknown',
        `no-lost-ack: ${fmt(acked.length)} acked writes, no final-state dump (${fs.source})`,
        SCOPE,
        [],
        {
          opsConsumed: consumed,
        },
      );
    }
    if (fs.notQuiescent.length > 0) {
      return result(
        'no-lost-ack',
        'unknown',
        `no-lost-ack: ${fmt(fs.notQuiescent.length)} ops completed after the final read began: the dump was not taken at quiescence`,
        SCOPE,
        [],
        { opsConsumed: consumed, notQuiescent: fs.notQuiescent.slice(0, 16) },
      );
    }
    const anomalies: Anomaly[] = [];
    let missing = 0;
    // Distinct acknowledged writes absent from at least one replica's dump (`missing` counts absences,
    // one per write and replica: with three replicas it can exceed the writes acknowledged).
    const lostWrites = new Set<number>();
    let superseded = 0;
    let rejectedPresent = 0;
    for (const d of fs.dumps) {
      const members = collectionItems(d.state);
      let asSet: ValueIndex | null = null;
      if (members !== null) {
        asSet = new ValueIndex();
        for (const v of members) asSet.intern(v);
      }
      const asMap = members === null && isPlainMap(d.state) ? d.state : null;
      if (asSet === null && asMap === null) {
        throw new Error(`no-lost-ack: final state of ${d.replica} is neither a collection nor a map`);
      }
      const present = (op: Operation): 'yes' | 'no' | 'superseded' => {
        const ref = writeRef(op);
        if (asSet !== null) {
          // A keyed write into a collection dump: look for the [k, v] pair, then the bare value.
          if (asSet.slot(op.input) !== -1) return 'yes';
          return ref.key !== null && asSet.slot(ref.value) !== -1 ? 'yes' : 'no';
        }
        const m = asMap as Record<string, unknown>;
        if (ref.key === null)
          throw new Error(
            `no-lost-ack: write op ${op.invokeIndex} has no key but ${d.replica}'s final state is a map`,
          );
        if (!(ref.key in m)) return 'no';
        const cur = m[ref.key];
        const items = collectionItems(cur);
        if (items !== null) return items.some((v) => valueKey(v) === valueKey(ref.value)) ? 'yes' : 'no';
        if (valueKey(cur) === valueKey(ref.value)) return 'yes';
        // Overwritten by a write of the value it holds that may have come later (still running or not
        // yet invoked when this one was invoked).
        const later = (writersOf.get(valueKey([ref.key, cur])) ?? []).some(
          (w) => w.type === 'info' || w.completeIndex === null || w.completeIndex > op.invokeIndex,
        );
        return later ? 'superseded' : 'no';
      };
      for (const op of acked) {
        const p = present(op);
        if (p === 'yes') continue;
        if (p === 'superseded') {
          superseded++;
          continue;
        }
        missing++;
        lostWrites.add(op.invokeIndex);
        if (anomalies.length < MAX_ANOMALIES)
          pushCapped(anomalies, {
            type: 'lost',
            explanation: `${d.replica}: acknowledged ${op.f} of ${JSON.stringify(op.input)} (op ${op.invokeIndex}) is missing from the final state${d.op === null ? '' : ` read by op ${d.op}`}`,
            ops: d.op === null ? [op.invokeIndex] : [op.invokeIndex, d.op],
            replica: d.replica,
          });
      }
      for (const op of failed) {
        const ref = writeRef(op);
        if (nonFailedValues.has(valueKey(ref.key === null ? ref.value : [ref.key, ref.value]))) continue;
        if (present(op) !== 'yes') continue;
        rejectedPresent++;
        if (anomalies.length < MAX_ANOMALIES)
          pushCapped(anomalies, {
            type: 'rejected-present',
            explanation: `${d.replica}: ${op.f} of ${JSON.stringify(op.input)} (op ${op.invokeIndex}) failed, yet its value is in the final state`,
            ops: [op.invokeIndex],
            replica: d.replica,
          });
      }
    }
    const valid = missing > 0 || rejectedPresent > 0 ? false : acked.length === 0 ? 'unknown' : true;
    return result(
      'no-lost-ack',
      valid,
      `no-lost-ack: ${fmt(acked.length)} acked writes, ${fmt(lostWrites.size)} missing in final read of ${fs.dumps.length} replica${fs.dumps.length === 1 ? '' : 's'}${missing > lostWrites.size ? ` (${fmt(missing)} absences over the replicas)` : ''} (${fs.source}); ${fmt(timedOut)} timed out (not judged), ${fmt(rejectedPresent)} failed writes present${superseded ? `, ${fmt(superseded)} superseded` : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: consumed,
        acked: acked.length,
        failed: failed.length,
        timedOut,
        replicas: fs.dumps.length,
        missing,
        lostWrites: lostWrites.size,
        superseded,
        rejectedPresent,
        inDoubt: fs.inDoubt,
      },
    );
  },
};
