import { z } from 'zod';
import type { Operation } from '../../src/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  intervalText,
  isClient,
  parseOptions,
  pushCapped,
  quantileSorted,
  result,
  sample,
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
 *    present read and the known point; otherwise never-read. Stale = stable with stable latency > 0.
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
  members: Set<unknown>;
}

const QUANTILES = [0, 0.5, 0.95, 0.99, 1] as const;

function latencyQuantiles(ms: number[]): Record<string, number> | null {
  if (ms.length === 0) return null;
  const s = Float64Array.from(ms).sort();
  const out: Record<string, number> = {};
  for (const q of QUANTILES) out[String(q)] = q === 0 ? (s[0] as number) : quantileSorted(s, q);
  return out;
}

export const setFullChecker: Checker<SetFullOptions> = {
  name: 'set-full',
  check(ops: readonly Operation[], rawOptions: SetFullOptions) {
    const o = parseOptions('set-full', setFullOptionsSchema, rawOptions);
    // Elements in order of their first add invocation.
    const elementValue = new Map<unknown, unknown>();
    const addInvokeIndex = new Map<unknown, number>();
    const ackTime = new Map<unknown, { index: number; time: number }>();
    const reads: ReadInfo[] = [];
    const duplicated = new Map<unknown, { value: unknown; count: number; op: number }>();
    const unexpected = new Map<unknown, { value: unknown; op: number }>();
    let consumed = 0;
    let addCount = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      if (op.f === o.addF) {
        consumed++;
        addCount++;
        const k = valueKey(op.input);
        const prev = addInvokeIndex.get(k);
        if (prev === undefined || op.invokeIndex < prev) {
          addInvokeIndex.set(k, op.invokeIndex);
          elementValue.set(k, op.input);
        }
        if (op.type === 'ok' && op.completeIndex !== null) {
          const a = ackTime.get(k);
          if (a === undefined || op.completeIndex < a.index) {
            ackTime.set(k, { index: op.completeIndex, time: op.completeTime ?? op.invokeTime });
          }
        }
      } else if (op.f === o.readF) {
        consumed++;
        if (op.type !== 'ok' || op.completeIndex === null) continue;
        const items = collectionItems(op.output);
        if (items === null)
          throw new Error(`set-full: read op ${op.id} returned ${JSON.stringify(op.output)}, not a set`);
        const members = new Set<unknown>();
        for (const v of items) {
          const k = valueKey(v);
          if (members.has(k)) {
            const d = duplicated.get(k);
            if (d === undefined) duplicated.set(k, { value: v, count: 2, op: op.id });
            else d.count++;
          } else members.add(k);
        }
        reads.push({ op, members });
      }
    }
    // Newest read invocation first; suffixMaxComplete[i] = max completion index among reads[i..].
    reads.sort((a, b) => b.op.invokeIndex - a.op.invokeIndex);
    const suffixMaxComplete = new Float64Array(reads.length + 1).fill(-1);
    for (let i = reads.length - 1; i >= 0; i--) {
      suffixMaxComplete[i] = Math.max(
        suffixMaxComplete[i + 1] as number,
        (reads[i] as ReadInfo).op.completeIndex ?? -1,
      );
    }
    // Known point and last-present per element, from the reads' contents (total read size).
    const firstSeen = new Map<unknown, { index: number; time: number }>();
    const lastPresent = new Map<unknown, Operation>();
    for (const r of reads) {
      const ci = r.op.completeIndex as number;
      for (const k of r.members) {
        const inv = addInvokeIndex.get(k);
        if (inv === undefined) {
          if (!unexpected.has(k)) unexpected.set(k, { value: k, op: r.op.id });
          continue;
        }
        if (ci < inv) continue; // read finished before the add began: not evidence about this element
        const fs = firstSeen.get(k);
        if (fs === undefined || ci < fs.index)
          firstSeen.set(k, { index: ci, time: r.op.completeTime ?? r.op.invokeTime });
        const lp = lastPresent.get(k);
        if (lp === undefined || r.op.invokeIndex > lp.invokeIndex) lastPresent.set(k, r.op);
      }
    }
    const stable: unknown[] = [];
    const lost: unknown[] = [];
    const neverRead: unknown[] = [];
    const stale: { element: unknown; latencyMs: number }[] = [];
    const stableLatencies: number[] = [];
    const lostLatencies: number[] = [];
    const anomalies: Anomaly[] = [];
    for (const [k, inv] of addInvokeIndex) {
      const value = elementValue.get(k);
      const ack = ackTime.get(k);
      const seen = firstSeen.get(k);
      let known: { index: number; time: number } | undefined = ack;
      if (seen !== undefined && (known === undefined || seen.index < known.index)) known = seen;
      const lp = lastPresent.get(k);
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
        stable.push(value);
        const stableTime = la === undefined ? 0 : la.invokeTime + 1;
        const latencyMs = Math.max(0, stableTime - (known?.time ?? 0)) / 1e6;
        stableLatencies.push(latencyMs);
        if (latencyMs > 0) stale.push({ element: value, latencyMs });
      } else if (isLost && la !== undefined) {
        lost.push(value);
        const lostTime = lp === undefined ? 0 : lp.invokeTime + 1;
        const latencyMs = Math.max(0, lostTime - (known?.time ?? 0)) / 1e6;
        lostLatencies.push(latencyMs);
        pushCapped(anomalies, {
          type: 'lost',
          explanation: `element ${JSON.stringify(value)} was known present but read ${la.id} (invoked after it) did not contain it`,
          ops: lp === undefined ? [la.id] : [lp.id, la.id],
          element: value,
        });
      } else neverRead.push(value);
    }
    for (const d of duplicated.values()) {
      pushCapped(anomalies, {
        type: 'duplicated',
        explanation: `read ${d.op} contains element ${JSON.stringify(d.value)} ${d.count} times`,
        ops: [d.op],
        element: d.value,
        count: d.count,
      });
    }
    for (const u of unexpected.values()) {
      pushCapped(anomalies, {
        type: 'unexpected',
        explanation: `read ${u.op} contains ${typeof u.value === 'string' && u.value.startsWith('\u0000') ? u.value.slice(1) : JSON.stringify(u.value)}, which no add attempted`,
        ops: [u.op],
      });
    }
    stale.sort((a, b) => b.latencyMs - a.latencyMs);
    if (o.linearizable) {
      for (const s of stale.slice(0, 8)) {
        pushCapped(anomalies, {
          type: 'stale',
          explanation: `element ${JSON.stringify(s.element)} was missing from a read ${s.latencyMs.toFixed(3)} ms after it was known present`,
          element: s.element,
          latencyMs: s.latencyMs,
        });
      }
    }
    const valid =
      lost.length > 0 || duplicated.size > 0 || unexpected.size > 0 || (o.linearizable && stale.length > 0)
        ? false
        : stable.length === 0
          ? 'unknown'
          : true;
    return result(
      'set-full',
      valid,
      `set-full: ${fmt(addCount)} adds of ${fmt(addInvokeIndex.size)} elements, ${fmt(reads.length)} ok reads: ${fmt(stable.length)} stable, ${fmt(lost.length)} lost, ${fmt(neverRead.length)} never read, ${fmt(stale.length)} stale, ${fmt(duplicated.size)} duplicated, ${fmt(unexpected.size)} unexpected`,
      SCOPE,
      anomalies,
      {
        opsConsumed: consumed,
        attemptCount: addInvokeIndex.size,
        readCount: reads.length,
        stableCount: stable.length,
        lostCount: lost.length,
        neverReadCount: neverRead.length,
        staleCount: stale.length,
        duplicatedCount: duplicated.size,
        unexpectedCount: unexpected.size,
        lost: intervalText(lost),
        neverRead: intervalText(neverRead),
        stale: intervalText(stale.map((s) => s.element)),
        worstStale: sample(stale, 8),
        stableLatenciesMs: latencyQuantiles(stableLatencies),
        lostLatenciesMs: latencyQuantiles(lostLatencies),
        duplicated: sample(
          [...duplicated.values()].map((d) => ({ element: d.value, count: d.count })),
          48,
        ),
      },
    );
  },
};
