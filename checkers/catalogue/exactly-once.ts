import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  CheckerOptionsError,
  collectionItems,
  fmt,
  isClient,
  isPlainMap,
  MAX_ANOMALIES,
  mapValues,
  parseOptions,
  pathGetter,
  pushCapped,
  result,
  valueKey,
} from './common.ts';
import { finalStateSourceSchema, finalStates } from './final-state.ts';

/**
 * Exactly-once / idempotency (oracle pattern 11): at most one committed effect per **business**
 * idempotency key found in each op's input at `keyPath`, and, for acknowledged ops, at least one.
 *
 * Effects are counted either in a final-state dump (a list of records, or a map of records, each carrying
 * the key at `recordKeyPath`), or, without a dump, in the history: the distinct effect ids (`effectIdPath`
 * in the ok output, e.g. the ledger entry id the SUT assigned) per key. Retries are separate ops sharing a
 * key; they are never merged.
 *
 * Using the op id as the key makes the check trivially true, so it is refused: by field name (op_id,
 * opId, index, op-index, id of the op) and by content (every key equal to its op's id or index).
 */
export const exactlyOnceOptionsSchema = z.strictObject({
  ...finalStateSourceSchema,
  keyPath: z.string().min(1),
  recordKeyPath: z.string().optional(),
  effectIdPath: z.string().optional(),
  f: z.array(z.string()).optional(),
});
export type ExactlyOnceOptions = z.input<typeof exactlyOnceOptionsSchema>;

const OP_ID_NAMES = new Set(['op_id', 'opid', 'op-id', 'opId', 'index', 'op-index', 'opIndex', 'op_index']);

const SCOPE =
  'Counts effects per business key only: an effect applied once but with the wrong amount, and duplicates under different keys, are invisible; timed-out ops may have zero or one effect.';

type Options = z.output<typeof exactlyOnceOptionsSchema>;

/** Business keys interned to dense slots; counters live in arrays (one million-entry map, not three). */
class KeyTable {
  private readonly slot = new Map<unknown, number>();
  readonly keys: unknown[] = [];
  readonly opsPerKey: number[] = [];
  readonly firstAck: number[] = [];
  readonly effects: number[] = [];
  /** Effects whose key no op carried (counted once, not as an op's key). */
  unkeyedEffects = 0;

  slotOf(key: unknown, create: boolean): number {
    const k = valueKey(key);
    let i = this.slot.get(k);
    if (i === undefined) {
      if (!create) return -1;
      i = this.keys.length;
      this.slot.set(k, i);
      this.keys.push(key);
      this.opsPerKey.push(0);
      this.firstAck.push(-1);
      this.effects.push(0);
    }
    return i;
  }

  addEffect(key: unknown, n: number): void {
    const before = this.keys.length;
    const i = this.slotOf(key, true);
    this.effects[i] = (this.effects[i] as number) + n;
    if (this.keys.length > before) this.unkeyedEffects++;
  }

  get opKeys(): number {
    return this.keys.length - this.unkeyedEffects;
  }
}

/** Count ops per business key and each key's first ack; refuse keys that are really op ids. */
function keyOps(ops: readonly Operation[], o: Options, counted: (op: Operation) => boolean, t: KeyTable) {
  const keyOf = pathGetter(o.keyPath);
  let keyedOps = 0;
  let mirrorsOpId = 0;
  for (const op of ops) {
    if (!counted(op)) continue;
    const key = keyOf(op.input);
    if (key === undefined || key === null) continue;
    keyedOps++;
    if (key === op.id || key === op.invokeIndex) mirrorsOpId++;
    const i = t.slotOf(key, true);
    t.opsPerKey[i] = (t.opsPerKey[i] as number) + 1;
    if (op.type === 'ok' && t.firstAck[i] === -1) t.firstAck[i] = op.invokeIndex;
  }
  if (keyedOps > 1 && mirrorsOpId === keyedOps) {
    throw new CheckerOptionsError(
      `exactly-once: every value at "${o.keyPath}" equals its op's id or index; that is an op id, not a business idempotency key`,
    );
  }
  let retriedKeys = 0;
  for (const c of t.opsPerKey) if (c > 1) retriedKeys++;
  return { keyedOps, retriedKeys };
}

/** Effects from the final-state dump: one per committed record, by its key. */
function effectsFromDump(
  dump: { state: unknown; replica: string },
  via: string,
  o: Options,
  t: KeyTable,
): string {
  const recordKeyOf = pathGetter(o.recordKeyPath ?? o.keyPath);
  const records = collectionItems(dump.state) ?? (isPlainMap(dump.state) ? mapValues(dump.state) : null);
  if (records === null)
    throw new Error('exactly-once: the final state is neither a list nor a map of records');
  for (const r of records) {
    const key = recordKeyOf(r);
    if (key === undefined || key === null) continue;
    t.addEffect(key, 1);
  }
  return `${fmt(records.length)} committed records in ${dump.replica} (${via})`;
}

/** Effects from the ok outputs: distinct effect ids per key. */
function effectsFromIds(
  ops: readonly Operation[],
  o: Options,
  counted: (op: Operation) => boolean,
  t: KeyTable,
): string {
  if (o.effectIdPath === undefined) {
    throw new CheckerOptionsError(
      'exactly-once: no final-state dump; give effectIdPath to count effects from ok outputs',
    );
  }
  const keyOf = pathGetter(o.keyPath);
  const effectIdOf = pathGetter(o.effectIdPath);
  const ids = new Map<number, Set<unknown>>();
  for (const op of ops) {
    if (op.type !== 'ok' || !counted(op)) continue;
    const key = keyOf(op.input);
    if (key === undefined || key === null) continue;
    const id = effectIdOf(op.output);
    if (id === undefined || id === null) continue;
    const i = t.slotOf(key, false);
    let set = ids.get(i);
    if (set === undefined) {
      set = new Set();
      ids.set(i, set);
    }
    set.add(valueKey(id));
  }
  for (const [i, set] of ids) t.effects[i] = set.size;
  return `effect ids at "${o.effectIdPath}" in ok outputs`;
}

/**
 * Keys with more than one effect, and acked keys with none. Only a dump can show an acked key with no
 * effect: counted from ok outputs, such a key is one whose acks carry no effect id (`unidentified`), which
 * says nothing about what was committed, so it is not judged.
 */
function judge(
  t: KeyTable,
  fromDump: boolean,
): {
  anomalies: Anomaly[];
  duplicates: number;
  lostEffects: number;
  unidentified: number;
  unjudgedOps: number;
} {
  const anomalies: Anomaly[] = [];
  let duplicates = 0;
  let lostEffects = 0;
  let unidentified = 0;
  let unjudgedOps = 0;
  for (let i = 0; i < t.keys.length; i++) {
    const n = t.effects[i] as number;
    const key = t.keys[i];
    if (n > 1) {
      duplicates++;
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'duplicate-effect',
          explanation: `idempotency key ${JSON.stringify(key)} has ${n} committed effects`,
          key: typeof key === 'string' ? key : JSON.stringify(key),
          count: n,
        });
    }
    const ack = t.firstAck[i] as number;
    if (ack !== -1 && n === 0 && !fromDump) {
      unidentified++;
      unjudgedOps += t.opsPerKey[i] as number;
    } else if (ack !== -1 && n === 0) {
      lostEffects++;
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'lost-effect',
          explanation: `op ${ack} with idempotency key ${JSON.stringify(key)} was acknowledged but has no committed effect`,
          ops: [ack],
          key: typeof key === 'string' ? key : JSON.stringify(key),
        });
    }
  }
  return { anomalies, duplicates, lostEffects, unidentified, unjudgedOps };
}

export const exactlyOnceChecker: Checker<ExactlyOnceOptions> = {
  name: 'exactly-once',
  check(ops: readonly Operation[], rawOptions: ExactlyOnceOptions) {
    const o = parseOptions('exactly-once', exactlyOnceOptionsSchema, rawOptions);
    const last = o.keyPath.split('.').pop() as string;
    if (OP_ID_NAMES.has(last)) {
      throw new CheckerOptionsError(
        `exactly-once: keyPath "${o.keyPath}" names the op id; the check needs the business idempotency key, or it is trivially true`,
      );
    }
    const fSet = o.f ? new Set(o.f) : null;
    const counted = (op: Operation) =>
      isClient(op) && op.f !== o.finalReadF && (fSet === null || fSet.has(op.f));
    const t = new KeyTable();
    const { keyedOps, retriedKeys } = keyOps(ops, o, counted, t);
    const fs = finalStates(ops, o);
    let source: string;
    const fromDump = fs.dumps.length > 0;
    if (fromDump) {
      if (fs.notQuiescent.length > 0)
        return result(
          'exactly-once',
          'unknown',
          `exactly-once: ${fmt(fs.notQuiescent.length)} ops completed after the final read began: not quiescent`,
          SCOPE,
          [],
          { opsConsumed: keyedOps },
        );
      source = effectsFromDump(fs.dumps[0] as (typeof fs.dumps)[number], fs.source, o, t);
    } else {
      source = effectsFromIds(ops, o, counted, t);
      if (retriedKeys === 0)
        return result(
          'exactly-once',
          'unknown',
          `exactly-once: ${fmt(t.opKeys)} keys, none used by more than one op: from the history alone nothing could have applied twice`,
          SCOPE,
          [],
          { opsConsumed: keyedOps, keys: t.opKeys, retriedKeys },
        );
    }
    // The ops of keys not judged are not consumed: a verdict over the rest says it covered only part.
    const { anomalies, duplicates, lostEffects, unidentified, unjudgedOps } = judge(t, fromDump);
    let ackedKeys = 0;
    for (const a of t.firstAck) if (a !== -1) ackedKeys++;
    const valid =
      duplicates > 0 || lostEffects > 0
        ? false
        : keyedOps === 0 || (ackedKeys > 0 && unidentified === ackedKeys)
          ? 'unknown'
          : true;
    return result(
      'exactly-once',
      valid,
      `exactly-once: ${fmt(keyedOps)} ops over ${fmt(t.opKeys)} idempotency keys (${fmt(retriedKeys)} retried), effects from ${source}: ${fmt(duplicates)} keys applied more than once, ${fmt(lostEffects)} acked keys with no effect${unidentified ? `; ${fmt(unidentified)} acked keys whose ok outputs carry no effect id (not judged)` : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: keyedOps - unjudgedOps,
        keys: t.opKeys,
        retriedKeys,
        duplicates,
        lostEffects,
        unidentified,
      },
    );
  },
};
