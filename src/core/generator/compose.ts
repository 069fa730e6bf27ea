import { allIdle, gen, Restriction, Wrapper } from './core.ts';
import {
  type Context,
  type GenEvent,
  type Generator,
  type GenLike,
  type GenOp,
  PENDING,
  type Pending,
  type ThreadId,
} from './types.ts';

const opTime = (ctx: Context, op: GenOp): number => op.time ?? ctx.time;

/** Runs inner with a context restricted to some threads (and, with a label, its own random stream). */
class Restricted extends Wrapper {
  private readonly restriction: Restriction;
  constructor(pred: (t: ThreadId) => boolean, inner: GenLike, rngLabel?: string) {
    super(inner);
    this.restriction = new Restriction(pred, rngLabel);
  }
  override peek(ctx: Context): GenOp | Pending | null {
    return this.inner.peek(this.restriction.of(ctx));
  }
  override take(ctx: Context, op: GenOp): void {
    this.inner.take(this.restriction.of(ctx), op);
  }
  override update(ctx: Context, event: GenEvent): void {
    this.inner.update?.(this.restriction.of(ctx), event);
  }
}

/** Restrict g to threads matching pred. */
export function onThreads(pred: (t: ThreadId) => boolean, g: GenLike): Generator {
  return new Restricted(pred, g);
}

/**
 * Client threads only (`clients(g)`), or Jepsen's two-argument form `clients(clientGen, nemesisGen)`, which
 * runs both at once. Each side draws from its own random stream, so the op sequence and the fault
 * schedule are each reproducible from the seed however their timing interleaves.
 */
export function clients(g: GenLike, nemesisGen?: GenLike): Generator {
  const c = new Restricted((t) => t !== 'nemesis', g, 'clients');
  return nemesisGen === undefined ? c : any(c, nemesis(nemesisGen));
}

/** The nemesis thread only. */
export function nemesis(g: GenLike, clientGen?: GenLike): Generator {
  const n = new Restricted((t) => t === 'nemesis', g, 'nemesis');
  return clientGen === undefined ? n : any(clients(clientGen), n);
}

/** Where a scan for the next op starts so that sources take turns: just after `last`, the one that took the last op. */
function turnStart<T>(items: readonly T[], last: T | undefined): number {
  return last === undefined ? 0 : items.indexOf(last) + 1;
}

/**
 * Whichever generator offers the soonest op; updates go to all. Generators offering ops at the same time
 * take turns (the scan starts after the last one chosen), so under a rate the first never takes them all.
 */
export function any(...gs: GenLike[]): Generator {
  let live = gs.map(gen);
  let chosen: Generator | undefined;
  let lastChosen: Generator | undefined;
  return {
    peek(ctx) {
      let offers = live.map((g) => g.peek(ctx));
      if (offers.includes(null)) {
        live = live.filter((_, i) => offers[i] !== null);
        offers = offers.filter((r) => r !== null);
      }
      let best: GenOp | undefined;
      let pending = false;
      const start = turnStart(live, lastChosen);
      for (let j = 0; j < live.length; j++) {
        const i = (start + j) % live.length;
        const r = offers[i] as GenOp | Pending;
        if (r === PENDING) {
          pending = true;
          continue;
        }
        if (!best || opTime(ctx, r) < opTime(ctx, best)) {
          best = r;
          chosen = live[i];
        }
      }
      if (best) return best;
      return pending ? PENDING : null;
    },
    take(ctx, op) {
      chosen?.take(ctx, op);
      lastChosen = chosen;
      chosen = undefined;
    },
    update(ctx, ev) {
      for (const g of live) g.update?.(ctx, ev);
    },
  };
}

/** Each op from a uniformly random choice among the generators; exhausted ones are dropped. */
export function mix(gs: GenLike[]): Generator {
  const live = gs.map(gen);
  let choice: number | undefined;
  return {
    peek(ctx) {
      for (;;) {
        if (live.length === 0) return null;
        choice ??= ctx.rng.int(live.length);
        const r = (live[choice] as Generator).peek(ctx);
        if (r !== null) return r;
        live.splice(choice, 1);
        choice = undefined;
      }
    },
    take(ctx, op) {
      if (choice !== undefined) live[choice]?.take(ctx, op);
      choice = undefined;
    },
  };
}

/** Run each generator to exhaustion, then wait until every thread is idle before the next one. */
export function phases(...gs: GenLike[]): Generator {
  let i = 0;
  let current: Generator | undefined;
  return {
    peek(ctx) {
      for (;;) {
        if (i >= gs.length && !current) return null;
        current ??= gen(gs[i++] as GenLike);
        const r = current.peek(ctx);
        if (r !== null) return r;
        if (!allIdle(ctx)) return PENDING;
        current = undefined;
        if (i >= gs.length) return null;
      }
    },
    take: (ctx, op) => current?.take(ctx, op),
    update: (ctx, ev) => current?.update?.(ctx, ev),
  };
}

/** Jepsen's `then`: a, then (after a barrier) b. */
export function then(b: GenLike, a: GenLike): Generator {
  return phases(a, b);
}

/** A barrier: nothing until every thread is idle. */
export function synchronize(g: GenLike): Generator {
  return phases(null, g);
}

/** a, b, a, b … ; stops when either is exhausted (start/stop faults). */
export function flipFlop(a: GenLike, b: GenLike): Generator {
  const gs = [gen(a), gen(b)];
  let turn = 0;
  let done = false;
  return {
    peek(ctx) {
      if (done) return null;
      const r = (gs[turn] as Generator).peek(ctx);
      if (r === null) done = true;
      return r;
    },
    take(ctx, op) {
      (gs[turn] as Generator).take(ctx, op);
      turn = 1 - turn;
    },
    update(ctx, ev) {
      for (const g of gs) g.update?.(ctx, ev);
    },
  };
}

/** Ops from g until one of them completes ok. */
export function untilOk(g: GenLike): Generator {
  const inner = gen(g);
  const mine = new Set<unknown>();
  let done = false;
  return {
    peek: (ctx) => (done ? null : inner.peek(ctx)),
    take(ctx, op) {
      if (op.thread !== undefined) mine.add(ctx.processOf(op.thread));
      inner.take(ctx, op);
    },
    update(ctx, ev) {
      if (ev.type === 'ok' && mine.has(ev.process)) done = true;
      else if (ev.type !== 'invoke') mine.delete(ev.process);
      inner.update?.(ctx, ev);
    },
  };
}

/** An independent copy of a generator per key (thread or process), built by make(key). */
function perKey(keyOf: (ctx: Context, t: ThreadId) => string, make: (key: string) => GenLike): Generator {
  const subs = new Map<string, { g: Generator; r: Restriction; done: boolean }>();
  let chosen: { g: Generator; r: Restriction } | undefined;
  // Copies offering ops at the same time take turns (see independentConcurrent).
  let lastThread: ThreadId | undefined;
  return {
    peek(ctx) {
      let best: GenOp | undefined;
      let live = false;
      const threads = ctx.threads;
      const start = turnStart(threads, lastThread);
      for (let j = 0; j < threads.length; j++) {
        const t = threads[(start + j) % threads.length] as ThreadId;
        const key = keyOf(ctx, t);
        let sub = subs.get(key);
        if (!sub) {
          sub = { g: gen(make(key)), r: new Restriction((x) => x === t, `each-${key}`), done: false };
          subs.set(key, sub);
        }
        if (sub.done) continue;
        if (!ctx.free.has(t)) {
          live = true;
          continue;
        }
        const r = sub.g.peek(sub.r.of(ctx));
        if (r === null) {
          sub.done = true;
          continue;
        }
        live = true;
        if (r === PENDING) continue;
        if (!best || opTime(ctx, r) < opTime(ctx, best)) {
          best = r;
          chosen = sub;
        }
      }
      if (best) return best;
      return live ? PENDING : null;
    },
    take(ctx, op) {
      if (chosen) chosen.g.take(chosen.r.of(ctx), op);
      chosen = undefined;
      lastThread = op.thread;
    },
    update(ctx, ev) {
      const sub = subs.get(keyOf(ctx, ev.thread));
      sub?.g.update?.(sub.r.of(ctx), ev);
    },
  };
}

/** An independent copy of the generator for every thread (e.g. one final read per thread). */
export function eachThread(make: (thread: string) => GenLike): Generator {
  return perKey((_ctx, t) => String(t), make);
}

/** An independent copy of the generator for every process (a retired process's successor starts afresh). */
export function eachProcess(make: (process: string) => GenLike): Generator {
  return perKey((ctx, t) => String(ctx.processOf(t)), make);
}

/**
 * Jepsen's reserve: the first n1 client threads run g1, the next n2 run g2, …, the rest run the default.
 * Used so readers keep going while writers are blocked.
 */
export function reserve(...args: (number | GenLike)[]): Generator {
  const parts: Generator[] = [];
  let start = 0;
  let i = 0;
  for (; i + 1 < args.length; i += 2) {
    const n = args[i] as number;
    const lo = start;
    const hi = start + n;
    parts.push(onThreads((t) => typeof t === 'number' && t >= lo && t < hi, args[i + 1] as GenLike));
    start = hi;
  }
  const lo = start;
  if (i < args.length) parts.push(onThreads((t) => typeof t === 'number' && t >= lo, args[i] as GenLike));
  return any(...parts);
}

/**
 * Jepsen's independent/concurrent-generator: client threads in groups of n, each group working on one key
 * at a time (from `keys`, in order); when a key's generator (make(key)) is exhausted the group moves to
 * the next unused key. Ops carry `key`.
 */
export function independentConcurrent(
  n: number,
  keys: Iterable<string>,
  make: (key: string) => GenLike,
): Generator {
  const keyIter = keys[Symbol.iterator]();
  const groups = new Map<number, { key: string; g: Generator; r: Restriction } | null>();
  let chosen: { g: Generator; r: Restriction } | undefined;
  // Groups whose ops are due at the same time take turns: the scan starts after the thread that took the
  // last op (Jepsen breaks such ties at random, weighted by threads). Always scanning from thread 0 gave
  // every op to the first group with a free thread and starved the others' keys.
  let lastThread: ThreadId | undefined;
  const nextFor = (group: number): { key: string; g: Generator; r: Restriction } | null => {
    const k = keyIter.next();
    if (k.done) return null;
    const key = k.value;
    return {
      key,
      g: gen(make(key)),
      r: new Restriction((t) => typeof t === 'number' && Math.floor(t / n) === group, `key-${key}`),
    };
  };
  return {
    peek(ctx) {
      let best: GenOp | undefined;
      let live = false;
      const seen = new Set<number>();
      const threads = ctx.threads;
      const start = turnStart(threads, lastThread);
      for (let j = 0; j < threads.length; j++) {
        const t = threads[(start + j) % threads.length] as ThreadId;
        if (typeof t !== 'number') continue;
        const group = Math.floor(t / n);
        if (seen.has(group)) continue;
        seen.add(group);
        let slot = groups.get(group);
        if (slot === undefined) {
          slot = nextFor(group);
          groups.set(group, slot);
        }
        while (slot) {
          const r = slot.g.peek(slot.r.of(ctx));
          if (r === null) {
            // Move on only once the group is idle, so a key's ops never overlap with the next key's.
            if (!allIdle(slot.r.of(ctx))) {
              live = true;
              break;
            }
            slot = nextFor(group);
            groups.set(group, slot);
            continue;
          }
          live = true;
          if (r !== PENDING) {
            r.key = slot.key;
            if (!best || opTime(ctx, r) < opTime(ctx, best)) {
              best = r;
              chosen = slot;
            }
          }
          break;
        }
      }
      if (best) return best;
      return live ? PENDING : null;
    },
    take(ctx, op) {
      if (chosen) chosen.g.take(chosen.r.of(ctx), op);
      chosen = undefined;
      lastThread = op.thread;
    },
    update(ctx, ev) {
      if (typeof ev.thread !== 'number') return;
      const slot = groups.get(Math.floor(ev.thread / n));
      slot?.g.update?.(slot.r.of(ctx), ev);
    },
  };
}
