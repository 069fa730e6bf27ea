import type { Checker } from './types.ts';

/**
 * Every checker faultline can run by name, loaded lazily so `faultline check --checker set` never pays
 * for the linearizability or Elle engines. `load()` returns the checker and, where it has one, the
 * schema its options must satisfy (the CLI validates before running, so bad options exit 254).
 */
export interface OptionsSchema {
  safeParse(
    v: unknown,
  ):
    | { success: true; data: unknown }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

export interface LoadedChecker {
  checker: Checker<never>;
  schema?: OptionsSchema;
}

export interface RegistryEntry {
  name: string;
  summary: string;
  load(): Promise<LoadedChecker>;
}

function entry(name: string, summary: string, load: () => Promise<LoadedChecker>): RegistryEntry {
  return { name, summary, load };
}

export const REGISTRY: readonly RegistryEntry[] = [
  entry('linearizable', 'Porcupine-class linearizability against a model (--model)', async () => {
    const m = await import('./linearizability/index.ts');
    return { checker: m.linearizabilityChecker as Checker<never>, schema: m.linearizabilityOptionsSchema };
  }),
  entry('elle', 'Elle-class transactional checking: list-append / rw-register (--workload)', async () => {
    const m = await import('./elle/index.ts');
    return { checker: m.elleChecker as Checker<never>, schema: m.elleOptionsSchema };
  }),
  entry('set', 'adds + a final read: lost, unexpected, recovered', async () => {
    const m = await import('./catalogue/set.ts');
    return { checker: m.setChecker as Checker<never>, schema: m.setOptionsSchema };
  }),
  entry('set-full', 'adds + reads throughout: stable, lost, never-read, stale, duplicated', async () => {
    const m = await import('./catalogue/set-full.ts');
    return { checker: m.setFullChecker as Checker<never>, schema: m.setFullOptionsSchema };
  }),
  entry('counter', 'every read between acked and attempted increments', async () => {
    const m = await import('./catalogue/counter.ts');
    return { checker: m.counterChecker as Checker<never>, schema: m.counterOptionsSchema };
  }),
  entry('bank', 'every read shows the constant total and no negative balance', async () => {
    const m = await import('./catalogue/bank.ts');
    return { checker: m.bankChecker as Checker<never>, schema: m.bankOptionsSchema };
  }),
  entry('long-fork', 'no two reads of a key group each miss a write the other saw', async () => {
    const m = await import('./catalogue/long-fork.ts');
    return { checker: m.longForkChecker as Checker<never>, schema: m.longForkOptionsSchema };
  }),
  entry('unique-ids', 'no acknowledged id handed out twice', async () => {
    const m = await import('./catalogue/unique-ids.ts');
    return { checker: m.uniqueIdsChecker as Checker<never>, schema: m.uniqueIdsOptionsSchema };
  }),
  entry('queue', 'every dequeue came from an enqueue (unordered model)', async () => {
    const m = await import('./catalogue/queue.ts');
    return { checker: m.queueChecker as Checker<never>, schema: m.queueOptionsSchema };
  }),
  entry('total-queue', 'every acked enqueue dequeued: lost, duplicated, unexpected, recovered', async () => {
    const m = await import('./catalogue/total-queue.ts');
    return { checker: m.totalQueueChecker as Checker<never>, schema: m.totalQueueOptionsSchema };
  }),
  entry('no-lost-ack', 'every acked write present in the final state at quiescence', async () => {
    const m = await import('./catalogue/no-lost-ack.ts');
    return { checker: m.noLostAckChecker as Checker<never>, schema: m.noLostAckOptionsSchema };
  }),
  entry('exactly-once', 'at most one committed effect per business idempotency key', async () => {
    const m = await import('./catalogue/exactly-once.ts');
    return { checker: m.exactlyOnceChecker as Checker<never>, schema: m.exactlyOnceOptionsSchema };
  }),
  entry('session', 'read-your-writes and monotonic reads per process', async () => {
    const m = await import('./catalogue/session.ts');
    return { checker: m.sessionChecker as Checker<never>, schema: m.sessionOptionsSchema };
  }),
  entry('final-state-invariant', 'a predicate over the final-state dump', async () => {
    const m = await import('./catalogue/final-state.ts');
    return {
      checker: m.finalStateInvariantChecker as Checker<never>,
      schema: m.finalStateInvariantOptionsSchema,
    };
  }),
  entry('replica-reconciliation', 'pairwise diff of per-replica dumps at quiescence', async () => {
    const m = await import('./catalogue/replica-reconciliation.ts');
    return {
      checker: m.replicaReconciliationChecker as Checker<never>,
      schema: m.replicaReconciliationOptionsSchema,
    };
  }),
  entry('stats', 'ok/fail/info per f; unknown if some f never succeeded', async () => {
    const m = await import('./catalogue/stats.ts');
    return { checker: m.statsChecker as Checker<never>, schema: m.statsOptionsSchema };
  }),
  entry('unhandled-errors', 'info ops grouped by error class (informational)', async () => {
    const m = await import('./catalogue/unhandled-errors.ts');
    return { checker: m.unhandledErrorsChecker as Checker<never>, schema: m.unhandledErrorsOptionsSchema };
  }),
  entry('perf', 'latency percentiles and throughput, SVG plots with fault windows', async () => {
    const m = await import('./catalogue/perf.ts');
    return { checker: m.perfChecker as Checker<never>, schema: m.perfOptionsSchema };
  }),
  entry(
    'timeline',
    'timeline.html: every op a bar per process, coloured by outcome, with fault windows',
    async () => {
      const m = await import('./timeline/index.ts');
      return { checker: m.timelineChecker as Checker<never>, schema: m.timelineOptionsSchema };
    },
  ),
  entry('slo', 'p99, error rate and throughput floor fixed before the run', async () => {
    const m = await import('./catalogue/slo.ts');
    return { checker: m.sloChecker as Checker<never>, schema: m.sloOptionsSchema };
  }),
  entry('fairness', 'per-group p99 ratio, throughput floor, error-free, repeat spread', async () => {
    const m = await import('./catalogue/fairness.ts');
    return { checker: m.fairnessChecker as Checker<never>, schema: m.fairnessOptionsSchema };
  }),
];

/** Jepsen's and common alternative names. */
const ALIASES: Record<string, string> = {
  linearizability: 'linearizable',
  'unhandled-exceptions': 'unhandled-errors',
  'final-state': 'final-state-invariant',
  invariant: 'final-state-invariant',
  reconciliation: 'replica-reconciliation',
  'list-append': 'elle',
  'rw-register': 'elle',
};

export function checkerNames(): string[] {
  return REGISTRY.map((e) => e.name);
}

export function findChecker(name: string): RegistryEntry | undefined {
  const canonical = ALIASES[name] ?? name;
  return REGISTRY.find((e) => e.name === canonical);
}
