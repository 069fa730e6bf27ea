import type { DbContext } from '../../core/database/capabilities.ts';

export type {
  ClockWrapper,
  ClusterFormation,
  DbContext,
  MemberInfo,
  MembershipControl,
  PeerView,
  ProcessControl,
} from '../../core/database/capabilities.ts';

/**
 * The database protocol, split the way Jepsen's is: what every run needs (`jepsen.db/DB`: set up, tear
 * down, where clients connect, wait until it serves); every optional capability (process control,
 * primaries, log files, membership, peer address … Jepsen's Kill, Pause, Primary, LogFiles) is a protocol
 * of its own in `src/core/database/capabilities.ts`, detected by shape. A database implements only what it can
 * do (`class Kv implements Database, Capable<'process'>`); a fault or audit that needs a capability the
 * database lacks says so (the scenario is INCONCLUSIVE-env, naming the capability), never crashes.
 *
 * Every per-node method runs on the control node and acts on `node` through `ctx.remote` (SSH); the
 * runner calls them in Jepsen's order:
 *
 *   teardown(all) → install?(all) → setup(all, in parallel: configure and start) → awaitReady
 *   → form? (once on the primary, or on each joining node in order) → … workload + nemeses …
 *   → heal → logFiles?/collect → teardown(all)
 *
 * Every call is bounded by the runner (see `DB_CALL_TIMEOUTS`): one that overruns is abandoned with its
 * reason logged, and the run goes on to heal, check and report.
 */
export interface Database {
  readonly name: string;
  /** Configure and start the database on one node (setup runs on every node in parallel). */
  setup(ctx: DbContext, node: string): Promise<void>;
  /** Stop it and remove its data, config and logs. */
  teardown(ctx: DbContext, node: string): Promise<void>;
  /** Where clients connect, e.g. http://10.213.0.2:2379 or redis://…. */
  clientAddress(ctx: DbContext, node: string): string;
  /** After every node's setup: wait until the cluster serves clients (Jepsen's barrier + ready wait). */
  awaitReady(ctx: DbContext, timeoutMs: number): Promise<void>;
}

/** How long the runner waits for each database hook before abandoning it (ms). */
export const DB_CALL_TIMEOUTS = {
  install: 600_000,
  setup: 300_000,
  /** awaitReady is given its own timeout (90 s) and a little more to report. */
  awaitReady: 100_000,
  form: 300_000,
  teardown: 120_000,
} as const;
