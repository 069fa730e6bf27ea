import type { HistoryEvent } from '../src/core/history/event.ts';
import type { Operation } from '../src/core/history/operation.ts';

/**
 * The events of some ops as a history `faultline check` reads back (JSON lines, renumbered densely in
 * their original order): each op's invocation and, when it had one, its completion.
 */
export function subHistoryLines(ops: readonly Operation[]): string {
  const events: [number, HistoryEvent][] = [];
  for (const op of ops) {
    const base = {
      f: op.f,
      process: op.process,
      node: op.node,
      faultEpoch: op.faultEpoch,
      ...(op.key !== undefined && { key: op.key }),
    };
    events.push([
      op.invokeIndex,
      { ...base, index: 0, type: 'invoke', value: op.input, time: op.invokeTime },
    ]);
    if (op.completeIndex !== null)
      events.push([
        op.completeIndex,
        {
          ...base,
          index: 0,
          type: op.type,
          value: op.output,
          time: op.completeTime ?? op.infoTime ?? op.invokeTime,
          ...(op.error !== undefined && { error: op.error }),
        },
      ]);
  }
  events.sort((a, b) => a[0] - b[0]);
  return events.map(([, e], i) => `${JSON.stringify({ ...e, index: i })}\n`).join('');
}
