import type { CompactValue } from '../src/core/history/compact-value.ts';
import type { Operation } from '../src/core/history/operation.ts';
import type { FaultBand } from './fault-bands.ts';

/**
 * The contract every faultline oracle follows. A checker never claims more than it saw: `evidence`
 * says what it consumed, `scope` what it cannot detect, and `valid` is 'unknown' rather than true when
 * it could not decide (no final read, budget exhausted, nothing to check).
 */
export type Validity = true | false | 'unknown';

export interface Anomaly {
  /** Anomaly type, e.g. "lost", "stale-read", "G2-item", "nonlinearizable". */
  type: string;
  /**
   * One sentence a person can act on, never cut. It names ops as `op N`, N being the event index of the
   * op's invocation (the `index` of its invoke line in history.jsonl), the one numbering everywhere.
   */
  explanation: string;
  /**
   * The ops involved, by the event index of their invocation: the op that shows the anomaly first,
   * then the ops the explanation rests on.
   */
  ops?: number[];
  key?: string;
  [detail: string]: unknown;
}

export interface CheckResult {
  checker: string;
  valid: Validity;
  /** One line: what was consumed and what was found, e.g. "set: 4,217 adds, 1 final read, 0 lost". */
  evidence: string;
  /** What this checker cannot detect, in one or two sentences. */
  scope: string;
  anomalies: Anomaly[];
  /** Counters and figures (ops consumed, keys, latencies …); JSON-serialisable. */
  stats: Record<string, unknown> & { opsConsumed: number };
  /** Set when the checker could not run (the error that made it 'unknown'). */
  error?: string;
  /** Files the checker wrote (HTML timelines, SVG plots, explanations). */
  artifacts?: string[];
}

export interface CheckContext {
  /** Directory for artifacts (plots, HTML); checkers write nothing when absent. */
  outDir?: string;
  /** Abort long searches (Ctrl-C, global deadline). */
  signal?: AbortSignal;
  /**
   * The run's fault windows, for pages and plots of a checker that sees only part of the history (one
   * key's ops, without the nemesis): drawn from these instead of from the ops.
   */
  faults?: readonly FaultBand[];
  /** Set for a per-key (independent) check: the key these ops belong to, for titles and pages. */
  key?: string;
  /**
   * Given to a stream form (`Checker.stream`) when the caller can feed the same ops again (`faultline
   * check` reads its file again): calls `add` for every op once more and resolves to their count. A
   * checker that needs the ops a second time only in a rare case (Elle shrinking a FAIL) asks for them
   * then instead of holding every op while they stream by.
   */
  replay?: (add: (op: Operation) => void) => Promise<number>;
}

export interface Checker<Options = Record<string, unknown>> {
  readonly name: string;
  check(ops: readonly Operation[], options: Options, ctx?: CheckContext): Promise<CheckResult> | CheckResult;
  /**
   * The same check fed one op at a time, in any order (a history streamed from disk closes its ops in
   * completion order), without the checker keeping the Operation objects. Optional: a checker that
   * needs the whole array has no stream form and gets the array. A promise when the checker has
   * something to load first for these options (the linearizability checker: its model's code).
   */
  stream?(options: Options, ctx?: CheckContext): OpSink | Promise<OpSink>;
}

/** A check consuming ops as they close; `finish` gives the same result `check` gives on the same ops. */
export interface OpSink {
  add(op: Operation): void;
  finish(): Promise<CheckResult> | CheckResult;
  /**
   * Set when `add` also takes ops whose `input` or `output` is a {@link CompactValue}: a structured
   * value left in the compact tree the file was scanned into, to be read node by node (or made plain
   * with `value()`). A large history file read on two threads then reaches the checker without its
   * values ever becoming JavaScript arrays. Used only when every streamed checker of the request sets
   * it; ops fed again through `ctx.replay` always carry plain values.
   */
  readonly compactValues?: boolean;
}

/** How a stream is fed (see `runCheckersOnStream`): what every sink it feeds takes. */
export interface StreamIntake {
  /** Every sink sets {@link OpSink.compactValues}: values may stay compact trees. */
  compactValues: boolean;
}

/** Merge order for composed checkers: false beats unknown beats true. */
export function mergeValidity(values: Iterable<Validity>): Validity {
  let out: Validity = true;
  for (const v of values) {
    if (v === false) return false;
    if (v === 'unknown') out = 'unknown';
  }
  return out;
}
