import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import type { HistoryEvent } from './event.ts';
import { checkLineBytes, DEFAULT_MAX_LINE_BYTES, lineStats, lineTooLong, parseLines } from './jsonl.ts';
import { firstInvalid, TORN_CHARACTER, utf8Error } from './utf8.ts';

/**
 * A JSONL file cut into segments of about {@link SEGMENT_BYTES} that two threads can read and parse
 * independently. Segment k holds the lines that *start* in bytes [k·S, (k+1)·S): a reader finds its
 * segment's bounds from the file alone (the first newline at or after k·S − 1, and the one at or after
 * (k+1)·S − 1), so no thread needs the text before its segment. A newline never falls inside a UTF-8
 * sequence, so every segment decodes on its own.
 *
 * Parsing a segment takes its first event's index as given; the thread that puts segments back in
 * order checks it against the events before and turns segment lines into file lines.
 */
export const SEGMENT_BYTES = 2 << 20;

/** A segment's complete lines (without the last newline), and after the file's last newline any text. */
export interface SegmentText {
  body: string;
  /** Lines in `body` (0 for a segment without a line of its own). */
  lines: number;
  longest: number;
  /** Text after the file's last newline: only in the last segment, else null. */
  tail: string | null;
}

/** Part of a segment: its events, its line count and the 1-based line of its first event (0: none). */
export interface SegmentBlock {
  events: HistoryEvent[];
  lines: number;
  firstEventLine: number;
}

/**
 * Blocks parsed at a time within a segment: small enough that a block's events die young (a whole
 * segment's events alive at once would be promoted by the garbage collector, which costs more than
 * parsing them).
 */
const BLOCK_BYTES = 1 << 16;

export function segmentCount(size: number, segmentBytes = SEGMENT_BYTES): number {
  return Math.max(1, Math.ceil(size / segmentBytes));
}

/** Opens `file` for {@link readSegment} (the caller closes it). */
export function openSegments(file: string): number {
  return openSync(file, 'r');
}

export { closeSync as closeSegments };

/**
 * Reads and decodes segment `k` of a file of `size` bytes. Throws the same InputErrors as the
 * sequential reader (invalid UTF-8, a line over the cap, naming the file line); a file that ends inside
 * a UTF-8 sequence ends with {@link TORN_CHARACTER}, as there.
 */
export function readSegment(
  fd: number,
  file: string,
  k: number,
  size: number,
  segmentBytes = SEGMENT_BYTES,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): SegmentText {
  // A line crossing a segment bound is looked for its end at most the cap ahead: a file that is one
  // huge line is refused after reading the cap, not read whole.
  const bound = (from: number) => {
    const at = lineStartAtOrAfter(fd, from, size, maxLineBytes + 1);
    if (at === -1) throw lineTooLong(file, lineNumberAt(fd, from, size), maxLineBytes);
    return at;
  };
  const begin = k === 0 ? 0 : bound(k * segmentBytes - 1);
  const limit = (k + 1) * segmentBytes;
  const end = limit >= size ? size : bound(limit - 1);
  if (end <= begin) return { body: '', lines: 0, longest: 0, tail: null };
  const buf = Buffer.allocUnsafe(end - begin);
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, begin + got);
    if (n === 0) break;
    got += n;
  }
  let text: string;
  const last = end >= size;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf.subarray(0, got));
  } catch {
    // Only the file's end may cut a sequence short (a killed writer); anywhere else it is invalid text.
    const complete = last ? completeCharacters(buf.subarray(0, got)) : undefined;
    if (complete === undefined)
      throw utf8Error(file, readFileSync(file), begin + firstInvalid(buf.subarray(0, got)));
    text = complete + TORN_CHARACTER;
  }
  const lastNl = text.lastIndexOf('\n');
  const tail = last ? (lastNl + 1 < text.length ? text.slice(lastNl + 1) : '') : null;
  if (lastNl === -1) return { body: '', lines: 0, longest: 0, tail: tail ?? text };
  const body = text.slice(0, lastNl);
  const { lines, longest } = lineStats(body);
  if (longest * 3 > maxLineBytes || (tail !== null && tail.length * 3 > maxLineBytes)) {
    const before = lineNumberAt(fd, begin, size) - 1;
    checkLineBytes(body, longest, file, before, maxLineBytes);
    if (tail !== null && Buffer.byteLength(tail) > maxLineBytes)
      throw lineTooLong(file, before + lines + 1, maxLineBytes);
  }
  return { body, lines, longest, tail };
}

/**
 * The text of `buf`'s complete characters when it is valid UTF-8 cut short at its end (more bytes could
 * complete it), else undefined.
 */
function completeCharacters(buf: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf, { stream: true });
  } catch {
    return undefined;
  }
}

/** The 1-based line of the byte at `offset` (error paths only: it reads the file up to there). */
function lineNumberAt(fd: number, offset: number, size: number): number {
  const buf = Buffer.allocUnsafe(1 << 16);
  let line = 1;
  for (let at = 0; at < Math.min(offset, size); ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, offset - at), at);
    if (n === 0) break;
    for (let i = buf.indexOf(10); i !== -1 && i < n; i = buf.indexOf(10, i + 1)) line++;
    at += n;
  }
  return line;
}

/**
 * Parses a segment read by {@link readSegment} a block of lines at a time, the first event's index
 * taken as given; `lines` of the blocks add up to the segment's.
 */
export function* segmentBlocks(file: string, seg: SegmentText): Generator<SegmentBlock> {
  const body = seg.body;
  if (seg.lines === 0) return;
  let next: number | null = null;
  let start = 0;
  while (start <= body.length) {
    let end = body.length;
    if (body.length - start > BLOCK_BYTES) {
      const nl = body.indexOf('\n', start + BLOCK_BYTES);
      if (nl !== -1) end = nl;
    }
    const block = body.slice(start, end);
    const { lines, longest } = lineStats(block);
    const { events, firstEventLine } = parseLines(block, lines, longest, file, 0, next);
    const first = events[0];
    if (first !== undefined) next = (next ?? first.index) + events.length;
    yield { events, lines, firstEventLine };
    start = end + 1;
  }
}

/**
 * The offset just after the first newline at or after `from`, or `size` when there is none; -1 when
 * none is within `within` bytes of `from`.
 */
function lineStartAtOrAfter(
  fd: number,
  from: number,
  size: number,
  within = Number.POSITIVE_INFINITY,
): number {
  const buf = Buffer.allocUnsafe(1 << 16);
  let at = from;
  while (at < size) {
    if (at - from >= within) return -1;
    const n = readSync(fd, buf, 0, buf.length, at);
    if (n === 0) break;
    const i = buf.subarray(0, n).indexOf(10);
    if (i >= 0) return at + i + 1;
    at += n;
  }
  return size;
}
