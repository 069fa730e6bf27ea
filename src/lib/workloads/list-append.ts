import { eachThread, repeat } from '../../core/generator/index.ts';
import type { Context, GenLike, GenOp } from '../../core/generator/types.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/**
 * Elle's transactions: 1–4 micro-ops each, a write (`append` for list-append, `w` for rw-register) of a
 * value never written to that key before or a read of a key, over a small pool of active keys; a key
 * written `maxWritesPerKey` times is retired and replaced by a fresh one, so every version order is
 * recoverable. `txn` is the generator's op function; `finalRead` reads every active key once per thread.
 */
export function elleTransactions(o: { keyCount: number; maxWritesPerKey: number; write: 'append' | 'w' }): {
  txn: (ctx: Context) => GenOp;
  finalRead: () => GenLike;
} {
  const active: number[] = Array.from({ length: o.keyCount }, (_v, i) => i);
  let nextKey = o.keyCount;
  const writes = new Map<number, number>();
  const txn = (ctx: Context): GenOp => {
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
      mops.push([o.write, k, v]);
      if (v >= o.maxWritesPerKey) active[slot] = nextKey++;
    }
    return { f: 'txn', value: mops };
  };
  return {
    txn,
    finalRead: () => eachThread(() => ({ f: 'txn', value: active.map((k) => ['r', k, null]) })),
  };
}

/** Elle's list-append workload over `elleTransactions`. */
export function listAppendWorkload(
  o: WorkloadOptions & { keyCount?: number; maxWritesPerKey?: number },
): Workload {
  const { txn, finalRead } = elleTransactions({
    keyCount: o.keyCount ?? 3,
    maxWritesPerKey: o.maxWritesPerKey ?? 32,
    write: 'append',
  });
  return {
    name: 'list-append',
    generator: () => repeat(txn),
    finalGenerator: finalRead,
    checkers: [
      { name: 'elle', options: { workload: 'list-append', consistencyModels: ['strict-serializable'] } },
    ],
    clientOptions: {},
  };
}
