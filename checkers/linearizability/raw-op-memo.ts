import type { Operation } from '../../src/core/history/operation.ts';
import { fmix32, hashNumber, hashString } from './model.ts';

/**
 * What the model made of an op, remembered by the op's raw fields (f, type, input, output, key) when
 * they are flat values: null, a number, a string, a boolean, or an array of at most four numbers or
 * nulls. A history of millions of ops over a few values then encodes each distinct op once.
 *
 * Looked up by a hash of the fields and an exact comparison, allocating nothing: building a key string
 * per op (and hashing it again in a Map) cost about 0.2 s of CPU per million ops. Two ops hit the same
 * entry exactly when their fields are equal (`===`, element by element for arrays).
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
