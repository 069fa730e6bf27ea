import { z } from 'zod';

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

export const processIdSchema = z.union([z.number().int().nonnegative(), z.literal('nemesis')]);

export const historyEventSchema = z.looseObject({
  /** Position in the history, 0-based, strictly increasing by one. */
  index: z.number().int().nonnegative(),
  type: z.enum(EVENT_TYPES),
  /** The operation's function, e.g. "read", "write", "cas", "txn", "start-partition". */
  f: z.string(),
  value: z.unknown(),
  process: processIdSchema,
  /** Nanoseconds since the run started, from a monotonic clock. */
  time: z.number().nonnegative(),
  /** The node this op was sent to, or null when none applies. */
  node: z.string().nullable(),
  key: z.string().optional(),
  error: z.unknown().optional(),
  /** Ids of the fault windows active when the op was invoked; null when none was. */
  faultEpoch: z.array(z.string()).nullable(),
});

/** Extra fields beyond the named ones are kept verbatim (Jepsen histories carry many). */
export type HistoryEvent = z.infer<typeof historyEventSchema> & { value: unknown };

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
