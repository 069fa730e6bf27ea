import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from './errors.ts';
import { log } from './log.ts';

/**
 * The one retry helper: a bounded number of attempts, an explicit rule for which errors are worth
 * another attempt (everything else is thrown at once), and a growing pause between attempts. Used where
 * repeating is known to be harmless: idempotent remote steps after a lost SSH channel, a leader lookup
 * during an election.
 */
export interface RetryOptions {
  /** Total attempts, the first included (≥ 1). */
  attempts: number;
  /** Is this error worth another attempt? Errors it rejects are thrown immediately. */
  retryable: (err: unknown) => boolean;
  /** Pause before attempt k+1 (k = 1, 2 …), ms. Default 500 × k. */
  delayMs?: (attempt: number) => number;
  /** Logged on each retry, so a flaky step is visible. */
  what?: string;
  /** Stops retrying (the last error is thrown). */
  signal?: AbortSignal;
}

export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  const attempts = Math.max(1, Math.floor(o.attempts));
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !o.retryable(err) || o.signal?.aborted) throw err;
      const wait = o.delayMs ? o.delayMs(attempt) : 500 * attempt;
      if (o.what) log().warn({ attempt, err: errorMessage(err) }, `${o.what}: retrying`);
      await sleep(wait);
    }
  }
}

export interface PollOptions {
  /** Give up after this long (Infinity: until `done` or `signal`). */
  timeoutMs: number;
  /** The pause after each read, ms; with `periodic`, the time from one read's start to the next. */
  stepMs: number;
  /** Reads start every `stepMs` (a sampler's pace): a slow read shortens the pause after it. */
  periodic?: boolean;
  /** Stops the polling: no read starts once it is aborted, and a pause in progress ends at once. */
  signal?: AbortSignal;
}

/**
 * The one polling loop: read until `done` accepts the value or `timeoutMs` has passed, pausing `stepMs`
 * between reads. Returns the last value read, so a caller whose time ran out can say what it last saw.
 * The clock is monotonic (a clock fault on the control host must not stretch or cut a wait).
 */
export async function pollFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  o: PollOptions,
): Promise<T> {
  const end = performance.now() + o.timeoutMs;
  for (;;) {
    const started = performance.now();
    const value = await read();
    if (done(value) || performance.now() > end || o.signal?.aborted) return value;
    const pause = o.periodic ? Math.max(0, o.stepMs - (performance.now() - started)) : o.stepMs;
    // An abort during the pause rejects it: that is the stop, not an error.
    await sleep(pause, undefined, o.signal && { signal: o.signal }).catch(() => undefined);
    if (o.signal?.aborted) return value;
  }
}

/** Poll a condition until it holds (true) or `timeoutMs` has passed (false). */
export function waitFor(pred: () => Promise<boolean>, timeoutMs: number, stepMs = 20): Promise<boolean> {
  return pollFor(pred, (ok) => ok, { timeoutMs, stepMs });
}
