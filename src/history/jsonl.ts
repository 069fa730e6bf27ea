import { createReadStream } from 'node:fs';
import { InputError } from '../util/errors.ts';
import type { HistoryEvent } from './event.ts';
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

export interface JsonlReadOptions {
  tornTail?: 'error' | 'drop';
  onTornTail?: (t: TornTail) => void;
  /** Read chunk size (bytes). */
  chunkSize?: number;
}

export async function* readJsonlBatches(
  file: string,
  opts: JsonlReadOptions = {},
): AsyncGenerator<HistoryEvent[]> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: opts.chunkSize ?? 1 << 20 });
  let carry = '';
  let lineNo = 0;
  let next = 0;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const text = carry.length > 0 ? carry + chunk : chunk;
      const batch: HistoryEvent[] = [];
      let start = 0;
      for (;;) {
        const nl = text.indexOf('\n', start);
        if (nl === -1) break;
        lineNo++;
        if (nl > start) {
          const ev = parseEventLine(text.slice(start, nl), file, lineNo, next);
          if (ev !== undefined) {
            batch.push(ev);
            next++;
          }
        }
        start = nl + 1;
      }
      carry = start < text.length ? text.slice(start) : '';
      if (batch.length > 0) yield batch;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException)?.code === 'ENOENT')
      throw new InputError(file, null, null, 'no such file');
    if ((err as NodeJS.ErrnoException)?.code === 'EISDIR')
      throw new InputError(file, null, null, 'is a directory');
    throw err;
  }
  if (carry.trim().length === 0) return;
  lineNo++;
  let ev: HistoryEvent | undefined;
  try {
    ev = parseEventLine(carry, file, lineNo, next);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const torn: TornTail = { line: lineNo, bytes: Buffer.byteLength(carry) };
    if (opts.tornTail === 'drop') {
      opts.onTornTail?.(torn);
      return;
    }
    throw new InputError(
      file,
      lineNo,
      null,
      `torn last line (${torn.bytes} bytes, no newline): the writer was killed mid-write; ${err.reason}`,
    );
  }
  if (ev !== undefined) yield [ev];
}

export function parseEventLine(
  line: string,
  file: string,
  lineNo: number,
  expectedIndex: number,
): HistoryEvent | undefined {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch (err) {
    if (line.trim().length === 0) return undefined;
    throw new InputError(file, lineNo, null, `bad JSON: ${(err as Error).message}`);
  }
  const problem = checkEvent(o);
  if (problem) throw new InputError(file, lineNo, problem.field, problem.reason);
  const ev = o as HistoryEvent;
  if (ev.index !== expectedIndex) {
    throw new InputError(
      file,
      lineNo,
      'index',
      `expected ${expectedIndex} (indices count 0, 1, 2, ...), got ${ev.index}`,
    );
  }
  // JSON has no undefined: this is a missing "value", which the schema allows and we record as null.
  if (ev.value === undefined) ev.value = null;
  return ev;
}

/** Serialises one event as a JSONL line (with its newline). `value` is always written, as null if unset. */
export function eventLine(ev: HistoryEvent): string {
  return `${JSON.stringify(ev.value === undefined ? { ...ev, value: null } : ev)}\n`;
}
