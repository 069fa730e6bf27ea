import type { ProcessId } from '../history/event.ts';
import type { Rng } from './rng.ts';

/**
 * Generators, after Jepsen's (reference §4), as small mutable objects with a peek/take protocol:
 *
 * - `peek(ctx)` returns the next op (without consuming it), `PENDING` (nothing right now, ask again
 *   later) or `null` (exhausted, for good). Peeking twice without a `take` returns the same op, so a
 *   random choice is made once per op, whatever the interpreter's timing.
 * - `take(ctx, op)` consumes the op last peeked; the interpreter calls it when it dispatches the op.
 * - `update(ctx, event)` sees every invocation and completion, so generators such as until-ok can react.
 *
 * An op carries the thread it is meant for (the interpreter binds it to a free thread when the generator
 * does not care), and optionally the time it is intended to start (ns since the run began): the
 * interpreter never dispatches an op before that time.
 */

/** A worker slot: client threads are 0..concurrency-1; the nemesis has its own. */
export type ThreadId = number | 'nemesis';

// Registered (Symbol.for), not private: a plugin's generators come from the copy of faultline the plugin
// imports, which may not be the copy running it (a plugin with its own dependency on faultline).
export const PENDING: unique symbol = Symbol.for('faultline.generator.pending');
export type Pending = typeof PENDING;

/** What an op does when dispatched: a client/nemesis invocation, or one of Jepsen's special ops. */
export type OpKind = 'invoke' | 'sleep' | 'log';

export interface GenOp {
  kind?: OpKind;
  f: string;
  value?: unknown;
  key?: string;
  /** Intended start, ns since the run began. */
  time?: number;
  /** The thread this op must run on; filled in with a free thread when unset. */
  thread?: ThreadId;
}

/** An invocation or completion, as generators see it in `update`. */
export interface GenEvent {
  type: 'invoke' | 'ok' | 'fail' | 'info';
  thread: ThreadId;
  process: ProcessId;
  f: string;
  value: unknown;
}

export interface Context {
  /** Now, ns since the run began. */
  readonly time: number;
  /** The random stream for this part of the generator tree (see Rng.fork). */
  readonly rng: Rng;
  /** Every thread visible to this (possibly restricted) part of the tree. */
  readonly threads: readonly ThreadId[];
  /** Threads with nothing in flight (interpreter-wide; combine with `allowed`). */
  readonly free: ReadonlySet<ThreadId>;
  /** Restriction from clients/nemesis/on-threads/each-thread wrappers. */
  allowed(thread: ThreadId): boolean;
  processOf(thread: ThreadId): ProcessId;
}

export interface Generator {
  peek(ctx: Context): GenOp | Pending | null;
  take(ctx: Context, op: GenOp): void;
  update?(ctx: Context, event: GenEvent): void;
}

/** Anything that can be turned into a generator (see `gen`). */
export type GenLike = Generator | GenOp | OpFn | readonly GenLike[] | null;

/** Called each time a new op is needed; returns the op, or null when done. */
export type OpFn = (ctx: Context) => GenOp | null;
