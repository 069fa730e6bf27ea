import { parentPort, workerData } from 'node:worker_threads';
import { monotonicMs } from '../../src/core/util/clock.ts';
import { createModel, loadModel, type ModelSpec } from './models/registry.ts';
import { EncodedOps, type EncodedOpsData } from './op-columns.ts';
import { PartitionSearch, type SearchOptions, SLICE_ITERATIONS } from './search.ts';
import { type PartitionSummary, summarizeSearch } from './summary.ts';

/**
 * Worker-thread side of the parallel check: searches the partitions it was given, round-robin in
 * slices like the inline engine, and stops when the shared cancel flag is raised (another partition
 * was illegal, or the caller aborted) or the deadline passes.
 */
export interface WorkerJob {
  spec: ModelSpec;
  parts: { index: number; ops: EncodedOpsData }[];
  /** Wall-clock deadline (Date.now() scale); Infinity for none. */
  deadlineEpochMs: number;
  /** Int32 flag: 0 run, 1 an illegal partition was found, 2 aborted. */
  cancel: SharedArrayBuffer;
  searchOptions: SearchOptions;
}

export type WorkerMessage =
  | { kind: 'result'; index: number; summary: PartitionSummary }
  | { kind: 'done'; rest: { index: number; summary: PartitionSummary }[]; timedOut: boolean };

function runJob(job: WorkerJob, post: (m: WorkerMessage) => void): void {
  const model = createModel(job.spec.name, job.spec.options);
  if (!model) throw new Error(`worker: unknown model ${job.spec.name}`);
  const cancel = new Int32Array(job.cancel);
  const searches = job.parts.map((p) => ({
    index: p.index,
    search: new PartitionSearch(model, new EncodedOps(p.ops), job.searchOptions),
    ms: 0,
  }));
  let running = searches;
  let timedOut = false;
  while (running.length > 0) {
    for (const r of running) {
      const t0 = monotonicMs();
      const status = r.search.run(SLICE_ITERATIONS);
      r.ms += monotonicMs() - t0;
      if (status !== 'running') {
        if (status === 'illegal') Atomics.store(cancel, 0, 1);
        post({ kind: 'result', index: r.index, summary: summarizeSearch(r.search, model, status, r.ms) });
      }
    }
    running = running.filter((r) => r.search.status === 'running');
    if (Atomics.load(cancel, 0) !== 0) break;
    if (Date.now() >= job.deadlineEpochMs) {
      timedOut = true;
      break;
    }
  }
  const flag = Atomics.load(cancel, 0);
  post({
    kind: 'done',
    timedOut,
    rest: running.map((r) => ({
      index: r.index,
      summary: summarizeSearch(r.search, model, flag === 1 ? 'cancelled' : 'unknown', r.ms),
    })),
  });
}

if (parentPort && workerData && (workerData as { job?: WorkerJob }).job) {
  const port = parentPort;
  const job = (workerData as { job: WorkerJob }).job;
  await loadModel(job.spec.name);
  runJob(job, (m) => port.postMessage(m));
}
