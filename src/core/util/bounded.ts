import { log } from './log.ts';

/**
 * The one bound on a call into code faultline does not own (a plugin's client or database hook): the
 * call gets `ms`, and when it has not settled by then it is abandoned: the returned promise rejects with
 * a `CallTimeoutError` naming the call, and the late outcome, if it ever comes, is dropped. The call
 * itself cannot be cancelled (JavaScript has no way to stop a promise), but the run no longer waits for it,
 * so a `close()` that never resolves cannot hold a run past its deadline.
 */
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what}: no answer within ${formatMs(ms)}; abandoned`);
  }
}

export function bounded<T>(what: string, ms: number, call: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<never>((_, reject) => {
    // Not unref'd: while the run waits on this call, the timer is what keeps the process alive (a
    // never-settling promise holds nothing), and it is cleared as soon as the race settles.
    timer = setTimeout(() => reject(new CallTimeoutError(what, ms)), ms);
  });
  let p: Promise<T>;
  try {
    p = Promise.resolve(call());
  } catch (err) {
    p = Promise.reject(err);
  }
  // A late rejection of an abandoned call is not an unhandled rejection.
  p.catch(() => {});
  return Promise.race([p, overrun]).finally(() => clearTimeout(timer));
}

/** `bounded`, but an overrun or a failure is logged with its reason and swallowed (cleanup steps). */
export async function boundedQuietly(what: string, ms: number, call: () => Promise<unknown>): Promise<void> {
  try {
    await bounded(what, ms, call);
  } catch (err) {
    const overran = err instanceof CallTimeoutError;
    log().warn(
      { err: err instanceof Error ? err.message : String(err) },
      `${what}: ${overran ? 'abandoned' : 'failed'}`,
    );
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
