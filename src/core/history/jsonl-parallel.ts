import { fileInputError } from '../util/errors.ts';
import { startModuleWorker } from '../util/module-worker.ts';
import type { HistoryEvent } from './event.ts';
import { EventColumnsDecoder, EventColumnsEncoder, hasExtraFields, isCompactTree } from './event-columns.ts';
import { DEFAULT_MAX_LINE_BYTES, indexError, type JsonlReadOptions, lastLine, parseLines } from './jsonl.ts';
import { EventLineScanner } from './jsonl-scan.ts';
import {
  closeSegments,
  openSegments,
  readSegment,
  SEGMENT_BYTES,
  type SegmentBlock,
  SegmentBuffer,
  segmentBlocks,
  segmentColumnBlocks,
  segmentCount,
} from './jsonl-segments.ts';
import type { JsonlWorkerJob, JsonlWorkerMessage } from './jsonl-worker.ts';

/** Segments the worker may have parsed ahead of the consumer. */
const AHEAD = 4;

/**
 * Which segments the worker parses: two of every three. This thread parses the third and also decodes
 * the worker's columns and runs the caller's work on every batch, so the split keeps both busy.
 */
function workerOwns(k: number): boolean {
  return k % 3 !== 0;
}

/**
 * Whether parsing on two threads pays for this file, judged on its first segment. Events cross
 * threads as columns, where a structured value that is not a compact tree (an object, a list holding
 * decimals or booleans) travels as JSON text, written once and parsed again here once per distinct
 * value; an event with extra fields travels whole (cloned). Both cost about what parsing did, so a
 * history whose values are mostly such distinct structures or whose events carry extra fields reads
 * faster on one thread; one whose values repeat (registers, counters, cas pairs) or are compact trees
 * (list-append and rw-register transactions) reads faster on two.
 */
export function parallelPays(file: string, size: number, segmentBytes = SEGMENT_BYTES): boolean {
  let fd: number;
  try {
    fd = openSegments(file);
  } catch {
    return false;
  }
  try {
    const distinct = new Set<string>();
    let events = 0;
    let costly = 0;
    for (const block of segmentBlocks(file, readSegment(fd, file, 0, size, segmentBytes))) {
      for (const ev of block.events) {
        events++;
        if (hasExtraFields(ev)) costly++;
        else if (ev.value !== null && typeof ev.value === 'object' && !isCompactTree(ev.value)) {
          const text = JSON.stringify(ev.value);
          if (!distinct.has(text)) {
            distinct.add(text);
            costly++;
          }
        }
      }
    }
    return events > 0 && costly * 16 <= events;
  } catch {
    return false; // the sequential reader will say what is wrong
  } finally {
    closeSegments(fd);
  }
}

/**
 * {@link readJsonlBatches} (./jsonl.ts) for a large file, parsed by this thread and a worker thread
 * together (./jsonl-segments.ts); on two cores that roughly halves the time to read, and overlaps it
 * with what the caller does with each batch. The worker's events arrive as columns
 * (./event-columns.ts). The same events in the same order; the same errors: any segment that fails is
 * read again here with the lines and index before it known, so the error is exactly the one the
 * sequential reader gives, and it comes after every event before it. The same torn-tail handling.
 */
export async function* readJsonlBatchesInWorker(
  file: string,
  size: number,
  opts: JsonlReadOptions = {},
  segmentBytes = SEGMENT_BYTES,
): AsyncGenerator<HistoryEvent[]> {
  const count = segmentCount(size, segmentBytes);
  const owned: number[] = [];
  for (let k = 0; k < count; k++) if (workerOwns(k)) owned.push(k);
  const cap = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const job: JsonlWorkerJob = { file, size, segmentBytes, maxLineBytes: cap, segments: owned, ahead: AHEAD };
  const worker = owned.length > 0 ? startModuleWorker(import.meta.url, 'jsonl-worker', job) : undefined;
  const arrived = new Map<number, JsonlWorkerMessage>();
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  worker?.on('message', (m: JsonlWorkerMessage) => {
    arrived.set(m.k, m);
    notify();
  });
  worker?.on('error', (err) => {
    failure = err;
    notify();
  });
  // A worker that ends without having posted what it owns would otherwise leave this thread waiting.
  worker?.on('exit', (code) => {
    failure ??= new Error(`${file}: the reader thread ended early (exit code ${code})`);
    notify();
  });
  const views = opts.compactValues === true;
  const decoder = new EventColumnsDecoder(views);
  const ownEncoder = new EventColumnsEncoder();
  const ownScanner = new EventLineScanner(ownEncoder);
  const ownDecoder = new EventColumnsDecoder(views);
  const ownBytes = new SegmentBuffer();
  let fd: number;
  try {
    fd = openSegments(file);
  } catch (err) {
    await worker?.terminate();
    throw fileInputError(file, err);
  }
  let lineOffset = 0;
  let next = 0;
  /** Reads segment k here with what precedes it known: throws the sequential reader's error. */
  function reread(k: number, why: string): never {
    const seg = readSegment(fd, file, k, size, segmentBytes, cap);
    parseLines(seg.body, seg.lines, seg.longest, file, lineOffset, next);
    throw new Error(`${file}: segment ${k} failed to parse on the reader thread (${why}) but not here`);
  }
  /** One block's events in order: checks the segment's first index, counts lines. */
  function* take(block: SegmentBlock): Generator<HistoryEvent[]> {
    const first = block.events[0];
    if (first !== undefined && first.index !== next)
      throw indexError(file, lineOffset + block.firstEventLine, next, first.index);
    next += block.events.length;
    lineOffset += block.lines;
    if (block.events.length > 0) yield block.events;
  }
  try {
    for (let k = 0; k < count; k++) {
      let tail: string | null;
      if (!workerOwns(k)) {
        const atStart = { lineOffset, next };
        try {
          // Scanned into columns and decoded here too: for lines in the scanner's grammar that costs
          // about half of parsing them.
          const segment = segmentColumnBlocks(
            fd,
            file,
            k,
            size,
            segmentBytes,
            cap,
            ownScanner,
            ownEncoder,
            ownBytes,
          );
          for (let r = segment.next(); ; r = segment.next()) {
            if (r.done) {
              tail = r.value;
              break;
            }
            const b = r.value;
            yield* take({
              events: ownDecoder.decode(b.columns),
              lines: b.lines,
              firstEventLine: b.firstEventLine,
            });
          }
        } catch (err) {
          // Whatever failed (invalid text, a bad line, an index out of sequence), reading the segment
          // the ordinary way names it.
          ({ lineOffset, next } = atStart);
          reread(k, err instanceof Error ? err.message : String(err));
        }
      } else {
        let m = arrived.get(k);
        while (m === undefined) {
          if (failure) throw failure;
          await new Promise<void>((r) => (wake = r));
          m = arrived.get(k);
        }
        arrived.delete(k);
        worker?.postMessage('more');
        if (m.kind === 'failed') reread(k, m.message);
        for (const b of m.blocks)
          yield* take({
            events: decoder.decode(b.columns),
            lines: b.lines,
            firstEventLine: b.firstEventLine,
          });
        tail = m.tail;
      }
      if (tail !== null) {
        const last = lastLine(tail, file, lineOffset + 1, next, opts);
        if (last !== undefined) yield [last];
      }
    }
  } catch (err) {
    throw fileInputError(file, err);
  } finally {
    closeSegments(fd);
    worker?.removeAllListeners('exit');
    await worker?.terminate();
  }
}
