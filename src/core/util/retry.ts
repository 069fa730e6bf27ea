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

/** Poll until `check` returns a value other than undefined, or the attempts run out (then undefined). */
export async function pollUntil<T>(
  check: () => Promise<T | undefined>,
  o: { attempts: number; delayMs: number },
): Promise<T | undefined> {
  for (let i = 0; i < o.attempts; i++) {
    const v = await check();
    if (v !== undefined) return v;
    if (i + 1 < o.attempts) await sleep(o.delayMs);
  }
  return undefined;
}
