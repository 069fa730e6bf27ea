/**
 * `faultline/history`: history events as recorded, pairing invocations with their completions, and
 * `CompactValue`, a structured value read in place from the compact tree a large file was scanned into
 * (what a checker's stream form gets when it sets `OpSink.compactValues`), with its node kinds.
 */
export {
  CompactValue,
  TREE_INT,
  TREE_LIST,
  TREE_NULL,
  TREE_STRING,
} from '../core/history/compact-value.ts';
export type { HistoryEvent, ProcessId } from '../core/history/event.ts';
export { pairEvents } from '../core/history/pair.ts';
export type { LoadOptions } from '../core/history/read.ts';
