import { i32, recycleIntoArena, u8 } from './arena.ts';

/**
 * Integer-indexed directed graphs: edges accumulate in growable typed arrays, then become a CSR
 * (compressed sparse row) graph whose parallel edges are merged into one edge with a bitmask of relations.
 * No per-edge objects; Tarjan's SCC algorithm runs with an explicit stack (no recursion limit).
 */

export const WW = 1;
export const WR = 2;
export const RW = 4;
export const PROCESS = 8;
export const REALTIME = 16;
export const DATA = WW | WR | RW;

export const REL_NAMES: Record<number, string> = {
  [WW]: 'ww',
  [WR]: 'wr',
  [RW]: 'rw',
  [PROCESS]: 'process',
  [REALTIME]: 'realtime',
};

/** The relation that explains an edge carrying several: ww, then wr, then rw, then process, then realtime. */
export function primaryRel(mask: number): number {
  return mask & -mask;
}

export class EdgeList {
  src: Int32Array;
  dst: Int32Array;
  rel: Uint8Array;
  length = 0;

  /** Size the arrays up front when the count can be estimated: growing copies and pressures the GC. */
  constructor(capacity = 1024) {
    const cap = Math.max(16, capacity);
    this.src = i32(cap);
    this.dst = i32(cap);
    this.rel = u8(cap);
  }

  add(a: number, b: number, rel: number): void {
    if (a === b) return;
    if (this.length === this.src.length) this.grow();
    const i = this.length++;
    this.src[i] = a;
    this.dst[i] = b;
    this.rel[i] = rel;
  }

  /**
   * Give the edges' memory to the check's arena once the graph is built from them (the tarjan workspace
   * and the cycle search then reuse pages already mapped); the list is empty afterwards.
   */
  recycle(): void {
    const n = this.length;
    recycleIntoArena([this.src.subarray(0, n), this.dst.subarray(0, n), this.rel.subarray(0, n)]);
    this.src = new Int32Array(16);
    this.dst = new Int32Array(16);
    this.rel = new Uint8Array(16);
    this.length = 0;
  }

  private grow(): void {
    const cap = this.src.length * 2;
    const s = new Int32Array(cap);
    s.set(this.src);
    this.src = s;
    const d = new Int32Array(cap);
    d.set(this.dst);
    this.dst = d;
    const r = new Uint8Array(cap);
    r.set(this.rel);
    this.rel = r;
  }
}

export interface Csr {
  n: number;
  offsets: Int32Array;
  targets: Int32Array;
  masks: Uint8Array;
}

/**
 * A realtime order described instead of listed (built by `realtimeOrder` in order-edges.ts): time
 * vertex `n + x` points at the txns `invoked[firstInvoked[x]]` .. `invoked[firstInvoked[x + 1] - 1]`,
 * then at the next time vertex; txn `t` points at its completion's time vertex `completion[t]` (-1: none).
 */
export interface RealtimeOrder {
  /** Time vertices, numbered from `n` upwards. */
  count: number;
  completion: Int32Array;
  /** The txns the order points at (those that did not fail), in invocation order. */
  invoked: Int32Array;
  /** Per time vertex, where its txns start in `invoked` (`count + 1` entries). */
  firstInvoked: Int32Array;
}

/** Out-degree up to which parallel edges are merged by comparing with the vertex's other edges. */
const SMALL_DEGREE = 16;

/**
 * Build a CSR graph over vertices 0..n-1, merging parallel edges (their relation bits are OR-ed). With
 * a realtime order (see {@link RealtimeOrder}), its time vertices n.. are added and its edges written
 * after each vertex's data edges, as if they had ended the edge list (they never merge with another).
 */
export function buildCsr(n: number, edges: EdgeList, rt?: RealtimeOrder): Csr {
  const m = edges.length;
  const txns = n;
  const times = rt ? rt.count : 0;
  n += times;
  const offsets = i32(n + 1);
  for (let i = 0; i < m; i++) offsets[edges.src[i]! + 1]!++;
  // Room for each vertex's realtime edges after its data edges.
  if (rt) {
    for (let t = 0; t < txns; t++) if (rt.completion[t]! >= 0) offsets[t + 1]!++;
    for (let x = 0; x < times; x++) {
      offsets[txns + x + 1]! += rt.firstInvoked[x + 1]! - rt.firstInvoked[x]! + (x + 1 < times ? 1 : 0);
    }
  }
  for (let v = 0; v < n; v++) offsets[v + 1]! += offsets[v]!;
  const fill = i32(n);
  fill.set(offsets.subarray(0, n));
  const targets = i32(offsets[n]!);
  const masks = u8(offsets[n]!);
  for (let i = 0; i < m; i++) {
    const p = fill[edges.src[i]!]!++;
    targets[p] = edges.dst[i]!;
    masks[p] = edges.rel[i]!;
  }
  // Merge duplicates in place. A vertex with few edges compares each with the ones it already kept
  // (its own few cache lines); a larger one uses stamp[d] = v+1 for "d already seen from v", at pos[d].
  // Stamps alone cost two random accesses per edge into arrays of n entries, which in a graph of
  // millions of vertices miss the cache on almost every edge.
  let stamp: Int32Array | null = null;
  let pos: Int32Array | null = null;
  let w = 0;
  let start = 0;
  for (let v = 0; v < n; v++) {
    // The vertex's data edges; its realtime edges are written after them (never duplicates).
    const end = fill[v]!;
    const next = offsets[v + 1]!;
    offsets[v] = w;
    const first = w;
    if (end - start <= SMALL_DEGREE) {
      for (let e = start; e < end; e++) {
        const d = targets[e]!;
        let k = first;
        while (k < w && targets[k] !== d) k++;
        if (k < w) masks[k]! |= masks[e]!;
        else {
          targets[w] = d;
          masks[w] = masks[e]!;
          w++;
        }
      }
    } else {
      stamp ??= i32(n);
      pos ??= i32(n);
      for (let e = start; e < end; e++) {
        const d = targets[e]!;
        if (stamp[d] === v + 1) {
          masks[pos[d]!]! |= masks[e]!;
        } else {
          stamp[d] = v + 1;
          pos[d] = w;
          targets[w] = d;
          masks[w] = masks[e]!;
          w++;
        }
      }
    }
    if (rt && end < next) {
      if (v < txns) {
        targets[w] = rt.completion[v]!;
        masks[w++] = REALTIME;
      } else {
        const x = v - txns;
        const invoked = rt.invoked;
        for (let i = rt.firstInvoked[x]!; i < rt.firstInvoked[x + 1]!; i++) {
          targets[w] = invoked[i]!;
          masks[w++] = REALTIME;
        }
        if (x + 1 < times) {
          targets[w] = v + 1;
          masks[w++] = REALTIME;
        }
      }
    }
    start = next;
  }
  offsets[n] = w;
  return { n, offsets, targets: targets.subarray(0, w), masks: masks.subarray(0, w) };
}

/**
 * Strongly connected components by Tarjan's algorithm with an explicit call stack, over the edges whose
 * mask intersects `relMask`. Returns each vertex's component id (ids are assigned in completion order, so
 * if component X reaches component Y ≠ X then id(X) > id(Y)), how many components have ≥ 2 vertices
 * (`cyclic`), and those components' vertices (`multi`) unless `listCyclic` is false: the cycle search
 * runs this several times on each of hundreds of thousands of small components and only asks whether
 * one is cyclic, and a list each time cost an ArrayBuffer per component found.
 */
export function tarjan(
  g: Csr,
  relMask: number,
  ws: TarjanWorkspace = workspace(g.n),
  listCyclic = true,
): { comp: Int32Array; count: number; cyclic: number; multi: Int32Array[] } {
  const n = g.n;
  const index = ws.index;
  index.fill(-1, 0, n);
  const low = ws.low;
  const comp = i32(n).fill(-1);
  const onStack = ws.onStack;
  const stack = ws.stack;
  let sp = 0;
  const callV = ws.callV;
  const callE = ws.callE;
  let counter = 0;
  let count = 0;
  let cyclic = 0;
  const multi: Int32Array[] = [];
  const { offsets, targets, masks } = g;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    // A vertex with no edges is a component of its own, done at once (as the walk below would number
    // it): failed txns have none, a third of a history's txns.
    if (offsets[root] === offsets[root + 1]) {
      index[root] = counter++;
      comp[root] = count++;
      continue;
    }
    let depth = 0;
    callV[0] = root;
    callE[0] = offsets[root]!;
    index[root] = low[root] = counter++;
    stack[sp++] = root;
    onStack[root] = 1;
    while (depth >= 0) {
      const v = callV[depth]!;
      const end = offsets[v + 1]!;
      let e = callE[depth]!;
      let descended = false;
      while (e < end) {
        const w = targets[e]!;
        const ok = (masks[e]! & relMask) !== 0;
        e++;
        if (!ok) continue;
        if (index[w] === -1) {
          if (offsets[w] === offsets[w + 1]) {
            // Never on the stack, so it lowers no one's low link.
            index[w] = counter++;
            comp[w] = count++;
            continue;
          }
          callE[depth] = e;
          depth++;
          callV[depth] = w;
          callE[depth] = offsets[w]!;
          index[w] = low[w] = counter++;
          stack[sp++] = w;
          onStack[w] = 1;
          descended = true;
          break;
        }
        if (onStack[w] && index[w]! < low[v]!) low[v] = index[w]!;
      }
      if (descended) continue;
      if (low[v] === index[v]) {
        let size = 0;
        let w: number;
        const top = sp;
        do {
          w = stack[--sp]!;
          onStack[w] = 0;
          comp[w] = count;
          size++;
        } while (w !== v);
        if (size > 1) {
          cyclic++;
          if (listCyclic) multi.push(stack.slice(sp, top));
        }
        count++;
      }
      depth--;
      if (depth >= 0) {
        const parent = callV[depth]!;
        if (low[v]! < low[parent]!) low[parent] = low[v]!;
      }
    }
  }
  return { comp, count, cyclic, multi };
}

/** Scratch arrays for {@link tarjan}, grown on demand and reused: it runs once per component and mask. */
export interface TarjanWorkspace {
  index: Int32Array;
  low: Int32Array;
  onStack: Uint8Array;
  stack: Int32Array;
  callV: Int32Array;
  callE: Int32Array;
}
let shared: TarjanWorkspace | null = null;
function workspace(n: number): TarjanWorkspace {
  if (!shared || shared.index.length < n) {
    const size = Math.max(n, 1024);
    shared = {
      index: new Int32Array(size),
      low: new Int32Array(size),
      onStack: new Uint8Array(size),
      stack: new Int32Array(size),
      callV: new Int32Array(size),
      callE: new Int32Array(size),
    };
  }
  return shared;
}

/** A workspace of its own (carved from the arena when one is open), for one large graph. */
export function tarjanWorkspace(n: number): TarjanWorkspace {
  return { index: i32(n), low: i32(n), onStack: u8(n), stack: i32(n), callV: i32(n), callE: i32(n) };
}
