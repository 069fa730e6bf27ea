import { open } from 'node:fs/promises';
import { InputError } from '../util/errors.ts';
import { readablePath } from '../util/gzip-file.ts';
import { EdnSyntaxError, ednHistoryValues, lineAt } from './edn.ts';
import { streamEdnHistory } from './edn-stream.ts';
import type { HistoryEvent } from './event.ts';
import { eventFromOpMap, OpMapError } from './jepsen.ts';
import {
  MAX_NESTING,
  mayHoldBigInteger,
  NESTING_REASON,
  nestsDeeperThan,
  parseJsonLossless,
} from './json-text.ts';
import { type JsonlReadOptions, parseEventLine, readJsonlBatches } from './jsonl.ts';
import { parsePorcupineEtcd, readPorcupineEtcdBatches } from './porcupine.ts';
import { readUtf8, utf8Chunks } from './utf8.ts';

/**
 * Reading histories in every supported format. `auto` (the default) looks at the start of the file:
 *
 * | format | recognised by | notes |
 * |---|---|---|
 * | `jsonl` | first value is a JSON object (`{"`) | faultline's own history.jsonl; streamed |
 * | `json` | `[` then `{"` | elle-cli's JSON twins: one array of Jepsen op objects |
 * | `porcupine-etcd` | a `jepsen.util -` console line | Porcupine's etcd logs |
 * | `porcupine-kv` | EDN maps with `:key "…"` and `:f :get/:put/:append` | Porcupine's kv files |
 * | `edn` | anything else starting with `{ [ ( ; #` | Jepsen history.edn (vector, list or bare maps) |
 *
 * `edn` imports losslessly (./values.ts); `porcupine-kv` reads strings plainly, as its model is a
 * string store. Ops without `:time` get their position as time (see ./jepsen.ts). An empty file is an
 * empty history in any format.
 */
export const HISTORY_FORMATS = ['jsonl', 'json', 'edn', 'porcupine-etcd', 'porcupine-kv'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

export interface LoadOptions extends JsonlReadOptions {
  format?: 'auto' | HistoryFormat;
}

/** Looks at the first 64 KiB of a file and names its format. */
export async function detectFormat(file: string): Promise<HistoryFormat> {
  let head: string;
  try {
    const fh = await open(file, 'r');
    try {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      head = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw fileError(file, err);
  }
  return detectFormatOf(head, file);
}

export function detectFormatOf(head: string, file = '<input>'): HistoryFormat {
  const text = head.replace(/^\uFEFF/, '');
  const firstLine = /^[ \t\r\n,]*([^\n]*)/.exec(text)?.[1] ?? '';
  if (firstLine.length === 0) return 'jsonl';
  if (/jepsen\.util\s+-\s/.test(firstLine)) return 'porcupine-etcd';
  const c = firstLine[0];
  if (c === '{') {
    if (/^\{\s*"/.test(firstLine)) return 'jsonl';
    if (/:key\s+"/.test(firstLine) && /:f\s+:(get|put|append)\b/.test(firstLine)) return 'porcupine-kv';
    return 'edn';
  }
  if (c === '[') {
    if (/^\[\s*\{\s*"/.test(text.replace(/^[ \t\r\n]*/, ''))) return 'json';
    return 'edn';
  }
  if (c === '(' || c === ';' || c === '#') return 'edn';
  throw new InputError(
    file,
    1,
    null,
    'unrecognised history format (expected JSONL, EDN, or a Porcupine log)',
  );
}

/** Reads a whole history into memory. For JSONL prefer {@link readEvents} on very large files. */
export async function loadHistory(given: string, opts: LoadOptions = {}): Promise<HistoryEvent[]> {
  const file = readablePath(given);
  const format = !opts.format || opts.format === 'auto' ? await detectFormat(file) : opts.format;
  if (format === 'jsonl' || format === 'edn' || format === 'porcupine-kv' || format === 'porcupine-etcd') {
    const out: HistoryEvent[] = [];
    for await (const batch of readEventBatches(file, { ...opts, format }))
      for (const ev of batch) out.push(ev);
    return out;
  }
  return parseHistoryText(await readText(file), format, file);
}

/** Parses an in-memory history of a non-streaming format (or JSONL). */
export function parseHistoryText(text: string, format: HistoryFormat, file = '<input>'): HistoryEvent[] {
  switch (format) {
    case 'porcupine-etcd':
      return parsePorcupineEtcd(text, file);
    case 'edn':
      return fromEdn(text, file, 'lossless');
    case 'porcupine-kv':
      return fromEdn(text, file, 'plain');
    case 'json':
      return fromJsonArray(text, file);
    case 'jsonl':
      return fromJsonlText(text, file);
  }
}

/**
 * Streams a history's events. JSONL, EDN and Porcupine's logs are streamed in constant memory; elle-cli
 * JSON (one array) is parsed whole first.
 */
export async function* readEvents(file: string, opts: LoadOptions = {}): AsyncGenerator<HistoryEvent> {
  for await (const batch of readEventBatches(file, opts)) yield* batch;
}

/** Like {@link readEvents} but yields arrays of events: cheaper per event for large files. */
export async function* readEventBatches(
  given: string,
  opts: LoadOptions = {},
): AsyncGenerator<HistoryEvent[]> {
  const file = readablePath(given);
  const format = !opts.format || opts.format === 'auto' ? await detectFormat(file) : opts.format;
  if (format === 'jsonl') {
    yield* readJsonlBatches(file, opts);
    return;
  }
  if (format === 'edn' || format === 'porcupine-kv') {
    yield* readEdnBatches(file, format === 'edn' ? 'lossless' : 'plain', opts.chunkSize);
    return;
  }
  if (format === 'porcupine-etcd') {
    try {
      yield* readPorcupineEtcdBatches(file, opts.chunkSize);
    } catch (err) {
      throw fileError(file, err);
    }
    return;
  }
  const all = await loadHistory(file, { ...opts, format });
  for (let i = 0; i < all.length; i += 8192) yield all.slice(i, i + 8192);
}

/** EDN histories, streamed: memory stays proportional to one chunk whatever the file size. */
async function* readEdnBatches(
  file: string,
  mode: 'plain' | 'lossless',
  chunkSize = 1 << 18,
): AsyncGenerator<HistoryEvent[]> {
  let position = 0;
  try {
    for await (const located of streamEdnHistory(utf8Chunks(file, chunkSize), mode)) {
      const batch: HistoryEvent[] = new Array(located.length);
      for (let i = 0; i < located.length; i++) {
        const { value, line } = located[i]!;
        try {
          batch[i] = eventFromOpMap(value, position++);
        } catch (err) {
          if (err instanceof OpMapError) throw new InputError(file, line, err.field, err.reason);
          throw err;
        }
      }
      yield batch;
    }
  } catch (err) {
    if (err instanceof EdnSyntaxError) throw new InputError(file, err.line, null, `EDN: ${err.reason}`);
    throw fileError(file, err);
  }
}

async function readText(file: string): Promise<string> {
  try {
    return await readUtf8(file);
  } catch (err) {
    throw fileError(file, err);
  }
}

function fromEdn(text: string, file: string, mode: 'plain' | 'lossless'): HistoryEvent[] {
  return [...ednEvents(text, file, mode)];
}

/** EDN op maps converted to events one at a time; errors become `file:line` input errors. */
function* ednEvents(text: string, file: string, mode: 'plain' | 'lossless'): Generator<HistoryEvent> {
  let offset = 0;
  let position = 0;
  try {
    for (const item of ednHistoryValues(text, mode)) {
      offset = item.offset;
      yield eventFromOpMap(item.value, position++);
    }
  } catch (err) {
    if (err instanceof EdnSyntaxError) throw new InputError(file, err.line, null, `EDN: ${err.reason}`);
    if (err instanceof OpMapError) throw new InputError(file, lineAt(text, offset), err.field, err.reason);
    throw err;
  }
}

function fromJsonArray(text: string, file: string): HistoryEvent[] {
  let arr: unknown;
  try {
    arr = JSON.parse(text);
  } catch (err) {
    throw new InputError(file, null, null, `bad JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(arr)) throw new InputError(file, 1, null, 'expected a JSON array of op objects');
  // elle-cli twins put one op per line after the opening bracket; use that for error lines when it holds.
  const oneOpPerLine = text.split('\n').filter((l) => l.trim().length > 0).length === arr.length;
  for (let i = 0; i < arr.length; i++) {
    if (nestsDeeperThan(arr[i], MAX_NESTING - 1))
      throw new InputError(file, oneOpPerLine ? i + 1 : null, oneOpPerLine ? null : `[${i}]`, NESTING_REASON);
  }
  // Only now (nesting checked): re-read keeping big integers, if the text may hold any.
  if (mayHoldBigInteger(text)) arr = parseJsonLossless(text) as unknown[];
  const out: HistoryEvent[] = [];
  for (let i = 0; i < (arr as unknown[]).length; i++) {
    try {
      out.push(eventFromOpMap((arr as unknown[])[i], i));
    } catch (err) {
      if (!(err instanceof OpMapError)) throw err;
      throw new InputError(
        file,
        oneOpPerLine ? i + 1 : null,
        oneOpPerLine ? err.field : `[${i}].${err.field ?? ''}`,
        err.reason,
      );
    }
  }
  return out;
}

function fromJsonlText(text: string, file: string): HistoryEvent[] {
  // Used for in-memory text; files go through the streaming reader. Same checks, same messages.
  const out: HistoryEvent[] = [];
  const lines = text.split('\n');
  const last = lines.length - 1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    try {
      const ev = parseEventLine(line, file, i + 1, out.length);
      if (ev !== undefined) out.push(ev);
    } catch (err) {
      if (i === last && err instanceof InputError && line.trim().length > 0) {
        throw new InputError(file, i + 1, null, `torn last line (no newline): ${err.reason}`);
      }
      throw err;
    }
  }
  return out;
}

function fileError(file: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return new InputError(file, null, null, 'no such file');
  if (code === 'EISDIR') return new InputError(file, null, null, 'is a directory');
  if (code === 'EACCES') return new InputError(file, null, null, 'permission denied');
  return err as Error;
}
