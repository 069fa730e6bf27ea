import type { GenLike } from '../../core/generator/types.ts';

/**
 * A workload: the ops clients issue, the final reads after the faults are healed, and the checkers that
 * judge the history. The DB adapter's client implements the ops (see src/lib/clients/etcd.ts).
 */
export interface CheckerSpec {
  /** A name from checkers/registry.ts. */
  name: string;
  options: Record<string, unknown>;
  /** Check each key's ops separately and merge (Jepsen's independent/checker). */
  independent?: boolean;
}

export interface WorkloadOptions {
  nodes: readonly string[];
  concurrency: number;
}

export interface Workload {
  readonly name: string;
  /** Main-phase client ops, endless: the runner bounds them with the rate and the time limit. */
  generator(): GenLike;
  /** Ops after heal and recovery (final reads), or null. */
  finalGenerator(): GenLike | null;
  readonly checkers: readonly CheckerSpec[];
  /** Extra settings the DB client needs (bank accounts …). */
  readonly clientOptions: Record<string, unknown>;
}
