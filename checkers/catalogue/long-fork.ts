import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, isClient, MAX_ANOMALIES, parseOptions, pushCapped, result } from './common.ts';

/**
 * Jepsen's `long-fork`: write transactions are single `[w k v]` micro-ops, each key written once; read
 * transactions read a whole group of keys (`[[r k v] …]`). Two reads of the same group are a fork when
 * each saw a write the other did not (parallel snapshot isolation allows this; snapshot isolation does not).
 * A key written twice makes the verdict unknown, as in Jepsen.
 *
 * Reads of one group are forks-free exactly when their seen-key sets form a chain under ⊆; sorting by
 * size and comparing neighbours finds a fork in O(r log r) per group instead of all pairs.
 */
export const longForkOptionsSchema = z.strictObject({
  groupSize: z.number().int().positive().default(3),
});
export type LongForkOptions = z.input<typeof longForkOptionsSchema>;

const SCOPE =
  'Only reads of the same whole group are compared: forks across groups, and forks hidden because every read of a group saw the same writes, are invisible.';

type Mop = [string, unknown, unknown];

function mops(v: unknown): Mop[] | null {
  if (!Array.isArray(v)) return null;
  for (const m of v) if (!Array.isArray(m) || m.length !== 3) return null;
  return v as Mop[];
}

export const longForkChecker: Checker<LongForkOptions> = {
  name: 'long-fork',
  check(ops: readonly Operation[], rawOptions: LongForkOptions) {
    const o = parseOptions('long-fork', longForkOptionsSchema, rawOptions);
    const writesPerKey = new Map<string, number>();
    // Per group (its sorted keys joined): each read's op id and a bitmask of the keys it saw, bit j for
    // the j-th key in sorted order. Scratch arrays are reused: a read allocates only its group string.
    const groups = new Map<string, { ops: number[]; masks: number[] }>();
    const keyScratch: string[] = [];
    const seenScratch: boolean[] = [];
    let reads = 0;
    let writes = 0;
    let wrongSize = 0;
    let tooWide = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      const value = mops(op.type === 'ok' ? op.output : op.input);
      if (value === null) continue;
      const isWrite = value.length === 1 && (value[0] as Mop)[0] === 'w';
      if (isWrite) {
        if (op.type === 'fail') continue;
        writes++;
        const k = String((value[0] as Mop)[1]);
        writesPerKey.set(k, (writesPerKey.get(k) ?? 0) + 1);
        continue;
      }
      if (op.type !== 'ok') continue;
      let allReads = true;
      for (const m of value) if (m[0] !== 'r') allReads = false;
      if (!allReads) continue;
      reads++;
      const n = value.length;
      if (n !== o.groupSize) wrongSize++;
      if (n > 30) {
        tooWide++;
        continue;
      }
      // Insertion sort of (key, seen) by key: groups are a handful of keys.
      for (let j = 0; j < n; j++) {
        const m = value[j] as Mop;
        const key = String(m[1]);
        const seen = m[2] !== null && m[2] !== undefined;
        let p = j;
        while (p > 0 && (keyScratch[p - 1] as string) > key) {
          keyScratch[p] = keyScratch[p - 1] as string;
          seenScratch[p] = seenScratch[p - 1] as boolean;
          p--;
        }
        keyScratch[p] = key;
        seenScratch[p] = seen;
      }
      let mask = 0;
      let group = '';
      for (let j = 0; j < n; j++) {
        if (seenScratch[j]) mask |= 1 << j;
        group = j === 0 ? (keyScratch[0] as string) : `${group},${keyScratch[j]}`;
      }
      let g = groups.get(group);
      if (g === undefined) {
        g = { ops: [], masks: [] };
        groups.set(group, g);
      }
      g.ops.push(op.invokeIndex);
      g.masks.push(mask);
    }
    const multi = [...writesPerKey].filter(([, n]) => n > 1).map(([k]) => k);
    const anomalies: Anomaly[] = [];
    let forks = 0;
    const popcount = (x: number) => {
      let c = 0;
      for (let v = x; v !== 0; v &= v - 1) c++;
      return c;
    };
    const seenKeys = (group: string, mask: number) =>
      group.split(',').filter((_, j) => (mask & (1 << j)) !== 0);
    for (const [group, g] of groups) {
      const order = g.masks
        .map((_, i) => i)
        .sort((a, b) => popcount(g.masks[a] as number) - popcount(g.masks[b] as number));
      for (let i = 0; i + 1 < order.length; i++) {
        const a = order[i] as number;
        const b = order[i + 1] as number;
        const ma = g.masks[a] as number;
        const mb = g.masks[b] as number;
        if ((ma & ~mb) === 0) continue;
        forks++;
        if (anomalies.length < MAX_ANOMALIES) {
          pushCapped(anomalies, {
            type: 'long-fork',
            explanation: `read ops ${g.ops[a]} and ${g.ops[b]} of keys [${group}] each saw a write the other missed: ${JSON.stringify(seenKeys(group, ma))} vs ${JSON.stringify(seenKeys(group, mb))}`,
            ops: [g.ops[a] as number, g.ops[b] as number],
          });
        }
      }
    }
    const valid = forks > 0 ? false : multi.length > 0 || reads === 0 || tooWide > 0 ? 'unknown' : true;
    return result(
      'long-fork',
      valid,
      `long-fork: ${fmt(writes)} writes, ${fmt(reads)} ok group reads in ${fmt(groups.size)} groups: ${fmt(forks)} forks${multi.length ? `; ${multi.length} keys written more than once (cannot judge)` : ''}${wrongSize ? `; ${fmt(wrongSize)} reads not of group size ${o.groupSize}` : ''}${tooWide ? `; ${fmt(tooWide)} reads of more than 30 keys skipped` : ''}`,
      SCOPE,
      anomalies,
      {
        opsConsumed: reads + writes,
        reads,
        writes,
        groups: groups.size,
        forks,
        keysWrittenTwice: multi.slice(0, 16),
      },
    );
  },
};
