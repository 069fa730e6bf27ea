import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  intervalText,
  isClient,
  MAX_ANOMALIES,
  parseOptions,
  pushCapped,
  quantileSorted,
  result,
  sample,
  ValueIndex,
  valueKey,
} from './common.ts';

/**
 * Jepsen's `set-full`: adds of one element each and reads of the whole set throughout the run.
 *
 * Per element (from its first add invocation on):
 *  - known: the ok add completion, or the first read completion that saw it, whichever came first;
 *  - last-present / last-absent: the latest *invocation* of an ok read that did / did not contain it
 *    (only reads completing after the add was invoked count);
 *  - stable: last-present after last-absent; lost: known, and an absent read invoked after both the last
 *    present read and the known point; otherwise never-read. Stale = stable, with the last absent read
 *    invoked after the known point (event order, not timestamps: see `classify`).
 * Valid: false on any lost element, on any element repeated inside one read (Jepsen's own duplicate test
 * compares frequency < 1 and so never fires; here a frequency > 1 counts), on unexpected elements, and on
 * stale elements when `linearizable`; unknown when nothing became stable.
 *
 * Cost: O(total read size + elements × concurrency). Reads are scanned newest-first per element and the
 * scan stops early, instead of Jepsen's elements × reads fold.
 */
export const setFullOptionsSchema = z.strictObject({
  addF: z.string().default('add'),
  readF: z.string().default('read'),
  linearizable: z.boolean().default(false),
});
export type SetFullOptions = z.input<typeof setFullOptionsSchema>;

const SCOPE =
  'Sees only what reads returned: an element lost and re-added between two reads, and order inside the set, are invisible; without linearizable:true stale reads are reported but do not fail.';

interface ReadInfo {
  op: Operation;
  members: Set<number>;
}

const QUANTILES = [0, 0.5, 0.95, 0.99, 1] as const;

function latencyQuantiles(ms: number[]): Record<string, number> | null {
  if (ms.length === 0) return null;
  const s = Float64Array.from(ms).sort();
  const out: Record<string, number> = {};
  for (const q of QUANTILES) out[String(q)] = q === 0 ? (s[0] as number) : quantileSorted(s, q);
  return out;
}

/** Every add attempt per element (interned to a dense slot), and the ok reads. */
interface Attempts {
  index: ValueIndex;
  /** Per slot: the earliest add invocation, the earliest ack (index and time). */
  addInv: number[];
  ackIdx: number[];
  ackT: number[];
  readOps: Operation[];
  consumed: number;
  addCount: number;
}

function collectAttempts(ops: readonly Operation[], o: { addF: string; readF: string }): Attempts {
  const a: Attempts = {
    index: new ValueIndex(),
    addInv: [],
    ackIdx: [],
    ackT: [],
    readOps: [],
    consumed: 0,
    addCount: 0,
  };
  for (const op of ops) {
    if (!isClient(op)) continue;
    if (op.f === o.addF) {
      a.consumed++;
      a.addCount++;
      const i = a.index.intern(op.input);
      if (i === a.addInv.length) {
        a.addInv.push(op.invokeIndex);
        a.ackIdx.push(Number.POSITIVE_INFINITY);
        a.ackT.push(0);
      } else if (op.invokeIndex < (a.addInv[i] as number)) a.addInv[i] = op.invokeIndex;
      if (op.type === 'ok' && op.completeIndex !== null && op.completeIndex < (a.ackIdx[i] as number)) {
        a.ackIdx[i] = op.completeIndex;
        a.ackT[i] = op.completeTime ?? op.invokeTime;
      }
    } else if (op.f === o.readF) {
      a.consumed++;
      if (op.type === 'ok' && op.completeIndex !== null) a.readOps.push(op);
    }
  }
  return a;
}

/** What the reads contain: members per read, and elements read twice or never added. */
interface ReadContents {
  reads: ReadInfo[];
  duplicated: Map<unknown, { value: unknown; count: number; op: number }>;
  unexpected: { value: unknown; op: number }[];
}

function readContents(a: Attempts): ReadContents {
  const out: ReadContents = { reads: [], duplicated: new Map(), unexpected: [] };
  const unexpectedIndex = new ValueIndex();
  for (const op of a.readOps) {
    const items = collectionItems(op.output);
    if (items === null) {
      throw new Error(`set-full: read op ${op.invokeIndex} returned ${JSON.stringify(op.output)}, not a set`);
    }
    const members = new Set<number>();
    let foreign: Set<number> | null = null;
    for (const v of items) {
      const i = a.index.slot(v);
      let repeated: boolean;
      if (i === -1) {
        // Never added: unexpected. Slots of a second index keep such values apart from elements.
        const u = unexpectedIndex.intern(v);
        if (u === out.unexpected.length) out.unexpected.push({ value: v, op: op.invokeIndex });
        foreign ??= new Set();
        repeated = foreign.has(u);
        foreign.add(u);
      } else {
        repeated = members.has(i);
        members.add(i);
      }
      if (repeated) {
        const k = valueKey(v);
        const d = out.duplicated.get(k);
        if (d === undefined) out.duplicated.set(k, { value: v, count: 2, op: op.invokeIndex });
        else d.count++;
      }
    }
    out.reads.push({ op, members });
  }
  // Newest read invocation first.
  out.reads.sort((x, y) => y.op.invokeIndex - x.op.invokeIndex);
  return out;
}

/** Per element: the first read that saw it (index and time) and the last read it was present in. */
function sightings(a: Attempts, reads: readonly ReadInfo[]) {
  const n = a.index.size;
  const seenIdx = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
  const seenT = new Array<number>(n).fill(0);
  const seenOp = new Array<number>(n).fill(-1);
  const lastPresent = new Array<Operation | null>(n).fill(null);
  for (const r of reads) {
    const ci = r.op.completeIndex as number;
    for (const i of r.members) {
      if (ci < (a.addInv[i] as number)) continue; // read finished before the add began: no evidence
      if (ci < (seenIdx[i] as number)) {
        seenIdx[i] = ci;
        seenT[i] = r.op.completeTime ?? r.op.invokeTime;
        seenOp[i] = r.op.invokeIndex;
      }
      const lp = lastPresent[i];
      if (lp == null || r.op.invokeIndex > lp.invokeIndex) lastPresent[i] = r.op;
    }
  }
  return { seenIdx, seenT, seenOp, lastPresent };
}

/** Each element stable, lost or never read, with the latencies and the lost anomalies. */
interface Classified {
  stable: unknown[];
  lost: unknown[];
  neverRead: unknown[];
  /** Stable elements a read invoked after they were known lacked: that read (op) and how much later. */
  stale: { element: unknown; latencyMs: number; read: number }[];
  stableLatencies: number[];
  lostLatencies: number[];
  anomalies: Anomaly[];
}

function classify(a: Attempts, reads: readonly ReadInfo[]): Classified {
  const c: Classified = {
    stable: [],
    lost: [],
    neverRead: [],
    stale: [],
    stableLatencies: [],
    lostLatencies: [],
    anomalies: [],
  };
  // suffixMaxComplete[i] = max completion index among reads[i..] (reads are newest first).
  const suffixMaxComplete = new Float64Array(reads.length + 1).fill(-1);
  for (let i = reads.length - 1; i >= 0; i--) {
    suffixMaxComplete[i] = Math.max(
      suffixMaxComplete[i + 1] as number,
      (reads[i] as ReadInfo).op.completeIndex ?? -1,
    );
  }
  const { seenIdx, seenT, seenOp, lastPresent } = sightings(a, reads);
  for (let k = 0; k < a.index.size; k++) {
    const inv = a.addInv[k] as number;
    const value = a.index.values[k];
    let known: { index: number; time: number } | undefined;
    if ((a.ackIdx[k] as number) <= (seenIdx[k] as number)) {
      if (Number.isFinite(a.ackIdx[k])) known = { index: a.ackIdx[k] as number, time: a.ackT[k] as number };
    } else known = { index: seenIdx[k] as number, time: seenT[k] as number };
    const lp = lastPresent[k] ?? undefined;
    // Last absent read: newest eligible read (completing after the add began) that lacks the element.
    let la: Operation | undefined;
    for (let i = 0; i < reads.length; i++) {
      if ((suffixMaxComplete[i] as number) < inv) break;
      const r = reads[i] as ReadInfo;
      if ((r.op.completeIndex as number) < inv || r.members.has(k)) continue;
      la = r.op;
      break;
    }
    const isStable = lp !== undefined && (la === undefined || la.invokeIndex < lp.invokeIndex);
    const isLost =
      known !== undefined &&
      la !== undefined &&
      (lp === undefined || lp.invokeIndex < la.invokeIndex) &&
      known.index < la.invokeIndex;
    if (isStable) {
      c.stable.push(value);
      // Stale: a read invoked after the element was known present lacked it. Decided by event order, the
      // history's real-time order; timestamps only say how long. Jepsen decides by time (the absent read's
      // invocation + 1 ns after the known time), which calls a read that ran beside the add stale whenever
      // the two share a timestamp: every such element of a history with millisecond (or no) times.
      const staleRead = la !== undefined && known !== undefined && la.invokeIndex > known.index ? la : null;
      const latencyMs = staleRead ? Math.max(0, staleRead.invokeTime - (known?.time ?? 0)) / 1e6 : 0;
      c.stableLatencies.push(latencyMs);
      if (staleRead) c.stale.push({ element: value, latencyMs, read: staleRead.invokeIndex });
    } else if (isLost && la !== undefined) {
      c.lost.push(value);
      const lostTime = lp === undefined ? 0 : lp.invokeTime + 1;
      const latencyMs = Math.max(0, lostTime - (known?.time ?? 0)) / 1e6;
      c.lostLatencies.push(latencyMs);
      if (c.anomalies.length < MAX_ANOMALIES)
        pushCapped(c.anomalies, {
          type: 'lost',
          explanation: `lost element ${JSON.stringify(value)}: added by op ${inv} and ${known?.index === a.ackIdx[k] ? 'acknowledged' : `seen by read op ${seenOp[k]}`} before read op ${la.invokeIndex} was invoked, which did not contain it${lp === undefined ? '' : `; the last read that contained it was op ${lp.invokeIndex}`}`,
          ops: lp === undefined ? [la.invokeIndex, inv] : [la.invokeIndex, inv, lp.invokeIndex],
          element: value,
        });
    } else c.neverRead.push(value);
  }
  c.stale.sort((x, y) => y.latencyMs - x.latencyMs);
  return c;
}

/** Duplicated, unexpected and (in linearizable mode) stale elements, after the lost ones. */
function moreAnomalies(c: Classified, r: ReadContents, linearizable: boolean): void {
  const { anomalies } = c;
  for (const d of r.duplicated.values()) {
    if (anomalies.length < MAX_ANOMALIES)
      pushCapped(anomalies, {
        type: 'duplicated',
        explanation: `read op ${d.op} contains element ${JSON.stringify(d.value)} ${d.count} times`,
        ops: [d.op],
        element: d.value,
        count: d.count,
      });
  }
  for (const u of r.unexpected) {
    if (anomalies.length < MAX_ANOMALIES)
      pushCapped(anomalies, {
        type: 'unexpected',
        explanation: `read op ${u.op} contains ${JSON.stringify(u.value)}, which no add attempted`,
        ops: [u.op],
      });
  }
  if (linearizable) {
    for (const s of c.stale.slice(0, 8)) {
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'stale',
          explanation: `element ${JSON.stringify(s.element)} was missing from read op ${s.read}, invoked ${s.latencyMs.toFixed(3)} ms after it was known present`,
          ops: [s.read],
          element: s.element,
          latencyMs: s.latencyMs,
        });
    }
  }
}

export const setFullChecker: Checker<SetFullOptions> = {
  name: 'set-full',
  check(ops: readonly Operation[], rawOptions: SetFullOptions) {
    const o = parseOptions('set-full', setFullOptionsSchema, rawOptions);
    const a = collectAttempts(ops, o);
    const r = readContents(a);
    const c = classify(a, r.reads);
    moreAnomalies(c, r, o.linearizable === true);
    const { stable, lost, neverRead, stale } = c;
    const valid =
      lost.length > 0 ||
      r.duplicated.size > 0 ||
      r.unexpected.length > 0 ||
      (o.linearizable && stale.length > 0)
        ? false
        : stable.length === 0
          ? 'unknown'
          : true;
    return result(
      'set-full',
      valid,
      `set-full: ${fmt(a.addCount)} adds of ${fmt(a.index.size)} elements, ${fmt(r.reads.length)} ok reads: ${fmt(stable.length)} stable, ${fmt(lost.length)} lost, ${fmt(neverRead.length)} never read, ${fmt(stale.length)} stale, ${fmt(r.duplicated.size)} duplicated, ${fmt(r.unexpected.length)} unexpected`,
      SCOPE,
      c.anomalies,
      {
        opsConsumed: a.consumed,
        attemptCount: a.index.size,
        readCount: r.reads.length,
        stableCount: stable.length,
        lostCount: lost.length,
        neverReadCount: neverRead.length,
        staleCount: stale.length,
        duplicatedCount: r.duplicated.size,
        unexpectedCount: r.unexpected.length,
        lost: intervalText(lost),
        neverRead: intervalText(neverRead),
        stale: intervalText(stale.map((s) => s.element)),
        worstStale: sample(stale, 8),
        stableLatenciesMs: latencyQuantiles(c.stableLatencies),
        lostLatenciesMs: latencyQuantiles(c.lostLatencies),
        duplicated: sample(
          [...r.duplicated.values()].map((d) => ({ element: d.value, count: d.count })),
          48,
        ),
      },
    );
  },
};
