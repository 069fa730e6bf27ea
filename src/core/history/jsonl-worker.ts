import { parentPort, workerData } from 'node:worker_threads';
import { EventColumnsEncoder } from './event-columns.ts';
import { EventLineScanner } from './jsonl-scan.ts';
import {
  type ColumnBlock,
  closeSegments,
  openSegments,
  SegmentBuffer,
  segmentColumnBlocks,
} from './jsonl-segments.ts';

/**
 * Worker-thread side of {@link readJsonlBatchesInWorker} (./jsonl-parallel.ts): reads and parses the
 * segments it owns (./jsonl-segments.ts) in order and posts each one's events as columns, block by
 * block (scanned straight into columns where the lines allow, ./jsonl-scan.ts), at most `ahead`
 * segments before the consumer has taken them.
 */
export interface JsonlWorkerJob {
  file: string;
  size: number;
  segmentBytes: number;
  maxLineBytes: number;
  /** The segments this thread parses, in order. */
  segments: number[];
  ahead: number;
}

export type JsonlWorkerMessage =
  | { kind: 'segment'; k: number; blocks: ColumnBlock[]; tail: string | null }
  /** The segment could not be read or parsed; the consumer reads it again itself to say why. */
  | { kind: 'failed'; k: number; message: string };

const port = parentPort;
if (!port) throw new Error('jsonl-worker: not in a worker thread');
const job = (workerData as { job: JsonlWorkerJob }).job;

let credits = job.ahead;
let wake: (() => void) | undefined;
port.on('message', () => {
  credits++;
  wake?.();
});

async function run(): Promise<void> {
  const encoder = new EventColumnsEncoder();
  const scanner = new EventLineScanner(encoder);
  const bytes = new SegmentBuffer();
  const fd = openSegments(job.file);
  try {
    for (const k of job.segments) {
      while (credits <= 0) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      credits--;
      const blocks: ColumnBlock[] = [];
      let tail: string | null;
      try {
        const segment = segmentColumnBlocks(
          fd,
          job.file,
          k,
          job.size,
          job.segmentBytes,
          job.maxLineBytes,
          scanner,
          encoder,
          bytes,
        );
        for (let r = segment.next(); ; r = segment.next()) {
          if (r.done) {
            tail = r.value;
            break;
          }
          blocks.push(r.value);
        }
      } catch (err) {
        port?.postMessage({ kind: 'failed', k, message: err instanceof Error ? err.message : String(err) });
        return;
      }
      port?.postMessage(
        { kind: 'segment', k, blocks, tail } satisfies JsonlWorkerMessage,
        blocks.flatMap((b) => EventColumnsEncoder.transferList(b.columns)),
      );
    }
  } finally {
    closeSegments(fd);
  }
}

void run();
