import { appendFileSync } from 'node:fs';
import { readJsonLines } from '../../core/util/json-file.ts';
import { pollFor } from '../../core/util/retry.ts';
import type { RunClock } from './clock-readings.ts';

/**
 * The database's primaries over time: asked about once a second while the workload runs (one question
 * at a time, so a slow answer delays the next sample instead of piling them up), each answer a line of
 * `primaries.jsonl` on the run's clock. Failovers are counted from it, never assumed from the schedule.
 */
export interface PrimariesSample {
  /** Seconds from the start of the workload. */
  atS: number;
  primaries: string[];
}

export function startPrimariesSampler(
  path: string,
  clock: RunClock,
  ask: () => Promise<string[]>,
  everyMs = 1000,
): () => Promise<void> {
  const stop = new AbortController();
  const sample = async (): Promise<void> => {
    const primaries = await ask().catch(() => [] as string[]);
    if (stop.signal.aborted) return;
    const s: PrimariesSample = { atS: clock.now() / 1e9, primaries: [...primaries].sort() };
    appendFileSync(path, `${JSON.stringify(s)}\n`);
  };
  // Never done by itself: it samples at its pace until stopped.
  const loop = pollFor(sample, () => false, {
    timeoutMs: Number.POSITIVE_INFINITY,
    stepMs: everyMs,
    periodic: true,
    signal: stop.signal,
  });
  return async () => {
    stop.abort();
    await loop;
  };
}

export function readPrimariesSamples(path: string): PrimariesSample[] | null {
  // A torn last line (the run was killed mid-write) is skipped.
  const lines = readJsonLines(path);
  if (!lines) return null;
  const out: PrimariesSample[] = [];
  for (const { value } of lines) {
    const s = value as Partial<PrimariesSample> | null;
    if (typeof s?.atS === 'number' && Array.isArray(s.primaries)) out.push(s as PrimariesSample);
  }
  return out;
}

/**
 * Failovers: how often the set of primaries changed to a different non-empty set. A sample with no
 * primary (an election in progress, every member unreachable) is not a change by itself: A, none, A
 * is no failover; A, none, B is one.
 */
export function countFailovers(samples: readonly PrimariesSample[]): number {
  let last: string | null = null;
  let n = 0;
  for (const s of samples) {
    if (s.primaries.length === 0) continue;
    const key = s.primaries.join(',');
    if (last !== null && key !== last) n++;
    last = key;
  }
  return n;
}
