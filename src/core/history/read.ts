import { open, stat } from 'node:fs/promises';
import { fileInputError, InputError } from '../util/errors.ts';
import { readablePath } from '../util/gzip-file.ts';
import type { HistoryEvent } from './event.ts';
import type { HistoryFormat } from './formats.ts';
import { type JsonlReadOptions, readJsonlBatches } from './jsonl.ts';

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
 * empty history in any format. The readers of the formats other than JSONL (./read-foreign.ts) load
 * only when such a file is read: `faultline check` on a history.jsonl starts faster without them.
 */
export { HISTORY_FORMATS, type HistoryFormat } from './formats.ts';

/**
 * With `parallel`, JSONL files at least this large are parsed on a worker thread: below it, starting
 * the worker and compiling the scanner on both threads costs more than it saves. Measured from dist/
 * with lines scanned into columns (docs/performance.md): a 22 MB register history checked in 0.37–0.43
 * s wall on one thread against 0.49–0.64 s on two (and 40 % less CPU), a 38 MB list-append history in
 * about the same wall time on either; at 56 MB two threads were ~10 % faster.
 */
export const PARALLEL_MIN_BYTES = 48 << 20;

export interface LoadOptions extends JsonlReadOptions {
  format?: 'auto' | HistoryFormat;
  /**
   * Parse a large JSONL file on this thread and a worker thread together (./jsonl-parallel.ts), when
   * its values make that pay. For consumers that only read events: equal structured values then share
   * one object, and events are rebuilt with faultline's field order.
   */
  parallel?: boolean;
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
    throw fileInputError(file, err);
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
  const { parseHistoryText, readText } = await import('./read-foreign.ts');
  return parseHistoryText(await readText(file), format, file);
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
    const size = opts.parallel ? await sizeOf(file) : 0;
    const parallel = size >= PARALLEL_MIN_BYTES ? await import('./jsonl-parallel.ts') : undefined;
    if (parallel?.parallelPays(file, size)) yield* parallel.readJsonlBatchesInWorker(file, size, opts);
    else yield* readJsonlBatches(file, opts);
    return;
  }
  if (format === 'edn' || format === 'porcupine-kv') {
    const { readEdnBatches } = await import('./read-foreign.ts');
    yield* readEdnBatches(file, format === 'edn' ? 'lossless' : 'plain', opts.chunkSize);
    return;
  }
  if (format === 'porcupine-etcd') {
    const { readPorcupineEtcdBatches } = await import('./porcupine.ts');
    try {
      yield* readPorcupineEtcdBatches(file, opts.chunkSize);
    } catch (err) {
      throw fileInputError(file, err);
    }
    return;
  }
  const all = await loadHistory(file, { ...opts, format });
  for (let i = 0; i < all.length; i += 8192) yield all.slice(i, i + 8192);
}

/** The file's size in bytes; 0 when it cannot be read (the reader then reports why). */
async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}
