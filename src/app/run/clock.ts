/** Monotonic nanoseconds since `start()`: the time base of every history event. */
export class RunClock {
  private readonly origin = process.hrtime.bigint();
  /** ns since the clock was created. */
  now(): number {
    return Number(process.hrtime.bigint() - this.origin);
  }
}
