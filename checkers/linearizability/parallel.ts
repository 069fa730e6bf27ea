import { monotonicMs } from '../../src/core/util/clock.ts';
import { startModuleWorker } from '../../src/core/util/module-worker.ts';
import type { ModelSpec } from './models/registry.ts';
import type { Partition } from './prepare.ts';
import type { SearchOptions } from './search.ts';
import type { EngineResult, PartitionSummary } from './summary.ts';
import type { WorkerJob, WorkerMessage } from './worker.ts';

function startWorker(job: WorkerJob) {
  return startModuleWorker(import.meta.url, 'worker', job);
}

/** Longest-processing-time assignment by op count: biggest partitions first, to the least loaded. */
function assign(partitions: readonly Partition[], workers: number): number[][] {
  const buckets = Array.from({ length: workers }, () => ({ load: 0, parts: [] as number[] }));
  const order = partitions
    .map((_, i) => i)
    .sort((a, b) => (partitions[b]?.ops.length ?? 0) - (partitions[a]?.ops.length ?? 0));
  for (const i of order) {
    const target = buckets.reduce((best, b) => (b.load < best.load ? b : best));
    target.parts.push(i);
    target.load += partitions[i]?.ops.length ?? 0;
  }
  // Within a worker keep key order, so its round-robin is deterministic.
  return buckets.map((b) => b.parts.sort((x, y) => x - y)).filter((p) => p.length > 0);
}

/**
 * Check partitions on worker threads. The first illegal partition raises a shared flag that every
 * worker polls between slices; all partitions proven illegal before they stopped are reported.
 */
export async function checkPartitionsInWorkers(
  spec: ModelSpec,
  partitions: readonly Partition[],
  workers: number,
  deadline: number,
  signal: AbortSignal | undefined,
  searchOptions: SearchOptions = {},
): Promise<EngineResult> {
  const cancelBuffer = new SharedArrayBuffer(4);
  const cancel = new Int32Array(cancelBuffer);
  const deadlineEpochMs = Number.isFinite(deadline)
    ? Date.now() + (deadline - monotonicMs())
    : Number.POSITIVE_INFINITY;
  const summaries: (PartitionSummary | undefined)[] = new Array(partitions.length);
  let timedOut = false;
  const onAbort = () => Atomics.store(cancel, 0, 2);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(
      assign(partitions, workers).map(
        (indices) =>
          new Promise<void>((resolve, reject) => {
            const parts = indices.map((index) => ({
              index,
              ops: (partitions[index] as Partition).ops.data(),
            }));
            const worker = startWorker({ spec, parts, deadlineEpochMs, cancel: cancelBuffer, searchOptions });
            let finished = false;
            worker.on('message', (m: WorkerMessage) => {
              if (m.kind === 'result') {
                summaries[m.index] = m.summary;
                if (m.summary.status === 'illegal') Atomics.store(cancel, 0, 1);
                return;
              }
              for (const r of m.rest) summaries[r.index] = r.summary;
              if (m.timedOut) timedOut = true;
              finished = true;
              void worker.terminate();
              resolve();
            });
            worker.on('error', reject);
            worker.on('exit', (code) => {
              if (!finished)
                reject(new Error(`linearizability worker exited with code ${code} before reporting`));
            });
          }),
      ),
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return {
    summaries: summaries.map((s, i) => {
      if (!s) throw new Error(`linearizability worker lost partition ${i}`);
      return s;
    }),
    timedOut,
    aborted: Atomics.load(cancel, 0) === 2,
  };
}
