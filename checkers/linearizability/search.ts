import { searchBuffers } from './buffer-pool.ts';
import type { AnyModel } from './model.ts';
import { EncodedOps } from './op-columns.ts';
import { StateSpace } from './state-space.ts';

export type SearchStatus = 'running' | 'ok' | 'illegal';

/** What one partition's search needs: intervals in event positions and the model's input/output. */
export interface SearchOp {
  call: number;
  /** Infinity when the outcome is unknown: the op may take effect at any time after `call`, or never. */
  ret: number;
  input: unknown;
  output: unknown;
  /** Ops with equal input and output may share an id (prepareHistory's interning); memo is per id. */
  io?: number;
}

const FULL_WORD = 0xffffffff;

/** Loop iterations per scheduling slice: small enough to interleave partitions, big enough to be free. */
export const SLICE_ITERATIONS = 1 << 14;

/**
 * Configurations the cache holds at most (about 10 MB, so lookups stay in the processor caches). When full it is emptied and refilled: the cache
 * only saves re-exploring, so forgetting is safe, and on long histories the entries behind the
 * frontier are rarely needed again. Memory then stays flat whatever the history's length.
 */
export const CACHE_LIMIT = 1 << 18;

/**
 * Cache records are stored in pages of this many ints (256 KB), so the records never move: growing
 * the cache adds a page instead of copying everything into an array twice the size (which left the old
 * one as garbage, outside the JavaScript heap, until a major collection). Pages and slot tables come
 * from {@link searchBuffers} and go back when the search is decided.
 */
const PAGE_INTS = 1 << 16;
/** The first page starts this small and doubles up to a full page: most searches need a few records. */
const FIRST_PAGE_INTS = 1 << 12;
const FIRST_SLOT_INTS = 2 * 1024;

/** How many distinct final states of the longest prefixes are kept for the report. */
const MAX_BEST_STATES = 8;

/** Deterministic 32-bit generator (mulberry32) for the Zobrist keys: same input, same search. */
function zobristKeys(n: number): Int32Array {
  const keys = new Int32Array(n);
  let a = 0x2f6b3c1d;
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    keys[i] = t ^ (t >>> 14);
  }
  return keys;
}

/**
 * Entries (2·op for a call, 2·op+1 for a return) sorted by time, calls before returns at equal times
 * (closed intervals), then by op. Event positions (small non-negative integers) are packed with the
 * entry into one double and sorted natively, far faster than a comparator on millions of entries;
 * other times use the comparator.
 */
function sortEntries(ops: EncodedOps): Int32Array {
  const n = ops.length;
  const { call, ret } = ops;
  const order = new Int32Array(2 * n);
  const SHIFT = 2 ** 26;
  let packable = 2 * n < SHIFT;
  let maxFinite = 0;
  for (let i = 0; i < n && packable; i++) {
    const c = call[i] as number;
    const r = ret[i] as number;
    if (!Number.isInteger(c) || c < 0 || c >= SHIFT / 2 - 1) packable = false;
    else if (c > maxFinite) maxFinite = c;
    if (Number.isFinite(r)) {
      if (!Number.isInteger(r) || r < 0 || r >= SHIFT / 2 - 1) packable = false;
      else if (r > maxFinite) maxFinite = r;
    } else if (r !== Number.POSITIVE_INFINITY) packable = false;
  }
  if (packable && maxFinite < 8 * 2 * n + 1024) {
    const direct = placeByPosition(ops, maxFinite, order);
    if (direct) return order;
  }
  if (packable) {
    const keys = new Float64Array(2 * n);
    const never = maxFinite + 1; // an unknown return sorts after every event, ties by op
    for (let i = 0; i < n; i++) {
      const r = Number.isFinite(ret[i] as number) ? (ret[i] as number) : never;
      keys[2 * i] = (call[i] as number) * 2 * SHIFT + 2 * i;
      keys[2 * i + 1] = (r * 2 + 1) * SHIFT + 2 * i + 1;
    }
    keys.sort();
    for (let k = 0; k < 2 * n; k++) order[k] = (keys[k] as number) % SHIFT;
    return order;
  }
  for (let i = 0; i < 2 * n; i++) order[i] = i;
  const timeOf = (e: number) => ((e & 1) === 0 ? call[e >> 1] : ret[e >> 1]) as number;
  order.sort((a, b) => timeOf(a) - timeOf(b) || (a & 1) - (b & 1) || (a >> 1) - (b >> 1));
  return order;
}

/**
 * The common case of {@link sortEntries} in linear time: when no two finite times are equal (event
 * positions of one history are distinct), entries are placed by position, then the unknown returns
 * in op order. False (order unspecified) when two entries share a position.
 */
function placeByPosition(ops: EncodedOps, maxFinite: number, order: Int32Array): boolean {
  const n = ops.length;
  const { call, ret } = ops;
  const at = new Int32Array(maxFinite + 1); // entry + 1 at each position
  let open = 0;
  for (let i = 0; i < n; i++) {
    const c = call[i] as number;
    const r = ret[i] as number;
    if (at[c] !== 0) return false;
    at[c] = 2 * i + 1;
    if (r === Number.POSITIVE_INFINITY) open++;
    else {
      if (at[r] !== 0) return false;
      at[r] = 2 * i + 2;
    }
  }
  let k = 0;
  for (let p = 0; p <= maxFinite; p++) {
    const e1 = at[p] as number;
    if (e1 !== 0) order[k++] = e1 - 1;
  }
  if (open > 0) {
    for (let i = 0; i < n; i++) if (ret[i] === Number.POSITIVE_INFINITY) order[k++] = 2 * i + 1;
  }
  return true;
}

export interface SearchOptions {
  /** Linearize read-only ops greedily (default true); false searches in Porcupine's exact order. */
  greedyReads?: boolean;
}

/**
 * Wing & Gong / Lowe backtracking search over one partition, with Porcupine's memo of visited
 * (linearized set, state) configurations. Resumable: `run(budget)` does at most `budget` loop
 * iterations and returns, so a scheduler can interleave partitions and honour deadlines.
 *
 * Layout, chosen so the inner loop allocates nothing:
 * - entries (a call and a return per op, sorted by position; calls first on ties) are nodes 1..2n of a
 *   doubly linked list in Int32Arrays; node 0 is the head, node 2n+1 a tail sentinel;
 * - model states are interned integers with a memoized step table (StateSpace);
 * - the linearized set is a Uint32Array bitset hashed incrementally (Zobrist: XOR one random key per op);
 * - the cache is an open-addressing hash set over (bitset window, state id) records in Int32Array
 *   pages; its arrays come from a pool shared by the searches of the thread (./buffer-pool.ts).
 *
 * One pruning beyond Porcupine: an op the model calls read-only (legal only without changing the
 * state, e.g. a read or a failed cas) is linearized as soon as it is a legal candidate, without
 * branching. If any linearization exists from a configuration where such an op r is a legal candidate,
 * one exists with r first: moving r to the front keeps every state and only loosens real-time
 * constraints (no unlinearized op returned before r was called, or r would not be a candidate). So when
 * "r first" fails, or was already explored, the configuration fails and the search backtracks.
 *
 * A second: ops that never completed (info) with the same input and output are interchangeable, since
 * neither has a return that bounds it and both step the state alike. Any linearization can place such
 * twins in the order of their calls (the j-th of the positions they take is at or after the j-th call),
 * so a twin is a candidate only once the twin called before it is linearized. On Porcupine's etcd
 * logs, where crashed `write 3`s recur, this cuts the configurations the search visits.
 *
 * The search succeeds once every op that completed is linearized: ops that never completed (or ended
 * `info`) may never have taken effect, so they need not be placed.
 */
export class PartitionSearch {
  readonly n: number;
  readonly space: StateSpace;
  status: SearchStatus = 'running';
  /** Step lookups, comparable to Porcupine's count of model Step calls. */
  steps = 0;
  /** Longest linearizable prefix found (op indices within the partition), and its length. */
  bestOps: Int32Array;
  bestLen = -1;
  /** The op whose return bounded the longest prefix: nothing could be linearized in its place. */
  bestBlockedOp = -1;
  /** Distinct states (ids) reached by prefixes of the longest length. */
  bestStates: number[] = [];

  private readonly words: number;
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly nodeOp: Int32Array;
  private readonly isCall: Uint8Array;
  private readonly match: Int32Array;
  private readonly zob: Int32Array;
  /** 1 for ops linearized greedily (see the class comment); all 0 when the option is off. */
  private readonly readOnly: Uint8Array;
  /** 1 for ops that completed (finite return); the search succeeds once all of them are linearized. */
  private readonly finite: Uint8Array;
  /**
   * For an op that never completed: the op of its class (same input and output, so the same step) that
   * also never completed and was called last before it, or -1. Such twins are linearized in call order
   * (see the class comment); all -1 when the option is off.
   */
  private readonly twin: Int32Array;
  private finiteLeft = 0;
  /** Leading stack entries known to equal `bestOps`. */
  private synced = 0;
  private readonly bits: Uint32Array;
  private readonly stackNode: Int32Array;
  private readonly stackSid: Int32Array;
  private readonly tail: number;
  private depth = 0;
  private cursor: number;
  private sid = 0;
  private bitHash = 0;

  // Cache: open addressing over variable-length records (see insertIfAbsent).
  /** Pairs [hash, record reference + 1]; 0 in the second cell marks an empty slot. */
  private slots = searchBuffers.take(FIRST_SLOT_INTS, true);
  /**
   * Record pages: a record's reference is its page's index times the page size plus its offset in the
   * page (the page size is a power of two, so both are read back by shift and mask). A record never
   * spans two pages. Page 0 grows by doubling up to the page size; later pages are full size.
   */
  private pages: Int32Array[] = [searchBuffers.take(FIRST_PAGE_INTS, false)];
  /** Page being filled, its index in `pages`, and how much of it is used. */
  private page: Int32Array = this.pages[0] as Int32Array;
  private pageIndex = 0;
  private pageUsed = 0;
  private readonly pageShift: number;
  /** Window of the current bitset: first word not all ones, one past the last non-zero word. */
  private lo = 0;
  private hi = 0;
  private entryCount = 0;
  /** Entries dropped by emptying the cache when it reached CACHE_LIMIT. */
  private forgotten = 0;

  constructor(model: AnyModel, opList: EncodedOps | readonly SearchOp[], options: SearchOptions = {}) {
    const ops = EncodedOps.from(opList);
    const n = ops.length;
    this.n = n;
    this.readOnly = new Uint8Array(n);
    this.finite = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      if (Number.isFinite(ops.ret[i] as number)) {
        this.finite[i] = 1;
        this.finiteLeft++;
      }
    }
    if ((options.greedyReads ?? true) && model.readOnly) {
      // Asked once per interned class (its ops share input and output), per op for the others.
      const readOnly = (input: unknown, output: unknown) => model.readOnly?.(input, output) === true;
      const byClass = new Int8Array(ops.fewClasses ? ops.classCount : 0).fill(-1);
      const { io } = ops;
      for (let i = 0; i < n; i++) {
        const c = byClass.length === 0 ? -1 : (io[i] as number);
        let r: number;
        if (c < 0) r = readOnly(ops.inputOf(i), ops.outputOf(i)) ? 1 : 0;
        else {
          r = byClass[c] as number;
          if (r < 0) {
            r = readOnly(ops.classInput(c), ops.classOutput(c)) ? 1 : 0;
            byClass[c] = r;
          }
        }
        this.readOnly[i] = r;
      }
    }
    this.space = new StateSpace(model, ops);
    this.words = Math.max(1, Math.ceil(n / 32));
    // A page holds at least one record of the widest window ([state, lo, length] + every word).
    let shift = 31 - Math.clz32(PAGE_INTS);
    while (1 << shift < 3 + this.words) shift++;
    this.pageShift = shift;
    const nodes = 2 * n + 2;
    this.tail = 2 * n + 1;
    this.next = new Int32Array(nodes);
    this.prev = new Int32Array(nodes);
    this.nodeOp = new Int32Array(nodes).fill(-1);
    this.isCall = new Uint8Array(nodes);
    this.match = new Int32Array(nodes);
    const order = sortEntries(ops);
    const callNode = new Int32Array(n);
    const retNode = new Int32Array(n);
    for (let k = 0; k < 2 * n; k++) {
      const e = order[k] as number;
      const node = k + 1;
      this.nodeOp[node] = e >> 1;
      if ((e & 1) === 0) {
        this.isCall[node] = 1;
        callNode[e >> 1] = node;
      } else retNode[e >> 1] = node;
    }
    for (let i = 0; i < n; i++) this.match[callNode[i] as number] = retNode[i] as number;
    this.twin = new Int32Array(n).fill(-1);
    if (options.greedyReads ?? true) {
      const lastOfClass = new Int32Array(this.space.width).fill(-1);
      const { classOf } = this.space;
      for (let k = 0; k < 2 * n; k++) {
        const e = order[k] as number;
        const op = e >> 1;
        if ((e & 1) !== 0 || this.finite[op] === 1) continue;
        const c = classOf[op] as number;
        this.twin[op] = lastOfClass[c] as number;
        lastOfClass[c] = op;
      }
    }
    for (let node = 0; node <= this.tail; node++) {
      this.next[node] = node === this.tail ? this.tail : node + 1;
      this.prev[node] = node === 0 ? 0 : node - 1;
    }
    this.zob = zobristKeys(n);
    this.bits = new Uint32Array(this.words);
    this.stackNode = new Int32Array(n);
    this.stackSid = new Int32Array(n);
    this.bestOps = new Int32Array(n);
    this.cursor = this.next[0] as number;
    if (this.finiteLeft === 0) {
      // Nothing completed: every op may never have taken effect.
      this.status = 'ok';
      this.bestLen = 0;
    }
  }

  /** Configurations stored in the cache over the whole search (it holds at most CACHE_LIMIT at once). */
  get cacheSize(): number {
    return this.entryCount + this.forgotten;
  }

  /** Current stack (op indices) — a partial linearization, for progress reports on unknown. */
  currentPrefix(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.depth; i++) out.push(this.nodeOp[this.stackNode[i] as number] as number);
    return out;
  }

  /** Run at most `budget` loop iterations; returns the status afterwards. */
  run(budget: number): SearchStatus {
    if (this.status !== 'running') return this.status;
    const {
      next,
      prev,
      nodeOp,
      isCall,
      match,
      zob,
      bits,
      stackNode,
      stackSid,
      space,
      readOnly,
      finite,
      twin,
    } = this;
    const { classOf, width } = space;
    let memo = space.memo;
    let denseRows = space.denseRows;
    let e = this.cursor;
    let sid = this.sid;
    let depth = this.depth;
    let bitHash = this.bitHash;
    let steps = this.steps;
    let finiteLeft = this.finiteLeft;
    let synced = this.synced;
    let lo = this.lo;
    let hi = this.hi;
    let status: SearchStatus = 'running';
    for (let iter = 0; iter < budget; iter++) {
      // Done when every completed op is linearized: the open ones (info, or never completed) may
      // simply never have taken effect.
      if (finiteLeft === 0) {
        status = 'ok';
        break;
      }
      if (isCall[e] === 1) {
        const op = nodeOp[e] as number;
        const tw = twin[op] as number;
        if (tw >= 0 && ((bits[tw >>> 5] as number) & (1 << (tw & 31))) === 0) {
          // Its earlier twin is not linearized yet: that one goes first.
          e = next[e] as number;
          continue;
        }
        steps++;
        let cell = sid < denseRows ? (memo[sid * width + (classOf[op] as number)] as number) : 0;
        if (cell === 0) {
          cell = space.resolve(sid, op);
          memo = space.memo;
          denseRows = space.denseRows;
        }
        if (cell > 0) {
          const ns = cell - 1;
          const w = op >>> 5;
          const mask = 1 << (op & 31);
          bits[w] = (bits[w] as number) | mask;
          const nh = bitHash ^ (zob[op] as number);
          // Tentative window of the bitset with this op added (committed only on a push).
          const hi2 = w >= hi ? w + 1 : hi;
          let lo2 = lo;
          while (lo2 < hi2 && bits[lo2] === FULL_WORD) lo2++;
          if (this.insertIfAbsent(nh ^ Math.imul(ns + 1, 0x9e3779b1), ns, lo2, hi2)) {
            lo = lo2;
            hi = hi2;
            stackNode[depth] = e;
            stackSid[depth] = sid;
            depth++;
            sid = ns;
            bitHash = nh;
            finiteLeft -= finite[op] as number;
            // lift: unlink the call and its return.
            const r = match[e] as number;
            let p = prev[e] as number;
            let x = next[e] as number;
            next[p] = x;
            prev[x] = p;
            p = prev[r] as number;
            x = next[r] as number;
            next[p] = x;
            prev[x] = p;
            e = next[0] as number;
            continue;
          }
          bits[w] = (bits[w] as number) & ~mask;
          // A read-only op's "go first" configuration was explored and failed: so does this one.
          if (readOnly[op] !== 1) {
            e = next[e] as number;
            continue;
          }
        } else {
          e = next[e] as number;
          continue;
        }
      } else if (depth >= this.bestLen) {
        // A return whose op is not linearized: nothing after it may go first.
        this.synced = synced;
        this.recordBest(depth, nodeOp[e] as number, sid);
        synced = this.synced;
      }
      // Backtrack. Popping a read-only op pops again: trying other ops in its place cannot succeed.
      for (;;) {
        if (depth === 0) {
          status = 'illegal';
          break;
        }
        depth--;
        if (synced > depth) synced = depth;
        const c = stackNode[depth] as number;
        sid = stackSid[depth] as number;
        const op = nodeOp[c] as number;
        const w = op >>> 5;
        bits[w] = (bits[w] as number) & ~(1 << (op & 31));
        if (w < lo) lo = w;
        if (w === hi - 1) while (hi > lo && bits[hi - 1] === 0) hi--;
        bitHash ^= zob[op] as number;
        finiteLeft += finite[op] as number;
        // unlift: relink the return, then the call.
        const r = match[c] as number;
        next[prev[r] as number] = r;
        prev[next[r] as number] = r;
        next[prev[c] as number] = c;
        prev[next[c] as number] = c;
        e = next[c] as number;
        if (readOnly[op] !== 1) break;
      }
      if (status === 'illegal') break;
    }
    this.cursor = e;
    this.sid = sid;
    this.depth = depth;
    this.bitHash = bitHash;
    this.steps = steps;
    this.finiteLeft = finiteLeft;
    this.synced = synced;
    this.lo = lo;
    this.hi = hi;
    if (status === 'ok') {
      this.bestLen = depth;
      for (let i = 0; i < depth; i++) this.bestOps[i] = nodeOp[stackNode[i] as number] as number;
      this.bestBlockedOp = -1;
      this.bestStates = [sid];
    }
    this.status = status;
    // A decided search never probes its cache again: hand it to the next search now.
    if (status !== 'running') this.releaseCache();
    return status;
  }

  /**
   * Done with the search, summary made: give its cache and its state store back to
   * {@link searchBuffers} for other searches. Neither `run` nor the summary may follow.
   */
  release(): void {
    this.releaseCache();
    this.space.release();
  }

  /**
   * Give the cache's arrays back for other searches: a decided search does it at once (it never
   * probes its cache again). Counts (`cacheSize`) are kept. Should the search run again, it starts
   * with an empty cache (the cache only saves re-exploring).
   */
  private releaseCache(): void {
    if (this.slots.length > 2) searchBuffers.give(this.slots);
    for (const p of this.pages) searchBuffers.give(p);
    this.slots = new Int32Array(2);
    this.pages = [new Int32Array(0)];
    this.page = this.pages[0] as Int32Array;
    this.pageIndex = 0;
    this.pageUsed = 0;
    this.forgotten += this.entryCount;
    this.entryCount = 0;
  }

  /**
   * Remember the stack as the longest prefix. Only the entries pushed since the stack last agreed with
   * `bestOps` are copied (`synced` tracks the agreeing length), so the copying over a whole search is
   * bounded by the number of pushes, not depth × backtracks (quadratic on long histories).
   */
  private recordBest(depth: number, blockedOp: number, sid: number): void {
    if (depth > this.bestLen) {
      this.bestLen = depth;
      for (let i = this.synced; i < depth; i++)
        this.bestOps[i] = this.nodeOp[this.stackNode[i] as number] as number;
      this.synced = depth;
      this.bestBlockedOp = blockedOp;
      this.bestStates = [sid];
    } else if (this.bestStates.length < MAX_BEST_STATES && !this.bestStates.includes(sid)) {
      this.bestStates.push(sid);
    }
  }

  /**
   * Add (bits, sid) to the cache; false when that configuration was already explored.
   *
   * A configuration is stored as its window: the bitset words from `lo` (the first word not all ones)
   * to `hi` (one past the last non-zero word). On a long history the linearized set is "everything
   * before the frontier plus a few ops around it", so a record is a few words instead of n/32 (a
   * 100,000-op history would otherwise copy 12 KB per configuration). The window is canonical, so
   * equal sets have equal records.
   *
   * Open addressing with linear probing: a slot is two adjacent cells [hash, record offset + 1], so a
   * probe touches one cache line and the record [state id, lo, length, words…] is read only when the
   * 32-bit hash matches (almost always a true hit). The table is kept at most half full.
   */
  private insertIfAbsent(hash: number, sid: number, lo: number, hi: number): boolean {
    const bits = this.bits;
    const pages = this.pages;
    const slots = this.slots;
    const shift = this.pageShift;
    const offsetMask = (1 << shift) - 1;
    const len = hi - lo;
    const mask = (slots.length >> 1) - 1;
    let i = (hash ^ (hash >>> 15)) & mask;
    for (;;) {
      const ref = slots[2 * i + 1] as number;
      if (ref === 0) break;
      if (slots[2 * i] === hash) {
        const records = pages[(ref - 1) >>> shift] as Int32Array;
        const base = (ref - 1) & offsetMask;
        if (records[base] === sid && records[base + 1] === lo && records[base + 2] === len) {
          let same = true;
          for (let k = 0; k < len; k++) {
            if (records[base + 3 + k] !== ((bits[lo + k] as number) | 0)) {
              same = false;
              break;
            }
          }
          if (same) return false;
        }
      }
      i = (i + 1) & mask;
    }
    if (this.entryCount >= CACHE_LIMIT) {
      // Empty the cache; its pages are kept and refilled from the first.
      this.forgotten += this.entryCount;
      this.entryCount = 0;
      this.pageIndex = 0;
      this.page = pages[0] as Int32Array;
      this.pageUsed = 0;
      this.slots.fill(0);
      return this.insertIfAbsent(hash, sid, lo, hi);
    }
    if (this.pageUsed + 3 + len > this.page.length) this.nextPage(3 + len);
    const out = this.page;
    const base = this.pageUsed;
    out[base] = sid;
    out[base + 1] = lo;
    out[base + 2] = len;
    for (let k = 0; k < len; k++) out[base + 3 + k] = bits[lo + k] as number;
    this.pageUsed = base + 3 + len;
    slots[2 * i] = hash;
    slots[2 * i + 1] = this.pageIndex * (1 << shift) + base + 1;
    this.entryCount++;
    if (2 * this.entryCount > mask + 1) this.growSlots();
    return true;
  }

  /**
   * Make room for a record of `need` ints: double the first page while it is smaller than a page
   * (copying it; the old array goes back to the pool), else move on to the next page, reusing one
   * kept from before the cache was last emptied.
   */
  private nextPage(need: number): void {
    const full = 1 << this.pageShift;
    if (this.pageIndex === 0 && this.page.length < full) {
      let size = Math.max(FIRST_PAGE_INTS, this.page.length * 2);
      while (size < this.pageUsed + need && size < full) size *= 2;
      const grown = searchBuffers.take(Math.min(full, size), false);
      grown.set(this.page.subarray(0, this.pageUsed));
      searchBuffers.give(this.page);
      this.pages[0] = grown;
      this.page = grown;
      if (this.pageUsed + need <= grown.length) return;
    }
    this.pageIndex++;
    if (this.pageIndex === this.pages.length) this.pages.push(searchBuffers.take(full, false));
    this.page = this.pages[this.pageIndex] as Int32Array;
    this.pageUsed = 0;
  }

  /** Double the slot table and re-place every entry by its stored hash; the old table goes back to the pool. */
  private growSlots(): void {
    const old = this.slots;
    const slots = searchBuffers.take(old.length * 2, true);
    const mask = (slots.length >> 1) - 1;
    for (let j = 0; j < old.length; j += 2) {
      const ref = old[j + 1] as number;
      if (ref === 0) continue;
      const h = old[j] as number;
      let i = (h ^ (h >>> 15)) & mask;
      while (slots[2 * i + 1] !== 0) i = (i + 1) & mask;
      slots[2 * i] = h;
      slots[2 * i + 1] = ref;
    }
    this.slots = slots;
    searchBuffers.give(old);
  }
}
