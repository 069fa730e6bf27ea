import type { CheckContext, Checker, CheckResult } from '../../checkers/types.ts';
import type { HistoryEvent, ProcessId } from '../../src/core/history/event.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';

/**
 * A tiny history builder for oracle tests: events go through the real pairer, so checkers see exactly
 * what `faultline check` would give them. Time advances 1 ms per event unless `at` says otherwise.
 */
export class H {
  private events: HistoryEvent[] = [];
  private clock = 0;

  private push(
    type: HistoryEvent['type'],
    process: ProcessId,
    f: string,
    value: unknown,
    extra: Partial<HistoryEvent> & { at?: number } = {},
  ): this {
    const { at, ...rest } = extra;
    this.clock = at ?? this.clock + 1_000_000;
    this.events.push({
      index: this.events.length,
      type,
      f,
      value,
      process,
      time: this.clock,
      node: null,
      faultEpoch: null,
      ...rest,
    } as HistoryEvent);
    return this;
  }

  invoke(
    p: ProcessId,
    f: string,
    value: unknown = null,
    extra: Partial<HistoryEvent> & { at?: number } = {},
  ): this {
    return this.push('invoke', p, f, value, extra);
  }
  ok(
    p: ProcessId,
    f: string,
    value: unknown = null,
    extra: Partial<HistoryEvent> & { at?: number } = {},
  ): this {
    return this.push('ok', p, f, value, extra);
  }
  fail(
    p: ProcessId,
    f: string,
    value: unknown = null,
    extra: Partial<HistoryEvent> & { at?: number } = {},
  ): this {
    return this.push('fail', p, f, value, extra);
  }
  info(
    p: ProcessId,
    f: string,
    value: unknown = null,
    extra: Partial<HistoryEvent> & { at?: number } = {},
  ): this {
    return this.push('info', p, f, value, extra);
  }
  /** invoke + ok back to back (same value unless `out` given). */
  call(p: ProcessId, f: string, value: unknown, out: unknown = value): this {
    return this.invoke(p, f, value).ok(p, f, out);
  }

  ops(): Operation[] {
    return pairEvents(this.events).ops;
  }

  /** The events as written so far (a copy): what history.jsonl would hold. */
  history(): HistoryEvent[] {
    return [...this.events];
  }
}

export function types(r: { anomalies: { type: string }[] }): string[] {
  return [...new Set(r.anomalies.map((a) => a.type))].sort();
}

/** Run a checker (sync or async) and give back its result. */
export async function run<O>(
  checker: Checker<O>,
  ops: readonly Operation[],
  options: O,
  ctx?: CheckContext,
): Promise<CheckResult> {
  return await checker.check(ops, options, ctx);
}
