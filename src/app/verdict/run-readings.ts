import { z } from 'zod';

// The recorder's own readings of a run (clock.json, wire.json in the run directory): written by the test
// run (src/app/test/), read back as scenario evidence that the verdict judges.

/**
 * What the recorder's clock actually did during one run (clock.json in the run directory): RF5 and WO9
 * judge these readings, not a declaration. `regressions` counts readings that went backwards (a
 * monotonic source never does); `wallJumps` are the moments the wall clock moved against the monotonic
 * one by more than WALL_JUMP_MS (src/app/test/clock-readings.ts) between two readings (NTP steps, settime on the
 * control host): the history does not use the wall clock, but a jump is reported so a reader can see it.
 */
export const clockReadingsSchema = z.object({
  source: z.object({ kind: z.enum(['monotonic', 'wall']), api: z.string() }),
  readings: z.number().int().nonnegative(),
  regressions: z.number().int().nonnegative(),
  /** Monotonic seconds covered by the readings (first to last). */
  spanS: z.number().nonnegative(),
  /** Wall-clock elapsed minus monotonic elapsed over the span, ms (drift plus every jump). */
  wallDriftMs: z.number(),
  wallJumps: z.array(z.object({ atS: z.number(), byMs: z.number() })).default([]),
});
export type ClockReadings = z.infer<typeof clockReadingsSchema>;

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
