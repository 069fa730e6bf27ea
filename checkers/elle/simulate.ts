import type { HistoryEvent } from '../../src/core/history/event.ts';
import type { Operation } from '../../src/core/history/operation.ts';

/**
 * A simulated list-append database with a chosen isolation level, driven by `concurrency` client
 * processes in a random interleaving. It produces known-answer histories for the checker:
 *
 * - `serializable`: each txn runs all its micro-ops in one atomic step between its invocation and its
 *   completion (strictly serializable).
 * - `snapshot-isolation`: reads see the snapshot taken at the txn's first step plus its own appends;
 *   appends are buffered; commit aborts (fail) if another txn committed to one of its keys since the
 *   snapshot (first committer wins). Allows write skew (G2-item), never G-single.
 * - `read-committed`: every read sees the latest committed state plus the txn's own appends; appends take
 *   a no-wait write lock (a conflict aborts the txn). Allows read skew (G-single) and lost updates.
 *
 * Generated like Elle's append workload: 1–`maxMops` micro-ops per txn, half reads; keys drawn (skewed)
 * from a pool of `activeKeys`, each retired after a random number (1–`maxWritesPerKey`, skewed low) of
 * appends; appended values count up per key, so they are unique. A fraction `infoRate` of txns end
 * `info` (outcome unknown; a coin decides whether they committed) and their process is replaced.
 */
export type SimIsolation = 'serializable' | 'snapshot-isolation' | 'read-committed';

export interface SimOptions {
  isolation: SimIsolation;
  txns: number;
  concurrency: number;
  seed: number;
  activeKeys?: number;
  maxWritesPerKey?: number;
  maxMops?: number;
  infoRate?: number;
}

type Mop = ['append' | 'r', number, unknown];

interface Active {
  op: Operation;
  mops: Mop[];
  step: number;
  snapshot: number;
  writes: Map<number, number[]>;
  locks: number[];
}

/** Small fast PRNG (mulberry32), so histories are reproducible from the seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function simulate(o: SimOptions): Operation[] {
  const rand = rng(o.seed);
  const activeKeys = o.activeKeys ?? 10;
  const maxWrites = o.maxWritesPerKey ?? 256;
  const maxMops = o.maxMops ?? 4;
  const infoRate = o.infoRate ?? 0;
  const ops: Operation[] = [];
  // Committed state: per key the list and each element's commit timestamp (append-only, so sorted).
  const lists = new Map<number, number[]>();
  const stamps = new Map<number, number[]>();
  const lockOwner = new Map<number, Active>();
  const pool: number[] = [];
  const budget: number[] = [];
  const nextValue: number[] = [];
  let nextKey = 0;
  const freshKey = () => {
    const k = nextKey++;
    budget[k] = 1 + Math.floor((maxWrites - 1) * rand() ** 3);
    nextValue[k] = 1;
    return k;
  };
  for (let i = 0; i < activeKeys; i++) pool.push(freshKey());
  let clock = 0;
  let index = 0;
  const procs: (Active | null)[] = new Array(o.concurrency).fill(null);
  const procId: number[] = Array.from({ length: o.concurrency }, (_, i) => i);
  let invoked = 0;
  let open = 0;

  const listOf = (k: number) => {
    let l = lists.get(k);
    if (!l) {
      l = [];
      lists.set(k, l);
      stamps.set(k, []);
    }
    return l;
  };
  const snapshotOf = (k: number, ts: number) => {
    const l = listOf(k);
    const s = stamps.get(k)!;
    let n = l.length;
    while (n > 0 && s[n - 1]! > ts) n--;
    return l.slice(0, n);
  };
  const genTxn = (): Mop[] => {
    const count = 1 + Math.floor(rand() * maxMops);
    const mops: Mop[] = [];
    for (let i = 0; i < count; i++) {
      const slot = Math.floor(pool.length * rand() ** 2);
      const k = pool[slot]!;
      if (rand() < 0.5) mops.push(['r', k, null]);
      else {
        mops.push(['append', k, nextValue[k]!++]);
        if (--budget[k]! <= 0) pool[slot] = freshKey();
      }
    }
    return mops;
  };
  const read = (a: Active, k: number): number[] => {
    const base = o.isolation === 'snapshot-isolation' ? snapshotOf(k, a.snapshot) : listOf(k).slice();
    const own = a.writes.get(k);
    return own ? base.concat(own) : base;
  };
  const commit = (a: Active) => {
    clock++;
    for (const [k, vs] of a.writes) {
      const l = listOf(k);
      const s = stamps.get(k)!;
      for (const v of vs) {
        l.push(v);
        s.push(clock);
      }
    }
  };
  const release = (a: Active) => {
    for (const k of a.locks) if (lockOwner.get(k) === a) lockOwner.delete(k);
  };
  const complete = (p: number, a: Active, committed: boolean) => {
    release(a);
    const op = a.op;
    const info = rand() < infoRate;
    if (info) {
      // The client never learns the outcome: a coin decides whether the txn took effect.
      if (committed && rand() < 0.5) commit(a);
      op.type = 'info';
      op.completeIndex = index++;
      op.infoTime = op.completeIndex * 1000;
      procId[p] = procId[p]! + o.concurrency;
    } else {
      if (committed) commit(a);
      op.type = committed ? 'ok' : 'fail';
      op.completeIndex = index++;
      op.completeTime = op.completeIndex * 1000;
      op.output = committed ? a.mops : null;
    }
    procs[p] = null;
    open--;
  };
  const step = (p: number, a: Active) => {
    if (o.isolation === 'serializable') {
      for (const m of a.mops) {
        if (m[0] === 'r') m[2] = read(a, m[1]);
        else {
          const own = a.writes.get(m[1]);
          if (own) own.push(m[2] as number);
          else a.writes.set(m[1], [m[2] as number]);
        }
      }
      complete(p, a, true);
      return;
    }
    if (a.step === 0 && o.isolation === 'snapshot-isolation') a.snapshot = clock;
    if (a.step < a.mops.length) {
      const m = a.mops[a.step++]!;
      const k = m[1];
      if (m[0] === 'r') {
        m[2] = read(a, k);
        return;
      }
      if (o.isolation === 'read-committed') {
        const owner = lockOwner.get(k);
        if (owner && owner !== a) {
          complete(p, a, false);
          return;
        }
        if (!owner) {
          lockOwner.set(k, a);
          a.locks.push(k);
        }
      }
      const own = a.writes.get(k);
      if (own) own.push(m[2] as number);
      else a.writes.set(k, [m[2] as number]);
      return;
    }
    if (o.isolation === 'snapshot-isolation') {
      for (const k of a.writes.keys()) {
        const s = stamps.get(k);
        if (s && s.length > 0 && s[s.length - 1]! > a.snapshot) {
          complete(p, a, false);
          return;
        }
      }
    }
    complete(p, a, true);
  };

  while (invoked < o.txns || open > 0) {
    const p = Math.floor(rand() * o.concurrency);
    const a = procs[p];
    if (a) {
      step(p, a);
      continue;
    }
    if (invoked >= o.txns) continue;
    const mops = genTxn();
    const input = mops.map((m) => [m[0], m[1], m[0] === 'r' ? null : m[2]]);
    const op: Operation = {
      id: ops.length,
      process: procId[p]!,
      f: 'txn',
      type: 'info',
      input,
      output: null,
      invokeIndex: index,
      completeIndex: null,
      invokeTime: index * 1000,
      completeTime: null,
      node: null,
      key: undefined,
      error: undefined,
      faultEpoch: null,
      infoTime: null,
    };
    index++;
    ops.push(op);
    procs[p] = { op, mops, step: 0, snapshot: clock, writes: new Map(), locks: [] };
    invoked++;
    open++;
  }
  return ops;
}

/** The history events (invocations and completions in index order) of simulated operations. */
export function toEvents(ops: readonly Operation[]): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const op of ops) {
    const base = { f: op.f, process: op.process, node: null, faultEpoch: null };
    events.push({ ...base, index: op.invokeIndex, type: 'invoke', value: op.input, time: op.invokeTime });
    if (op.completeIndex !== null) {
      events.push({
        ...base,
        index: op.completeIndex,
        type: op.type,
        value: op.type === 'ok' ? op.output : op.input,
        time: op.completeIndex * 1000,
      });
    }
  }
  events.sort((a, b) => a.index - b.index);
  return events;
}

/**
 * The same history seen as an rw-register workload: `append k v` becomes `w k v` and a read of a list
 * becomes a read of its last element (nil when empty). Register values stay unique because appended
 * values are unique per key.
 */
export function asRegisterHistory(ops: readonly Operation[]): Operation[] {
  const convert = (mops: unknown): unknown =>
    Array.isArray(mops)
      ? mops.map((m: [string, unknown, unknown]) =>
          m[0] === 'append'
            ? ['w', m[1], m[2]]
            : ['r', m[1], Array.isArray(m[2]) ? (m[2].length ? m[2][m[2].length - 1] : null) : m[2]],
        )
      : mops;
  return ops.map((op) => ({ ...op, input: convert(op.input), output: convert(op.output) }));
}
