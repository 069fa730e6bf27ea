/**
 * Reducing a reproducible FAIL's fault schedule (spec §7 item 5, minimal causal sequence): from the full
 * ordered list of fault events, try each half (bisection), then drop single events, keeping a candidate
 * only when the failure still reproduces on a re-run. A fault kind is dropped only when the failure
 * reproduces without any event of that kind, so every kind the failure needs keeps at least one event.
 * Stops at a fixed point (removing any one event kills the repro) or when the re-run budget is spent.
 */
export interface ReductionResult<E> {
  events: E[];
  original: number;
  reruns: number;
  /** True when the budget ran out before the fixed point (the result is smaller, not minimal). */
  budgetExhausted: boolean;
  /** One line per attempt: which candidate, and whether it reproduced. */
  log: string[];
}

export async function reduceSchedule<E>(
  events: readonly E[],
  reproduces: (candidate: E[]) => Promise<boolean>,
  opts: { maxReruns: number; label?: (e: E) => string },
): Promise<ReductionResult<E>> {
  const label = opts.label ?? ((e: E) => String(e));
  let current = [...events];
  let reruns = 0;
  const log: string[] = [];
  const attempt = async (candidate: E[], what: string): Promise<boolean | null> => {
    if (reruns >= opts.maxReruns) return null;
    reruns++;
    const ok = await reproduces(candidate);
    log.push(
      `${what} [${candidate.map(label).join(' ') || 'no faults'}]: ${ok ? 'reproduced' : 'did not reproduce'}`,
    );
    return ok;
  };

  // Bisection: keep whichever half still fails, while one does.
  while (current.length > 1) {
    const mid = Math.ceil(current.length / 2);
    const halves = [current.slice(0, mid), current.slice(mid)];
    let kept = false;
    for (const [i, half] of halves.entries()) {
      const r = await attempt(half, `half ${i + 1} of ${current.length}`);
      if (r === null) return done(true);
      if (r) {
        current = half;
        kept = true;
        break;
      }
    }
    if (!kept) break;
  }

  // Single-event removal to a fixed point.
  let changed = true;
  while (changed) {
    changed = false;
    for (let i = 0; i < current.length; i++) {
      const candidate = current.filter((_, j) => j !== i);
      const r = await attempt(candidate, `without ${label(current[i] as E)}`);
      if (r === null) return done(true);
      if (r) {
        current = candidate;
        changed = true;
        break;
      }
    }
  }
  return done(false);

  function done(budgetExhausted: boolean): ReductionResult<E> {
    return { events: current, original: events.length, reruns, budgetExhausted, log };
  }
}

/** "N→k events over M re-runs" (the finding's reduction line). */
export function reductionLine(r: ReductionResult<unknown>): string {
  const tail = r.budgetExhausted ? ' (re-run budget spent before a fixed point)' : '';
  return `${r.original}→${r.events.length} events over ${r.reruns} re-runs${tail}`;
}
