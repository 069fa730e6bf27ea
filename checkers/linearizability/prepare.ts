import { type Operation, wasNotApplied } from '../../src/core/history/operation.ts';
import { type AnyModel, deepEqual, fmix32, hashNumber, hashString, ModelInputError } from './model.ts';
import { EncodedOps, EncodedOpsBuilder } from './op-columns.ts';

export type { EncodedOp } from './op-columns.ts';

export interface Partition {
  /** The partition key, or null when the model does not partition. */
  key: string | null;
  ops: EncodedOps;
}

export interface PreparedHistory {
  partitions: Partition[];
  /** Client ops handed to the model (nemesis ops are never counted). */
  opsConsumed: number;
  /** Ops that cannot affect the verdict (failed writes, reads with unknown result, not-applied failures). */
  opsIgnored: number;
  /** Ops of unknown outcome the model left out of the search: no other op could observe them (Model.simplify). */
  opsUnobserved: number;
  /** Ops of unknown outcome the model bounded: another op saw what only they wrote (Model.simplify). */
  opsBounded: number;
}

/** Thrown for an op the model cannot interpret; carries the op so the error names it. */
export class OperationInputError extends Error {
  override readonly name = 'OperationInputError';
  constructor(
    readonly op: Operation,
    reason: string,
  ) {
    super(`op ${op.invokeIndex} (process ${op.process}, f ${JSON.stringify(op.f)}): ${reason}`);
  }
}

/** Natural key order (k2 before k10); built on first use: creating a Collator loads ICU data (~20 ms). */
let keyOrder: Intl.Collator | undefined;

interface IoClass {
  io: number;
  input: unknown;
  output: unknown;
}

/**
 * A 32-bit hash of a JSON-like value consistent with deepEqual (object keys in any order), allocating
 * nothing: interning runs once per op of histories of millions of ops.
 */
function structuralHash(v: unknown): number {
  if (v === null || v === undefined) return 0x2545f491;
  switch (typeof v) {
    case 'number':
      return hashNumber(v);
    case 'string':
      return hashString(v);
    case 'boolean':
      return v ? 0x3c6ef372 : 0x1b873593;
    case 'object':
      break;
    default:
      return hashString(String(v));
  }
  if (Array.isArray(v)) {
    let h = 0x6a09e667;
    for (let i = 0; i < v.length; i++) h = fmix32(Math.imul(h, 31) + structuralHash(v[i]));
    return h;
  }
  let h = 0x510e527f;
  for (const k in v as Record<string, unknown>)
    h ^= fmix32(hashString(k) + structuralHash((v as Record<string, unknown>)[k]));
  return h;
}

/** Distinct (input, output) pairs interned per history; beyond this, ops keep their own objects. */
const MAX_IO_CLASSES = 4096;

/** Distinct raw ops remembered ({@link RawOpMemo}); a history with more (unique values) stops using it. */
const MAX_RAW_KEYS = 8192;

/** A raw op the model ignores (encode returned null), in the memo of raw ops. */
const IGNORED = null;

interface Encoded {
  cls: IoClass;
  key: string | null;
}

/**
 * What the model made of an op, remembered by the op's raw fields (f, type, input, output, key) when
 * they are flat values: null, a number, a string, a boolean, or an array of at most four numbers or
 * nulls. A history of millions of ops over a few values then encodes each distinct op once.
 *
 * Looked up by a hash of the fields and an exact comparison, allocating nothing: building a key string
 * per op (and hashing it again in a Map) cost about 0.2 s of CPU per million ops. Two ops hit the same
 * entry exactly when their fields are equal (`===`, element by element for arrays). Kept in this module:
 * one more module is one more for `faultline check` to load at start-up (test/cli/startup-modules.test.ts).
 */
interface Entry<V> {
  f: string;
  type: string;
  input: unknown;
  output: unknown;
  key: unknown;
  value: V;
}

const NULL_HASH = 0x2545f491;
const UNDEFINED_HASH = 0x1f83d9ab;

/** A flat value's hash, or NaN when it is not flat. */
function flatHash(v: unknown): number {
  if (v === null) return NULL_HASH;
  if (v === undefined) return UNDEFINED_HASH;
  switch (typeof v) {
    case 'number':
      return hashNumber(v);
    case 'string':
      return hashString(v, 0x9e3779b9);
    case 'boolean':
      return v ? 0x3c6ef372 : 0x1b873593;
    case 'object':
      break;
    default:
      return Number.NaN;
  }
  if (!Array.isArray(v) || v.length > 4) return Number.NaN;
  let h = 0x6a09e667 + v.length;
  for (let i = 0; i < v.length; i++) {
    const e = v[i];
    if (e === null) h = fmix32(Math.imul(h, 31) + NULL_HASH);
    else if (typeof e === 'number') h = fmix32(Math.imul(h, 31) + hashNumber(e));
    else return Number.NaN;
  }
  return h;
}

/** Equality of two flat values as the memo needs it (both already known to be flat). */
function flatEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class RawOpMemo<V> {
  private buckets: Map<number, Entry<V>[]> | null = new Map();
  private size = 0;

  /** `max` distinct ops at most: a history with more (unique values) stops using the memo. */
  constructor(private readonly max: number) {}

  /** The hash of the op's raw fields; NaN when they are not flat or the memo was dropped. */
  hash(op: Operation): number {
    if (this.buckets === null) return Number.NaN;
    const input = flatHash(op.input);
    if (Number.isNaN(input)) return input;
    const output = flatHash(op.output);
    if (Number.isNaN(output)) return output;
    const key = flatHash(op.key);
    if (Number.isNaN(key)) return key;
    let h = hashString(op.f);
    h = fmix32(Math.imul(h, 31) + hashString(op.type, 0x510e527f));
    h = fmix32(Math.imul(h, 31) + input);
    h = fmix32(Math.imul(h, 31) + output);
    return fmix32(Math.imul(h, 31) + key);
  }

  /** What was remembered for an op with these fields (`h` from {@link hash}), or undefined. */
  get(op: Operation, h: number): V | undefined {
    const bucket = this.buckets?.get(h);
    if (bucket === undefined) return undefined;
    for (const e of bucket)
      if (
        e.f === op.f &&
        e.type === op.type &&
        flatEqual(e.input, op.input) &&
        flatEqual(e.output, op.output) &&
        flatEqual(e.key, op.key)
      )
        return e.value;
    return undefined;
  }

  set(op: Operation, h: number, value: V): void {
    if (this.buckets === null || Number.isNaN(h)) return;
    if (this.size >= this.max) {
      this.buckets = null;
      return;
    }
    const entry: Entry<V> = {
      f: op.f,
      type: op.type,
      input: op.input,
      output: op.output,
      key: op.key,
      value,
    };
    const bucket = this.buckets.get(h);
    if (bucket) bucket.push(entry);
    else this.buckets.set(h, [entry]);
    this.size++;
  }
}

/**
 * Encode client ops with the model and split them by the model's partition key (P-compositionality:
 * the history is linearizable iff every partition is). Partitions come out in key order so reports are
 * deterministic; ops within a partition in id (invocation) order.
 *
 * Ops are added one at a time, so a history can be read, paired and prepared as a stream without ever
 * holding its events or Operation objects (give `add` to Pairer's `onClosed`). Equal encodings (same
 * input and output, e.g. every ok `write 3`) share one input and one output object and an `io` id: the
 * search memoizes model steps per id, and a long history over few values costs little memory.
 */
export class HistoryPreparer {
  private readonly byKey = new Map<string | null, EncodedOpsBuilder>();
  /** Inputs and outputs of the interned classes, by io id (shared by every partition's columns). */
  private readonly ioInputs: unknown[] = [];
  private readonly ioOutputs: unknown[] = [];
  /** Interned encodings by structural hash (collisions resolved with deepEqual). */
  private readonly ios = new Map<number, IoClass[]>();
  private ioCount = 0;
  /** Encodings by the op's raw fields; dropped once it holds MAX_RAW_KEYS. */
  private readonly rawKeys = new RawOpMemo<Encoded | typeof IGNORED>(MAX_RAW_KEYS);
  private consumed = 0;
  private ignored = 0;

  constructor(private readonly model: AnyModel) {}

  add(op: Operation): void {
    if (op.process === 'nemesis') return;
    this.consumed++;
    // Never applied, observed nothing (e.g. connection refused): constrains nothing, for every model.
    if (wasNotApplied(op)) {
      this.ignored++;
      return;
    }
    const raw = this.rawKeys.hash(op);
    if (!Number.isNaN(raw)) {
      const known = this.rawKeys.get(op, raw);
      if (known !== undefined) {
        if (known === IGNORED) this.ignored++;
        else this.place(op, known.key, known.cls, null, null);
        return;
      }
    }
    let io: ReturnType<AnyModel['encode']>;
    try {
      io = this.model.encode(op);
    } catch (err) {
      if (err instanceof ModelInputError) throw new OperationInputError(op, err.message);
      throw err;
    }
    if (io === null) {
      this.ignored++;
      this.rawKeys.set(op, raw, IGNORED);
      return;
    }
    const key = this.model.partitionKey ? this.model.partitionKey(io.input) : null;
    const shared = this.intern(io.input, io.output);
    if (shared) this.rawKeys.set(op, raw, { cls: shared, key });
    this.place(op, key, shared, io.input, io.output);
  }

  private place(
    op: Operation,
    key: string | null,
    shared: IoClass | null,
    input: unknown,
    output: unknown,
  ): void {
    let list = this.byKey.get(key);
    if (!list) {
      list = new EncodedOpsBuilder(this.ioInputs, this.ioOutputs);
      this.byKey.set(key, list);
    }
    const open = op.type === 'info' || op.completeIndex === null;
    const call = op.invokeIndex;
    const ret = open ? Number.POSITIVE_INFINITY : (op.completeIndex as number);
    if (shared) list.push(op.id, op.process, call, ret, shared.io);
    else list.pushOwn(op.id, op.process, call, ret, input, output);
  }

  private intern(input: unknown, output: unknown): IoClass | null {
    const h = (Math.imul(structuralHash(input), 31) + structuralHash(output)) | 0;
    const bucket = this.ios.get(h);
    if (bucket) {
      for (const c of bucket) if (deepEqual(c.input, input) && deepEqual(c.output, output)) return c;
    }
    if (this.ioCount >= MAX_IO_CLASSES) return null;
    const entry: IoClass = { io: this.ioCount++, input, output };
    this.ioInputs.push(input);
    this.ioOutputs.push(output);
    if (bucket) bucket.push(entry);
    else this.ios.set(h, [entry]);
    return entry;
  }

  finish(): PreparedHistory {
    const keys = [...this.byKey.keys()];
    if (keys.length > 1) {
      keyOrder ??= new Intl.Collator('en', { numeric: true });
      const order = keyOrder;
      keys.sort((a, b) => order.compare(a ?? '', b ?? ''));
    }
    let unobserved = 0;
    let bounded = 0;
    const partitions = keys.map((key) => {
      const ops = (this.byKey.get(key) as EncodedOpsBuilder).finish();
      const simpler = simplifyPartition(this.model, ops);
      if (simpler === null) return { key, ops };
      unobserved += ops.length - simpler.length;
      if (simpler.bounded !== null) for (const b of simpler.bounded) bounded += b;
      return { key, ops: simpler };
    });
    return {
      partitions,
      opsConsumed: this.consumed,
      opsIgnored: this.ignored,
      opsUnobserved: unobserved,
      opsBounded: bounded,
    };
  }
}

/**
 * What the model's `simplify` made of a partition, checked against it and with the ops it bounded
 * marked ({@link EncodedOps.bounded}): the one place that sees both, so the counts, the shrinker and the
 * page agree however a model built its columns. Null when the model has no simplification for it.
 * A simplification that is not one (an op added, reordered, or given another call or process; a
 * recorded return moved) is the model's bug and is refused with an error naming the model and the op:
 * searching it could give any verdict.
 */
export function simplifyPartition(model: AnyModel, ops: EncodedOps): EncodedOps | null {
  const simpler = model.simplify?.(ops) ?? null;
  if (simpler === null) return null;
  const refuse = (id: number, what: string): never => {
    throw new Error(
      `model ${model.name}: simplify ${what} (op ${id}); it may only leave ops out and bound ops of unknown outcome`,
    );
  };
  const bounded = new Uint8Array(simpler.length);
  let any = false;
  let j = 0;
  for (let k = 0; k < simpler.length; k++) {
    const id = simpler.id[k] as number;
    while (j < ops.length && ops.id[j] !== id) j++;
    if (j === ops.length) refuse(id, 'returned an op that is not in the partition, or out of its order');
    const call = ops.call[j] as number;
    const recorded = ops.ret[j] as number;
    const ret = simpler.ret[k] as number;
    if (simpler.call[k] !== call || simpler.process[k] !== ops.process[j])
      refuse(id, "changed an op's call or process");
    if (recorded !== Number.POSITIVE_INFINITY) {
      if (ret !== recorded) refuse(id, 'moved a recorded return');
    } else if (ret !== Number.POSITIVE_INFINITY) {
      // A bound at or before the call is sound too: the op cannot be linearized (a read of 5 returned
      // before the sole write of 5 was invoked), and the search finds the partition illegal.
      bounded[k] = 1;
      any = true;
    }
    j++;
  }
  return new EncodedOps({ ...simpler.data(), bounded: any ? bounded : null });
}

export function prepareHistory(model: AnyModel, ops: readonly Operation[]): PreparedHistory {
  const preparer = new HistoryPreparer(model);
  for (const op of ops) preparer.add(op);
  return preparer.finish();
}
