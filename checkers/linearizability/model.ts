import type { Operation } from '../../src/core/history/operation.ts';
import { exactInteger, tagOf, valueKey } from '../../src/core/history/values.ts';
import type { EncodedOps } from './op-columns.ts';

// The exact-integer helpers live with the history values they read; models import them from here.
export { addIntegers, canonicalInteger, exactInteger } from '../../src/core/history/values.ts';

/**
 * A sequential specification in Porcupine's spirit. The checker never looks inside states, inputs or
 * outputs: it only calls these functions. States must be immutable values (the checker keeps them in its
 * cache and on its backtracking stack) and `equal` states must get equal `hash`es.
 *
 * Inputs and outputs must be structured-cloneable plain values (they are shipped to worker threads).
 */
export const ILLEGAL: unique symbol = Symbol('illegal');
export type Illegal = typeof ILLEGAL;

export interface EncodedIO<I, O> {
  input: I;
  output: O;
}

/**
 * What the search needs is Porcupine's two (`init`, `step`) and `encode`, which reads a history op as the
 * model's input and output (Porcupine's histories already hold them; faultline's hold Jepsen ops). The
 * rest is optional; `completeModel` fills it in, in one place: states compared with `deepEqual` and
 * hashed with `hashValue` (Porcupine's default equality is `==`: structural here, since states are
 * immutable values), described with `show`, named `model`.
 */
export interface Model<S = unknown, I = unknown, O = unknown> {
  /** How reports name it ("no order of the ops fits the register model"); default `model`. */
  readonly name?: string;
  init(): S;
  /** Apply one op: the next state, or ILLEGAL when the output cannot follow from `state`. */
  step(state: S, input: I, output: O): S | Illegal;
  /**
   * Map a history op onto the model. Returns null for an op that cannot affect the verdict (a failed
   * write that did not happen, a read whose result is unknown); throws ModelInputError for an op the
   * model does not understand. `op.type === 'info'` means the output is unknown. Must read only `f`,
   * `type`, `input`, `output` and `key`: ops equal in those share one encoding (the preparer encodes
   * each distinct combination once).
   */
  encode(op: Operation): EncodedIO<I, O> | null;
  /** Are two states the same? Default: structural equality (`deepEqual`). */
  equal?(a: S, b: S): boolean;
  /** 32-bit hash; equal states must hash equally. Default: `hashValue`, structural. */
  hash?(state: S): number;
  /**
   * True when the op leaves the state unchanged in every state where it is legal (reads, a failed
   * cas): the search then linearizes it greedily. Must be exact; when unsure, return false.
   */
  readOnly?(input: I, output: O): boolean;
  /**
   * Optional quick proof that a partition is not linearizable, from a pattern the model knows to be
   * impossible (e.g. a register read of a value that a later, real-time-ordered write overwrote). Must be
   * sound: return a refutation only when no linearization exists; null otherwise. Op intervals are event
   * positions, `ret` is Infinity for an op whose outcome is unknown. The search is skipped for a refuted
   * partition, so a history the search could only refute by exhausting every order is decided at once.
   */
  refute?(ops: EncodedOps): Refutation | null;
  /**
   * Optional: a simpler partition to search instead of `ops`, or null to search it as it is: some ops
   * left out, and ops of unknown outcome given a return (then they must be linearized, before every op
   * invoked after it). Must be sound: the simpler partition is linearizable exactly when `ops` is (the
   * registers leave out a crashed write whose value no other op reads or compares against, and bound a
   * crashed write that alone wrote a value some op read by that op's return). Applied once per partition,
   * before the refutation and the search; reports count the ops left out and bounded. A result that
   * adds, reorders or changes ops (or moves a recorded return) is refused with an error.
   */
  simplify?(ops: EncodedOps): EncodedOps | null;
  /**
   * Optional: a store for the states one search reaches, given the op classes it will step (class `c`
   * is `inputs[c]`, `outputs[c]`). For models whose states are large and numerous (kv's ever-longer
   * strings): the store keeps them in typed arrays instead of one object per state, so a search
   * allocates almost nothing the garbage collector has to promote and trace. Without it the search
   * interns the values `step` returns with `hash` and `equal`. The store must agree with them.
   */
  stateStore?(inputs: readonly I[], outputs: readonly O[]): StateStore<S>;
  /** P-compositionality: ops with different keys are checked independently. Absent: one partition. */
  partitionKey?(input: I): string;
  /** One op in reports. Default: `input → output`, rendered by `show`. */
  describeOperation?(input: I, output: O): string;
  /** One state in reports. Default: `show`. */
  describeState?(state: S): string;
}

/** The members `completeModel` fills in when a model leaves them out. */
type Defaulted = 'name' | 'equal' | 'hash' | 'describeOperation' | 'describeState';

/** A model with its defaults applied: what the search, the reports and the pages use. */
export type CompleteModel<S = unknown, I = unknown, O = unknown> = Model<S, I, O> &
  Required<Pick<Model<S, I, O>, Defaulted>>;

export type AnyModel = CompleteModel<unknown, unknown, unknown>;

const DEFAULTS: Required<Pick<Model, Defaulted>> = {
  name: 'model',
  equal: deepEqual,
  hash: hashValue,
  describeOperation: (input, output) => `${show(input)} → ${show(output)}`,
  describeState: show,
};

/**
 * The one place a model's optional members get their defaults. A model that declares them all is
 * returned as it is; otherwise a view of it (its prototype, so class models keep their methods) with
 * the missing ones added.
 */
export function completeModel<S, I, O>(model: Model<S, I, O>): CompleteModel<S, I, O> {
  const missing = (Object.keys(DEFAULTS) as Defaulted[]).filter((k) => model[k] === undefined);
  if (missing.length === 0) return model as CompleteModel<S, I, O>;
  const view = Object.create(model) as Record<string, unknown>;
  for (const k of missing) view[k] = DEFAULTS[k];
  return view as unknown as CompleteModel<S, I, O>;
}

/**
 * A model's own interning of the states one search reaches, as dense integer ids (see
 * `Model.stateStore`). It must agree with the model: `step(id, c)` is the id of
 * `model.step(value(id), inputs[c], outputs[c])`, and two ids differ exactly when their values are not
 * `equal`. Ids count from 0 (the initial state, `model.init()`) in the order states are first reached.
 */
export interface StateStore<S> {
  /** Distinct states so far. */
  readonly size: number;
  /** The id of the state after op class `c` from state `id`, added when unseen; -1 when illegal. */
  step(id: number, c: number): number;
  /** The state as the model's value (`describeState`, tests). */
  value(id: number): S;
  /** Hand the store's buffers back for reuse; the store must not be used afterwards. */
  release(): void;
}

/** A proof that a partition is not linearizable, in partition-local op indices. */
export interface Refutation {
  /** The op that cannot be linearized. */
  op: number;
  /** The other ops the proof rests on, in the order the reason names them. */
  witnesses: number[];
  /** One sentence; `#0` is the op, `#1`, `#2`, … the witnesses (the report replaces them with op references). */
  reason: string;
}

/** An op the model cannot interpret; the checker turns it into a one-line bad-input error. */
export class ModelInputError extends Error {
  override readonly name = 'ModelInputError';
}

// ---- value helpers shared by the models ----

/** FNV-1a over UTF-16 code units, then a final avalanche so low bits spread well in masks. */
export function hashString(s: string, seed = 0x811c9dc5): number {
  let h = seed | 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

export function hashNumber(x: number): number {
  if (Number.isInteger(x) && Math.abs(x) < 0x80000000) return fmix32(x ^ 0x5bd1e995);
  return hashString(String(x));
}

/** Structural hash of a JSON-like value (objects hashed independently of key order). */
export function hashValue(v: unknown): number {
  if (v === null || v === undefined) return 0x2545f491;
  switch (typeof v) {
    case 'number':
      return hashNumber(v);
    case 'string':
      return hashString(v);
    case 'boolean':
      return v ? 0x3c6ef372 : 0x1b873593;
    case 'bigint':
      return hashString(`${v}n`);
    default:
      break;
  }
  if (Array.isArray(v)) {
    let h = 0x6a09e667;
    for (const x of v) h = fmix32(Math.imul(h, 31) + hashValue(x));
    return h;
  }
  const members = setMembers(v);
  if (members) {
    // A set's members in any order: summed, so the order does not change the hash.
    let h = 0x9b05688c;
    for (const x of members) h = (h + fmix32(hashValue(x))) | 0;
    return fmix32(h);
  }
  let h = 0x510e527f;
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    h ^= fmix32(hashString(k) + hashValue(x));
  return h;
}

/**
 * Values equal as Jepsen's Clojure compares them: nil (null, or a missing undefined) is nil, objects
 * whatever their key order, sets whatever their member order. Equal exactly when their `valueKey`s are
 * (src/core/history/values.ts), which the passes that read ops without stepping a model key them by.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined) return b === null || b === undefined;
  if (b === null || b === undefined || typeof a !== 'object' || typeof b !== 'object') {
    // NaN is never a register value worth distinguishing; treat it like ===.
    return false;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const as = setMembers(a);
  const bs = setMembers(b);
  if (as || bs) return as !== null && bs !== null && sameMembers(as, bs);
  // for-in instead of Object.keys: no key arrays are allocated (this runs once per op and per model
  // step on histories of millions of ops). Plain data objects have no enumerable inherited keys.
  let count = 0;
  for (const k in a as object) {
    if (!Object.hasOwn(a as object, k)) continue;
    if (!Object.hasOwn(b as object, k)) return false;
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
    count++;
  }
  for (const k in b as object) if (Object.hasOwn(b as object, k)) count--;
  return count === 0;
}

/**
 * The members of an EDN set (`#{1 2}`, read as `{"#set": [1, 2]}`), or null for any other value. A set
 * is equal to the same members in any order, as in Clojure: a register written `#{1 2}` and read back
 * `#{2 1}` holds one value.
 */
function setMembers(v: object): readonly unknown[] | null {
  if (tagOf(v) !== '#set') return null;
  const members = (v as { '#set': unknown })['#set'];
  return Array.isArray(members) ? members : null;
}

/** The same members, in any order (by canonical key: the check the rest of faultline makes of values). */
function sameMembers(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  const counts = new Map<unknown, number>();
  for (const x of a) {
    const k = valueKey(x);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  for (const y of b) {
    const k = valueKey(y);
    const n = counts.get(k);
    if (!n) return false;
    counts.set(k, n - 1);
  }
  return true;
}

/** Short human rendering of a value (EDN-ish: nil for null; big integers as their digits). */
export function show(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v !== 'object') return String(v);
  const big = exactInteger(v);
  if (big !== null) return String(big);
  if (Array.isArray(v)) return `[${v.map(show).join(' ')}]`;
  const items = setItemsOrNull(v);
  if (items) return `#{${items.map(show).join(' ')}}`;
  return `{${Object.entries(v)
    .map(([k, x]) => `${k} ${show(x)}`)
    .join(', ')}}`;
}

/** Items of an EDN set (`{"#set": [...]}`) or null when `v` is not one. */
export function setItemsOrNull(v: unknown): unknown[] | null {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const items = (v as Record<string, unknown>)['#set'];
    if (Array.isArray(items) && Object.keys(v).length === 1) return items;
  }
  return null;
}

/** The `[key value]` pair convention of Jepsen's independent/multi-key workloads. */
export function keyValuePair(v: unknown): [unknown, unknown] | null {
  if (Array.isArray(v) && v.length === 2) return [v[0], v[1]];
  return null;
}

export function describeFallback(f: string, input: unknown, output: unknown): string {
  return `${f}(${show(input)}) → ${show(output)}`;
}
