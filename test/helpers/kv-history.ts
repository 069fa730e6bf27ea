import type { HistoryEvent } from '../../src/core/history/event.ts';

/**
 * A kv history written here, with a known answer: two clients over keys "1" to "4"; each key is put,
 * appended to and read back. With `staleKey`, the read of that key, which starts after `append b`
 * returned, sees only "a": no order of the ops explains it, so that key (and only it) cannot be
 * linearized; without it every key linearizes.
 */
export function kvHistory(staleKey: string | null): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  const op = (process: number, f: string, key: string, value: string | null, result: string | null) => {
    const base = { f, key, process, node: null, faultEpoch: null };
    events.push({ ...base, index: events.length, type: 'invoke', value, time: events.length * 1000 });
    events.push({ ...base, index: events.length, type: 'ok', value: result, time: events.length * 1000 });
  };
  for (const key of ['1', '2', '3', '4']) {
    op(0, 'put', key, 'a', 'a');
    op(1, 'append', key, 'b', 'b');
    op(0, 'get', key, null, key === staleKey ? 'a' : 'ab');
  }
  return events;
}
