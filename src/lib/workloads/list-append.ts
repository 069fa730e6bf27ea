import { eachThread, repeat } from '../../core/generator/index.ts';
import type { Context } from '../../core/generator/types.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/**
 * Elle's list-append: transactions of 1–4 micro-ops, each an append of a unique value to a key or a read
 * of a key, over a small pool of active keys; a key that has had `maxWritesPerKey` appends is retired
 * and replaced by a fresh one, so lists stay short and every version order is recoverable.
 */
export function listAppendWorkload(
  o: WorkloadOptions & { keyCount?: number; maxWritesPerKey?: number },
): Workload {
  const keyCount = o.keyCount ?? 3;
  const maxWrites = o.maxWritesPerKey ?? 32;
  const active: number[] = Array.from({ length: keyCount }, (_v, i) => i);
  let nextKey = keyCount;
  const writes = new Map<number, number>();
  const txn = (ctx: Context) => {
    const n = 1 + ctx.rng.int(4);
    const mops: [string, number, number | null][] = [];
    for (let i = 0; i < n; i++) {
      const slot = ctx.rng.int(active.length);
      const k = active[slot] as number;
      if (ctx.rng.next() < 0.5) {
        mops.push(['r', k, null]);
        continue;
      }
      const v = (writes.get(k) ?? 0) + 1;
      writes.set(k, v);
      mops.push(['append', k, v]);
      if (v >= maxWrites) active[slot] = nextKey++;
    }
    return { f: 'txn', value: mops };
  };
  return {
    name: 'list-append',
    generator: () => repeat(txn),
    finalGenerator: () => eachThread(() => ({ f: 'txn', value: active.map((k) => ['r', k, null]) })),
    checkers: [
      { name: 'elle', options: { workload: 'list-append', consistencyModels: ['strict-serializable'] } },
    ],
    clientOptions: {},
  };
}
