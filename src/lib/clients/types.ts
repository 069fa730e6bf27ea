import type { ProcessId } from '../../core/history/event.ts';

/**
 * The client protocol, shaped after Jepsen's `jepsen.client/Client`. One client value per worker process:
 *
 *   const c = await factory.open(node)    // connect to one node; must not change DB state
 *   await c.setup()                        // once per node before the workload (create tables, keys)
 *   const done = await c.invoke(op, ctx)   // op in, completion out — many times
 *   await c.teardown()                     // once per node after the workload
 *   await c.close()                        // release the connection
 *
 * `open` returns a *new* client bound to the node, so one factory value serves every worker.
 *
 * invoke's contract (the history is only as good as this):
 *   - return `ok` only when the op definitely took effect, `fail` only when it definitely did not;
 *   - return `info` (or throw) when the outcome is unknown: a timeout, a dropped connection after the
 *     request was sent. The interpreter records a throw as `info` with the error message;
 *   - reads are idempotent, so a read that did not get an answer may be returned as `fail`.
 * The interpreter enforces the per-op timeout itself (the op completes `info` with error "timeout");
 * `ctx.signal` aborts when that happens so the client can cancel its request.
 */
export interface ClientOp {
  f: string;
  value: unknown;
  key?: string;
  process: ProcessId;
  /** The node this worker is bound to. */
  node: string;
}

export interface Completion {
  type: 'ok' | 'fail' | 'info';
  /** What was observed (a read's result); defaults to the invocation's value. */
  value?: unknown;
  error?: unknown;
  /** The node that actually served the op, when it differs from the bound node (redirects, leaders). */
  node?: string;
  /** Extra fields to keep on the completion event (e.g. a revision). */
  extras?: Record<string, unknown>;
}

export interface InvokeContext {
  /** Aborted when the interpreter gives up on the op (per-op timeout). */
  readonly signal: AbortSignal;
}

export interface Client {
  open(node: string): Promise<Client>;
  setup(): Promise<void>;
  invoke(op: ClientOp, ctx: InvokeContext): Promise<Completion>;
  teardown(): Promise<void>;
  close(): Promise<void>;
  /** When true the interpreter keeps the same client after a process is retired (Jepsen's Reusable). */
  readonly reusable?: boolean;
  /**
   * Requests this client factory (and every client it opened) has put on the wire so far, counted where
   * they leave the process, and how many one op sends by design (null: it varies). Absent: not counted,
   * and the hidden-retry audit (WO8) stays unchecked.
   */
  wire?(): { requests: number; perOp: number | null; what: string };
}
