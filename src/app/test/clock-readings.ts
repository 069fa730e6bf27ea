import type { ClockReadings } from '../verdict/run-readings.ts';

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
