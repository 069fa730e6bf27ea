import { z } from 'zod';
import { EVENT_TYPES, type HistoryEvent } from './event.ts';

/**
 * The zod statement of a history event (./event.ts): what the hand-rolled reader check (./validate.ts)
 * must accept, kept as the reference its property test compares against. Readers do not import it.
 */
export const processIdSchema = z.union([z.number().int().nonnegative(), z.literal('nemesis')]);

export const historyEventSchema = z.looseObject({
  /** Position in the history, 0-based, strictly increasing by one. */
  index: z.number().int().nonnegative(),
  type: z.enum(EVENT_TYPES),
  /** The operation's function, e.g. "read", "write", "cas", "txn", "start-partition". */
  f: z.string(),
  /** A missing value is read as null (the readers fill it in), so the reference accepts its absence too. */
  value: z.unknown().default(null),
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

/** Compile-time: the schema's type and the hand-written HistoryEvent are the same shape. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SchemaEvent = z.infer<typeof historyEventSchema>;
const schemaMatchesEvent: Same<SchemaEvent, HistoryEvent> = true;
void schemaMatchesEvent;
