/** `faultline/history`: history events as recorded, and pairing invocations with their completions. */
export type { HistoryEvent, ProcessId } from '../core/history/event.ts';
export { pairEvents } from '../core/history/pair.ts';
export type { LoadOptions } from '../core/history/read.ts';
