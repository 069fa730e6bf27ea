/**
 * Milliseconds on the monotonic clock, for budgets and durations inside one process. Not the global
 * `performance.now()`: in Node 20 its first use loads `perf_hooks` and eleven internal modules, a
 * measurable part of `faultline check`'s start-up for nothing a budget needs. The origin is arbitrary:
 * compare values from this function only with each other.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
