/** Monotonic nanoseconds since `start()`: the time base of every history event. */
export class RunClock {
  /** What the recorder reads its times from, written to test.json so the audit reads it, not assumes it. */
  static readonly source = { kind: 'monotonic', api: 'process.hrtime.bigint' } as const;
  private readonly origin = process.hrtime.bigint();
  /** ns since the clock was created. */
  now(): number {
    return Number(process.hrtime.bigint() - this.origin);
  }
}
