import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import type { HistoryEvent } from './event.ts';
import { type EventColumns, type EventColumnsEncoder, F_INDEX } from './event-columns.ts';
import { checkLineBytes, DEFAULT_MAX_LINE_BYTES, lineStats, lineTooLong, parseLines } from './jsonl.ts';
import type { EventLineScanner } from './jsonl-scan.ts';
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

/** Segment k's bytes as read: its complete lines (each with its newline), or up to the file's end. */
export interface SegmentBytes {
  bytes: Buffer;
  /** Offset of its first byte in the file. */
  begin: number;
  /** Whether it reaches the file's end (the only segment that may end without a newline). */
  last: boolean;
}

/**
 * How far past a segment's nominal bound its newline is first looked for: one read covers the segment
 * and both bounds' lines when they are shorter than this (lines in histories are a few hundred bytes).
 */
const BOUND_PROBE_BYTES = 1 << 16;

/**
 * A buffer one reader reuses for segment after segment (what {@link readSegmentBytes} returns in it is
 * valid until the next read into it). A fresh buffer per segment cost more than reading into it: the
 * kernel maps and zeroes every page of a new buffer as it is first written, and the collector frees
 * them only later, so a 4 GB history was 4 GB of new pages.
 */
export class SegmentBuffer {
  bytes = Buffer.allocUnsafe(0);

  /** The buffer, with room for at least `n` bytes (its contents are not kept when it grows). */
  room(n: number): Buffer {
    if (this.bytes.length < n) this.bytes = Buffer.allocUnsafe(n);
    return this.bytes;
  }
}

/**
 * Reads segment `k` of a file of `size` bytes. Throws the sequential reader's error for a line over
 * the cap that crosses the segment's bounds. With `into`, the bytes are read into that reused buffer,
 * the segment and the lines at both of its bounds in one read when they fit.
 */
export function readSegmentBytes(
  fd: number,
  file: string,
  k: number,
  size: number,
  segmentBytes = SEGMENT_BYTES,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  into?: SegmentBuffer,
): SegmentBytes {
  // A line crossing a segment bound is looked for its end at most the cap ahead: a file that is one
  // huge line is refused after reading the cap, not read whole.
  const bound = (from: number) => {
    const at = lineStartAtOrAfter(fd, from, size, maxLineBytes + 1);
    if (at === -1) throw lineTooLong(file, lineNumberAt(fd, from, size), maxLineBytes);
    return at;
  };
  const limit = (k + 1) * segmentBytes;
  let begin: number;
  let end: number;
  // What is already in `into`: file bytes [readFrom, readFrom + readBytes).
  let readFrom = 0;
  let readBytes = 0;
  if (into) {
    // From the byte before the segment's nominal start (its line's newline may be that byte) to a probe
    // past its nominal end: the newline there ends its last line.
    readFrom = k === 0 ? 0 : k * segmentBytes - 1;
    const want = Math.max(0, Math.min(size, limit - 1 + BOUND_PROBE_BYTES) - readFrom);
    readBytes = readFully(fd, into.room(want), 0, want, readFrom);
    const buf = into.bytes;
    // A newline found within the first probe's reach of a bound is what lineStartAtOrAfter finds.
    const newlineAfter = (from: number) => {
      const reach = Math.min(readFrom + readBytes, from + BOUND_PROBE_BYTES);
      const i = buf.subarray(0, reach - readFrom).indexOf(10, from - readFrom);
      return i === -1 ? bound(from) : readFrom + i + 1;
    };
    begin = k === 0 ? 0 : newlineAfter(readFrom);
    end = limit >= size ? size : newlineAfter(limit - 1);
  } else {
    begin = k === 0 ? 0 : bound(k * segmentBytes - 1);
    end = limit >= size ? size : bound(limit - 1);
  }
  if (end <= begin) return { bytes: Buffer.alloc(0), begin, last: false };
  if (into && begin >= readFrom && end <= readFrom + readBytes)
    return { bytes: into.bytes.subarray(begin - readFrom, end - readFrom), begin, last: end >= size };
  const buf = into ? into.room(end - begin) : Buffer.allocUnsafe(end - begin);
  const got = readFully(fd, buf, 0, end - begin, begin);
  return { bytes: buf.subarray(0, got), begin, last: end >= size };
}

/** Reads `length` bytes at `position` into `buf` at `offset`, fewer only at the file's end. */
function readFully(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, offset + got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

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
  return decodeSegment(
    fd,
    file,
    readSegmentBytes(fd, file, k, size, segmentBytes, maxLineBytes),
    size,
    maxLineBytes,
  );
}

/** {@link readSegment}'s text from the segment's bytes. */
export function decodeSegment(
  fd: number,
  file: string,
  seg: SegmentBytes,
  size: number,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): SegmentText {
  const { bytes, begin, last } = seg;
  if (bytes.length === 0 && !last) return { body: '', lines: 0, longest: 0, tail: null };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    // Only the file's end may cut a sequence short (a killed writer); anywhere else it is invalid text.
    const complete = last ? completeCharacters(bytes) : undefined;
    if (complete === undefined) throw utf8Error(file, readFileSync(file), begin + firstInvalid(bytes));
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
  let next: number | null = null;
  for (const block of blockTexts(seg)) {
    const { events, firstEventLine } = parseLines(block.text, block.lines, block.longest, file, 0, next);
    const first = events[0];
    if (first !== undefined) next = (next ?? first.index) + events.length;
    yield { events, lines: block.lines, firstEventLine };
  }
}

/** A block of a segment as columns (./event-columns.ts), with its line count and first event's line. */
export interface ColumnBlock {
  columns: EventColumns;
  lines: number;
  firstEventLine: number;
}

/**
 * Segment `k` as blocks of columns (./event-columns.ts), for a thread that hands events on. A block of
 * a segment that ends in a newline goes from its bytes through the scanner (./jsonl-scan.ts), with no
 * text decoded and no JSON parsed; a block with a line off the scanner's grammar, and the file's last
 * segment (which may end torn), is decoded, parsed and encoded instead. The same events either way;
 * any error is thrown (the caller reads the segment again the ordinary way to say which). With `into`
 * the segment's bytes are read into that reused buffer: nothing yielded refers to them (columns and
 * strings are copies), so the next segment may be read into it once this one's generator is done.
 */
export function* segmentColumnBlocks(
  fd: number,
  file: string,
  k: number,
  size: number,
  segmentBytes: number,
  maxLineBytes: number,
  scanner: EventLineScanner,
  encoder: EventColumnsEncoder,
  into?: SegmentBuffer,
): Generator<ColumnBlock, string | null> {
  const raw = readSegmentBytes(fd, file, k, size, segmentBytes, maxLineBytes, into);
  if (raw.last) {
    const seg = decodeSegment(fd, file, raw, size, maxLineBytes);
    for (const b of segmentBlocks(file, seg))
      yield { columns: encoder.encode(b.events), lines: b.lines, firstEventLine: b.firstEventLine };
    return seg.tail;
  }
  const bytes = raw.bytes;
  // The segment's lines end at its last byte, a newline.
  const body = bytes.length - 1;
  let next: number | null = null;
  let start = 0;
  while (start <= body && body >= 0) {
    let end = body;
    if (body - start > BLOCK_BYTES) {
      const nl = bytes.indexOf(10, start + BLOCK_BYTES);
      if (nl !== -1 && nl < body) end = nl;
    }
    let lines = 0;
    for (let from = start; ; ) {
      let nl = bytes.indexOf(10, from);
      if (nl === -1 || nl > end) nl = end;
      lines++;
      if (nl - from > maxLineBytes) throw lineTooLong(file, 0, maxLineBytes);
      if (nl === end) break;
      from = nl + 1;
    }
    let columns = scanner.scan(bytes, start, end, lines, next);
    let firstEventLine = 1;
    if (columns === null) {
      const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
        bytes.subarray(start, end),
      );
      const stats = lineStats(text);
      const parsed = parseLines(text, stats.lines, stats.longest, file, 0, next);
      columns = encoder.encode(parsed.events);
      firstEventLine = parsed.firstEventLine;
    }
    if (columns.n > 0) next = (next ?? (columns.floats[F_INDEX] as number)) + columns.n;
    else firstEventLine = 0;
    yield { columns, lines, firstEventLine };
    start = end + 1;
  }
  return null;
}

/** A segment's body cut into blocks of whole lines of about {@link BLOCK_BYTES}. */
function* blockTexts(seg: SegmentText): Generator<{ text: string; lines: number; longest: number }> {
  const body = seg.body;
  if (seg.lines === 0) return;
  let start = 0;
  while (start <= body.length) {
    let end = body.length;
    if (body.length - start > BLOCK_BYTES) {
      const nl = body.indexOf('\n', start + BLOCK_BYTES);
      if (nl !== -1) end = nl;
    }
    const text = body.slice(start, end);
    yield { text, ...lineStats(text) };
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
