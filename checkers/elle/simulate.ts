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
  const ops: Operation[] = [];
  new Simulation(o, (op) => ops.push(op), null).run();
  return ops;
}

/**
 * The same history, handed over one op at a time as each completes (so in completion order; op ids
 * still count invocations): nothing is kept, so histories larger than memory can be generated.
 */
export function simulateStream(o: SimOptions, onComplete: (op: Operation) => void): void {
  new Simulation(o, null, onComplete).run();
}

/**
 * The history's events as the simulation produces them (so in index order: invocations when they start,
 * completions when they end), without keeping any: for writing history files of any size.
 */
export function simulateEvents(o: SimOptions, onEvent: (ev: HistoryEvent) => void): void {
  new Simulation(
    o,
    (op) => onEvent(invocationEvent(op)),
    (op) => {
      const ev = completionEvent(op);
      if (ev) onEvent(ev);
    },
  ).run();
}

function invocationEvent(op: Operation): HistoryEvent {
  return {
    f: op.f,
    process: op.process,
    node: null,
    faultEpoch: null,
    index: op.invokeIndex,
    type: 'invoke',
    value: op.input,
    time: op.invokeTime,
  };
}

function completionEvent(op: Operation): HistoryEvent | null {
  if (op.completeIndex === null) return null;
  return {
    f: op.f,
    process: op.process,
    node: null,
    faultEpoch: null,
    index: op.completeIndex,
    type: op.type,
    value: op.type === 'ok' ? op.output : op.input,
    time: op.completeIndex * 1000,
  };
}

/** One simulated database and its clients; `run` drives them until every txn has completed. */
class Simulation {
  private readonly rand: () => number;
  private readonly maxWrites: number;
  private readonly maxMops: number;
  private readonly infoRate: number;
  private opCount = 0;
  // Committed state: per key the list and each element's commit timestamp (append-only, so sorted).
  private readonly lists = new Map<number, number[]>();
  private readonly stamps = new Map<number, number[]>();
  private readonly lockOwner = new Map<number, Active>();
  private readonly pool: number[] = [];
  private readonly budget: number[] = [];
  private readonly nextValue: number[] = [];
  private nextKey = 0;
  private clock = 0;
  private index = 0;
  private readonly procs: (Active | null)[];
  private readonly procId: number[];
  private invoked = 0;
  private open = 0;

  constructor(
    private readonly o: SimOptions,
    private readonly onInvoke: ((op: Operation) => void) | null,
    private readonly onComplete: ((op: Operation) => void) | null,
  ) {
    this.rand = rng(o.seed);
    this.maxWrites = o.maxWritesPerKey ?? 256;
    this.maxMops = o.maxMops ?? 4;
    this.infoRate = o.infoRate ?? 0;
    this.procs = new Array(o.concurrency).fill(null);
    this.procId = Array.from({ length: o.concurrency }, (_, i) => i);
    for (let i = 0; i < (o.activeKeys ?? 10); i++) this.pool.push(this.freshKey());
  }

  run(): void {
    while (this.invoked < this.o.txns || this.open > 0) {
      const p = Math.floor(this.rand() * this.o.concurrency);
      const a = this.procs[p];
      if (a) this.step(p, a);
      else if (this.invoked < this.o.txns) this.invoke(p);
    }
  }

  private freshKey(): number {
    const k = this.nextKey++;
    this.budget[k] = 1 + Math.floor((this.maxWrites - 1) * this.rand() ** 3);
    this.nextValue[k] = 1;
    return k;
  }

  private listOf(k: number): number[] {
    let l = this.lists.get(k);
    if (!l) {
      l = [];
      this.lists.set(k, l);
      this.stamps.set(k, []);
    }
    return l;
  }

  private snapshotOf(k: number, ts: number): number[] {
    const l = this.listOf(k);
    const s = this.stamps.get(k)!;
    let n = l.length;
    while (n > 0 && s[n - 1]! > ts) n--;
    return l.slice(0, n);
  }

  private genTxn(): Mop[] {
    const count = 1 + Math.floor(this.rand() * this.maxMops);
    const mops: Mop[] = [];
    for (let i = 0; i < count; i++) {
      const slot = Math.floor(this.pool.length * this.rand() ** 2);
      const k = this.pool[slot]!;
      if (this.rand() < 0.5) mops.push(['r', k, null]);
      else {
        mops.push(['append', k, this.nextValue[k]!++]);
        if (--this.budget[k]! <= 0) this.pool[slot] = this.freshKey();
      }
    }
    return mops;
  }

  private read(a: Active, k: number): number[] {
    const base =
      this.o.isolation === 'snapshot-isolation' ? this.snapshotOf(k, a.snapshot) : this.listOf(k).slice();
    const own = a.writes.get(k);
    return own ? base.concat(own) : base;
  }

  private buffer(a: Active, k: number, v: number): void {
    const own = a.writes.get(k);
    if (own) own.push(v);
    else a.writes.set(k, [v]);
  }

  private commit(a: Active): void {
    this.clock++;
    for (const [k, vs] of a.writes) {
      const l = this.listOf(k);
      const s = this.stamps.get(k)!;
      for (const v of vs) {
        l.push(v);
        s.push(this.clock);
      }
    }
  }

  private complete(p: number, a: Active, committed: boolean): void {
    for (const k of a.locks) if (this.lockOwner.get(k) === a) this.lockOwner.delete(k);
    const op = a.op;
    if (this.rand() < this.infoRate) {
      // The client never learns the outcome: a coin decides whether the txn took effect.
      if (committed && this.rand() < 0.5) this.commit(a);
      op.type = 'info';
      op.completeIndex = this.index++;
      op.infoTime = op.completeIndex * 1000;
      this.procId[p] = this.procId[p]! + this.o.concurrency;
    } else {
      if (committed) this.commit(a);
      op.type = committed ? 'ok' : 'fail';
      op.completeIndex = this.index++;
      op.completeTime = op.completeIndex * 1000;
      op.output = committed ? a.mops : null;
    }
    this.procs[p] = null;
    this.open--;
    this.onComplete?.(op);
  }

  /** One scheduling step of process p's txn: its next micro-op, or its commit. */
  private step(p: number, a: Active): void {
    const iso = this.o.isolation;
    if (iso === 'serializable') {
      for (const m of a.mops) {
        if (m[0] === 'r') m[2] = this.read(a, m[1]);
        else this.buffer(a, m[1], m[2] as number);
      }
      this.complete(p, a, true);
      return;
    }
    if (a.step === 0 && iso === 'snapshot-isolation') a.snapshot = this.clock;
    if (a.step < a.mops.length) {
      const m = a.mops[a.step++]!;
      const k = m[1];
      if (m[0] === 'r') {
        m[2] = this.read(a, k);
        return;
      }
      if (iso === 'read-committed') {
        const owner = this.lockOwner.get(k);
        if (owner && owner !== a) {
          this.complete(p, a, false);
          return;
        }
        if (!owner) {
          this.lockOwner.set(k, a);
          a.locks.push(k);
        }
      }
      this.buffer(a, k, m[2] as number);
      return;
    }
    // First committer wins under snapshot isolation.
    const conflict =
      iso === 'snapshot-isolation' &&
      [...a.writes.keys()].some((k) => {
        const s = this.stamps.get(k);
        return s !== undefined && s.length > 0 && s[s.length - 1]! > a.snapshot;
      });
    this.complete(p, a, !conflict);
  }

  /** Process p invokes a new txn. */
  private invoke(p: number): void {
    const mops = this.genTxn();
    const input = mops.map((m) => [m[0], m[1], m[0] === 'r' ? null : m[2]]);
    const op: Operation = {
      id: this.opCount++,
      process: this.procId[p]!,
      f: 'txn',
      type: 'info',
      input,
      output: null,
      invokeIndex: this.index,
      completeIndex: null,
      invokeTime: this.index * 1000,
      completeTime: null,
      node: null,
      key: undefined,
      error: undefined,
      faultEpoch: null,
      infoTime: null,
    };
    this.index++;
    this.onInvoke?.(op);
    this.procs[p] = { op, mops, step: 0, snapshot: this.clock, writes: new Map(), locks: [] };
    this.invoked++;
    this.open++;
  }
}

/** The history events (invocations and completions in index order) of simulated operations. */
export function toEvents(ops: readonly Operation[]): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const op of ops) {
    events.push(invocationEvent(op));
    const done = completionEvent(op);
    if (done) events.push(done);
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
