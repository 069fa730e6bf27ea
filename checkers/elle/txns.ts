import {
  CompactValue,
  TREE_INT,
  TREE_LIST,
  TREE_NULL,
  TREE_STRING,
} from '../../src/core/history/compact-value.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { tagOf, valueKey } from '../../src/core/history/values.ts';
import { i32, recycleIntoArena, reserveArena } from './arena.ts';

/**
 * Client transactions flattened into parallel typed arrays, so the analyses index integers instead of
 * walking objects: txn t has micro-ops mopStart[t] .. mopStart[t+1]-1; keys are interned to dense ids;
 * values are integer codes (see {@link ValueCodes}); a read of a list keeps its elements as codes in one
 * shared pool. No Operation object is kept: a history of millions of transactions streams through
 * {@link TxnBuilder} and costs a few dozen bytes per micro-op.
 *
 * Which value a txn carries: an `ok` op's completion value (what was observed); a `fail` or `info` op's
 * invocation value (what was attempted; an indeterminate op's reads are unknown, a failed op's writes
 * were aborted).
 */
/** Arena estimate: what the analysis, graph and SCC arrays take per micro-op and per transaction. */
const ARENA_BYTES_PER_MOP = 48;
const ARENA_BYTES_PER_TXN = 140;

export const OK = 0;
export const INFO = 1;
export const FAIL = 2;
const TYPE_NAMES = ['ok', 'info', 'fail'] as const;

export const READ = 0;
export const WRITE = 1;

/** The value code of nil (an unknown or initial value). */
export const NIL = -1;

export interface TxnHistory {
  n: number;
  status: Uint8Array;
  /** The op's process (-1 when it is not a number). */
  process: Float64Array;
  /** History event index of each txn's invocation (the `op N` every report uses). */
  invokeIndex: Float64Array;
  /** History event index of each txn's completion, NaN when it never completed. */
  completeIndex: Float64Array;
  mopStart: Int32Array;
  mopKind: Uint8Array;
  mopKey: Int32Array;
  /** A scalar micro-op value's code, or the pool position of a read list's first element. */
  mopCode: Int32Array;
  /** A read list's length, or -1 when the micro-op's value is a scalar (its code is in mopCode). */
  mopLen: Int32Array;
  /**
   * Elements of every read list, as value codes, in chunks (see {@link ListPool}): position p is
   * element p & POOL_CHUNK_MASK of chunk p >>> POOL_CHUNK_BITS, and a list never spans two chunks.
   */
  pool: readonly Int32Array[];
  values: ValueCodes;
  keys: unknown[];
  /** Client ops that were not transactions (value not a micro-op list): counted, not analysed. */
  skipped: number;
  /** Every op consumed, transactions or not. */
  opsConsumed: number;
}

export class MicroOpError extends Error {}

/** Map keys equal exactly for equal values, so equal values intern together (the history layer's). */
export { valueKey };

/**
 * Values as int32 codes: a non-negative integer below 2^31 is its own code, nil is {@link NIL}, and any
 * other value is interned (code -2 - i). Two values have the same code exactly when their
 * {@link valueKey}s are equal, so analyses compare codes instead of values.
 */
export class ValueCodes {
  private readonly ids = new Map<unknown, number>();
  readonly interned: unknown[] = [];

  encode(v: unknown): number {
    if (v === null || v === undefined) return NIL;
    if (typeof v === 'number' && v >= 0 && v <= 0x7fffffff && Number.isInteger(v)) return v;
    const k = valueKey(v);
    let id = this.ids.get(k);
    if (id === undefined) {
      id = this.interned.length;
      this.ids.set(k, id);
      this.interned.push(v);
    }
    return -2 - id;
  }

  decode(code: number): unknown {
    return code >= 0 ? code : code === NIL ? null : this.interned[-2 - code];
  }
}

/** A micro-op's value as a plain value (a read list as an array). */
export function mopValue(h: TxnHistory, m: number): unknown {
  const len = h.mopLen[m]!;
  if (len < 0) return h.values.decode(h.mopCode[m]!);
  return decodeList(h, h.mopCode[m]!, len);
}

/** A read micro-op's list as codes (a view of the pool), or null when its value is not a list. */
export function readCodes(h: TxnHistory, m: number): Int32Array | null {
  const len = h.mopLen[m]!;
  return len < 0 ? null : poolView(h.pool, h.mopCode[m]!, len);
}

/** A list no read returned: what {@link lastReadCode} gives for an empty list or nil (no int32 code). */
export const EMPTY_READ = 2 ** 32;

/** The code of the last element micro-op m read, or {@link EMPTY_READ}; no view is made. */
export function lastReadCode(h: TxnHistory, m: number): number {
  const len = h.mopLen[m]!;
  if (len <= 0) return EMPTY_READ;
  const at = h.mopCode[m]!;
  return (h.pool[at >>> POOL_CHUNK_BITS] as Int32Array)[(at & POOL_CHUNK_MASK) + len - 1]!;
}

/**
 * Where read micro-op m's list lies without making a view (hot loops read millions of lists): in
 * `readChunk(h, m)` from `readOffset(h, m)`, `h.mopLen[m]` elements (only when that is ≥ 0).
 */
export function readChunk(h: TxnHistory, m: number): Int32Array {
  return h.pool[h.mopCode[m]! >>> POOL_CHUNK_BITS] as Int32Array;
}

export function readOffset(h: TxnHistory, m: number): number {
  return h.mopCode[m]! & POOL_CHUNK_MASK;
}

function poolView(pool: readonly Int32Array[], at: number, len: number): Int32Array {
  const offset = at & POOL_CHUNK_MASK;
  return (pool[at >>> POOL_CHUNK_BITS] as Int32Array).subarray(offset, offset + len);
}

export function decodeList(h: TxnHistory, start: number, len: number): unknown[] {
  const codes = poolView(h.pool, start, len);
  const out: unknown[] = new Array(len);
  for (let i = 0; i < len; i++) out[i] = h.values.decode(codes[i]!);
  return out;
}

/** The op type ('ok', 'info', 'fail') of txn t. */
export function txnType(h: TxnHistory, t: number): 'ok' | 'info' | 'fail' {
  return TYPE_NAMES[h.status[t]!]!;
}

export function extractTxns(ops: Iterable<Operation>, writeF: 'append' | 'w'): TxnHistory {
  const b = new TxnBuilder(writeF);
  for (const op of ops) b.add(op);
  return b.finish();
}

/**
 * Growable typed arrays, one class per element type so every access site stays monomorphic (a shared
 * generic class made the builder's pushes megamorphic).
 *
 * Each grows eightfold (at most {@link GROW_STEP_MAX} elements at a time). A large typed array's memory
 * is mapped by the kernel page by page as it is first written, so capacity never written costs address
 * space, not memory; what costs is each page written for the first time (a page fault, several µs each
 * on a loaded virtual machine, and a history of 10M transactions writes millions of them). Growing by
 * half wrote every element about three times over into fresh pages (the final array plus the copies
 * made at each resize); growing eightfold writes it about 1.14 times.
 */
const GROW_STEP_MAX = 1 << 26;

function grownCapacity(length: number): number {
  return length + Math.min(length * 7, GROW_STEP_MAX);
}

class Grow32 {
  length = 0;
  data = new Int32Array(1024);
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(grownCapacity(this.data.length));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}

class Grow8 {
  length = 0;
  data = new Uint8Array(1024);
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint8Array(grownCapacity(this.data.length));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Uint8Array {
    return this.data.subarray(0, this.length);
  }
}

class Grow64 {
  length = 0;
  data = new Float64Array(1024);
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(grownCapacity(this.data.length));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/**
 * Read lists stored in chunks of at most POOL_CHUNK elements. One growing array would copy itself at
 * every resize and briefly hold the old copy beside the new one: with 10M list-append transactions
 * (280M list elements) that was over a gigabyte copied and more than 2.5 GB at the peak. A chunk fills
 * up and is kept; the first grows from small so a short history stays small. A list longer than a chunk
 * gets a chunk of its own (its elements are read from the chunk's start, so positions past the chunk
 * size are never needed).
 *
 * Reads of one key mostly repeat each other: in a list-append history nearly every read of a key is a
 * prefix of a later one. So each key has a reference list, and a read is kept against it
 * ({@link ListPool.keep}): a read that is a prefix of the reference is given the reference's position (a list
 * is a position and a length, so a prefix is the same position, shorter); a read that extends the
 * reference is written past its end, in room reserved after it, and the reference grows (a key's first
 * read gets no room; the first read that extends it moves the reference to a copy with room, and the
 * room doubles at each move); a read that disagrees with the reference is stored on its own. Positions
 * are only ever appended to, never rewritten, so every list given out stays as it was read. In the
 * 10M-transaction history this keeps a few million elements instead of 280M, and a read at the
 * reference's position is known to agree with it without comparing (list-append's checkReads).
 */
const POOL_CHUNK_BITS = 22;
const POOL_CHUNK = 1 << POOL_CHUNK_BITS;
const POOL_CHUNK_MASK = POOL_CHUNK - 1;
/** Positions are int32 (they live in mopCode): 512 chunks. */
const POOL_MAX_CHUNKS = 2 ** 31 / POOL_CHUNK;
/** The least room a moved reference list gets beyond its own length (it doubles from there). */
const REFERENCE_SLACK = 8;

class ListPool {
  readonly chunks: Int32Array[] = [];
  /** The chunk being filled, how much of it is used, and its position. */
  private data = new Int32Array(1024);
  private used = 0;
  private base = 0;
  /** The list being kept: its codes are written here first, then {@link keep} places them. */
  private staged = new Int32Array(1024);
  /** Per key id: its reference list's position (-1: none yet), length, and the end of its room. */
  private refAt = new Int32Array(1024).fill(-1);
  private refLen = new Int32Array(1024);
  private refEnd = new Int32Array(1024);

  /** The staging array with room for `len` codes (it may be a new array: take it after calling). */
  stage(len: number): Int32Array {
    if (len > this.staged.length) this.staged = new Int32Array(Math.max(len, this.staged.length * 2));
    return this.staged;
  }

  /** Keep the `len` codes staged as a read of key id `key` (see the class comment); their position. */
  keep(key: number, len: number): number {
    // An empty list may sit anywhere in a chunk; past the end of a full one it would name the next.
    if (len === 0) return this.base;
    if (key >= this.refAt.length) this.growKeys(key);
    const at = this.refAt[key]!;
    // A key's first read gets no room: a key read once then costs what its list does.
    if (at < 0) return this.newReference(key, len, len);
    const refLen = this.refLen[key]!;
    const chunk = this.chunkAt(at);
    const off = at & POOL_CHUNK_MASK;
    const staged = this.staged;
    const common = Math.min(len, refLen);
    let p = 0;
    while (p < common && staged[p] === chunk[off + p]) p++;
    if (p === len) return at;
    if (p < refLen) return this.put(len, len);
    // It extends the reference: in place while the room lasts, else the reference moves.
    if (at + len > this.refEnd[key]!) return this.newReference(key, len, movedRoom(len));
    chunk.set(staged.subarray(p, len), off + p);
    this.refLen[key] = len;
    return at;
  }

  private newReference(key: number, len: number, room: number): number {
    const at = this.put(len, room);
    this.refAt[key] = at;
    this.refLen[key] = len;
    this.refEnd[key] = at + room;
    return at;
  }

  /** The staged list copied into `room` ≥ len fresh positions; its position. */
  private put(len: number, room: number): number {
    if (this.used + room > this.data.length) {
      if (this.used + room <= POOL_CHUNK) this.grow(this.used + room);
      else {
        this.seal();
        this.data = new Int32Array(Math.max(room, POOL_CHUNK));
      }
    }
    const at = this.base + this.used;
    this.data.set(this.staged.subarray(0, len), this.used);
    this.used += room;
    return at;
  }

  /** The chunk holding position `at`: a kept one, or the one being filled. */
  private chunkAt(at: number): Int32Array {
    const c = at >>> POOL_CHUNK_BITS;
    return c < this.chunks.length ? this.chunks[c]! : this.data;
  }

  private growKeys(key: number): void {
    const size = Math.max(key + 1, this.refAt.length * 2);
    this.refAt = widened(this.refAt, size, -1);
    this.refLen = widened(this.refLen, size, 0);
    this.refEnd = widened(this.refEnd, size, 0);
  }

  private grow(need: number): void {
    const next = new Int32Array(Math.min(POOL_CHUNK, Math.max(need, this.data.length * 2)));
    next.set(this.data.subarray(0, this.used));
    this.data = next;
  }

  /** Keep the chunk being filled; the next one starts at the next chunk position. */
  private seal(): void {
    if (this.chunks.length + 1 >= POOL_MAX_CHUNKS)
      throw new RangeError(`read lists fill more than ${POOL_MAX_CHUNKS} chunks of ${POOL_CHUNK} elements`);
    this.chunks.push(this.used === this.data.length ? this.data : this.data.subarray(0, this.used));
    this.base = this.chunks.length * POOL_CHUNK;
    this.used = 0;
  }

  view(): Int32Array[] {
    return [...this.chunks, this.data.subarray(0, this.used)];
  }
}

/** Room for a reference list of `len` elements that moves: twice its length (at least 8 more), within a chunk. */
function movedRoom(len: number): number {
  return Math.min(Math.max(2 * len, len + REFERENCE_SLACK), Math.max(len, POOL_CHUNK));
}

/** `a` copied into a longer array whose other entries are `fill`. */
function widened(a: Int32Array, size: number, fill: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(size);
  if (fill !== 0) b.fill(fill, a.length);
  b.set(a);
  return b;
}

const grow32 = () => new Grow32();
/** Integer keys below this are interned through an array instead of a Map. */
const SMALL_KEYS = 1 << 16;
const grow8 = () => new Grow8();
const grow64 = () => new Grow64();

/**
 * Builds a {@link TxnHistory} from operations fed one at a time, in any order (a stream of completions
 * arrives in completion order): each transaction is copied into typed arrays at once and its Operation
 * can be dropped. `finish` puts the transactions in invocation order (faultline's op ids). A malformed
 * micro-op is remembered and thrown by `finish`, after every op was counted.
 */
export class TxnBuilder {
  private readonly status = grow8();
  private readonly process = grow64();
  private readonly invokeIndex = grow64();
  private readonly completeIndex = grow64();
  private readonly opId = grow64();
  private readonly mopStart = grow32();
  private readonly mopKind = grow8();
  private readonly mopKey = grow32();
  private readonly mopCode = grow32();
  private readonly mopLen = grow32();
  private pool = new ListPool();
  private readonly values = new ValueCodes();
  private readonly keyIds = new Map<unknown, number>();
  /** Key id + 1 of each small integer key (0: not seen yet). */
  private readonly smallKeyIds = new Int32Array(SMALL_KEYS);
  private readonly keys: unknown[] = [];
  private skipped = 0;
  private consumed = 0;
  private inOrder = true;
  private error: MicroOpError | null = null;
  /** Arrays {@link reordered} no longer needs, given back to the check's arena by `finish`. */
  private spent: ArrayBufferView[] = [];

  constructor(private readonly writeF: 'append' | 'w') {}

  get opsConsumed(): number {
    return this.consumed;
  }

  add(op: Operation): void {
    this.consumed++;
    if (op.process === 'nemesis' || this.error) return;
    let value = op.type === 'ok' ? op.output : op.input;
    if (!isList(value)) {
      if (op.type === 'ok' || !isList(op.output)) {
        this.skipped++;
        return;
      }
      value = op.output;
    }
    const n = this.status.length;
    if (n > 0 && op.id < this.opId.data[n - 1]!) this.inOrder = false;
    const start = this.mopKind.length;
    // After a malformed micro-op the history is not analysed at all: the rest is only counted.
    if (value instanceof CompactValue) {
      if (!this.addTree(op, value)) return;
    } else for (const mop of value as unknown[]) if (!this.addMop(op, mop)) return;
    this.status.push(op.type === 'ok' ? OK : op.type === 'fail' ? FAIL : INFO);
    this.process.push(typeof op.process === 'number' ? op.process : -1);
    this.invokeIndex.push(op.invokeIndex);
    this.completeIndex.push(op.completeIndex ?? Number.NaN);
    this.opId.push(op.id);
    this.mopStart.push(start);
  }

  /**
   * The micro-ops of a value left as a compact tree, read node by node into the arrays and the pool:
   * no array is made for the transaction, its micro-ops or its reads. What {@link addMop} does for
   * `[f key value]` with f "r" or the write function, an integer or string key, and a value that is an
   * int32, nil or (for a read) a list of int32; any other micro-op is made plain and given to
   * {@link addMop}, so its codes, its key's id and its error are the ones the plain value gets.
   */
  private addTree(op: Operation, cv: CompactValue): boolean {
    const tree = cv.tree;
    const observed = op.type === 'ok';
    let node = cv.root + 1;
    for (let i = tree[(cv.root << 1) + 1]!; i > 0; i--) {
      const at = node << 1;
      const len = tree[at + 1]!;
      if (
        tree[at] === TREE_LIST &&
        (len === 2 || len === 3) &&
        tree[at + 2] === TREE_STRING &&
        (tree[at + 4] === TREE_INT || tree[at + 4] === TREE_STRING)
      ) {
        const f = cv.text(tree[at + 3]!);
        const kind = f === 'r' ? READ : f === this.writeF ? WRITE : -1;
        const key = tree[at + 4] === TREE_INT ? tree[at + 5]! : cv.text(tree[at + 5]!);
        const v = node + 3;
        const vk = len === 2 ? TREE_NULL : tree[v << 1]!;
        const x = tree[(v << 1) + 1]!;
        if (kind >= 0) {
          if (len === 2 || (kind === READ && !observed) || vk === TREE_NULL) {
            // A missing value, nil, or a read never observed: nil, whatever the tree holds.
            this.pushMop(kind, this.keyId(key), NIL, -1);
            node = len === 2 ? v : cv.after(v);
            continue;
          }
          if (vk === TREE_INT) {
            this.pushMop(kind, this.keyId(key), x >= 0 ? x : this.values.encode(x), -1);
            node = v + 1;
            continue;
          }
          if (vk === TREE_LIST && kind === READ) {
            // Staged in one pass, then kept; a list holding anything but integers is left to addMop,
            // which stages the same elements again (encoding them in the same order first).
            const pool = this.pool;
            const staged = pool.stage(x);
            let w = 0;
            const end = (v + 1 + x) << 1;
            let r = (v + 1) << 1;
            for (; r < end && tree[r] === TREE_INT; r += 2) {
              const e = tree[r + 1]!;
              staged[w++] = e >= 0 ? e : this.values.encode(e);
            }
            if (r === end) {
              const id = this.keyId(key);
              this.pushMop(kind, id, pool.keep(id, x), x);
              node = v + 1 + x;
              continue;
            }
          }
        }
      }
      const next = cv.after(node);
      if (!this.addMop(op, cv.value(node))) return false;
      node = next;
    }
    return true;
  }

  private pushMop(kind: number, key: number, code: number, len: number): void {
    this.mopKind.push(kind);
    this.mopKey.push(key);
    this.mopCode.push(code);
    this.mopLen.push(len);
  }

  /** A key's id; ids are handed out in first-seen order. */
  private keyId(key: unknown): number {
    if (typeof key === 'number' && key >= 0 && key < SMALL_KEYS && (key | 0) === key) {
      // Small integer keys (the common case) skip hashing.
      let id = this.smallKeyIds[key]! - 1;
      if (id < 0) {
        id = this.keys.length;
        this.smallKeyIds[key] = id + 1;
        this.keys.push(key);
      }
      return id;
    }
    const k = valueKey(key);
    let id = this.keyIds.get(k);
    if (id === undefined) {
      id = this.keys.length;
      this.keyIds.set(k, id);
      this.keys.push(key);
    }
    return id;
  }

  private addMop(op: Operation, mop: unknown): boolean {
    if (!Array.isArray(mop) || mop.length < 2 || mop.length > 3) {
      this.error = new MicroOpError(
        `op ${op.invokeIndex}: micro-op ${JSON.stringify(mop)} is not [f key value]`,
      );
      return false;
    }
    const f = mop[0];
    let kind: number;
    if (f === 'r') kind = READ;
    else if (f === this.writeF) kind = WRITE;
    else {
      this.error = new MicroOpError(
        `op ${op.invokeIndex}: unexpected micro-op type ${JSON.stringify(f)} (this workload allows "r" and "${this.writeF}")`,
      );
      return false;
    }
    const id = this.keyId(mop[1]);
    this.mopKind.push(kind);
    this.mopKey.push(id);
    // A failed or indeterminate op's reads were never observed.
    const v = kind === READ && op.type !== 'ok' ? null : (mop[2] ?? null);
    if (kind === READ && Array.isArray(v)) {
      const pool = this.pool;
      const staged = pool.stage(v.length);
      for (let i = 0; i < v.length; i++) {
        const e = v[i];
        // The common case inline: a small non-negative integer is its own code.
        staged[i] = typeof e === 'number' && (e | 0) === e && e >= 0 ? e : this.values.encode(e);
      }
      this.mopCode.push(pool.keep(id, v.length));
      this.mopLen.push(v.length);
    } else {
      this.mopCode.push(this.values.encode(v));
      this.mopLen.push(-1);
    }
    return true;
  }

  finish(): TxnHistory {
    if (this.error) throw this.error;
    const n = this.status.length;
    const mops = this.mopKind.length;
    reserveArena(ARENA_BYTES_PER_MOP * mops + ARENA_BYTES_PER_TXN * n + (1 << 20));
    const h: TxnHistory = {
      n,
      status: this.status.view(),
      process: this.process.view(),
      invokeIndex: this.invokeIndex.view(),
      completeIndex: this.completeIndex.view(),
      mopStart: new Int32Array(n + 1),
      mopKind: this.mopKind.view(),
      mopKey: this.mopKey.view(),
      mopCode: this.mopCode.view(),
      mopLen: this.mopLen.view(),
      pool: this.pool.view(),
      values: this.values,
      keys: this.keys,
      skipped: this.skipped,
      opsConsumed: this.consumed,
    };
    if (this.inOrder) {
      h.mopStart.set(this.mopStart.view());
      h.mopStart[n] = mops;
    }
    const out = this.inOrder ? h : this.reordered(h);
    this.release();
    // What sorting left unused (the arrays read in arrival order, the sort's own) serves the analysis.
    recycleIntoArena(this.spent);
    this.spent = [];
    return out;
  }

  /** A builder is used once: drop its arrays so a reordered copy does not live beside the original. */
  private release(): void {
    this.pool = new ListPool();
    for (const g of [this.mopStart, this.mopKey, this.mopCode, this.mopLen]) {
      g.data = new Int32Array(0);
      g.length = 0;
    }
    for (const g of [this.status, this.mopKind]) {
      g.data = new Uint8Array(0);
      g.length = 0;
    }
    for (const g of [this.process, this.invokeIndex, this.completeIndex, this.opId]) {
      g.data = new Float64Array(0);
      g.length = 0;
    }
  }

  /** Arrival slots in op id order: a counting pass when ids are dense integers, else a sort. */
  private idOrder(): Int32Array {
    const ids = this.opId.view();
    const n = ids.length;
    const order = new Int32Array(n);
    let max = 0;
    let dense = true;
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0) dense = false;
      else if (id > max) max = id;
    }
    if (dense && max <= 4 * n + 1024) {
      const slotOf = new Int32Array(max + 1).fill(-1);
      for (let i = 0; i < n; i++) slotOf[ids[i]!] = i;
      let t = 0;
      for (let id = 0; id <= max; id++) if (slotOf[id]! >= 0) order[t++] = slotOf[id]!;
      this.spent.push(slotOf);
      if (t === n) return order;
    }
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((a, b) => ids[a]! - ids[b]!);
  }

  /**
   * The same history with txns (and their micro-ops) sorted by op id. Plain loops per array: a txn has
   * a handful of micro-ops, so a `subarray().set()` per txn cost more in views than in copying.
   *
   * Most arrays are sorted into the builder's own arrays once these have been read (process into the
   * op ids, invocation indices into the processes, …; one pass each, since a pass reads its source in
   * op id order and writes its destination in arrival order): their pages are already mapped, where
   * fresh arrays would each be written for the first time (see {@link GROW_STEP_MAX}).
   */
  private reordered(h: TxnHistory): TxnHistory {
    const { n } = h;
    const mops = h.mopKind.length;
    const order = this.idOrder();
    const starts = this.mopStart.data;
    const status = new Uint8Array(n);
    // The op ids are no longer needed once in order: the processes go there.
    const process = this.opId.data.subarray(0, n);
    for (let t = 0; t < n; t++) {
      const i = order[t]!;
      status[t] = h.status[i]!;
      process[t] = h.process[i]!;
    }
    const invokeIndex = this.process.data.subarray(0, n);
    for (let t = 0; t < n; t++) invokeIndex[t] = h.invokeIndex[order[t]!]!;
    const completeIndex = this.invokeIndex.data.subarray(0, n);
    for (let t = 0; t < n; t++) completeIndex[t] = h.completeIndex[order[t]!]!;

    const mopStart = new Int32Array(n + 1);
    const mopKind = new Uint8Array(mops);
    const mopKey = new Int32Array(mops);
    const srcKind = h.mopKind;
    const srcKey = h.mopKey;
    let m = 0;
    for (let t = 0; t < n; t++) {
      const i = order[t]!;
      mopStart[t] = m;
      const e = i + 1 < n ? starts[i + 1]! : mops;
      for (let s = starts[i]!; s < e; s++, m++) {
        mopKind[m] = srcKind[s]!;
        mopKey[m] = srcKey[s]!;
      }
    }
    mopStart[n] = m;
    const mopCode = this.mopKey.data.subarray(0, mops);
    sortMops(order, starts, mopStart, h.mopCode, mopCode);
    const mopLen = this.mopCode.data.subarray(0, mops);
    sortMops(order, starts, mopStart, h.mopLen, mopLen);
    this.spent.push(order, h.status, h.completeIndex, this.mopStart.view(), h.mopKind, h.mopLen);
    return {
      ...h,
      status,
      process,
      invokeIndex,
      completeIndex,
      mopStart,
      mopKind,
      mopKey,
      mopCode,
      mopLen,
    };
  }
}

/** A transaction's value: a list, plain or left as a compact tree (whose root is always a list). */
function isList(v: unknown): v is unknown[] | CompactValue {
  return Array.isArray(v) || v instanceof CompactValue;
}

/** Copy each txn's micro-op values from `src` (arrival order, txn i at starts[i]) to `dst` (op id order). */
function sortMops(
  order: Int32Array,
  starts: Int32Array,
  mopStart: Int32Array,
  src: Int32Array,
  dst: Int32Array,
): void {
  const n = order.length;
  for (let t = 0; t < n; t++) {
    let s = starts[order[t]!]!;
    const e = mopStart[t + 1]!;
    for (let m = mopStart[t]!; m < e; m++, s++) dst[m] = src[s]!;
  }
}

/** Micro-op → its txn, carved from the check's arena. */
export function mopTxns(h: TxnHistory): Int32Array {
  const mopTxn = i32(h.mopKind.length);
  for (let t = 0; t < h.n; t++) mopTxn.fill(t, h.mopStart[t]!, h.mopStart[t + 1]!);
  return mopTxn;
}

/** Render a micro-op for explanations: `[append 253 1]`, `[r 253 [1 3 4]]`. */
export function renderMop(h: TxnHistory, m: number, writeF: string): string {
  const f = h.mopKind[m] === READ ? 'r' : writeF;
  return `[${f} ${renderValue(h.keys[h.mopKey[m]!])} ${renderValue(mopValue(h, m))}]`;
}

export function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return `[${v.map(renderValue).join(' ')}]`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (tagOf(v) === '#bigint') return String((v as { '#bigint': unknown })['#bigint']);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
