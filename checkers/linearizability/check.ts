import type { Operation } from '../../src/core/history/operation.ts';
import { monotonicMs } from '../../src/core/util/clock.ts';
import type { Validity } from '../types.ts';
import type { AnyModel } from './model.ts';
import { modelSpecOf } from './models/registry.ts';
import type { EncodedOps } from './op-columns.ts';
import { type Partition, type PreparedHistory, prepareHistory } from './prepare.ts';
import { PartitionSearch, type SearchOptions, SLICE_ITERATIONS } from './search.ts';
import {
  type EngineResult,
  type PartitionStatus,
  type PartitionSummary,
  summarizeSearch,
  summarizeWithoutSearch,
} from './summary.ts';

// monotonicMs (not `performance`) and a hand-made promise rather than node:timers/promises: perf_hooks
// and timers/promises cost `faultline check` measurable start-up for nothing the search needs.
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export type { EngineResult };

export interface CheckOperationsOptions {
  /** Budget for the whole check in ms; 0 or absent: none. Undecided partitions then come out unknown. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Worker threads for partitions; 0 or 1 checks inline. Default: inline. */
  workers?: number;
  /** Use threads only when the history has at least this many ops (thread start-up costs ~100 ms). */
  parallelThreshold?: number;
  /** Linearize read-only ops greedily (default true); false searches in Porcupine's exact order. */
  greedyReads?: boolean;
}

export interface PartitionResult extends PartitionSummary {
  key: string | null;
  ops: EncodedOps;
}

export interface CheckOutcome {
  valid: Validity;
  partitions: PartitionResult[];
  /** Indices (into `partitions`) of the partitions proven not linearizable, in key order. */
  failing: number[];
  opsConsumed: number;
  opsIgnored: number;
  /** Ops of unknown outcome left out of the search: nothing could observe them (Model.simplify). */
  opsUnobserved: number;
  /** Ops of unknown outcome bounded by the first op that saw what only they wrote (Model.simplify). */
  opsBounded: number;
  timedOut: boolean;
  aborted: boolean;
  elapsedMs: number;
  /** Worker threads used (0: inline). */
  workers: number;
}

/** Let timers and abort signals run at least this often during a long inline search. */
const YIELD_EVERY_MS = 25;
export const DEFAULT_PARALLEL_THRESHOLD = 20_000;

/**
 * Check partitions on this thread, round-robin in fixed slices, so a cheap illegal partition is found
 * early even when others are very expensive (kv/c50-bad), as Porcupine's goroutines find it. The first
 * illegal partition stops the rest. Slices are counted in loop iterations, so which partition is found
 * first does not depend on timing.
 */
export async function checkPartitionsInline(
  model: AnyModel,
  partitions: readonly Partition[],
  deadline: number,
  signal: AbortSignal | undefined,
  searchOptions: SearchOptions = {},
): Promise<EngineResult> {
  // A partition is summarized as soon as its search is decided and the search is dropped: its states
  // and cache need not live until every partition is done (kv/c50-ok has ten partitions).
  const searches: (PartitionSearch | null)[] = partitions.map(
    (p) => new PartitionSearch(model, p.ops, searchOptions),
  );
  const summaries: (PartitionSummary | null)[] = partitions.map(() => null);
  const ms = new Float64Array(searches.length);
  const settle = (i: number): void => {
    const search = searches[i] as PartitionSearch;
    summaries[i] = summarizeSearch(search, model, search.status, ms[i] as number);
    search.release();
    searches[i] = null;
  };
  let running: number[] = [];
  for (let i = 0; i < searches.length; i++) {
    if (searches[i]?.status === 'running') running.push(i);
    else settle(i);
  }
  let timedOut = false;
  let aborted = false;
  let illegal = false;
  let lastYield = monotonicMs();
  while (running.length > 0 && !illegal) {
    for (const i of running) {
      const search = searches[i] as PartitionSearch;
      const t0 = monotonicMs();
      const status = search.run(SLICE_ITERATIONS);
      ms[i] = (ms[i] as number) + (monotonicMs() - t0);
      if (status !== 'running') settle(i);
      if (status === 'illegal') {
        illegal = true;
        break;
      }
    }
    running = running.filter((i) => searches[i] !== null);
    if (running.length === 0 || illegal) break;
    const now = monotonicMs();
    if (now >= deadline) {
      timedOut = true;
      break;
    }
    if (now - lastYield >= YIELD_EVERY_MS) {
      await yieldToEventLoop();
      lastYield = monotonicMs();
    }
    if (signal?.aborted) {
      aborted = true;
      break;
    }
  }
  for (let i = 0; i < searches.length; i++) {
    const search = searches[i];
    if (!search) continue;
    const status: PartitionStatus = illegal ? 'cancelled' : 'unknown';
    summaries[i] = summarizeSearch(search, model, status, ms[i] as number);
    search.release();
    searches[i] = null;
  }
  return { summaries: summaries as PartitionSummary[], timedOut, aborted };
}

/**
 * Search iterations granted to a refuted partition for its report: when the search also finishes, the
 * report has the longest linearizable prefix and the states the blocked op could have seen.
 */
const REFUTED_SEARCH_ITERATIONS = 1 << 20;

/**
 * The model's quick refutations (Model.refute), if any partition has one: those partitions are
 * illegal and the others are not searched (as after any partition proven illegal). Null when none.
 */
function refutePartitions(
  model: AnyModel,
  partitions: readonly Partition[],
  searchOptions: SearchOptions,
): EngineResult | null {
  if (!model.refute) return null;
  const refutations = partitions.map((p) => model.refute?.(p.ops) ?? null);
  if (refutations.every((r) => r === null)) return null;
  const summaries = refutations.map((r, i) => {
    if (!r) return summarizeWithoutSearch(model, 'cancelled');
    const search = new PartitionSearch(model, (partitions[i] as Partition).ops, searchOptions);
    const t0 = monotonicMs();
    const summary =
      search.run(REFUTED_SEARCH_ITERATIONS) === 'illegal'
        ? summarizeSearch(search, model, 'illegal', monotonicMs() - t0)
        : summarizeWithoutSearch(model, 'illegal', r);
    search.release();
    return summary;
  });
  return { summaries, timedOut: false, aborted: false };
}

function verdict(summaries: readonly PartitionSummary[]): Validity {
  if (summaries.some((s) => s.status === 'illegal')) return false;
  if (summaries.every((s) => s.status === 'ok')) return true;
  return 'unknown';
}

/**
 * Check a paired history against a model. Timing-wise this is everything after parsing: encoding,
 * partitioning, the search. Throws OperationInputError for an op the model cannot interpret.
 */
export async function checkOperations(
  model: AnyModel,
  ops: readonly Operation[],
  opts: CheckOperationsOptions = {},
): Promise<CheckOutcome> {
  const started = monotonicMs();
  return checkPrepared(model, prepareHistory(model, ops), opts, started);
}

/**
 * Check a history already encoded and partitioned (HistoryPreparer, possibly fed as a stream). The
 * budget counts from `started` (default: now).
 */
export async function checkPrepared(
  model: AnyModel,
  prepared: PreparedHistory,
  opts: CheckOperationsOptions = {},
  started = monotonicMs(),
): Promise<CheckOutcome> {
  const { partitions } = prepared;
  const deadline = opts.timeoutMs && opts.timeoutMs > 0 ? started + opts.timeoutMs : Number.POSITIVE_INFINITY;
  const totalOps = partitions.reduce((n, p) => n + p.ops.length, 0);
  const spec = modelSpecOf(model);
  const searchOptions: SearchOptions = { greedyReads: opts.greedyReads ?? true };
  const wantWorkers = Math.min(opts.workers ?? 0, partitions.length);
  const useWorkers =
    spec !== undefined &&
    wantWorkers > 1 &&
    totalOps >= (opts.parallelThreshold ?? DEFAULT_PARALLEL_THRESHOLD);
  let engine: EngineResult;
  const refuted = refutePartitions(model, partitions, searchOptions);
  if (refuted) {
    engine = refuted;
  } else if (useWorkers) {
    const { checkPartitionsInWorkers } = await import('./parallel.ts');
    engine = await checkPartitionsInWorkers(
      spec,
      partitions,
      wantWorkers,
      deadline,
      opts.signal,
      searchOptions,
    );
    // Which worker proves its partition illegal first depends on timing. The report must not: re-run
    // the deterministic inline engine (iteration-counted slices) to choose the failing partition it
    // names. It stops at the same cheap illegal partition, so this costs little; if it cannot finish
    // within what is left of the budget, the workers' result stands.
    if (engine.summaries.some((s) => s.status === 'illegal') && !engine.aborted) {
      const inline = await checkPartitionsInline(model, partitions, deadline, opts.signal, searchOptions);
      if (inline.summaries.some((s) => s.status === 'illegal')) engine = inline;
    }
  } else {
    engine = await checkPartitionsInline(model, partitions, deadline, opts.signal, searchOptions);
  }
  const results: PartitionResult[] = engine.summaries.map((s, i) => ({
    ...s,
    key: (partitions[i] as Partition).key,
    ops: (partitions[i] as Partition).ops,
  }));
  const failing = results.flatMap((r, i) => (r.status === 'illegal' ? [i] : []));
  return {
    valid: verdict(engine.summaries),
    partitions: results,
    failing,
    opsConsumed: prepared.opsConsumed,
    opsIgnored: prepared.opsIgnored,
    opsUnobserved: prepared.opsUnobserved,
    opsBounded: prepared.opsBounded,
    timedOut: engine.timedOut,
    aborted: engine.aborted,
    elapsedMs: monotonicMs() - started,
    workers: useWorkers ? wantWorkers : 0,
  };
}
