import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type AtomicFile, openAtomic, outputError, writeFileAtomic } from '../util/atomic-write.ts';
import { InputError, UserError } from '../util/errors.ts';
import type { HistoryEvent } from './event.ts';
import { eventToEdn, resultsToEdn } from './jepsen.ts';
import { pairEvents } from './pair.ts';
import { type LoadOptions, loadHistory, readEventBatches } from './read.ts';
import { operationRecord } from './record.ts';
import { HistoryWriter } from './writer.ts';

/**
 * `faultline history convert`: any readable format to faultline JSONL, Jepsen EDN (one op map per line,
 * as Jepsen's history.edn) or ops-json (a JSON array of the spec's operation records, one per line).
 * JSONL → JSONL/EDN streams in constant memory; ops-json pairs the whole history in memory.
 */
export const OUTPUT_FORMATS = ['jsonl', 'edn', 'ops-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface ConvertResult {
  events: number;
  ops: number | null;
}

export async function convertHistory(
  input: string,
  output: string,
  opts: LoadOptions & { to?: OutputFormat } = {},
): Promise<ConvertResult> {
  if (output === '-') return convertTo(input, output, opts);
  // Bad input, a kill or a full disk never leaves half a history at OUT: see openAtomic.
  const out = await openAtomic(output, { input });
  try {
    const r = await convertTo(input, out, opts);
    await out.commit();
    return r;
  } finally {
    await out.abort();
  }
}

async function convertTo(
  input: string,
  output: AtomicFile | '-',
  opts: LoadOptions & { to?: OutputFormat },
): Promise<ConvertResult> {
  const to = opts.to ?? 'jsonl';
  if (to === 'ops-json') {
    const events = await loadHistory(input, opts);
    const paired = pairOrExplain(events, input);
    await writeText(output, async (write) => {
      await write('[');
      for (let i = 0; i < paired.ops.length; i++) {
        await write(`${i === 0 ? '\n' : ',\n'}${JSON.stringify(operationRecord(paired.ops[i]!))}`);
      }
      await write(paired.ops.length > 0 ? '\n]\n' : ']\n');
    });
    return { events: events.length, ops: paired.ops.length };
  }
  let count = 0;
  if (to === 'jsonl' && output !== '-') {
    const writer = HistoryWriter.onHandle(output.path, output.handle, {
      syncEvery: 50_000,
      syncIntervalMs: 1000,
      fsync: false,
      // A conversion killed mid-way starts over (its output is atomic): no need to write per event.
      writeThrough: false,
    });
    for await (const batch of readEventBatches(input, opts)) {
      for (const ev of batch) writer.append(ev);
      count += batch.length;
      if (writer.needsDrain) await writer.drain();
    }
    await writer.flush();
    return { events: count, ops: null };
  }
  const line =
    to === 'edn'
      ? (ev: HistoryEvent) => `${ednLine(ev, input)}\n`
      : (ev: HistoryEvent) => `${JSON.stringify(ev)}\n`;
  await writeText(output, async (write) => {
    for await (const batch of readEventBatches(input, opts)) {
      let chunk = '';
      for (const ev of batch) chunk += line(ev);
      count += batch.length;
      await write(chunk);
    }
  });
  return { events: count, ops: null };
}

/**
 * Jepsen's files beside a run's own: history.edn converted from history.jsonl (when there is one) and
 * results.edn from the results data (what results.json holds), so Jepsen, Knossos, Elle and elle-cli
 * users can read a run directory as they read Jepsen's store. Each file appears whole or not at all.
 */
export async function writeRunEdn(runDir: string, results: unknown): Promise<void> {
  const history = join(runDir, 'history.jsonl');
  if (existsSync(history))
    await convertHistory(history, join(runDir, 'history.edn'), { format: 'jsonl', to: 'edn' });
  await writeFileAtomic(join(runDir, 'results.edn'), resultsToEdn(results));
}

/**
 * One event as an EDN line. A tagged value EDN cannot say as written (a `#char` of several characters,
 * a `#tag` named `_`, a keyword holding a delimiter) is the input's fault: refused naming the event,
 * never written raw (raw, it would read back as other values).
 */
function ednLine(ev: HistoryEvent, file: string): string {
  try {
    return eventToEdn(ev);
  } catch (err) {
    if (err instanceof TypeError) throw new InputError(file, null, `event ${ev.index}`, err.message);
    throw err;
  }
}

function pairOrExplain(events: HistoryEvent[], file: string) {
  try {
    return pairEvents(events);
  } catch (err) {
    if (err instanceof UserError)
      throw new InputError(file, null, null, `cannot pair into operations: ${err.message}`);
    throw err;
  }
}

/** Raised when stdout's reader went away (`convert … - | head`): the conversion just stops. */
class ReaderGone extends Error {}

/** Streams text to an atomic output file, or to stdout (with backpressure) for "-". */
async function writeText(
  output: AtomicFile | '-',
  body: (write: (s: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  if (output !== '-') return body((s) => output.write(s));
  const stream = process.stdout;
  const failed = new Promise<never>((_, reject) =>
    stream.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EPIPE' ? new ReaderGone() : outputError('-', err)),
    ),
  );
  failed.catch(() => {});
  const write = async (s: string) => {
    if (!stream.write(s)) await Promise.race([new Promise((r) => stream.once('drain', r)), failed]);
  };
  try {
    await Promise.race([body(write), failed]);
  } catch (err) {
    if (err instanceof ReaderGone) return;
    throw err;
  }
}
