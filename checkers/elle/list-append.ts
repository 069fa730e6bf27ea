import { addAnomaly, type WorkloadAnalysis, WorkloadError } from './analysis.ts';
import { i32, u8 } from './arena.ts';
import { EdgeList, RW, WR, WW } from './graph.ts';
import {
  EMPTY_READ,
  FAIL,
  lastReadCode,
  mopTxns,
  mopValue,
  NIL,
  OK,
  READ,
  readChunk,
  readCodes,
  readOffset,
  renderValue,
  type TxnHistory,
  WRITE,
} from './txns.ts';

/**
 * List-append inference (`[append k v]`, `[r k [v1 v2 …]]`). Each key's version order is its longest
 * read (every other read must be a prefix of it), or `[v]` for a key appended exactly once and never
 * read. From that order: wr (writer of a read's last element → reader), ww (writer of the previous
 * element → appender), rw (readers of the previous element → appender). An append no read observed is
 * placed after the last observed element. Non-cycle checks: G1a, G1b, garbage-read, internal,
 * future-read, duplicate-elements, dirty-update, incompatible-order (between reads, or a read against
 * the order one txn appended in), lost-update.
 *
 * The analysis runs as named passes over one context: version orders, the append index, reads
 * against the orders, dirty updates, checks inside each txn, the dependency edges, and the explainer.
 * Values are compared as integer codes (equal codes, equal values); they are decoded only to be shown.
 */
export function analyseListAppend(h: TxnHistory): WorkloadAnalysis {
  const c = context(h);
  const o = versionOrders(c);
  const w = indexAppends(c, o);
  checkOwnAppendOrder(c, o, w);
  const readPos = checkReads(c, o, w);
  checkDirtyUpdates(c, o, w);
  checkWithinTxns(c);
  const edges = dependencyEdges(c, o, w, readPos);
  return {
    history: c.h,
    edges,
    anomalies: c.anomalies,
    explain: explainer(c, o, w, readPos),
    writeF: 'append',
  };
}

/** The flattened history, its anomalies so far, and naming helpers shared by every pass. */
interface Context {
  h: TxnHistory;
  anomalies: WorkloadAnalysis['anomalies'];
  nKeys: number;
  mopCount: number;
  /** Micro-op → its txn. */
  mopTxn: Int32Array;
  opId(t: number): number;
  /** A micro-op's index within its txn. */
  mopIndexIn(m: number): number;
  txnName(t: number): string;
  /** A value code as the value. */
  value(code: number): unknown;
}

function context(h: TxnHistory): Context {
  const { mopStart, mopKind } = h;
  const mopCount = mopKind.length;
  const mopTxn = mopTxns(h);
  const opId = (t: number) => h.invokeIndex[t]!;
  return {
    h,
    anomalies: new Map(),
    nKeys: h.keys.length,
    mopCount,
    mopTxn,
    opId,
    mopIndexIn: (m) => m - mopStart[mopTxn[m]!]!,
    txnName: (t) => `op ${opId(t)}`,
    value: (code) => h.values.decode(code),
  };
}

/** A list of value codes as values. */
function values(c: Context, codes: ArrayLike<number>): unknown[] {
  return Array.from(codes, c.value);
}

/** Each key's version order (its longest read) and element → position index. */
interface Orders {
  /** Per key, the micro-op of its longest read, or -1. */
  longest: Int32Array;
  /** Per key, its order as value codes. */
  orders: Int32Array[];
  /**
   * Where each key's positions start in the arrays indexed by (key, position) (`base[k] + p`), and
   * `base[nKeys]` their total length: one flat array for all keys, not one per key (a 10M-transaction
   * history has hundreds of thousands of keys).
   */
  base: Int32Array;
  positions: PositionIndex;
  /** 1 for keys whose order lists an element twice. */
  orderHasDupes: Uint8Array;
}

function versionOrders(c: Context): Orders {
  const { h, nKeys, mopCount, mopTxn } = c;
  const { status, mopKind, mopKey, mopCode, mopLen } = h;
  // Reads are lists; an ok read of nil means the empty list. Find each key's longest read.
  const longest = i32(nKeys).fill(-1);
  const longestLen = i32(nKeys);
  const appendCount = i32(nKeys);
  const loneAppend = i32(nKeys).fill(-1);
  for (let m = 0; m < mopCount; m++) {
    const k = mopKey[m]!;
    if (mopKind[m] === WRITE) {
      appendCount[k]!++;
      loneAppend[k] = m;
      continue;
    }
    if (status[mopTxn[m]!] !== OK) continue;
    if (mopLen[m]! < 0 && mopCode[m] !== NIL) {
      throw new WorkloadError(
        'malformed-read',
        `op ${c.opId(mopTxn[m]!)}: read of key ${renderValue(h.keys[k])} returned ${renderValue(mopValue(h, m))}, not a list`,
      );
    }
    const len = Math.max(0, mopLen[m]!);
    if (len > longestLen[k]! || longest[k] === -1) {
      longest[k] = m;
      longestLen[k] = len;
    }
  }
  const orders: Int32Array[] = new Array(nKeys);
  const base = i32(nKeys + 1);
  const empty: Int32Array = new Int32Array(0);
  for (let k = 0; k < nKeys; k++) {
    let order: Int32Array = empty;
    if (longest[k]! >= 0 && longestLen[k]! > 0) order = readCodes(h, longest[k]!)!;
    else if (appendCount[k] === 1) order = mopCode.subarray(loneAppend[k]!, loneAppend[k]! + 1);
    orders[k] = order;
    base[k + 1] = base[k]! + order.length;
  }
  const positions = new PositionIndex(orders);
  const orderHasDupes = u8(nKeys);
  for (let k = 0; k < nKeys; k++) {
    const dupes = positions.dupes[k];
    if (dupes) {
      reportDuplicates(c, longest[k]!, dupes);
      orderHasDupes[k] = 1;
    }
  }
  return { longest, orders, base, positions, orderHasDupes };
}

/** `dupes`: element code → how many times the read lists it. */
function reportDuplicates(c: Context, m: number, dupes: Map<number, number>): void {
  const { h, mopTxn } = c;
  const t = mopTxn[m]!;
  addAnomaly(c.anomalies, {
    type: 'duplicate-elements',
    explanation: `${c.txnName(t)} read key ${renderValue(h.keys[h.mopKey[m]!])} = ${renderValue(mopValue(h, m))}, which contains ${[...dupes].map(([e, n]) => `${renderValue(c.value(e))} ${n} times`).join(', ')}`,
    ops: [c.opId(t)],
    key: String(h.keys[h.mopKey[m]!]),
    mop: c.mopIndexIn(m),
    duplicates: Object.fromEntries([...dupes].map(([e, n]) => [String(c.value(e)), n])),
  });
}

/** Who appended what: observed elements by position in their key's order, the rest by value. */
interface Appends {
  /** Per key and position (at `base[k] + p`, see {@link Orders}): the appending txn, or -1. */
  writerAt: Int32Array;
  /** Per key and position (at `base[k] + p`): the append micro-op, or -1. */
  writerMopAt: Int32Array;
  /** Per micro-op: the position its append took in the order, or -2 (a read, or an unobserved append). */
  appendPos: Int32Array;
  /** The append micro-op that wrote element (code) e of key k, or -1. */
  writerMopOf(k: number, e: number): number;
  /** Whether append micro-op m is its txn's last append to that key. */
  isFinalAppend(m: number): boolean;
  /**
   * Pairs (earlier, later) of observed appends by one txn to one key, consecutive among its observed
   * appends to that key, that the key's order lists the other way round.
   */
  outOfOrder: number[];
}

function indexAppends(c: Context, o: Orders): Appends {
  const { h, mopCount, mopTxn } = c;
  const { mopStart, mopKind, mopKey, mopCode } = h;
  const { base, positions } = o;
  const writerAt = i32(base[c.nKeys]!).fill(-1);
  const writerMopAt = i32(base[c.nKeys]!).fill(-1);
  const unobserved = new Map<number, Map<number, number>>();
  const appendPos = i32(mopCount).fill(-2);
  // Per key: the txn, position and micro-op of the last observed append seen (micro-ops run txn by txn).
  const lastTxn = i32(c.nKeys).fill(-1);
  const lastPos = i32(c.nKeys);
  const lastMop = i32(c.nKeys);
  const outOfOrder: number[] = [];
  const duplicateAppend = (k: number, v: number, m1: number, m2: number): never => {
    throw new WorkloadError(
      'duplicate-appends',
      `value ${renderValue(c.value(v))} was appended to key ${renderValue(h.keys[k])} more than once (ops ${c.opId(mopTxn[m1]!)} and ${c.opId(mopTxn[m2]!)}); list-append needs unique appends`,
    );
  };
  for (let m = 0; m < mopCount; m++) {
    if (mopKind[m] !== WRITE) continue;
    const k = mopKey[m]!;
    const v = mopCode[m]!;
    const p = positions.get(k, v);
    const t = mopTxn[m]!;
    if (p >= 0) {
      appendPos[m] = p;
      const at = base[k]! + p;
      if (writerMopAt[at] !== -1) duplicateAppend(k, v, writerMopAt[at]!, m);
      writerAt[at] = t;
      writerMopAt[at] = m;
      if (lastTxn[k] === t && lastPos[k]! > p) outOfOrder.push(lastMop[k]!, m);
      lastTxn[k] = t;
      lastPos[k] = p;
      lastMop[k] = m;
    } else {
      let u = unobserved.get(k);
      if (!u) {
        u = new Map();
        unobserved.set(k, u);
      }
      const prev = u.get(v);
      if (prev !== undefined) duplicateAppend(k, v, prev, m);
      u.set(v, m);
    }
  }
  return {
    writerAt,
    writerMopAt,
    appendPos,
    outOfOrder,
    writerMopOf(k, e) {
      const p = positions.get(k, e);
      if (p >= 0) return writerMopAt[base[k]! + p]!;
      return unobserved.get(k)?.get(e) ?? -1;
    },
    isFinalAppend(m) {
      const t = mopTxn[m]!;
      for (let j = m + 1; j < mopStart[t + 1]!; j++)
        if (mopKind[j] === WRITE && mopKey[j] === mopKey[m]) return false;
      return true;
    },
  };
}

/**
 * incompatible-order: a txn's appends to one key take effect in the order it issued them, so the key's
 * order (its longest read) must list them that way. `[append y 1] [append y 2]` read back as `[2 1 …]`
 * contradicts it. No edge can show this (both appends are one vertex), so it is checked here.
 */
function checkOwnAppendOrder(c: Context, o: Orders, w: Appends): void {
  const { h, mopTxn } = c;
  const { mopStart, mopKind, mopKey, mopCode } = h;
  let reported: Set<string> | null = null;
  for (let i = 0; i < w.outOfOrder.length; i += 2) {
    const prev = w.outOfOrder[i]!;
    const m = w.outOfOrder[i + 1]!;
    const t = mopTxn[m]!;
    const k = mopKey[m]!;
    reported ??= new Set();
    const id = `${t}:${k}`;
    if (reported.has(id)) continue;
    reported.add(id);
    const own: number[] = [];
    for (let j = mopStart[t]!; j < mopStart[t + 1]!; j++)
      if (mopKind[j] === WRITE && mopKey[j] === k) own.push(mopCode[j]!);
    const reader = mopTxn[o.longest[k]!]!;
    addAnomaly(c.anomalies, {
      type: 'incompatible-order',
      explanation: `${c.txnName(reader)} read key ${renderValue(h.keys[k])} = ${renderValue(values(c, o.orders[k]!))}, with ${renderValue(c.value(mopCode[m]!))} before ${renderValue(c.value(mopCode[prev]!))}, but ${c.txnName(t)} appended them in the order ${renderValue(values(c, own))}`,
      ops: [c.opId(reader), c.opId(t)],
      key: String(h.keys[k]),
      values: [values(c, o.orders[k]!), values(c, own)],
    });
  }
}

/**
 * Every ok read against its key's order: G1a (an aborted append read), G1b (an intermediate append
 * read last), garbage-read (an element nobody appended), incompatible-order and duplicates. Returns
 * each read's position of its last element in the order (-1 = empty, -2 = unknown or not a read).
 */
function checkReads(c: Context, o: Orders, w: Appends): Int32Array {
  const { h, mopCount, mopTxn } = c;
  const { status, mopKind, mopKey, mopCode, mopLen } = h;
  const { orders, base, positions } = o;
  const { writerAt, writerMopAt } = w;
  const firstFail = i32(c.nKeys).fill(-1);
  const firstGarbage = i32(c.nKeys).fill(-1);
  for (let k = 0; k < c.nKeys; k++) {
    const b = base[k]!;
    const len = base[k + 1]! - b;
    for (let i = 0; i < len; i++) {
      const t = writerAt[b + i]!;
      if (t >= 0 && status[t] === FAIL) {
        firstFail[k] = i;
        break;
      }
    }
    // The first element that no append (ok, info or failed) wrote to that key. Without duplicates an
    // element's position is its index, so its writer is the one at that position.
    const order = orders[k]!;
    for (let i = 0; i < len; i++) {
      if ((o.orderHasDupes[k] ? w.writerMopOf(k, order[i]!) : writerMopAt[b + i]!) < 0) {
        firstGarbage[k] = i;
        break;
      }
    }
  }
  const readPos = i32(mopCount).fill(-2);
  const incompatibleReported = new Set<number>();
  for (let m = 0; m < mopCount; m++) {
    if (mopKind[m] !== READ || status[mopTxn[m]!] !== OK) continue;
    const k = mopKey[m]!;
    const t = mopTxn[m]!;
    const len = mopLen[m]!;
    if (len <= 0) {
      readPos[m] = -1;
      continue;
    }
    // The list is compared where it lies in the pool: a view per read costs more than the comparison.
    const chunk = readChunk(h, m);
    const off = readOffset(h, m);
    const order = orders[k]!;
    let compatible = len <= order.length;
    // A read kept at the longest read's position is a prefix of it (see ListPool in txns.ts): most are.
    if (compatible && mopCode[m] !== mopCode[o.longest[k]!]) {
      for (let i = 0; i < len; i++) {
        if (chunk[off + i] !== order[i]) {
          compatible = false;
          break;
        }
      }
    }
    let lastMop: number;
    if (compatible) {
      // With duplicates in the order, an element's position is its first occurrence.
      const p = o.orderHasDupes[k] ? positions.get(k, chunk[off + len - 1]!) : -1;
      readPos[m] = p >= 0 ? p : len - 1;
      lastMop = writerMopAt[base[k]! + readPos[m]!]!;
      const ff = firstFail[k]!;
      if (ff >= 0 && ff < len) reportG1a(c, m, writerMopAt[base[k]! + ff]!, order[ff]!);
      const fg = firstGarbage[k]!;
      if (fg >= 0 && fg < len) reportGarbage(c, m, order[fg]!);
    } else {
      const r = readCodes(h, m)!;
      if (!incompatibleReported.has(k)) {
        incompatibleReported.add(k);
        addAnomaly(c.anomalies, {
          type: 'incompatible-order',
          explanation: `reads of key ${renderValue(h.keys[k])} disagree on its order: ${c.txnName(t)} read ${renderValue(values(c, r))} but ${c.txnName(mopTxn[o.longest[k]!]!)} read ${renderValue(values(c, order))}`,
          ops: [c.opId(t), c.opId(mopTxn[o.longest[k]!]!)],
          key: String(h.keys[k]),
          values: [values(c, r), values(c, order)],
        });
      }
      reportIncompatibleRead(c, w, m, r);
      const last = r[r.length - 1]!;
      const p = positions.get(k, last);
      if (p >= 0) readPos[m] = p;
      lastMop = w.writerMopOf(k, last);
    }
    // G1b: the last element read was not its writer's final append to this key.
    if (lastMop >= 0 && mopTxn[lastMop] !== t && !w.isFinalAppend(lastMop)) {
      const wt = mopTxn[lastMop]!;
      addAnomaly(c.anomalies, {
        type: 'G1b',
        explanation: `${c.txnName(t)} read key ${renderValue(h.keys[k])} = ${renderValue(values(c, readCodes(h, m)!))}, ending in ${renderValue(c.value(mopCode[lastMop]!))}, an intermediate append by ${c.txnName(wt)}, which appended to that key again later`,
        ops: [c.opId(t), c.opId(wt)],
        key: String(h.keys[k]),
        mop: c.mopIndexIn(m),
        writer: c.opId(wt),
        element: c.value(mopCode[lastMop]!),
      });
    }
  }
  return readPos;
}

/** A read that is no prefix of its key's order: its duplicates, and its first aborted element. */
function reportIncompatibleRead(c: Context, w: Appends, m: number, r: Int32Array): void {
  const { h, mopTxn } = c;
  const k = h.mopKey[m]!;
  const seen = new Map<number, number>();
  for (const e of r) seen.set(e, (seen.get(e) ?? 0) + 1);
  const dupes = new Map<number, number>();
  for (const e of r) if ((seen.get(e) ?? 0) > 1) dupes.set(e, seen.get(e)!);
  if (dupes.size > 0) reportDuplicates(c, m, dupes);
  let aborted = false;
  let garbage = false;
  for (const e of r) {
    const wm = w.writerMopOf(k, e);
    if (wm < 0 && !garbage) {
      reportGarbage(c, m, e);
      garbage = true;
    } else if (wm >= 0 && !aborted && h.status[mopTxn[wm]!] === FAIL) {
      reportG1a(c, m, wm, e);
      aborted = true;
    }
  }
}

/**
 * garbage-read: an ok read holds `e` (a code), which no transaction (ok, info or failed) ever appended
 * to that key; no execution produces that list. Elle names these garbage reads; like duplicate
 * elements they cannot occur in any Adya history, so read-uncommitted already rules them out.
 */
function reportGarbage(c: Context, m: number, e: number): void {
  const { h, mopTxn } = c;
  const t = mopTxn[m]!;
  addAnomaly(c.anomalies, {
    type: 'garbage-read',
    explanation: `${c.txnName(t)} read key ${renderValue(h.keys[h.mopKey[m]!])} = ${renderValue(mopValue(h, m))}, including ${renderValue(c.value(e))}, which no transaction ever appended to that key`,
    ops: [c.opId(t)],
    key: String(h.keys[h.mopKey[m]!]),
    mop: c.mopIndexIn(m),
    element: c.value(e),
  });
}

/** `e`: the aborted element's code. */
function reportG1a(c: Context, m: number, wm: number, e: number): void {
  const { h, mopTxn } = c;
  const t = mopTxn[m]!;
  const wt = mopTxn[wm]!;
  addAnomaly(c.anomalies, {
    type: 'G1a',
    explanation: `${c.txnName(t)} read key ${renderValue(h.keys[h.mopKey[m]!])} = ${renderValue(mopValue(h, m))}, including ${renderValue(c.value(e))}, which was appended by ${c.txnName(wt)}, a transaction that failed (aborted)`,
    ops: [c.opId(t), c.opId(wt)],
    key: String(h.keys[h.mopKey[m]!]),
    mop: c.mopIndexIn(m),
    writer: c.opId(wt),
    element: c.value(e),
  });
}

/** dirty-update: a committed append directly on top of aborted ones (possibly through indeterminate ones). */
function checkDirtyUpdates(c: Context, o: Orders, w: Appends): void {
  const { h, nKeys } = c;
  const { status } = h;
  for (let k = 0; k < nKeys; k++) {
    const wa = w.writerAt.subarray(o.base[k]!, o.base[k + 1]!);
    let failStart = -1;
    for (let i = 0; i < wa.length; i++) {
      const t = wa[i]!;
      if (t < 0) continue;
      if (status[t] === FAIL) {
        if (failStart < 0) failStart = i;
      } else if (status[t] === OK) {
        if (failStart >= 0) {
          const txns = Array.from(wa.subarray(failStart, i + 1)).filter((x) => x >= 0);
          addAnomaly(c.anomalies, {
            type: 'dirty-update',
            explanation: `key ${renderValue(h.keys[k])}: committed ${c.txnName(t)} appended ${renderValue(c.value(o.orders[k]![i]!))} on top of ${renderValue(c.value(o.orders[k]![failStart]!))}, appended by failed ${c.txnName(wa[failStart]!)}`,
            ops: txns.map(c.opId),
            key: String(h.keys[k]),
            values: values(c, o.orders[k]!.subarray(failStart, i + 1)),
          });
        }
        failStart = -1;
      }
    }
  }
}

/** Checks that need earlier micro-ops of the same txn: internal, future-read, lost-update. */
function checkWithinTxns(c: Context): void {
  const { h, anomalies, txnName, opId } = c;
  const { n, status, mopStart, mopKind, mopKey, mopCode } = h;
  // Reads that a txn followed with an append to the same key (lost-update candidates), by micro-op.
  const readThenAppend: number[] = [];
  const none = new Int32Array(0);
  for (let t = 0; t < n; t++) {
    const s = mopStart[t]!;
    const e = mopStart[t + 1]!;
    if (e - s < 2) continue;
    for (let m = s; m < e; m++) {
      const k = mopKey[m]!;
      let firstOnKey = true;
      for (let j = s; j < m; j++) {
        if (mopKey[j] === k) {
          firstOnKey = false;
          break;
        }
      }
      if (mopKind[m] === READ && status[t] === OK) {
        // The read's view only when a check needs it (most reads are of a key the txn touches once).
        let r: Int32Array | null = null;
        if (!firstOnKey) {
          r = readCodes(h, m) ?? none;
          checkInternal(t, m, r);
        }
        for (let j = m + 1; j < e; j++) {
          if (mopKind[j] !== WRITE || mopKey[j] !== k) continue;
          r ??= readCodes(h, m) ?? none;
          if (r.includes(mopCode[j]!)) {
            addAnomaly(anomalies, {
              type: 'future-read',
              explanation: `${txnName(t)} read key ${renderValue(h.keys[k])} = ${renderValue(values(c, r))}, which includes ${renderValue(c.value(mopCode[j]!))}, an element that the same transaction appends only later`,
              ops: [opId(t)],
              key: String(h.keys[k]),
              mop: m - s,
              element: c.value(mopCode[j]!),
            });
            break;
          }
        }
        if (firstOnKey && status[t] === OK) {
          let writesLater = false;
          for (let j = m + 1; j < e; j++) if (mopKind[j] === WRITE && mopKey[j] === k) writesLater = true;
          if (writesLater) readThenAppend.push(m);
        }
      }
    }
  }
  /**
   * The read must equal the txn's last earlier read of the key plus its appends since, or (with no
   * earlier read) end in its appends so far. Compared in place: this runs for every repeated key.
   */
  function checkInternal(t: number, m: number, r: Int32Array): void {
    const k = mopKey[m]!;
    let lastRead = -1;
    let appends = 0;
    for (let j = mopStart[t]!; j < m; j++) {
      if (mopKey[j] !== k) continue;
      if (mopKind[j] === READ) {
        lastRead = j;
        appends = 0;
      } else appends++;
    }
    const base = lastRead >= 0 ? (readCodes(h, lastRead) ?? none) : none;
    // Known: r is exactly base + appends. Unknown: r ends in the appends.
    let ok = lastRead >= 0 ? r.length === base.length + appends : r.length >= appends;
    for (let i = 0; ok && i < base.length; i++) if (r[i] !== base[i]) ok = false;
    let at = r.length - appends;
    for (let j = lastRead >= 0 ? lastRead + 1 : mopStart[t]!; ok && j < m; j++) {
      if (mopKey[j] === k && mopKind[j] !== READ && r[at++] !== mopCode[j]) ok = false;
    }
    if (!ok) {
      let known: number[] | null = null;
      const suffix: number[] = [];
      for (let j = mopStart[t]!; j < m; j++) {
        if (mopKey[j] !== k) continue;
        if (mopKind[j] === READ) {
          known = Array.from(readCodes(h, j) ?? none);
          suffix.length = 0;
        } else if (known) known.push(mopCode[j]!);
        else suffix.push(mopCode[j]!);
      }
      const expected = known ? values(c, known) : ['...', ...values(c, suffix)];
      addAnomaly(anomalies, {
        type: 'internal',
        explanation: `${txnName(t)} read key ${renderValue(h.keys[k])} = ${renderValue(values(c, r))}, but its own earlier micro-ops imply ${known ? renderValue(expected) : `[... ${values(c, suffix).map(renderValue).join(' ')}]`}`,
        ops: [opId(t)],
        key: String(h.keys[k]),
        mop: m - mopStart[t]!,
        expected,
      });
    }
  }
  for (const g of lostUpdateGroups(c, readThenAppend)) {
    const txns = g.mops.map((m) => c.mopTxn[m]!);
    const last = lastReadCode(h, g.mops[0]!);
    const v = last === EMPTY_READ ? null : last;
    const shown = v === null ? '[]' : `a list ending in ${renderValue(c.value(v))}`;
    addAnomaly(anomalies, {
      type: 'lost-update',
      explanation: `${txns.map(txnName).join(', ')} all read key ${renderValue(h.keys[g.key])} as ${shown} and then appended to it: all but one update was lost`,
      ops: txns.map(opId),
      key: String(h.keys[g.key]),
      value: v === null ? null : c.value(v),
    });
  }
}

/**
 * lost-update: candidate reads (micro-ops, in txn order) of one key that saw the same value (the same
 * last element, or the empty list), two or more to a group. Keys come in the order of their first
 * candidate, groups within a key likewise, as a map of maps would give them; but a large history has
 * millions of candidates, so they are bucketed by key in typed arrays instead of one array per value.
 */
function lostUpdateGroups(c: Context, cands: readonly number[]): { key: number; mops: number[] }[] {
  const { h, nKeys } = c;
  const { mopKey } = h;
  const start = i32(nKeys + 1);
  for (const m of cands) start[mopKey[m]! + 1]!++;
  for (let k = 0; k < nKeys; k++) start[k + 1]! += start[k]!;
  const fill = i32(nKeys);
  fill.set(start.subarray(0, nKeys));
  const byKey = i32(cands.length);
  for (let i = 0; i < cands.length; i++) byKey[fill[mopKey[cands[i]!]!]!++] = i;
  const found: { first: number; key: number; mops: number[] }[] = [];
  for (let k = 0; k < nKeys; k++) {
    const s = start[k]!;
    const e = start[k + 1]!;
    if (e - s < 2) continue;
    // Each candidate's leader: the first candidate of this key that saw the same value (a few compare
    // pairwise, many look the value up). Only values seen twice get an array.
    let groups: Map<number, number[]> | null = null;
    const leaderOf = e - s > 32 ? new Map<number, number>() : null;
    for (let i = s; i < e; i++) {
      const m = cands[byKey[i]!]!;
      const v = lastReadCode(h, m);
      let leader = -1;
      if (leaderOf) {
        const l = leaderOf.get(v);
        if (l === undefined) leaderOf.set(v, i);
        else leader = l;
      } else {
        for (let j = s; j < i; j++) {
          if (lastReadCode(h, cands[byKey[j]!]!) === v) {
            leader = j;
            break;
          }
        }
      }
      if (leader < 0) continue;
      groups ??= new Map();
      let g = groups.get(leader);
      if (!g) {
        g = [cands[byKey[leader]!]!];
        groups.set(leader, g);
      }
      g.push(m);
    }
    if (!groups) continue;
    for (const [, mops] of [...groups].sort((a, b) => a[0] - b[0]))
      found.push({ first: byKey[s]!, key: k, mops });
  }
  // Stable: groups of one key keep their order.
  return found.sort((a, b) => a.first - b.first);
}

/** ww, wr and rw edges between the txns that did not fail. */
function dependencyEdges(c: Context, o: Orders, w: Appends, readPos: Int32Array): EdgeList {
  const { h, nKeys, mopCount, mopTxn } = c;
  const { n, status, mopKind, mopKey } = h;
  const { orders } = o;
  // Where each key's positions start in the writer table (the reader slots below have one more per key).
  const positionBase = o.base;
  const { writerAt, appendPos, writerMopOf } = w;
  // Dependency edges, among txns that did not fail: an aborted txn is not part of the serialization
  // graph (reading its writes is G1a, reported above).
  // Roughly one or two wr, ww or rw edges per micro-op, plus a process edge per txn added later
  // (realtime edges go straight into the graph).
  const edges = new EdgeList(Math.ceil(1.5 * mopCount) + n + 1024);
  const link = (a: number, b: number, rel: number) => {
    if (status[a] !== FAIL && status[b] !== FAIL) edges.add(a, b, rel);
  };
  // Readers bucketed by (key, position of their last element): slot = base[k] + pos + 1.
  const base = i32(nKeys + 1);
  for (let k = 0; k < nKeys; k++) base[k + 1] = base[k]! + orders[k]!.length + 1;
  const slotStart = i32(base[nKeys]! + 1);
  for (let m = 0; m < mopCount; m++) if (readPos[m]! >= -1) slotStart[base[mopKey[m]!]! + readPos[m]! + 2]!++;
  for (let i = 0; i < base[nKeys]!; i++) slotStart[i + 1]! += slotStart[i]!;
  const slotFill = i32(slotStart.length);
  slotFill.set(slotStart);
  const slotReaders = i32(slotStart[base[nKeys]!]!);
  for (let m = 0; m < mopCount; m++) {
    if (readPos[m]! < -1) continue;
    const t = mopTxn[m]!;
    slotReaders[slotFill[base[mopKey[m]!]! + readPos[m]! + 1]!++] = t;
    // wr: the writer of the last element → the reader.
    if (readPos[m]! >= 0) {
      const w = writerAt[positionBase[mopKey[m]!]! + readPos[m]!]!;
      if (w >= 0) link(w, t, WR);
    }
  }
  for (let m = 0; m < mopCount; m++) {
    if (mopKind[m] !== WRITE) continue;
    const k = mopKey[m]!;
    const t = mopTxn[m]!;
    const p = appendPos[m]!;
    const pred = p >= 0 ? p - 1 : orders[k]!.length - 1;
    if (pred >= 0) {
      const w = writerAt[positionBase[k]! + pred]!;
      if (w >= 0) link(w, t, WW);
    }
    const slot = base[k]! + pred + 1;
    for (let i = slotStart[slot]!; i < slotStart[slot + 1]!; i++) link(slotReaders[i]!, t, RW);
  }
  // Reads whose last element is not in the order (incompatible reads) still get a wr edge.
  for (let m = 0; m < mopCount; m++) {
    if (mopKind[m] !== READ || readPos[m] !== -2 || status[mopTxn[m]!] !== OK) continue;
    const r = readCodes(h, m);
    if (!r || r.length === 0) continue;
    const wm = writerMopOf(mopKey[m]!, r[r.length - 1]!);
    if (wm >= 0) link(mopTxn[wm]!, mopTxn[m]!, WR);
  }

  return edges;
}

/** One sentence justifying a data edge, from the same indices the edges were built from. */
function explainer(c: Context, o: Orders, w: Appends, readPos: Int32Array): WorkloadAnalysis['explain'] {
  const { h, mopTxn } = c;
  const { status, mopStart, mopKind, mopKey, mopCode } = h;
  const { orders } = o;
  const { writerAt, appendPos, writerMopOf } = w;
  function explain(a: number, b: number, rel: number, name: (t: number) => string): string | null {
    const A = name(a);
    const B = name(b);
    if (rel === WR) {
      for (let m = mopStart[b]!; m < mopStart[b + 1]!; m++) {
        if (mopKind[m] !== READ) continue;
        const r = readCodes(h, m);
        if (!r || r.length === 0) continue;
        const wm = writerMopOf(mopKey[m]!, r[r.length - 1]!);
        if (wm >= 0 && mopTxn[wm] === a) {
          return `${A} < ${B}, because ${B} observed ${A}'s append of ${renderValue(c.value(r[r.length - 1]!))} to key ${renderValue(h.keys[mopKey[m]!])}`;
        }
      }
      return null;
    }
    for (let m = mopStart[b]!; m < mopStart[b + 1]!; m++) {
      if (mopKind[m] !== WRITE) continue;
      const k = mopKey[m]!;
      const p = appendPos[m]!;
      const pred = p >= 0 ? p - 1 : orders[k]!.length - 1;
      const where = p >= 0 ? '' : ' (an append no read observed, so placed after the last observed element)';
      if (rel === WW && pred >= 0 && writerAt[o.base[k]! + pred] === a) {
        return `${A} < ${B}, because ${A} appended ${renderValue(c.value(orders[k]![pred]!))} before ${B} appended ${renderValue(c.value(mopCode[m]!))} to key ${renderValue(h.keys[k])}${where}`;
      }
      if (rel === RW) {
        for (let j = mopStart[a]!; j < mopStart[a + 1]!; j++) {
          if (mopKind[j] === READ && mopKey[j] === k && readPos[j] === pred && status[a] === OK) {
            return `${A} < ${B}, because ${A} read key ${renderValue(h.keys[k])} = ${renderValue(mopValue(h, j) ?? [])} and did not observe ${B}'s append of ${renderValue(c.value(mopCode[m]!))}${where}`;
          }
        }
      }
    }
    return null;
  }

  return explain;
}

export type { TxnHistory };

/**
 * Element (code) → position in each key's version order. Workload values are usually small non-negative
 * integers counting up per key (codes equal to the values), so a key whose elements all lie below
 * 4 × its order's length + 1024 gets a dense table, and the other keys a Map. The dense tables are
 * ranges of one flat array rather than an array and an index object per key: lookups stay monomorphic
 * and a history of hundreds of thousands of keys allocates one array instead of as many.
 */
export class PositionIndex {
  /** Per key: where its dense table starts in `dense`, and its size (-1: the key uses `sparse`). */
  private readonly start: Int32Array;
  private readonly size: Int32Array;
  /** Position + 1 of each element in its key's table, 0 for none (so the array needs no fill). */
  private readonly dense: Int32Array;
  private readonly sparse = new Map<number, Map<number, number>>();
  /** Per key: element code → occurrences, for elements its order lists more than once (else undefined). */
  readonly dupes: (Map<number, number> | undefined)[];

  constructor(orders: readonly Int32Array[]) {
    const nKeys = orders.length;
    this.start = i32(nKeys + 1);
    this.size = i32(nKeys);
    this.dupes = new Array(nKeys);
    let total = 0;
    for (let k = 0; k < nKeys; k++) {
      const order = orders[k]!;
      const limit = 4 * order.length + 1024;
      let max = 0;
      let dense = true;
      for (let i = 0; i < order.length; i++) {
        const e = order[i]!;
        if (e < 0 || e >= limit) {
          dense = false;
          break;
        }
        if (e > max) max = e;
      }
      this.start[k] = total;
      this.size[k] = dense ? max + 1 : -1;
      if (dense) total += max + 1;
    }
    this.dense = i32(total);
    for (let k = 0; k < nKeys; k++) {
      const order = orders[k]!;
      let dupes: Map<number, number> | undefined;
      if (this.size[k]! >= 0) {
        const at = this.start[k]!;
        for (let i = 0; i < order.length; i++) {
          const e = order[i]!;
          if (this.dense[at + e] !== 0) dupes = noteDupe(dupes, e);
          else this.dense[at + e] = i + 1;
        }
      } else {
        const map = new Map<number, number>();
        for (let i = 0; i < order.length; i++) {
          const e = order[i]!;
          if (map.has(e)) dupes = noteDupe(dupes, e);
          else map.set(e, i);
        }
        this.sparse.set(k, map);
      }
      this.dupes[k] = dupes;
    }
  }

  /** The position of element (code) `e` in key `k`'s order (its first, if listed twice), or -1. */
  get(k: number, e: number): number {
    const size = this.size[k]!;
    if (size < 0) return this.sparse.get(k)!.get(e) ?? -1;
    return e >= 0 && e < size ? this.dense[this.start[k]! + e]! - 1 : -1;
  }
}

/** One more occurrence of an element listed twice or more (counting from 2), in a map made on first use. */
function noteDupe(dupes: Map<number, number> | undefined, e: number): Map<number, number> {
  const d = dupes ?? new Map<number, number>();
  d.set(e, (d.get(e) ?? 1) + 1);
  return d;
}
