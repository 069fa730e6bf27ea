import { monotonicMs } from '../../src/core/util/clock.ts';
import { type Csr, PROCESS, primaryRel, REALTIME, RW, tarjan, WR, WW } from './graph.ts';

/**
 * Typed cycle search inside one strongly connected component. Each anomaly type is a small automaton over
 * edge relations (Elle's cycle specs): the search starts with the relation the type must contain, then
 * runs a breadth-first search over (vertex, automaton state) back to the start. Only edges of the type's
 * legal relations are followed, and only inside the sub-component those relations form, so a type that
 * cannot occur in the component costs one Tarjan pass and no search.
 */

export type CycleKind = 'G0' | 'G1c' | 'single' | 'nonadjacent' | 'adjacent';

export interface CycleSpec {
  type: string;
  kind: CycleKind;
  /** PROCESS or REALTIME for the `-process` / `-realtime` variants (the cycle must use one); else 0. */
  extra: number;
}

const BASE_TYPES: [string, CycleKind][] = [
  ['G0', 'G0'],
  ['G1c', 'G1c'],
  ['G-single-item', 'single'],
  ['G-nonadjacent-item', 'nonadjacent'],
  ['G2-item', 'adjacent'],
];

/** Every cycle type in search order: all base types, then the -process, then the -realtime variants. */
export const CYCLE_SPECS: CycleSpec[] = [
  ...BASE_TYPES.map(([type, kind]) => ({ type, kind, extra: 0 })),
  ...BASE_TYPES.map(([type, kind]) => ({ type: `${type}-process`, kind, extra: PROCESS })),
  ...BASE_TYPES.map(([type, kind]) => ({ type: `${type}-realtime`, kind, extra: REALTIME })),
];

export function legalRels(spec: CycleSpec): number {
  const data = spec.kind === 'G0' ? WW : spec.kind === 'G1c' ? WW | WR : WW | WR | RW;
  return data | spec.extra;
}

/** A component's induced subgraph with local vertex ids and one (primary) relation per edge. */
export interface LocalGraph {
  verts: Int32Array;
  offsets: Int32Array;
  targets: Int32Array;
  rels: Uint8Array;
  /** Tarjan results per relation mask, computed once per component. */
  comps: Map<number, { comp: Int32Array; cyclic: boolean }>;
}

export function componentsOf(lg: LocalGraph, mask: number): { comp: Int32Array; cyclic: boolean } {
  let c = lg.comps.get(mask);
  if (!c) {
    const g = { n: lg.verts.length, offsets: lg.offsets, targets: lg.targets, masks: lg.rels };
    const r = tarjan(g, mask, undefined, false);
    c = { comp: r.comp, cyclic: r.cyclic > 0 };
    lg.comps.set(mask, c);
  }
  return c;
}

/** BFS scratch shared by all searches; `run` stamps make clearing unnecessary. */
const scratch = {
  size: 0,
  run: 0,
  stamp: new Int32Array(0),
  parent: new Int32Array(0),
  parentRel: new Uint8Array(0),
  queue: new Int32Array(0),
};
function ensureScratch(size: number): void {
  if (scratch.size >= size && scratch.run < 1 << 30) return;
  const n = Math.max(size, scratch.size, 1 << 14);
  scratch.size = n;
  scratch.run = 0;
  scratch.stamp = new Int32Array(n);
  scratch.parent = new Int32Array(n);
  scratch.parentRel = new Uint8Array(n);
  scratch.queue = new Int32Array(n);
}

export function localGraph(g: Csr, verts: Int32Array, localId: Int32Array): LocalGraph {
  const m = verts.length;
  for (let i = 0; i < m; i++) localId[verts[i]!] = i;
  const offsets = new Int32Array(m + 1);
  let count = 0;
  for (let i = 0; i < m; i++) {
    const v = verts[i]!;
    for (let e = g.offsets[v]!; e < g.offsets[v + 1]!; e++) if (localId[g.targets[e]!]! >= 0) count++;
  }
  const targets = new Int32Array(count);
  const rels = new Uint8Array(count);
  let w = 0;
  for (let i = 0; i < m; i++) {
    offsets[i] = w;
    const v = verts[i]!;
    for (let e = g.offsets[v]!; e < g.offsets[v + 1]!; e++) {
      const l = localId[g.targets[e]!]!;
      if (l >= 0) {
        targets[w] = l;
        rels[w] = primaryRel(g.masks[e]!);
        w++;
      }
    }
  }
  offsets[m] = w;
  for (let i = 0; i < m; i++) localId[verts[i]!] = -1;
  return { verts, offsets, targets, rels, comps: new Map() };
}

export interface FoundCycle {
  /** Local vertices in cycle order (the start first, not repeated). */
  verts: number[];
  /** rels[i] is the relation of the edge verts[i] → verts[i+1 mod len]. */
  rels: number[];
}

const F_WR = 1;
const F_X = 2;
const F_LASTRW = 4;
const F_MULTI = 8;
const F_PHASE = 16;
const STATES = 32;

export type SearchOutcome = { cycle: FoundCycle } | { timeout: true } | null;

/** State slot of each automaton flag set, and back, per set of used flags: built once, not per search. */
const slotTables = new Map<number, { compact: Int32Array; expand: number[] }>();
function stateSlots(used: number): { compact: Int32Array; expand: number[] } {
  let t = slotTables.get(used);
  if (!t) {
    const compact = new Int32Array(STATES);
    const expand: number[] = [];
    for (let f = 0; f < STATES; f++) {
      if ((f & ~used) !== 0) continue;
      compact[f] = expand.length;
      expand.push(f);
    }
    t = { compact, expand };
    slotTables.set(used, t);
  }
  return t;
}

/**
 * Find one cycle of the spec's shape whose compressed form `accept` agrees with, or null when none
 * exists, or `{timeout}` when the deadline passes first.
 */
export function searchCycle(
  lg: LocalGraph,
  spec: CycleSpec,
  deadline: number,
  accept: (c: FoundCycle) => boolean,
  signal?: AbortSignal,
): SearchOutcome {
  const m = lg.verts.length;
  const legal = legalRels(spec);
  const { offsets, targets, rels } = lg;
  const L = componentsOf(lg, legal);
  if (!L.cyclic) return null;
  const compL = L.comp;
  // For one-rw cycles the path back to the start uses no rw edge: prune by that relation's topology
  // (Tarjan ids: if x reaches y in another component, id(x) > id(y)).
  const compA = spec.kind === 'single' ? componentsOf(lg, legal & ~RW).comp : null;
  const first = spec.kind === 'G0' ? spec.extra || WW : spec.kind === 'G1c' ? WR : RW;
  // Only the automaton flags this kind uses get state slots (at most 8 per vertex).
  const used =
    (spec.extra ? F_X : 0) |
    (spec.kind === 'G1c' ? F_WR : 0) |
    (spec.kind === 'nonadjacent' ? F_LASTRW | F_MULTI : 0) |
    (spec.kind === 'adjacent' ? F_PHASE : 0);
  const { compact, expand } = stateSlots(used);
  const stride = expand.length;
  ensureScratch(m * stride);
  const { stamp, parent, parentRel, queue } = scratch;
  let pops = 0;
  for (let s = 0; s < m; s++) {
    for (let e0 = offsets[s]!; e0 < offsets[s + 1]!; e0++) {
      const r0 = rels[e0]!;
      if ((r0 & first) === 0) continue;
      const t = targets[e0]!;
      if (compL[t] !== compL[s]) continue;
      if (compA && compA[t]! < compA[s]!) continue;
      let f0 = 0;
      if (r0 === WR) f0 |= F_WR;
      if (r0 & spec.extra) f0 |= F_X;
      if (r0 === RW) f0 |= F_LASTRW;
      if (spec.kind === 'adjacent') f0 |= F_PHASE;
      const run = ++scratch.run;
      let head = 0;
      let tail = 0;
      const st0 = t * stride + compact[f0 & used]!;
      stamp[st0] = run;
      parent[st0] = -1;
      queue[tail++] = st0;
      while (head < tail) {
        if ((++pops & 1023) === 0 && (monotonicMs() > deadline || signal?.aborted)) return { timeout: true };
        const st = queue[head++]!;
        const v = (st / stride) | 0;
        const f = expand[st % stride]!;
        for (let e = offsets[v]!; e < offsets[v + 1]!; e++) {
          const r = rels[e]!;
          if ((r & legal) === 0) continue;
          const w = targets[e]!;
          if (compL[w] !== compL[s]) continue;
          if (compA && compA[w]! < compA[s]!) continue;
          let nf = f;
          if (r === WR) nf |= F_WR;
          if (r & spec.extra) nf |= F_X;
          if (spec.kind === 'single') {
            if (r === RW) continue;
          } else if (spec.kind === 'nonadjacent') {
            if (r === RW) {
              if (f & F_LASTRW) continue;
              nf |= F_LASTRW | F_MULTI;
            } else nf &= ~F_LASTRW;
          } else if (spec.kind === 'adjacent') {
            if (f & F_PHASE) {
              if (r !== RW) continue;
              nf &= ~F_PHASE;
            }
          }
          if (w === s) {
            if (!accepts(spec, nf)) continue;
            const cycle = reconstruct(s, r0, st, r);
            if (accept(cycle)) return { cycle };
            continue;
          }
          const ns = w * stride + compact[nf & used]!;
          if (stamp[ns] === run) continue;
          stamp[ns] = run;
          parent[ns] = st;
          parentRel[ns] = r;
          queue[tail++] = ns;
        }
      }
    }
  }
  return null;

  function reconstruct(s: number, r0: number, lastState: number, closingRel: number): FoundCycle {
    const vs: number[] = [];
    const rs: number[] = [];
    let st = lastState;
    let rel = closingRel;
    while (st !== -1) {
      vs.push((st / stride) | 0);
      rs.push(rel);
      rel = parentRel[st]!;
      const p = parent[st]!;
      if (p === -1) break;
      st = p;
    }
    vs.push(s);
    rs.push(r0);
    vs.reverse();
    rs.reverse();
    return { verts: vs, rels: rs };
  }
}

function accepts(spec: CycleSpec, f: number): boolean {
  if (spec.extra && !(f & F_X)) return false;
  switch (spec.kind) {
    case 'G0':
    case 'single':
      return true;
    case 'G1c':
      return (f & F_WR) !== 0;
    case 'nonadjacent':
      return (f & F_MULTI) !== 0 && (f & F_LASTRW) === 0;
    case 'adjacent':
      return (f & F_PHASE) === 0;
  }
}

/** Does the graph (restricted to `rels`) have a cycle? Used to report `<model>-cycle-exists`. */
export function hasCycle(lg: LocalGraph, relMask: number): boolean {
  return componentsOf(lg, relMask).cyclic;
}

/**
 * Snapshot-isolation style cycles (G-single, G-nonadjacent): a cycle in A ∪ (A;rw), A = the non-rw legal
 * relations, i.e. every rw edge directly preceded by a non-rw one. Built only after a search timed out.
 */
export function hasNonadjacentCycle(lg: LocalGraph, extra: number): boolean {
  const m = lg.verts.length;
  const a = WW | WR | extra;
  const src: number[] = [];
  const dst: number[] = [];
  for (let x = 0; x < m; x++) {
    for (let e = lg.offsets[x]!; e < lg.offsets[x + 1]!; e++) {
      if ((lg.rels[e]! & a) === 0) continue;
      const y = lg.targets[e]!;
      src.push(x);
      dst.push(y);
      for (let f = lg.offsets[y]!; f < lg.offsets[y + 1]!; f++) {
        if (lg.rels[f] === RW && lg.targets[f] !== x) {
          src.push(x);
          dst.push(lg.targets[f]!);
        }
      }
    }
  }
  const offsets = new Int32Array(m + 1);
  for (const s of src) offsets[s + 1]!++;
  for (let i = 0; i < m; i++) offsets[i + 1]! += offsets[i]!;
  const fill = offsets.slice(0, m);
  const targets = new Int32Array(src.length);
  for (let i = 0; i < src.length; i++) targets[fill[src[i]!]!++] = dst[i]!;
  const masks = new Uint8Array(src.length).fill(1);
  return tarjan({ n: m, offsets, targets, masks }, 1, undefined, false).cyclic > 0;
}

/**
 * Any one cycle over the given relations (the first vertex of a cyclic sub-component, back to itself by
 * breadth-first search), or null. Used after a typed search ran out of time: the cycle is then
 * classified from its steps, as Elle does with its fallback cycle.
 */
export function anyCycle(lg: LocalGraph, relMask: number): FoundCycle | null {
  const { comp, cyclic } = componentsOf(lg, relMask);
  if (!cyclic) return null;
  const m = lg.verts.length;
  const size = new Int32Array(m);
  for (let v = 0; v < m; v++) size[comp[v]!]!++;
  let s = 0;
  while (s < m && size[comp[s]!]! < 2) s++;
  if (s === m) return null;
  ensureScratch(m);
  const { stamp, parent, parentRel, queue } = scratch;
  const run = ++scratch.run;
  let head = 0;
  let tail = 0;
  stamp[s] = run;
  parent[s] = -1;
  queue[tail++] = s;
  while (head < tail) {
    const v = queue[head++]!;
    for (let e = lg.offsets[v]!; e < lg.offsets[v + 1]!; e++) {
      const r = lg.rels[e]!;
      const w = lg.targets[e]!;
      if ((r & relMask) === 0 || comp[w] !== comp[s]) continue;
      if (w === s) {
        const verts: number[] = [];
        const rels: number[] = [r];
        for (let x = v; x !== -1; x = parent[x]!) {
          verts.push(x);
          if (parent[x] !== -1) rels.push(parentRel[x]!);
        }
        verts.reverse();
        rels.reverse();
        return { verts, rels };
      }
      if (stamp[w] === run) continue;
      stamp[w] = run;
      parent[w] = v;
      parentRel[w] = r;
      queue[tail++] = w;
    }
  }
  return null;
}
