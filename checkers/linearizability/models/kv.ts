import type { Operation } from '../../../src/core/history/operation.ts';
import { searchBuffers } from '../buffer-pool.ts';
import { exactInteger, ILLEGAL, type Model, ModelInputError, type StateStore, show } from '../model.ts';

/**
 * A string key/value store (Porcupine's kv model): get returns the key's current string, put replaces
 * it, append concatenates. Every key starts as the initial value ("" by default). The key comes from the
 * op's `key` field, or from a `[key value]` pair value. Partitioned by key.
 */
export interface KvInput {
  f: 'get' | 'put' | 'append';
  key: string;
  arg: string;
  /** Rolling hash of `arg` and BASE^arg.length, precomputed so a step hashes in O(1). */
  argHash: number;
  argPow: number;
}

export interface KvOutput {
  value: string;
  hash: number;
}

/**
 * A key's value with its polynomial hash. Appends grow the strings (hundreds of characters on
 * kv/c50), so hashing or comparing them on every step would dominate; the rolling hash of a
 * concatenation follows from the parts: H(s + a) = H(s) * BASE^|a| + H(a) (mod 2^32).
 */
export interface KvState {
  readonly s: string;
  readonly h: number;
}

const BASE = 0x9e3779b1;

function rollingHash(s: string): { hash: number; pow: number } {
  let hash = 0;
  let pow = 1;
  for (let i = 0; i < s.length; i++) {
    hash = (Math.imul(hash, BASE) + s.charCodeAt(i)) | 0;
    pow = Math.imul(pow, BASE);
  }
  return { hash, pow };
}

function argInput(f: KvInput['f'], key: string, arg: string): KvInput {
  const { hash, pow } = rollingHash(arg);
  return { f, key, arg, argHash: hash, argPow: pow };
}

function asString(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  const big = exactInteger(v);
  if (big !== null) return String(big);
  throw new ModelInputError(`${what} must be a string, got ${show(v)}`);
}

function split(op: Operation, v: unknown, what: string): { key: string; value: unknown } {
  if (op.key !== undefined) return { key: op.key, value: v };
  if (Array.isArray(v) && v.length === 2) return { key: asString(v[0], 'key'), value: v[1] };
  throw new ModelInputError(`${what}: no key (expected a key field or a [key value] value)`);
}

export function makeKv(initialValue: unknown): Model<KvState, KvInput, KvOutput> {
  const initialString =
    initialValue === undefined || initialValue === null ? '' : asString(initialValue, 'initial value');
  const initial: KvState = { s: initialString, h: rollingHash(initialString).hash };
  return {
    name: 'kv',
    init: () => initial,
    step(state, input, output) {
      switch (input.f) {
        case 'get':
          return state.h === output.hash && state.s === output.value ? state : ILLEGAL;
        case 'put':
          return { s: input.arg, h: input.argHash };
        case 'append':
          return { s: state.s + input.arg, h: (Math.imul(state.h, input.argPow) + input.argHash) | 0 };
      }
    },
    equal: (a, b) => a.h === b.h && a.s === b.s,
    stateStore: (inputs, outputs) => new KvStateStore(initial, inputs, outputs),
    readOnly: (input) => input.f === 'get',
    hash: (state) => state.h,
    encode(op) {
      switch (op.f) {
        case 'get': {
          if (op.type !== 'ok') return null;
          const { key } = split(op, op.input, 'get');
          const out = op.key !== undefined ? op.output : split(op, op.output, 'get result').value;
          const value = out === null ? '' : asString(out, 'get result');
          return { input: argInput('get', key, ''), output: { value, hash: rollingHash(value).hash } };
        }
        case 'put':
        case 'append': {
          if (op.type === 'fail') return null;
          const { key, value } = split(op, op.input, op.f);
          return {
            input: argInput(op.f, key, asString(value, `${op.f} value`)),
            output: { value: '', hash: 0 },
          };
        }
        default:
          throw new ModelInputError(
            `model kv has no function ${JSON.stringify(op.f)} (expected get, put, append)`,
          );
      }
    },
    partitionKey: (input) => input.key,
    describeOperation(input, output) {
      if (input.f === 'get') return `get(${JSON.stringify(input.key)}) → ${JSON.stringify(output.value)}`;
      return `${input.f}(${JSON.stringify(input.key)}, ${JSON.stringify(input.arg)})`;
    },
    describeState: (state) => JSON.stringify(state.s),
  };
}

const GET = 0;
const PUT = 1;
const APPEND = 2;
const FIRST_STATES = 1024;
/** V8's longest string: a state's text could not be longer (appending to a string throws there too). */
const MAX_TEXT = 2 ** 29 - 24;

/**
 * The states of one search as a tree in typed arrays (16 bytes a state) rather than one `KvState` and
 * one ever-longer string each: a state is its parent (the state it appended to; -1 for the initial
 * value or a put) and the class of the op that made it, with its rolling hash and length. Its text is
 * the pieces along the path to the root, rebuilt only for reports and for the rare hash match between
 * states built differently. An append allocates nothing on the JavaScript heap: on kv/c50-ok the
 * object-and-string states were most of what the search allocated (18 MB a check), promoted to the
 * old generation because they live as long as their search.
 *
 * States are interned by content, like the search's interning of `KvState`s by `equal`: the same
 * (parent, class) is the same text at once; otherwise equal hash and length are confirmed on the text.
 */
class KvStateStore implements StateStore<KvState> {
  size = 0;
  /** Per class: get, put or append; the argument (the piece a put or append writes); the get's value. */
  private readonly kind: Uint8Array;
  private readonly piece: string[];
  private readonly argHash: Int32Array;
  private readonly argPow: Int32Array;
  private readonly read: string[];
  private readonly readHash: Int32Array;
  /** Per state: parent id (-1: a root), class (-1: the initial value), rolling hash, length. */
  private parent: Int32Array;
  private cls: Int32Array;
  private hash: Int32Array;
  private len: Int32Array;
  /** Open addressing over the states' hashes: state id + 1, 0 for an empty slot. */
  private slots: Int32Array;

  constructor(
    private readonly initial: KvState,
    inputs: readonly KvInput[],
    outputs: readonly KvOutput[],
  ) {
    const n = inputs.length;
    this.kind = new Uint8Array(n);
    this.piece = new Array<string>(n);
    this.argHash = new Int32Array(n);
    this.argPow = new Int32Array(n);
    this.read = new Array<string>(n);
    this.readHash = new Int32Array(n);
    for (let c = 0; c < n; c++) {
      const input = inputs[c] as KvInput;
      const output = outputs[c] as KvOutput;
      this.kind[c] = input.f === 'get' ? GET : input.f === 'put' ? PUT : APPEND;
      this.piece[c] = input.arg;
      this.argHash[c] = input.argHash;
      this.argPow[c] = input.argPow;
      this.read[c] = output.value;
      this.readHash[c] = output.hash;
    }
    this.parent = searchBuffers.take(FIRST_STATES, false);
    this.cls = searchBuffers.take(FIRST_STATES, false);
    this.hash = searchBuffers.take(FIRST_STATES, false);
    this.len = searchBuffers.take(FIRST_STATES, false);
    this.slots = searchBuffers.take(2 * FIRST_STATES, true);
    this.add(-1, -1, initial.h, initial.s.length, this.slotOf(initial.h));
  }

  step(id: number, c: number): number {
    const kind = this.kind[c] as number;
    if (kind === GET) {
      const v = this.read[c] as string;
      return this.hash[id] === this.readHash[c] && this.len[id] === v.length && this.spells(id, v) ? id : -1;
    }
    const piece = this.piece[c] as string;
    if (kind === PUT) return this.intern(-1, c, this.argHash[c] as number, piece.length);
    const n = (this.len[id] as number) + piece.length;
    if (n > MAX_TEXT) throw new RangeError('kv: a state longer than the longest string');
    const h =
      (Math.imul(this.hash[id] as number, this.argPow[c] as number) + (this.argHash[c] as number)) | 0;
    return this.intern(id, c, h, n);
  }

  value(id: number): KvState {
    return { s: this.text(id), h: this.hash[id] as number };
  }

  release(): void {
    for (const a of [this.parent, this.cls, this.hash, this.len, this.slots]) searchBuffers.give(a);
    this.parent = this.cls = this.hash = this.len = this.slots = new Int32Array(0);
  }

  /** The id of the state (parent, class) with hash `h` and length `n`, added when unseen. */
  private intern(p: number, c: number, h: number, n: number): number {
    const { slots, parent, cls, hash, len } = this;
    const mask = slots.length - 1;
    let i = (h ^ (h >>> 16)) & mask;
    for (;;) {
      const e = slots[i] as number;
      if (e === 0) break;
      const id = e - 1;
      if (
        hash[id] === h &&
        len[id] === n &&
        ((parent[id] === p && cls[id] === c) || this.text(id) === this.textOf(p, c))
      )
        return id;
      i = (i + 1) & mask;
    }
    return this.add(p, c, h, n, i);
  }

  private slotOf(h: number): number {
    const mask = this.slots.length - 1;
    let i = (h ^ (h >>> 16)) & mask;
    while (this.slots[i] !== 0) i = (i + 1) & mask;
    return i;
  }

  private add(p: number, c: number, h: number, n: number, slot: number): number {
    const id = this.size;
    if (id === this.parent.length) this.growStates();
    this.parent[id] = p;
    this.cls[id] = c;
    this.hash[id] = h;
    this.len[id] = n;
    this.slots[slot] = id + 1;
    this.size = id + 1;
    if (2 * this.size > this.slots.length) this.growSlots();
    return id;
  }

  private growStates(): void {
    const grow = (a: Int32Array): Int32Array => {
      const b = searchBuffers.take(a.length * 2, false);
      b.set(a);
      searchBuffers.give(a);
      return b;
    };
    this.parent = grow(this.parent);
    this.cls = grow(this.cls);
    this.hash = grow(this.hash);
    this.len = grow(this.len);
  }

  private growSlots(): void {
    const old = this.slots;
    this.slots = searchBuffers.take(old.length * 2, true);
    for (let id = 0; id < this.size; id++) this.slots[this.slotOf(this.hash[id] as number)] = id + 1;
    searchBuffers.give(old);
  }

  /** The piece state `id` added: its op's argument, or the initial value. */
  private pieceOf(id: number): string {
    const c = this.cls[id] as number;
    return c < 0 ? this.initial.s : (this.piece[c] as string);
  }

  /** Whether state `id`'s text is `v` (of the same length), read piece by piece from the end. */
  private spells(id: number, v: string): boolean {
    let end = v.length;
    for (let x = id; ; ) {
      const piece = this.pieceOf(x);
      end -= piece.length;
      if (end < 0 || !v.startsWith(piece, end)) return false;
      x = this.parent[x] as number;
      if (x < 0) return end === 0;
    }
  }

  private text(id: number): string {
    const parts: string[] = [];
    for (let x = id; x >= 0; x = this.parent[x] as number) parts.push(this.pieceOf(x));
    return parts.reverse().join('');
  }

  /** The text of the state class `c` makes from `p` (-1: a put). */
  private textOf(p: number, c: number): string {
    return (p < 0 ? '' : this.text(p)) + (this.piece[c] as string);
  }
}
