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
          value: op.type === 'info' && op.infoValue !== undefined ? op.infoValue : op.output,
          time: op.completeTime ?? op.infoTime ?? op.invokeTime,
          ...(op.error !== undefined && { error: op.error }),
        },
      ]);
  }
  events.sort((a, b) => a[0] - b[0]);
  return events.map(([, e], i) => `${JSON.stringify({ ...e, index: i })}\n`).join('');
}

/**
 * Zeller's ddmin (complements only) over `start`: the smallest subset it finds for which `fails` holds,
 * and whether no single element of it can go (1-minimal), which needs the last round to have run to its
 * end before `spent` said the budget was gone. `fails(start)` is taken to hold.
 */
export function ddmin<T>(
  start: T[],
  fails: (s: T[]) => boolean,
  spent: () => boolean,
): { set: T[]; minimal: boolean } {
  let set = start;
  let n = 2;
  let minimal = false;
  while (set.length >= 2) {
    if (spent()) break;
    const size = Math.ceil(set.length / n);
    let reduced = false;
    for (let from = 0; from < set.length; from += size) {
      const rest = [...set.slice(0, from), ...set.slice(from + size)];
      if (rest.length > 0 && fails(rest)) {
        set = rest;
        n = Math.max(n - 1, 2);
        reduced = true;
        break;
      }
      if (spent()) break;
    }
    if (reduced) continue;
    if (n >= set.length) {
      minimal = !spent();
      break;
    }
    n = Math.min(n * 2, set.length);
  }
  if (set.length === 1) minimal = true;
  return { set, minimal };
}
