import { z } from 'zod';

/**
 * What the recorder's clock actually did during one run (clock.json in the run directory): RF5 and WO9
 * judge these readings, not a declaration. `regressions` counts readings that went backwards (a
 * monotonic source never does); `wallJumps` are the moments the wall clock moved against the monotonic
 * one by more than WALL_JUMP_MS between two readings (NTP steps, settime on the control host): the
 * history does not use the wall clock, but a jump is reported so a reader can see it happened.
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

/** A wall-clock move against the monotonic clock larger than this between two readings is a jump. */
export const WALL_JUMP_MS = 1000;
/** Jumps kept for the evidence (a clock nemesis on the control host could make many). */
const MAX_JUMPS = 20;

/** Monotonic nanoseconds since `start()`: the time base of every history event. */
export class RunClock {
  /** What the recorder reads its times from; clock.json records it with the readings that check it. */
  static readonly source = { kind: 'monotonic', api: 'process.hrtime.bigint' } as const;
  private readonly origin = process.hrtime.bigint();
  private readonly wallOrigin = Date.now();
  private last = 0;
  private count = 0;
  private regressions = 0;
  /** Wall minus monotonic at the previous reading, ms. */
  private offsetMs = 0;
  private readonly jumps: { atS: number; byMs: number }[] = [];

  /** ns since the clock was created. */
  now(): number {
    const t = Number(process.hrtime.bigint() - this.origin);
    const offset = Date.now() - this.wallOrigin - t / 1e6;
    this.count++;
    if (t < this.last) this.regressions++;
    if (Math.abs(offset - this.offsetMs) > WALL_JUMP_MS && this.jumps.length < MAX_JUMPS)
      this.jumps.push({ atS: Math.round(t / 1e6) / 1e3, byMs: Math.round(offset - this.offsetMs) });
    this.offsetMs = offset;
    this.last = Math.max(this.last, t);
    return t;
  }

  /** The readings so far, for clock.json. */
  readings(): ClockReadings {
    return {
      source: { ...RunClock.source },
      readings: this.count,
      regressions: this.regressions,
      spanS: Math.round(this.last / 1e6) / 1e3,
      wallDriftMs: Math.round(this.offsetMs),
      wallJumps: [...this.jumps],
    };
  }
}
