import { defineWorkload, type GeneratorContext, type GenOp, type Workload } from 'faultline';

/**
 * Elle's rw-register: transactions of 1–4 micro-ops, each a read of a key or a write of a value never
 * written to that key before, over a small pool of active keys; a key written `maxWritesPerKey` times is
 * retired for a fresh one, so every read names exactly one write (Elle needs unique written values).
 * Reads alone do not reveal the version order: Elle infers it from the writes each read observed and
 * from writes following reads within one transaction.
 *
 * The generators are plain op functions (called for each next op; null ends them), so the workload
 * runs the same under any faultline instance that loads it.
 */
export function rwRegisterWorkload(concurrency: number, keyCount = 4, maxWritesPerKey = 24): Workload {
  const active: number[] = Array.from({ length: keyCount }, (_v, i) => i);
  let nextKey = keyCount;
  const writes = new Map<number, number>();
  const txn = (ctx: GeneratorContext) => {
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
      mops.push(['w', k, v]);
      if (v >= maxWritesPerKey) active[slot] = nextKey++;
    }
    return { f: 'txn', value: mops };
  };
  return {
    name: 'rw-register',
    generator: () => txn,
    finalGenerator: () => {
      // One final read of every active key on each thread, after the faults are healed.
      let thread = 0;
      return (): GenOp | null =>
        thread < concurrency
          ? { f: 'txn', value: active.map((k) => ['r', k, null]), thread: thread++ }
          : null;
    },
    checkers: [
      {
        name: 'elle',
        options: { workload: 'rw-register', consistencyModels: ['serializable'] },
      },
    ],
    clientOptions: {},
  };
}

export const rwRegister = defineWorkload({
  name: 'rw-register',
  summary: "Elle's rw-register transactions (reads and unique writes) over a few active keys (elle)",
  ops: ['txn'],
  create: (o) => rwRegisterWorkload(o.concurrency),
});
