import type { OptionsSchema } from '../src/core/util/options.ts';
import { BUILT_IN, Registry } from '../src/core/util/registry.ts';
import { models } from './linearizability/models/registry.ts';
import type { Checker } from './types.ts';

/**
 * Every checker faultline can run by name: one registry (`checkers`), loaded lazily so `faultline check
 * --checker set` never pays for the linearizability or Elle engines. `load()` returns the checker and,
 * where it has one, the schema its options must satisfy (validated before running, so bad options are
 * bad input). `consumes` names the op functions (`f`) the checker reads, when it reads only some: `plan
 * check` refuses a checker that would find nothing to check in the workload's history. Plugins register
 * more with `defineChecker`.
 */
export type { OptionsSchema };

export interface LoadedChecker {
  checker: Checker<never>;
  schema?: OptionsSchema;
}

export interface CheckerDefinition {
  name: string;
  summary: string;
  /** The op functions this checker reads for the given options, or null when it reads any op. */
  consumes?: (options: Record<string, unknown>) => readonly string[] | null;
  load(): Promise<LoadedChecker>;
}

export const checkers = new Registry<CheckerDefinition>('checker');

function define(d: CheckerDefinition): void {
  checkers.register(d.name, d, BUILT_IN);
}

/** The op functions a linearizability model reads (from the model registry). */
function modelOps(options: Record<string, unknown>): readonly string[] | null {
  return typeof options.model === 'string' ? (models.get(options.model)?.ops ?? null) : null;
}

define({
  name: 'linearizable',
  summary: 'Porcupine-class linearizability against a model (--model)',
  consumes: (options) => modelOps(options),
  load: async () => {
    const m = await import('./linearizability/index.ts');
    return { checker: m.linearizabilityChecker as Checker<never>, schema: m.linearizabilityOptionsSchema };
  },
});

define({
  name: 'elle',
  summary: 'Elle-class transactional checking: list-append / rw-register (--workload)',
  consumes: () => ['txn'],
  load: async () => {
    const m = await import('./elle/index.ts');
    return { checker: m.elleChecker as Checker<never>, schema: m.elleOptionsSchema };
  },
});

/** The set checkers read their add and read ops under the names the options give (`addF`, `readF`). */
function setOps(o: Record<string, unknown>): string[] {
  return [typeof o.addF === 'string' ? o.addF : 'add', typeof o.readF === 'string' ? o.readF : 'read'];
}

define({
  name: 'set',
  summary: 'adds + a final read: lost, unexpected, recovered',
  consumes: (o) => setOps(o),
  load: async () => {
    const m = await import('./catalogue/set.ts');
    return { checker: m.setChecker as Checker<never>, schema: m.setOptionsSchema };
  },
});

define({
  name: 'set-full',
  summary: 'adds + reads throughout: stable, lost, never-read, stale, duplicated',
  consumes: (o) => setOps(o),
  load: async () => {
    const m = await import('./catalogue/set-full.ts');
    return { checker: m.setFullChecker as Checker<never>, schema: m.setFullOptionsSchema };
  },
});

define({
  name: 'counter',
  summary: 'every read between acked and attempted increments',
  consumes: () => ['add', 'read'],
  load: async () => {
    const m = await import('./catalogue/counter.ts');
    return { checker: m.counterChecker as Checker<never>, schema: m.counterOptionsSchema };
  },
});

define({
  name: 'bank',
  summary: 'every read shows the constant total and no negative balance',
  consumes: () => ['read'],
  load: async () => {
    const m = await import('./catalogue/bank.ts');
    return { checker: m.bankChecker as Checker<never>, schema: m.bankOptionsSchema };
  },
});

define({
  name: 'long-fork',
  summary: 'no two reads of a key group each miss a write the other saw',
  consumes: () => ['txn'],
  load: async () => {
    const m = await import('./catalogue/long-fork.ts');
    return { checker: m.longForkChecker as Checker<never>, schema: m.longForkOptionsSchema };
  },
});

define({
  name: 'unique-ids',
  summary: 'no acknowledged id handed out twice',
  consumes: () => ['generate'],
  load: async () => {
    const m = await import('./catalogue/unique-ids.ts');
    return { checker: m.uniqueIdsChecker as Checker<never>, schema: m.uniqueIdsOptionsSchema };
  },
});

define({
  name: 'queue',
  summary: 'every dequeue came from an enqueue (unordered model)',
  consumes: () => ['enqueue', 'dequeue'],
  load: async () => {
    const m = await import('./catalogue/queue.ts');
    return { checker: m.queueChecker as Checker<never>, schema: m.queueOptionsSchema };
  },
});

define({
  name: 'total-queue',
  summary: 'every acked enqueue dequeued: lost, duplicated, unexpected, recovered',
  consumes: () => ['enqueue', 'dequeue', 'drain'],
  load: async () => {
    const m = await import('./catalogue/total-queue.ts');
    return { checker: m.totalQueueChecker as Checker<never>, schema: m.totalQueueOptionsSchema };
  },
});

define({
  name: 'no-lost-ack',
  summary: 'every acked write present in the final state at quiescence',
  load: async () => {
    const m = await import('./catalogue/no-lost-ack.ts');
    return { checker: m.noLostAckChecker as Checker<never>, schema: m.noLostAckOptionsSchema };
  },
});

define({
  name: 'exactly-once',
  summary: 'at most one committed effect per business idempotency key',
  load: async () => {
    const m = await import('./catalogue/exactly-once.ts');
    return { checker: m.exactlyOnceChecker as Checker<never>, schema: m.exactlyOnceOptionsSchema };
  },
});

define({
  name: 'session',
  summary: 'read-your-writes and monotonic reads per process',
  load: async () => {
    const m = await import('./catalogue/session.ts');
    return { checker: m.sessionChecker as Checker<never>, schema: m.sessionOptionsSchema };
  },
});

define({
  name: 'final-state-invariant',
  summary: 'a predicate over the final-state dump',
  load: async () => {
    const m = await import('./catalogue/final-state.ts');
    return {
      checker: m.finalStateInvariantChecker as Checker<never>,
      schema: m.finalStateInvariantOptionsSchema,
    };
  },
});

define({
  name: 'replica-reconciliation',
  summary: 'pairwise diff of per-replica dumps at quiescence',
  load: async () => {
    const m = await import('./catalogue/replica-reconciliation.ts');
    return {
      checker: m.replicaReconciliationChecker as Checker<never>,
      schema: m.replicaReconciliationOptionsSchema,
    };
  },
});

define({
  name: 'stats',
  summary: 'ok/fail/info per f; unknown if some f never succeeded',
  load: async () => {
    const m = await import('./catalogue/stats.ts');
    return { checker: m.statsChecker as Checker<never>, schema: m.statsOptionsSchema };
  },
});

define({
  name: 'unhandled-errors',
  summary: 'info ops grouped by error class (informational)',
  load: async () => {
    const m = await import('./catalogue/unhandled-errors.ts');
    return { checker: m.unhandledErrorsChecker as Checker<never>, schema: m.unhandledErrorsOptionsSchema };
  },
});

define({
  name: 'perf',
  summary: 'latency percentiles and throughput, SVG plots with fault windows',
  load: async () => {
    const m = await import('./catalogue/perf.ts');
    return { checker: m.perfChecker as Checker<never>, schema: m.perfOptionsSchema };
  },
});

define({
  name: 'timeline',
  summary: 'timeline.html: every op a bar per process, coloured by outcome, with fault windows',
  load: async () => {
    const m = await import('./timeline/index.ts');
    return { checker: m.timelineChecker as Checker<never>, schema: m.timelineOptionsSchema };
  },
});

define({
  name: 'slo',
  summary: 'p99, error rate and throughput floor fixed before the run',
  load: async () => {
    const m = await import('./catalogue/slo.ts');
    return { checker: m.sloChecker as Checker<never>, schema: m.sloOptionsSchema };
  },
});

define({
  name: 'fairness',
  summary: 'per-group p99 ratio, throughput floor, error-free, repeat spread',
  load: async () => {
    const m = await import('./catalogue/fairness.ts');
    return { checker: m.fairnessChecker as Checker<never>, schema: m.fairnessOptionsSchema };
  },
});

/** Jepsen's and common alternative names. */
checkers.alias('linearizability', 'linearizable');
checkers.alias('unhandled-exceptions', 'unhandled-errors');
checkers.alias('final-state', 'final-state-invariant');
checkers.alias('invariant', 'final-state-invariant');
checkers.alias('reconciliation', 'replica-reconciliation');
checkers.alias('list-append', 'elle');
checkers.alias('rw-register', 'elle');

export function checkerNames(): string[] {
  return checkers.names();
}

export function findChecker(name: string): CheckerDefinition | undefined {
  return checkers.get(name);
}
