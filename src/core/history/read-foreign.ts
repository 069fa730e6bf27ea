import { fileInputError, InputError } from '../util/errors.ts';
import { EdnSyntaxError, ednHistoryValues, lineAt } from './edn.ts';
import { streamEdnHistory } from './edn-stream.ts';
import type { HistoryEvent } from './event.ts';
import type { HistoryFormat } from './formats.ts';
import { eventFromOpMap, OpMapError } from './jepsen.ts';
import {
  MAX_NESTING,
  mayHoldInexactNumber,
  NESTING_REASON,
  nestsDeeperThan,
  parseJsonLossless,
} from './json-text.ts';
import { parseEventLine } from './jsonl.ts';
import { parsePorcupineEtcd } from './porcupine.ts';
import { readUtf8, utf8Chunks } from './utf8.ts';

/**
 * The history formats other than streamed JSONL (EDN, elle-cli JSON, Porcupine's logs) and in-memory
 * parsing. ./read.ts loads this module only when such a history is read.
 */

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

/** EDN histories, streamed: memory stays proportional to one chunk whatever the file size. */
export async function* readEdnBatches(
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
    throw fileInputError(file, err);
  }
}

export async function readText(file: string): Promise<string> {
  try {
    return await readUtf8(file);
  } catch (err) {
    throw fileInputError(file, err);
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
  if (mayHoldInexactNumber(text)) arr = parseJsonLossless(text) as unknown[];
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
