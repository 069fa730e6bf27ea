import { z } from 'zod';
import type { Operation } from '../../src/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import { fmt, isClient, parseOptions, pushCapped, result } from './common.ts';

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
    const groups = new Map<string, { op: Operation; seen: Set<string> }[]>();
    let reads = 0;
    let writes = 0;
    let wrongSize = 0;
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
      if (op.type !== 'ok' || !value.every((m) => m[0] === 'r')) continue;
      reads++;
      const keys = value.map((m) => String(m[1])).sort();
      if (keys.length !== o.groupSize) wrongSize++;
      const group = keys.join(',');
      const seen = new Set(value.filter((m) => m[2] !== null && m[2] !== undefined).map((m) => String(m[1])));
      let list = groups.get(group);
      if (list === undefined) {
        list = [];
        groups.set(group, list);
      }
      list.push({ op, seen });
    }
    const multi = [...writesPerKey].filter(([, n]) => n > 1).map(([k]) => k);
    const anomalies: Anomaly[] = [];
    let forks = 0;
    for (const [group, list] of groups) {
      list.sort((a, b) => a.seen.size - b.seen.size);
      for (let i = 0; i + 1 < list.length; i++) {
        const a = list[i] as (typeof list)[number];
        const b = list[i + 1] as (typeof list)[number];
        let subset = true;
        for (const k of a.seen) {
          if (!b.seen.has(k)) {
            subset = false;
            break;
          }
        }
        if (subset) continue;
        forks++;
        pushCapped(anomalies, {
          type: 'long-fork',
          explanation: `reads ${a.op.id} and ${b.op.id} of keys [${group}] each saw a write the other missed: ${JSON.stringify([...a.seen])} vs ${JSON.stringify([...b.seen])}`,
          ops: [a.op.id, b.op.id],
        });
      }
    }
    const valid = forks > 0 ? false : multi.length > 0 || reads === 0 ? 'unknown' : true;
    return result(
      'long-fork',
      valid,
      `long-fork: ${fmt(writes)} writes, ${fmt(reads)} ok group reads in ${fmt(groups.size)} groups: ${fmt(forks)} forks${multi.length ? `; ${multi.length} keys written more than once (cannot judge)` : ''}${wrongSize ? `; ${fmt(wrongSize)} reads not of group size ${o.groupSize}` : ''}`,
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
