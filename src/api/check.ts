import { type CheckerRequest, runCheckers } from '../../checkers/compose.ts';
import type { CheckResult, Validity } from '../../checkers/types.ts';
import type { HistoryEvent } from '../core/history/event.ts';
import type { Operation } from '../core/history/operation.ts';
import { pairEvents } from '../core/history/pair.ts';
import { type LoadOptions, loadHistory } from '../core/history/read.ts';

/**
 * `check(history, checkers)`: the `faultline check` command as a function. The history is a file (any
 * format faultline reads), its events, or paired operations; checkers are names (with options through
 * `options`) or requests `{ name, options, independent }`. Checkers that throw give `unknown`; unknown
 * checker names and options a checker refuses are errors (UserError).
 */
export interface CheckOptions {
  /** Options per checker name (the `--options` file's shape). */
  options?: Readonly<Record<string, Record<string, unknown>>>;
  /** Check each key's ops on their own (Jepsen's independent). */
  independent?: boolean;
  /** Where checkers write artifacts (plots, HTML). */
  outDir?: string;
  format?: LoadOptions['format'];
  signal?: AbortSignal;
}

export interface CheckOutcome {
  valid: Validity;
  results: CheckResult[];
  ops: number;
}

export async function check(
  history: string | readonly HistoryEvent[] | readonly Operation[],
  checkers: string | readonly (string | CheckerRequest)[],
  o: CheckOptions = {},
): Promise<CheckOutcome> {
  const ops = await operationsOf(history, o);
  const list = typeof checkers === 'string' ? checkers.split(',').map((s) => s.trim()) : checkers;
  const requests: CheckerRequest[] = list.map((c) =>
    typeof c === 'string'
      ? { name: c, options: { ...o.options?.[c] }, ...(o.independent && { independent: true }) }
      : c,
  );
  const { valid, results } = await runCheckers(
    requests,
    ops,
    { ...(o.outDir && { outDir: o.outDir }), ...(o.signal && { signal: o.signal }) },
    { badOptions: 'throw' },
  );
  return { valid, results, ops: ops.length };
}

async function operationsOf(
  history: string | readonly HistoryEvent[] | readonly Operation[],
  o: CheckOptions,
): Promise<readonly Operation[]> {
  if (typeof history === 'string')
    return pairEvents(await loadHistory(history, { ...(o.format && { format: o.format }) })).ops;
  const first = history[0] as Partial<HistoryEvent & Operation> | undefined;
  const events = first !== undefined && first.invokeTime === undefined;
  return events ? pairEvents(history as HistoryEvent[]).ops : (history as readonly Operation[]);
}
