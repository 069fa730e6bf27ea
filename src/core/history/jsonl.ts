import { fileInputError, InputError } from '../util/errors.ts';
import type { CompactValue } from './compact-value.ts';
import type { HistoryEvent } from './event.ts';
import {
  MAX_NESTING,
  mayHoldInexactNumber,
  NESTED_TOO_DEEP,
  NESTING_REASON,
  nestsDeeperThan,
  parseJsonValue,
} from './json-text.ts';
import { utf8Chunks } from './utf8.ts';
import { checkEvent } from './validate.ts';

/**
 * Streaming reader for history.jsonl: constant memory whatever the file size (one read chunk plus one
 * batch of events at a time). Every event is JSON-parsed and checked by the fast validator; `index` must
 * count 0, 1, 2, … in file order. Errors are InputErrors naming `file:line: field: reason`.
 *
 * A torn last line (no trailing newline, and the text is not a complete event) is what a writer killed
 * mid-write leaves. By default it is an error; with `tornTail: 'drop'` the complete events are returned
 * and the torn tail is reported through `onTornTail` (and never silently accepted). A last line that is
 * a complete, valid event merely missing its newline is accepted.
 */
export interface TornTail {
  /** 1-based line number of the torn line. */
  line: number;
  /** Its length in bytes. */
  bytes: number;
}

/**
 * The longest history line read by default: far above any real event (a read of a million-element
 * list is about 8 MB), far below what takes a reader minutes and gigabytes to refuse (a 700 MB line).
 */
export const DEFAULT_MAX_LINE_BYTES = 64 << 20;

/** The error for a line over the cap, naming where it starts (`why`: what the cap is, how to raise it). */
export function lineTooLong(
  file: string,
  line: number,
  maxLineBytes: number,
  why = 'the cap for one history line; raise it with --max-line-bytes',
): InputError {
  return new InputError(file, line, null, `line longer than ${maxLineBytes} bytes (${why})`);
}

/**
 * Throws {@link lineTooLong} for the first line of `body` (lines after `lineBefore`) longer than the
 * cap. `longest` is in UTF-16 units, at most the byte length and at least a third of it, so bodies
 * whose longest line is short enough are not scanned.
 */
export function checkLineBytes(
  body: string,
  longest: number,
  file: string,
  lineBefore: number,
  maxLineBytes: number,
): void {
  if (longest * 3 <= maxLineBytes) return;
  let line = lineBefore;
  let start = 0;
  while (start <= body.length) {
    let nl = body.indexOf('\n', start);
    if (nl === -1) nl = body.length;
    line++;
    if (nl - start > maxLineBytes / 3 && Buffer.byteLength(body.slice(start, nl)) > maxLineBytes)
      throw lineTooLong(file, line, maxLineBytes);
    start = nl + 1;
  }
}

export interface JsonlReadOptions {
  /** The longest line accepted, in bytes (default {@link DEFAULT_MAX_LINE_BYTES}). */
  maxLineBytes?: number;
  tornTail?: 'error' | 'drop';
  onTornTail?: (t: TornTail) => void;
  /** Read chunk size in bytes (default 64 KiB: smaller chunks keep fewer events alive at once, so the
   *  garbage collector keeps RSS low, at no cost in speed). */
  chunkSize?: number;
  /**
   * Values that crossed threads as compact trees may come as {@link CompactValue} views
   * (./compact-value.ts) instead of arrays, for a consumer that reads them in place. Only the
   * two-thread reader (./jsonl-parallel.ts) makes them; every other reader gives plain values.
   */
  compactValues?: boolean;
}

export async function* readJsonlBatches(
  file: string,
  opts: JsonlReadOptions = {},
): AsyncGenerator<HistoryEvent[]> {
  let carry = '';
  let lineNo = 0;
  let next = 0;
  const cap = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  try {
    // Chunks of a line with no newline yet are kept apart, not concatenated: searching a growing
    // concatenation for a newline at every chunk costs time quadratic in the line's length.
    let pending: string[] = [];
    let pendingBytes = 0;
    for await (const chunk of utf8Chunks(file, opts.chunkSize ?? 1 << 16, { tornEnd: true })) {
      if (chunk.indexOf('\n') === -1) {
        pending.push(chunk);
        pendingBytes += Buffer.byteLength(chunk);
        // A line with no end in sight is refused once past the cap, not gathered whole.
        if (Buffer.byteLength(carry) + pendingBytes > cap) throw lineTooLong(file, lineNo + 1, cap);
        continue;
      }
      const text = carry + (pending.length > 0 ? pending.join('') : '') + chunk;
      pending = [];
      pendingBytes = 0;
      const lastNl = text.lastIndexOf('\n');
      carry = lastNl + 1 < text.length ? text.slice(lastNl + 1) : '';
      const body = text.slice(0, lastNl);
      const { lines, longest } = lineStats(body);
      checkLineBytes(body, longest, file, lineNo, cap);
      const batch = parseLines(body, lines, longest, file, lineNo, next).events;
      lineNo += lines;
      next += batch.length;
      if (batch.length > 0) yield batch;
    }
    carry += pending.join('');
  } catch (err) {
    throw fileInputError(file, err);
  }
  if (carry.length * 3 > cap && Buffer.byteLength(carry) > cap) throw lineTooLong(file, lineNo + 1, cap);
  const last = lastLine(carry, file, lineNo + 1, next, opts);
  if (last !== undefined) yield [last];
}

/**
 * The text after a file's last newline: nothing, a complete event merely missing its newline, or a
 * torn line a killed writer left (an error, or with `tornTail: 'drop'` reported and dropped).
 */
export function lastLine(
  carry: string,
  file: string,
  lineNo: number,
  next: number,
  opts: JsonlReadOptions,
): HistoryEvent | undefined {
  if (carry.trim().length === 0) return undefined;
  try {
    return parseEventLine(carry, file, lineNo, next);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const torn: TornTail = { line: lineNo, bytes: Buffer.byteLength(carry) };
    if (opts.tornTail === 'drop') {
      opts.onTornTail?.(torn);
      return undefined;
    }
    throw new InputError(
      file,
      lineNo,
      null,
      `torn last line (${torn.bytes} bytes, no newline): the writer was killed mid-write; ${err.reason}`,
    );
  }
}

/** Number of lines in `body` and the length of the longest. */
export function lineStats(body: string): { lines: number; longest: number } {
  let n = 1;
  let start = 0;
  let longest = 0;
  let i = body.indexOf('\n');
  while (i !== -1) {
    if (i - start > longest) longest = i - start;
    n++;
    start = i + 1;
    i = body.indexOf('\n', start);
  }
  if (body.length - start > longest) longest = body.length - start;
  return { lines: n, longest };
}

/**
 * Parses complete lines. Fast path: one JSON.parse for the whole block (lines joined as an array),
 * which costs far less than a call per line. Anything unusual (a bad or blank line, a line holding two
 * values, a digit run long enough to be a big integer) falls back to line-by-line parsing, which finds
 * and names the offending line and keeps big integers (./json-text.ts).
 *
 * The fast path gives exactly what line-by-line parsing gives. Joined, a line may split one value
 * across lines and another hold two (`{"value":[1` / `2]}` / `{…},{…}`) with the count of values still
 * equal to the count of lines; so the join is trusted only when no comma follows an object (see
 * {@link commaAfterObject}): then, every value being an event object, no line holds two and none can
 * be split. Any problem the fast path finds sends the block to the line-by-line path too, so an error
 * names the line and the reason that path names.
 *
 * `next` is the index the first event must have; null for a part of a file read apart from what
 * precedes it, where the first event's own index is taken (the caller checks it against the events
 * before). Also returns the line of the first event, 1-based within `body` (0 when there is none).
 */
export function parseLines(
  body: string,
  lines: number,
  longest: number,
  file: string,
  lineBefore: number,
  next: number | null,
): { events: HistoryEvent[]; firstEventLine: number } {
  let arr: unknown[] | undefined;
  if (!mayHoldInexactNumber(body) && !commaAfterObject(body)) {
    try {
      arr = JSON.parse(`[${body.replaceAll('\n', ',')}]`) as unknown[];
    } catch {
      arr = undefined;
    }
  }
  if (arr !== undefined && arr.length === lines && joinedEvents(arr, longest, next)) {
    return { events: arr as HistoryEvent[], firstEventLine: arr.length > 0 ? 1 : 0 };
  }
  const out: HistoryEvent[] = [];
  let firstEventLine = 0;
  let base = next;
  let start = 0;
  for (let k = 1; k <= lines; k++) {
    let nl = body.indexOf('\n', start);
    if (nl === -1) nl = body.length;
    const line = body.slice(start, nl);
    start = nl + 1;
    if (base === null) {
      // The first event of a part read on its own: its index is the part's base (checked by the caller).
      const ev = parseEventLine(line, file, lineBefore + k, null);
      if (ev === undefined) continue;
      base = ev.index;
      firstEventLine = k;
      out.push(ev);
      continue;
    }
    const ev = parseEventLine(line, file, lineBefore + k, base + out.length);
    if (ev === undefined) continue;
    if (firstEventLine === 0) firstEventLine = k;
    out.push(ev);
  }
  return { events: out, firstEventLine };
}

/**
 * Whether the block's values, parsed joined, are all valid events (indices counting from `next`, or
 * from the first one's own when null); sets a missing `value` to null. False on any problem: the
 * caller parses the lines one by one to name it.
 */
function joinedEvents(arr: unknown[], longest: number, next: number | null): boolean {
  const mayNest = longest > 2 * MAX_NESTING;
  const base = next ?? (arr[0] as { index?: unknown } | undefined)?.index;
  for (let k = 0; k < arr.length; k++) {
    const o = arr[k];
    if (mayNest && nestsDeeperThan(o)) return false;
    if (checkEvent(o)) return false;
    const ev = o as HistoryEvent;
    if (ev.index !== (base as number) + k) return false;
    if (ev.value === undefined) ev.value = null;
  }
  return true;
}

/**
 * Whether a comma follows a closing brace (whitespace between allowed) anywhere in `text`. History
 * lines hold one object each, so in joined lines the only top-level commas are the joins; a comma after
 * an object within a line is either inside a value (an array of objects, a member after an object
 * member) or a second value on the line. Telling those apart would take a JSON scanner; such lines
 * are parsed one by one instead. One pass over the closing braces (one per event line in the
 * usual history), far cheaper than the per-line parses it saves.
 */
function commaAfterObject(text: string): boolean {
  for (let i = text.indexOf('}'); i !== -1; i = text.indexOf('}', i + 1)) {
    let j = i + 1;
    let c = text.charCodeAt(j);
    while (c === 32 || c === 9 || c === 13) c = text.charCodeAt(++j);
    if (c === 44) return true;
  }
  return false;
}

export function indexError(file: string, line: number, expected: number, got: number): InputError {
  return new InputError(file, line, 'index', `expected ${expected} (indices count 0, 1, 2, ...), got ${got}`);
}

export function parseEventLine(
  line: string,
  file: string,
  lineNo: number,
  expectedIndex: number | null,
): HistoryEvent | undefined {
  let o: unknown;
  try {
    o = parseJsonValue(line);
  } catch (err) {
    if (line.trim().length === 0) return undefined;
    throw new InputError(file, lineNo, null, `bad JSON: ${(err as Error).message}`);
  }
  if (o === NESTED_TOO_DEEP) throw new InputError(file, lineNo, null, NESTING_REASON);
  const problem = checkEvent(o);
  if (problem) throw new InputError(file, lineNo, problem.field, problem.reason);
  const ev = o as HistoryEvent;
  if (expectedIndex !== null && ev.index !== expectedIndex) {
    throw indexError(file, lineNo, expectedIndex, ev.index);
  }
  // JSON has no undefined: this is a missing "value", which the schema allows and we record as null.
  if (ev.value === undefined) ev.value = null;
  return ev;
}

/** Serialises one event as a JSONL line (with its newline). `value` is always written, as null if unset. */
export function eventLine(ev: HistoryEvent): string {
  return `${JSON.stringify(ev.value === undefined ? { ...ev, value: null } : ev)}\n`;
}
