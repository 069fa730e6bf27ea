import { addAnomaly, type WorkloadAnalysis, WorkloadError } from './analysis.ts';
import { buildCsr, EdgeList, RW, tarjan, WR, WW } from './graph.ts';
import { mopValue as decodeMop, FAIL, OK, READ, renderValue, type TxnHistory, valueKey } from './txns.ts';

/**
 * rw-register inference (`[w k v]`, `[r k v]`, nil = the initial state, so no txn that did not fail may
 * write nil). A txn's external read of k is its first read before writing k; its external write is its
 * last write of k. wr edges join the unique writer of (k, v) to its external readers. Each key's version
 * graph comes from sources tried in a fixed order: the initial state precedes every value; then, when
 * enabled, writes-follow-reads inside a txn, process order (sequential keys) and realtime order
 * (linearizable keys). A source that would make a key's version graph cyclic is dropped for that key and
 * reported as cyclic-versions. Each direct version edge v1 → v2 gives ww (writer of v1 → writer of v2)
 * and rw (external readers of v1 → writer of v2).
 */
export interface RwRegisterOptions {
  sequentialKeys: boolean;
  linearizableKeys: boolean;
  wfrKeys: boolean;
}

const INIT = Symbol('init');
type Version = unknown; // valueKey of a value, or INIT

interface Touch {
  t: number;
  /** External read (undefined when the txn wrote k before reading it, or never read it). */
  read: Version | undefined;
  /** External (final) write. */
  write: Version | undefined;
}

export function analyseRwRegister(h: TxnHistory, opts: RwRegisterOptions): WorkloadAnalysis {
  const c = context(h);
  const idx = indexWrites(c);
  checkReads(c, idx);
  checkLostUpdates(c, idx);
  const g = versionGraphs(c, idx, opts);
  return { history: c.h, edges: g.edges, anomalies: c.anomalies, explain: explainer(c, idx, g), writeF: 'w' };
}

/** The flattened history, its anomalies so far, and naming helpers shared by every pass. */
interface Context {
  h: TxnHistory;
  /** Every micro-op's value, decoded: register values are compared through {@link valueKey}. */
  mopValue: unknown[];
  anomalies: WorkloadAnalysis['anomalies'];
  nKeys: number;
  opId(t: number): number;
  name(t: number): string;
}

function context(h: TxnHistory): Context {
  const opId = (t: number) => h.invokeIndex[t]!;
  const mopValue = Array.from(h.mopKind, (_, m) => decodeMop(h, m));
  return { h, mopValue, anomalies: new Map(), nKeys: h.keys.length, opId, name: (t) => `op ${opId(t)}` };
}

const ver = (v: unknown): Version => (v === null || v === undefined ? INIT : valueKey(v));
const show = (v: Version, raw?: unknown) => (v === INIT ? 'nil' : renderValue(raw ?? v));

/** Writers of each (key, version), and each txn's external read and write per key. */
interface WriteIndex {
  writer: Map<Version, number>[];
  failWriter: Map<Version, number>[];
  /** Versions a txn overwrote itself (G1b when another txn reads them). */
  intermediate: Map<Version, number>[];
  touches: Touch[][];
  touchOf: Map<number, Touch>[];
}

/** Write indices. Non-unique writes make inference unsound: stop. */
function indexWrites(c: Context): WriteIndex {
  const { h, nKeys, opId } = c;
  const { n, status, mopStart, mopKind, mopKey } = h;
  const { mopValue } = c;
  const writer: Map<Version, number>[] = Array.from({ length: nKeys }, () => new Map());
  const failWriter: Map<Version, number>[] = Array.from({ length: nKeys }, () => new Map());
  const intermediate: Map<Version, number>[] = Array.from({ length: nKeys }, () => new Map());
  const anyWriter: Map<Version, number>[] = Array.from({ length: nKeys }, () => new Map());
  const touches: Touch[][] = Array.from({ length: nKeys }, () => []);
  const touchOf: Map<number, Touch>[] = Array.from({ length: nKeys }, () => new Map());
  for (let t = 0; t < n; t++) {
    const s = mopStart[t]!;
    const e = mopStart[t + 1]!;
    const local = new Map<number, Touch>();
    const lastWriteMop = new Map<number, number>();
    for (let m = s; m < e; m++) {
      const k = mopKey[m]!;
      let touch = local.get(k);
      if (!touch) {
        touch = { t, read: undefined, write: undefined };
        local.set(k, touch);
      }
      if (mopKind[m] === READ) {
        if (touch.write === undefined && touch.read === undefined && status[t] === OK)
          touch.read = ver(mopValue[m]);
      } else {
        const v = ver(mopValue[m]);
        // A read of nil is taken to see the initial state, so every txn that read nil is placed before
        // every writer of the key. A nil that a txn wrote (and may have installed) would make that
        // inference unsound: a read of it after a completed write reads as stale. An aborted write of
        // nil installs nothing, so only a failed txn may have one.
        if (v === INIT) {
          // Installs nothing and is never what a read is attributed to: not indexed, so two such writes
          // are no duplicate.
          if (status[t] === FAIL) continue;
          throw new WorkloadError(
            'nil-write',
            `op ${opId(t)} wrote nil to key ${renderValue(h.keys[k])}; rw-register reads nil as the initial state, so a written nil cannot be told apart from it (writes must be unique and not nil)`,
          );
        }
        const prev = anyWriter[k]!.get(v);
        if (prev !== undefined && prev !== t) {
          throw new WorkloadError(
            'duplicate-writes',
            `key ${renderValue(h.keys[k])} was written with value ${renderValue(mopValue[m])} by more than one transaction (ops ${opId(prev)} and ${opId(t)}); rw-register needs unique writes`,
          );
        }
        anyWriter[k]!.set(v, t);
        // Every write of an aborted txn, not only its last: reading any of them is an aborted read.
        if (status[t] === FAIL) failWriter[k]!.set(v, t);
        const before = lastWriteMop.get(k);
        if (before !== undefined && status[t] !== FAIL) intermediate[k]!.set(ver(mopValue[before]), t);
        lastWriteMop.set(k, m);
        touch.write = v;
      }
    }
    for (const [k, touch] of local) {
      if (status[t] === FAIL) continue;
      if (touch.write !== undefined) writer[k]!.set(touch.write, t);
      touches[k]!.push(touch);
      touchOf[k]!.set(t, touch);
    }
  }

  return { writer, failWriter, intermediate, touches, touchOf };
}

/** internal, G1a and G1b, read by read. */
function checkReads(c: Context, idx: WriteIndex): void {
  const { h, anomalies, opId, name } = c;
  const { n, status, mopStart, mopKind, mopKey } = h;
  const { mopValue } = c;
  const { failWriter, intermediate } = idx;
  for (let t = 0; t < n; t++) {
    if (status[t] !== OK) continue;
    const known = new Map<number, Version>();
    for (let m = mopStart[t]!; m < mopStart[t + 1]!; m++) {
      const k = mopKey[m]!;
      const v = ver(mopValue[m]);
      if (mopKind[m] === READ) {
        const expected = known.get(k);
        if (expected !== undefined && expected !== v) {
          addAnomaly(anomalies, {
            type: 'internal',
            explanation: `${name(t)} read key ${renderValue(h.keys[k])} = ${renderValue(mopValue[m])}, but its own earlier micro-ops imply ${show(expected)}`,
            ops: [opId(t)],
            key: String(h.keys[k]),
            mop: m - mopStart[t]!,
            expected: expected === INIT ? null : expected,
          });
        }
        if (v !== INIT && expected === undefined) {
          const fw = failWriter[k]!.get(v);
          if (fw !== undefined) {
            addAnomaly(anomalies, {
              type: 'G1a',
              explanation: `${name(t)} read key ${renderValue(h.keys[k])} = ${renderValue(mopValue[m])}, written by ${name(fw)}, a transaction that failed (aborted)`,
              ops: [opId(t), opId(fw)],
              key: String(h.keys[k]),
              mop: m - mopStart[t]!,
              writer: opId(fw),
            });
          }
          const iw = intermediate[k]!.get(v);
          if (iw !== undefined && iw !== t) {
            addAnomaly(anomalies, {
              type: 'G1b',
              explanation: `${name(t)} read key ${renderValue(h.keys[k])} = ${renderValue(mopValue[m])}, an intermediate write of ${name(iw)}, which wrote that key again later`,
              ops: [opId(t), opId(iw)],
              key: String(h.keys[k]),
              mop: m - mopStart[t]!,
              writer: opId(iw),
            });
          }
        }
      }
      known.set(k, v);
    }
  }
}

/** lost-update: two or more txns read the same version of a key and then wrote it. */
function checkLostUpdates(c: Context, idx: WriteIndex): void {
  const { h, anomalies, nKeys, name, opId } = c;
  const { status } = h;
  const { touches } = idx;
  for (let k = 0; k < nKeys; k++) {
    const byRead = new Map<Version, number[]>();
    for (const touch of touches[k]!) {
      if (touch.read === undefined || touch.write === undefined || status[touch.t] !== OK) continue;
      const list = byRead.get(touch.read);
      if (list) list.push(touch.t);
      else byRead.set(touch.read, [touch.t]);
    }
    for (const [v, txns] of byRead) {
      if (txns.length < 2) continue;
      addAnomaly(anomalies, {
        type: 'lost-update',
        explanation: `${txns.map(name).join(', ')} all read key ${renderValue(h.keys[k])} = ${show(v)} and then wrote it: all but one update was lost`,
        ops: txns.map(opId),
        key: String(h.keys[k]),
        value: v === INIT ? null : v,
      });
    }
  }
}

/** Each key's version graph and the ww/rw/wr edges it implies. */
interface VersionGraphs {
  edges: EdgeList;
  versionEdges: Set<string>[];
  sourcesUsed: string[][];
  idsByKey: Map<Version, number>[];
  readers: Map<Version, number[]>[];
}

function versionGraphs(c: Context, idx: WriteIndex, opts: RwRegisterOptions): VersionGraphs {
  const versionEdges: Set<string>[] = [];
  const sourcesUsed: string[][] = [];
  const edges = new EdgeList();
  const readers: Map<Version, number[]>[] = [];
  const idsByKey: Map<Version, number>[] = [];
  const g: VersionGraphs = { edges, versionEdges, sourcesUsed, idsByKey, readers };
  for (let k = 0; k < c.nKeys; k++) keyVersionGraph(c, idx, opts, k, g);
  return g;
}

/** Key k's version graph, source by source (a source that makes it cyclic is dropped), and its edges. */
function keyVersionGraph(
  c: Context,
  idx: WriteIndex,
  opts: RwRegisterOptions,
  k: number,
  g: VersionGraphs,
): void {
  const { h, anomalies } = c;
  const { status } = h;
  const { touches, writer } = idx;
  const { edges, readers, sourcesUsed, versionEdges, idsByKey } = g;
  const ids = new Map<Version, number>();
  const values: Version[] = [];
  const idOf = (v: Version) => {
    let i = ids.get(v);
    if (i === undefined) {
      i = values.length;
      ids.set(v, i);
      values.push(v);
    }
    return i;
  };
  const rd = new Map<Version, number[]>();
  readers.push(rd);
  for (const touch of touches[k]!) {
    if (touch.read !== undefined) {
      idOf(touch.read);
      const list = rd.get(touch.read);
      if (list) list.push(touch.t);
      else rd.set(touch.read, [touch.t]);
    }
    if (touch.write !== undefined) idOf(touch.write);
  }
  const src: number[] = [];
  const dst: number[] = [];
  const used: string[] = [];
  const trySource = (label: string, add: (link: (a: Version, b: Version) => void) => void) => {
    const mark = src.length;
    add((a, b) => {
      if (a === b) return;
      src.push(idOf(a));
      dst.push(idOf(b));
    });
    if (src.length === mark) return;
    const scc = cyclicValues(values.length, src, dst);
    if (scc) {
      addAnomaly(anomalies, {
        type: 'cyclic-versions',
        explanation: `the version order of key ${renderValue(h.keys[k])} inferred from ${[...used, label].join(', ')} is cyclic over values ${scc.map((i) => show(values[i])).join(', ')}; that source was dropped for this key`,
        key: String(h.keys[k]),
        scc: scc.map((i) => (values[i] === INIT ? null : values[i])),
        sources: [...used, label],
      });
      src.length = mark;
      dst.length = mark;
    } else used.push(label);
  };
  trySource('initial-state', (link) => {
    for (const v of values) if (v !== INIT) link(INIT, v);
  });
  if (opts.wfrKeys) {
    trySource('wfr-keys', (link) => {
      for (const touch of touches[k]!) {
        if (touch.read !== undefined && touch.write !== undefined) link(touch.read, touch.write);
      }
    });
  }
  if (opts.sequentialKeys) {
    trySource('sequential-keys', (link) => {
      // Touches are in txn (invocation) order, so per process they are in that process's order.
      const last = new Map<number, Touch>();
      for (const touch of touches[k]!) {
        if (status[touch.t] !== OK) continue;
        const p = h.process[touch.t]!;
        const prev = last.get(p);
        if (prev) link(finalValue(prev), firstValue(touch));
        last.set(p, touch);
      }
    });
  }
  if (opts.linearizableKeys) {
    trySource('linearizable-keys', (link) =>
      realtimeOnKey(c, idx, k, (a, b) => link(finalValue(a), firstValue(b))),
    );
  }
  sourcesUsed.push(used);
  const set = new Set<string>();
  for (let i = 0; i < src.length; i++) {
    const a = values[src[i]!];
    const b = values[dst[i]!];
    set.add(`${src[i]}>${dst[i]}`);
    const wb = writer[k]!.get(b);
    if (wb === undefined) continue;
    const wa = a === INIT ? undefined : writer[k]!.get(a);
    if (wa !== undefined) edges.add(wa, wb, WW);
    for (const r of rd.get(a) ?? []) edges.add(r, wb, RW);
  }
  versionEdges.push(set);
  for (const [v, rs] of rd) {
    if (v === INIT) continue;
    const w = writer[k]!.get(v);
    if (w === undefined) continue;
    for (const r of rs) edges.add(w, r, WR);
  }
  idsByKey.push(ids);
}

function finalValue(touch: Touch): Version {
  return touch.write ?? touch.read!;
}

function firstValue(touch: Touch): Version {
  return touch.read ?? touch.write!;
}

/** Realtime transitive reduction among the ok txns touching key k. */
function realtimeOnKey(c: Context, idx: WriteIndex, k: number, link: (a: Touch, b: Touch) => void): void {
  const { h } = c;
  const { status } = h;
  const { touches } = idx;
  const list = touches[k]!.filter((x) => status[x.t] === OK && !Number.isNaN(h.completeIndex[x.t]!));
  const events: [number, Touch, boolean][] = [];
  for (const x of list) {
    events.push([h.invokeIndex[x.t]!, x, false]);
    events.push([h.completeIndex[x.t]!, x, true]);
  }
  events.sort((a, b) => a[0] - b[0]);
  const buffer = new Set<Touch>();
  const preds = new Map<Touch, Touch[]>();
  for (const [, x, done] of events) {
    if (!done) {
      const p = [...buffer];
      preds.set(x, p);
      for (const a of p) link(a, x);
    } else {
      for (const a of preds.get(x) ?? []) buffer.delete(a);
      buffer.add(x);
    }
  }
}

/** One sentence justifying a data edge, from the version graphs the edges came from. */
function explainer(c: Context, idx: WriteIndex, g: VersionGraphs): WorkloadAnalysis['explain'] {
  const { h, nKeys } = c;
  const { touchOf } = idx;
  const { versionEdges, idsByKey, sourcesUsed } = g;
  function explain(a: number, b: number, rel: number, nm: (t: number) => string): string | null {
    for (let k = 0; k < nKeys; k++) {
      const ta = touchOf[k]!.get(a);
      const tb = touchOf[k]!.get(b);
      if (!ta || !tb) continue;
      const ids = idsByKey[k]!;
      const direct = (x: Version | undefined, y: Version | undefined) =>
        x !== undefined && y !== undefined && versionEdges[k]!.has(`${ids.get(x)}>${ids.get(y)}`);
      const key = renderValue(h.keys[k]);
      const how = `(version order from ${sourcesUsed[k]!.join(', ')})`;
      if (rel === WR && ta.write !== undefined && tb.read === ta.write) {
        return `${nm(a)} < ${nm(b)}, because ${nm(b)} read key ${key} = ${show(tb.read)}, which ${nm(a)} wrote`;
      }
      if (rel === WW && direct(ta.write, tb.write)) {
        return `${nm(a)} < ${nm(b)}, because ${nm(a)} wrote key ${key} = ${show(ta.write!)} and ${nm(b)} wrote the next version ${show(tb.write!)} ${how}`;
      }
      if (rel === RW && direct(ta.read, tb.write)) {
        return `${nm(a)} < ${nm(b)}, because ${nm(a)} read key ${key} = ${show(ta.read!)} and did not observe ${nm(b)}'s write of the next version ${show(tb.write!)} ${how}`;
      }
    }
    return null;
  }

  return explain;
}

/** The values on a cycle of a small version graph, or null when it is acyclic. */
function cyclicValues(n: number, src: number[], dst: number[]): number[] | null {
  const e = new EdgeList();
  for (let i = 0; i < src.length; i++) e.add(src[i]!, dst[i]!, 1);
  const { multi } = tarjan(buildCsr(n, e), 1);
  return multi.length ? Array.from(multi[0]!) : null;
}
