import type { AnyModel, Refutation } from './model.ts';
import type { PartitionSearch, SearchStatus } from './search.ts';

/** States rendered for the end of a longest prefix (what reports and the HTML show). */
export const RENDERED_STATES = 5_000;

export type PartitionStatus = SearchStatus | 'unknown' | 'cancelled';

/**
 * What one partition's search established, in partition-local op indices, with states already
 * rendered by the model so it can cross a worker boundary as plain data.
 */
export interface PartitionSummary {
  status: PartitionStatus;
  /** Step lookups (Porcupine's Step-call count equivalent) and actual model evaluations. */
  steps: number;
  modelCalls: number;
  cacheSize: number;
  distinctStates: number;
  /** Longest linearizable prefix found (the full linearization when ok). */
  prefix: number[];
  /** State after each op of `prefix`, for its last entries only (from index `prefixStatesFrom`). */
  prefixStates: string[];
  prefixStatesFrom: number;
  initialState: string;
  /** The op nothing could be linearized in front of, when the search ended illegal (or gave up). */
  blockedOp: number;
  /** States the longest prefixes ended in: what the blocked op could have seen. */
  statesSeen: string[];
  /** Wall time spent on this partition's search slices. */
  ms: number;
  /** Set when the model's quick refutation decided the partition (no search ran). */
  refutation?: Refutation;
}

export function summarizeSearch(
  search: PartitionSearch,
  model: AnyModel,
  status: PartitionStatus,
  ms: number,
): PartitionSummary {
  const space = search.space;
  // A partition stopped early has only the prefix recorded at its last backtrack; the live stack may
  // be longer, so take whichever is longer.
  let prefix = Array.from(search.bestOps.subarray(0, Math.max(0, search.bestLen)));
  let statesSeen = search.bestStates.map((sid) => model.describeState(space.value(sid)));
  let blockedOp = search.bestBlockedOp;
  if (status !== 'ok' && status !== 'illegal') {
    const live = search.currentPrefix();
    if (live.length > prefix.length) {
      prefix = live;
      blockedOp = -1;
      statesSeen = [];
    }
  }
  // Replay the prefix through the memo; render the states of its tail (rendering a million kv strings
  // would cost more than the search).
  const prefixStatesFrom = Math.max(0, prefix.length - RENDERED_STATES);
  const prefixStates: string[] = [];
  let sid = 0;
  for (let k = 0; k < prefix.length; k++) {
    const cell = space.resolve(sid, prefix[k] as number);
    if (cell <= 0) break; // cannot happen for a recorded prefix; stop rather than render garbage
    sid = cell - 1;
    if (k >= prefixStatesFrom) prefixStates.push(model.describeState(space.value(sid)));
  }
  if (statesSeen.length === 0 && status !== 'ok') statesSeen = [model.describeState(space.value(sid))];
  return {
    status,
    steps: search.steps,
    modelCalls: space.modelCalls,
    cacheSize: search.cacheSize,
    distinctStates: space.size,
    prefix,
    prefixStates,
    prefixStatesFrom,
    initialState: model.describeState(space.value(0)),
    blockedOp,
    statesSeen,
    ms,
  };
}

/**
 * Summary of a partition no search ran on: refuted by the model (`illegal`, with the refutation), or
 * left because another partition was refuted (`cancelled`).
 */
export function summarizeWithoutSearch(
  model: AnyModel,
  status: 'illegal' | 'cancelled',
  refutation?: Refutation,
): PartitionSummary {
  return {
    status,
    steps: 0,
    modelCalls: 0,
    cacheSize: 0,
    distinctStates: 0,
    prefix: [],
    prefixStates: [],
    prefixStatesFrom: 0,
    initialState: model.describeState(model.init()),
    blockedOp: refutation ? refutation.op : -1,
    statesSeen: [],
    ms: 0,
    ...(refutation ? { refutation } : {}),
  };
}

/** What an engine (inline or worker threads) returns for a set of partitions. */
export interface EngineResult {
  summaries: PartitionSummary[];
  timedOut: boolean;
  aborted: boolean;
}
