import type { CompletionType, HistoryEvent, ProcessId } from './event.ts';

/**
 * An invocation paired with its completion: what every checker consumes.
 *
 * `type` is the completion's type, or 'info' when the history ended with the op still open. An 'info'
 * op may have taken effect at any time after its invocation, or never; `completeTime` is then null
 * for checkers that need an open interval (linearizability treats it as +infinity).
 */
export interface Operation {
  /** Dense id in invocation order: 0..n-1. */
  id: number;
  process: ProcessId;
  f: string;
  type: CompletionType;
  /** The invocation's value (what was sent). */
  input: unknown;
  /** The completion's value (what was observed); null when there is no ok completion. */
  output: unknown;
  invokeIndex: number;
  /** Index of the completion event, or null if the history has none. */
  completeIndex: number | null;
  invokeTime: number;
  /** Null when the op never completed, or completed with `info` (outcome unknown). */
  completeTime: number | null;
  node: string | null;
  key: string | undefined;
  error: unknown;
  faultEpoch: string[] | null;
  /** The completion event's time even for `info` (when the client gave up), or null if none. */
  infoTime: number | null;
  /**
   * The value an `info` completion carried, when not null: what the client saw before it lost track of
   * the op (a drain cut off lists the elements it took), or often just the invocation's value echoed
   * back. Absent for ok and fail completions and for ops that never completed.
   */
  infoValue?: unknown;
  /**
   * When the generator meant the op to start (open-loop `rate`/`stagger` schedules), if recorded: the
   * invoke event's `intendedTime`. Latency is measured from it, so a stalled system cannot hide its
   * queueing delay behind late dispatch (no coordinated omission).
   */
  intendedTime?: number;
}

/** The events a pairing was built from, plus the operations, kept together so checkers can use either. */
export interface PairedHistory {
  events: HistoryEvent[];
  ops: Operation[];
  /** Processes that had an info completion or an op left open: they were retired. */
  retiredProcesses: ProcessId[];
}

/**
 * Error prefix of a `fail` completion the client knows was never applied and observed nothing (the
 * connection was refused, the server rejected the request before acting on it). Jepsen's `:fail` means
 * "did not happen"; but a failed cas is also an observation (its compare saw another value), so clients
 * mark the not-applied kind explicitly and checkers drop those ops instead of reading them as compares.
 */
export const NOT_APPLIED = 'not-applied';

/** Jepsen's `[:no-client msg]`: the client could not be opened, so nothing was ever sent. */
export const NO_CLIENT = 'no-client';

export function wasNotApplied(op: Pick<Operation, 'type' | 'error'>): boolean {
  if (op.type !== 'fail') return false;
  if (typeof op.error === 'string') return op.error.startsWith(NOT_APPLIED);
  // An op that found no client (its open failed: a reset or refused connection) observed nothing either.
  return Array.isArray(op.error) && op.error[0] === NO_CLIENT;
}
