import { eachThread, independentConcurrent, limit, mix, repeat } from '../../core/generator/index.ts';
import type { Context, GenLike } from '../../core/generator/types.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/** Reads, writes and compare-and-sets of small integers: small values make cas succeed often enough. */
function registerOps(key?: string): GenLike {
  const withKey = <T extends object>(op: T) => (key === undefined ? op : { ...op, key });
  return mix([
    repeat(() => withKey({ f: 'read', value: null })),
    repeat((ctx: Context) => withKey({ f: 'write', value: ctx.rng.int(5) })),
    repeat((ctx: Context) => withKey({ f: 'cas', value: [ctx.rng.int(5), ctx.rng.int(5)] })),
  ]);
}

/**
 * How faultline's clients record register ops, which the checker must be told (its defaults are
 * Knossos's, for Jepsen histories): a read of a key that does not exist is recorded as nil, and the
 * register starts at nil, so nil is a value read (never a wildcard); a cas whose compare ran and did
 * not match is a `fail` (one that never reached the server is a not-applied fail, which every checker
 * drops). Writes and cas only use integers, so nil never means anything but "no such key".
 */
const REGISTER_CHECK = { model: 'cas-register', nilRead: 'value', failedCas: 'mismatch' } as const;

/** One register (key "r"), checked for linearizability as a cas-register. */
export function registerWorkload(_o: WorkloadOptions): Workload {
  return {
    name: 'register',
    generator: () => registerOps('r'),
    finalGenerator: () => eachThread(() => ({ f: 'read', value: null, key: 'r' })),
    checkers: [{ name: 'linearizable', options: { ...REGISTER_CHECK } }],
    clientOptions: {},
  };
}

function* naturals(): Generator<string> {
  for (let i = 0; ; i++) yield String(i);
}

/**
 * Independent registers (Jepsen's independent/concurrent-generator): client threads in groups of n (the
 * node count), each group on one key for `opsPerKey` ops, then the next key. Checked per key, which keeps
 * each linearizability search small however long the run.
 */
export function multiRegisterWorkload(o: WorkloadOptions & { opsPerKey?: number }): Workload {
  const group = Math.max(1, Math.min(o.concurrency, o.nodes.length));
  const perKey = o.opsPerKey ?? 200;
  return {
    name: 'multi-register',
    generator: () => independentConcurrent(group, naturals(), () => limit(perKey, registerOps())),
    finalGenerator: () => null,
    checkers: [{ name: 'linearizable', options: { ...REGISTER_CHECK }, independent: true }],
    clientOptions: {},
  };
}
