import type { Rng } from './rng.ts';
import {
  type Context,
  type GenEvent,
  type Generator,
  type GenLike,
  type GenOp,
  type OpFn,
  PENDING,
  type Pending,
  type ThreadId,
} from './types.ts';

/** Turn any generator-like value into a Generator: an op is one op, a function is called for each op, an array runs in order. */
export function gen(x: GenLike): Generator {
  if (x === null) return EMPTY;
  if (Array.isArray(x)) return new SeqGen(x as readonly GenLike[]);
  if (typeof x === 'function') return new FnGen(x as OpFn);
  if (isGenerator(x)) return x;
  const template = x as GenOp;
  return new FnGen(onceFn(template));
}

function onceFn(template: GenOp): OpFn {
  let used = false;
  return () => {
    if (used) return null;
    used = true;
    return { ...template };
  };
}

export function isGenerator(x: unknown): x is Generator {
  return typeof x === 'object' && x !== null && typeof (x as Generator).peek === 'function';
}

export const EMPTY: Generator = {
  peek: () => null,
  take: () => {},
};

/** The first free thread this context may use, or undefined. */
export function freeThread(ctx: Context): ThreadId | undefined {
  for (const t of ctx.free) if (ctx.allowed(t)) return t;
  return undefined;
}

/** Are all threads visible to this context idle? (the barrier phases and synchronize wait for) */
export function allIdle(ctx: Context): boolean {
  for (const t of ctx.threads) if (ctx.allowed(t) && !ctx.free.has(t)) return false;
  return true;
}

/**
 * A context restricted to some threads, optionally with its own random stream. Built on the parent by
 * prototype so `time` (mutated by the interpreter) reads through, and cached per parent so a wrapper does
 * not allocate on every peek.
 */
export class Restriction {
  private parent: Context | undefined;
  private child: Context | undefined;
  constructor(
    private readonly pred: (t: ThreadId) => boolean,
    private readonly rngLabel?: string,
  ) {}

  of(parent: Context): Context {
    if (this.parent === parent && this.child) return this.child;
    const pred = this.pred;
    const child = Object.create(parent) as { -readonly [K in keyof Context]: Context[K] };
    child.threads = parent.threads.filter((t) => parent.allowed(t) && pred(t));
    child.allowed = (t: ThreadId) => pred(t) && parent.allowed(t);
    if (this.rngLabel !== undefined) child.rng = parent.rng.fork(this.rngLabel) as Rng;
    this.parent = parent;
    this.child = child;
    return child;
  }
}

/**
 * Binds a cached op to a thread: the op's own thread if it names one (pinned), else the first free
 * thread this context may use. PENDING when no suitable thread is free.
 */
function bind(ctx: Context, op: GenOp, pinned: ThreadId | undefined): GenOp | Pending {
  if (pinned !== undefined) return ctx.free.has(pinned) && ctx.allowed(pinned) ? op : PENDING;
  const t = freeThread(ctx);
  if (t === undefined) return PENDING;
  op.thread = t;
  return op;
}

/** Calls fn for every op; the op is cached until taken so its random values are drawn once. */
export class FnGen implements Generator {
  private cached: GenOp | undefined;
  private pinned: ThreadId | undefined;
  private done = false;
  constructor(private readonly fn: OpFn) {}
  peek(ctx: Context): GenOp | Pending | null {
    if (this.done) return null;
    if (!this.cached) {
      const op = this.fn(ctx);
      if (op === null) {
        this.done = true;
        return null;
      }
      this.cached = op;
      this.pinned = op.thread;
    }
    return bind(ctx, this.cached, this.pinned);
  }
  take(): void {
    this.cached = undefined;
  }
}

/** Elements in order. */
export class SeqGen implements Generator {
  private i = 0;
  private current: Generator | undefined;
  constructor(private readonly items: readonly GenLike[]) {}
  peek(ctx: Context): GenOp | Pending | null {
    for (;;) {
      if (!this.current) {
        if (this.i >= this.items.length) return null;
        this.current = gen(this.items[this.i++] as GenLike);
      }
      const r = this.current.peek(ctx);
      if (r !== null) return r;
      this.current = undefined;
    }
  }
  take(ctx: Context, op: GenOp): void {
    this.current?.take(ctx, op);
  }
  update(ctx: Context, event: GenEvent): void {
    this.current?.update?.(ctx, event);
  }
}

/** Base for wrappers that forward everything to one inner generator. */
export abstract class Wrapper implements Generator {
  protected readonly inner: Generator;
  constructor(inner: GenLike) {
    this.inner = gen(inner);
  }
  peek(ctx: Context): GenOp | Pending | null {
    return this.inner.peek(ctx);
  }
  take(ctx: Context, op: GenOp): void {
    this.inner.take(ctx, op);
  }
  update(ctx: Context, event: GenEvent): void {
    this.inner.update?.(ctx, event);
  }
}

class Limit extends Wrapper {
  private left: number;
  constructor(n: number, inner: GenLike) {
    super(inner);
    this.left = n;
  }
  override peek(ctx: Context): GenOp | Pending | null {
    return this.left <= 0 ? null : this.inner.peek(ctx);
  }
  override take(ctx: Context, op: GenOp): void {
    this.left--;
    this.inner.take(ctx, op);
  }
}

/** At most n ops. */
export function limit(n: number, g: GenLike): Generator {
  return new Limit(n, g);
}

/** At most one op. */
export function once(g: GenLike): Generator {
  return new Limit(1, g);
}

/**
 * The same op (or op function) again and again, forever or n times. A function is called afresh for each
 * op, so random values differ every time.
 */
export function repeat(x: GenOp | OpFn, n?: number): Generator {
  const fn: OpFn = typeof x === 'function' ? x : () => ({ ...x });
  const g = new FnGen(fn);
  return n === undefined ? g : new Limit(n, g);
}

/** Restart a finite generator (built afresh by `make`) when it is exhausted; forever or n times. */
export function cycle(make: () => GenLike, n?: number): Generator {
  let round = 0;
  let current: Generator | undefined;
  let emptyRound = true;
  return {
    peek(ctx) {
      for (;;) {
        if (!current) {
          if (n !== undefined && round >= n) return null;
          round++;
          current = gen(make());
          emptyRound = true;
        }
        const r = current.peek(ctx);
        if (r !== null) return r;
        current = undefined;
        // A copy that yields nothing at all would make cycle spin forever: stop instead.
        if (emptyRound) return null;
      }
    },
    take(ctx, op) {
      emptyRound = false;
      current?.take(ctx, op);
    },
    update(ctx, event) {
      current?.update?.(ctx, event);
    },
  };
}

/** Transform each op (Jepsen's gen/map). */
export function map(fn: (op: GenOp) => GenOp, g: GenLike): Generator {
  const inner = gen(g);
  let src: GenOp | undefined;
  let out: GenOp | undefined;
  return {
    peek(ctx) {
      const r = inner.peek(ctx);
      if (r === null || r === PENDING) return r;
      if (r !== src) {
        src = r;
        out = fn({ ...r });
      }
      const o = out as GenOp;
      o.thread = r.thread;
      return o;
    },
    take(ctx) {
      inner.take(ctx, src as GenOp);
      src = undefined;
      out = undefined;
    },
    update: (ctx, ev) => inner.update?.(ctx, ev),
  };
}

/** Rename `f`s (Jepsen's f-map), for composing nemesis generators. */
export function fMap(names: Record<string, string>, g: GenLike): Generator {
  return map((op) => ({ ...op, f: names[op.f] ?? op.f }), g);
}

/** Only the ops matching pred; the others are consumed and dropped. */
export function filter(pred: (op: GenOp) => boolean, g: GenLike): Generator {
  const inner = gen(g);
  return {
    peek(ctx) {
      for (;;) {
        const r = inner.peek(ctx);
        if (r === null || r === PENDING || pred(r)) return r;
        inner.take(ctx, r);
      }
    },
    take: (ctx, op) => inner.take(ctx, op),
    update: (ctx, ev) => inner.update?.(ctx, ev),
  };
}
