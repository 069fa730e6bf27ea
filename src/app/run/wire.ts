import { z } from 'zod';

/**
 * What the client put on the wire during the workload (wire.json in the run directory), counted where
 * the request leaves the client (one HTTP request per fetch), not where the history records an op:
 * WO8 compares it with the ops of the history. `perOp` is how many requests one op sends by design for
 * this workload (null when it varies, e.g. a read-then-guarded-write loop): only then can a surplus
 * be told apart from the design.
 */
export const wireCountSchema = z.object({
  requests: z.number().int().nonnegative(),
  perOp: z.number().positive().nullable(),
  what: z.string(),
});
export type WireCount = z.infer<typeof wireCountSchema>;
