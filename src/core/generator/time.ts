import { Wrapper } from './core.ts';
import { type Context, type Generator, type GenLike, type GenOp, PENDING, type Pending } from './types.ts';

/** Nanoseconds from seconds, so call sites read as durations. */
export const SECOND = 1_000_000_000;

/**
 * Schedules each op at (previous op's scheduled time + gap()). The schedule never looks at when ops
 * actually ran: a stalled system builds a backlog instead of slowing the arrivals, which is what keeps
 * latency honest (measured from the intended time; no coordinated omission).
 */
class Scheduled extends Wrapper {
  private last: number | undefined;
  private next: number | undefined;
  private forOp: GenOp | undefined;
  constructor(
    inner: GenLike,
    private readonly gap: (ctx: Context) => number,
    private readonly firstAtNow: boolean,
  ) {
    super(inner);
  }
  override peek(ctx: Context): GenOp | Pending | null {
    const r = this.inner.peek(ctx);
    if (r === null || r === PENDING) return r;
    if (this.next === undefined || this.forOp !== r) {
      const base = this.last ?? ctx.time;
      this.next = this.last === undefined && this.firstAtNow ? base : base + this.gap(ctx);
      this.forOp = r;
    }
    if (r.time === undefined || r.time < this.next) r.time = this.next;
    return r;
  }
  override take(ctx: Context, op: GenOp): void {
    this.last = this.next;
    this.next = undefined;
    this.forOp = undefined;
    this.inner.take(ctx, op);
  }
}

/** Jepsen's stagger: ops at uniformly random intervals in [0, 2·dt] (a total rate across threads). */
export function stagger(dtNs: number, g: GenLike): Generator {
  return new Scheduled(g, (ctx) => ctx.rng.next() * 2 * dtNs, false);
}

/** Jepsen's delay: exactly dt between ops, catching up when behind. */
export function delay(dtNs: number, g: GenLike): Generator {
  return new Scheduled(g, () => dtNs, false);
}

/**
 * Open-loop constant arrival: op i is intended at t0 + i/hz. The interpreter records the intended time
 * with each invocation, so latency is measured from it.
 */
export function rate(hz: number, g: GenLike): Generator {
  if (!(hz > 0)) throw new RangeError(`rate must be > 0 (got ${hz})`);
  return new Scheduled(g, () => SECOND / hz, true);
}

/**
 * Ops until dt after the first op this generator emits; afterwards nothing, ever. Ops already in flight
 * are not cancelled (the interpreter's per-op timeout bounds them).
 */
class TimeLimit extends Wrapper {
  private deadline: number | undefined;
  private done = false;
  constructor(
    private readonly dtNs: number,
    inner: GenLike,
  ) {
    super(inner);
  }
  override peek(ctx: Context): GenOp | Pending | null {
    if (this.done) return null;
    if (this.deadline !== undefined && ctx.time >= this.deadline) {
      this.done = true;
      return null;
    }
    const r = this.inner.peek(ctx);
    if (r === null) {
      this.done = true;
      return null;
    }
    if (r === PENDING) return r;
    const at = Math.max(r.time ?? ctx.time, ctx.time);
    this.deadline ??= at + this.dtNs;
    if (at >= this.deadline) {
      this.done = true;
      return null;
    }
    return r;
  }
}

export function timeLimit(dtNs: number, g: GenLike): Generator {
  return new TimeLimit(dtNs, g);
}

/** One special op: the thread that takes it idles for dt. Not written to the history. */
export function sleep(dtNs: number): GenOp {
  return { kind: 'sleep', f: 'sleep', value: dtNs };
}

/** One special op that logs a message. Not written to the history. */
export function logOp(message: string): GenOp {
  return { kind: 'log', f: 'log', value: message };
}
