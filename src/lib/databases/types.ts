import type { Remote } from '../../core/control/types.ts';

/**
 * The DB protocol, shaped after Jepsen's `jepsen.db/DB` plus its optional Kill, Pause, Primary and
 * LogFiles protocols, in one interface. Every per-node method runs on the control node and acts on `node`
 * through `ctx.remote` (SSH); the runner calls them in Jepsen's order:
 *
 *   teardown(all) → install(all) → setup(all, in parallel) → awaitReady → … workload + nemeses …
 *   → heal → logFiles/collect (after kill) → teardown(all)
 *
 * start/kill/pause/resume act on the daemon through its pidfile, so a nemesis (or `faultline heal`) can
 * always find the process it has to act on, and never touches another one.
 */
export interface DbContext {
  remote: Remote;
  /** Every node of the test, in order (cluster membership flags are built from it). */
  nodes: readonly string[];
}

export interface DB {
  readonly name: string;
  /** The daemon's executable name on the nodes (what /proc/PID/comm shows), e.g. etcd, redis-server. */
  readonly processName: string;
  /**
   * Start the daemon through this wrapper (an executable that execs the real binary, e.g. the clock
   * nemesis's libfaketime wrapper) instead of the binary itself; null goes back to the binary.
   */
  setWrapper(node: string, wrapperPath: string | null): void;
  /** A command run on a node that prints the DB's own idea of the time (clock-fault evidence), if any. */
  readonly timeCommand?: string;
  /** Make the software present on the node (e.g. apt-get install when missing). Idempotent. */
  install(ctx: DbContext, node: string): Promise<void>;
  /** Configure and start the daemon on one node (setup runs on every node in parallel). */
  setup(ctx: DbContext, node: string): Promise<void>;
  /** After every node's setup: wait until the cluster serves clients (Jepsen's barrier + ready wait). */
  awaitReady(ctx: DbContext, timeoutMs: number): Promise<void>;
  /** Stop the daemon and remove its data, config and logs. */
  teardown(ctx: DbContext, node: string): Promise<void>;
  /** Start the daemon again with its existing data (after a kill). No-op when it is running. */
  start(ctx: DbContext, node: string): Promise<void>;
  /** SIGKILL the daemon by pidfile and wait until it is gone. */
  kill(ctx: DbContext, node: string): Promise<void>;
  /** SIGSTOP the daemon by pidfile. */
  pause(ctx: DbContext, node: string): Promise<void>;
  /** SIGCONT the daemon by pidfile. */
  resume(ctx: DbContext, node: string): Promise<void>;
  /** Nodes currently acting as primary/leader (may be empty during an election). */
  primaries(ctx: DbContext): Promise<string[]>;
  /** Remote paths worth downloading into the run directory (logs). */
  logFiles(ctx: DbContext, node: string): string[];
  /** Remove the data directory (the daemon must be stopped). */
  wipe(ctx: DbContext, node: string): Promise<void>;
  /** The daemon's pidfile on a node: what process faults act on. */
  pidFile(ctx: DbContext, node: string): string;
  /** Where clients connect, e.g. http://10.213.0.2:2379 or redis://…. */
  clientAddress(ctx: DbContext, node: string): string;
}
