/**
 * One line of a faultline history (history.jsonl). Jepsen's model: a client op is an `invoke` event
 * followed by exactly one completion (`ok`, `fail` or `info`) from the same process; `info` (or no
 * completion at all) means the outcome is unknown, the op stays open forever and the process is retired.
 *
 * Values are plain JSON. EDN keywords become strings without the colon (`:append` → "append"); the EDN
 * codec in ./edn.ts documents how sets and other non-JSON values are tagged so round trips are lossless.
 */
export const EVENT_TYPES = ['invoke', 'ok', 'fail', 'info'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type CompletionType = Exclude<EventType, 'invoke'>;

/** A client process id, or the nemesis. */
export type ProcessId = number | 'nemesis';

/**
 * One event. Written out by hand rather than inferred from the zod schema (./event-schema.ts) so that
 * reading a history does not load zod: commands like `faultline check` start in a fraction of the time.
 * The schema states the same shape and a compile-time check there keeps the two equal.
 */
export interface HistoryEvent {
  /** Position in the history, 0-based, strictly increasing by one. */
  index: number;
  type: EventType;
  /** The operation's function, e.g. "read", "write", "cas", "txn", "start-partition". */
  f: string;
  value: unknown;
  process: ProcessId;
  /** Nanoseconds since the run started, from a monotonic clock. */
  time: number;
  /** The node this op was sent to, or null when none applies. */
  node: string | null;
  key?: string;
  error?: unknown;
  /** Ids of the fault windows active when the op was invoked; null when none was. */
  faultEpoch: string[] | null;
  /** Extra fields beyond the named ones are kept verbatim (Jepsen histories carry many). */
  [extra: string]: unknown;
}

/** Field names with meaning to faultline; anything else on an event is an extra field. */
export const CORE_FIELDS: ReadonlySet<string> = new Set([
  'index',
  'type',
  'f',
  'value',
  'process',
  'time',
  'node',
  'key',
  'error',
  'faultEpoch',
]);

/** An imported event's extra field listing the core fields its source lacked (see ./jepsen.ts). */
export const ABSENT = '#absent';

/** The core fields an imported event had filled in by default (empty for native events). */
export function absentFields(ev: HistoryEvent): readonly string[] {
  const a = (ev as Record<string, unknown>)[ABSENT];
  return Array.isArray(a) ? (a as string[]) : [];
}
