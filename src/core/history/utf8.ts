import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { InputError } from '../util/errors.ts';

/**
 * History text is decoded strictly: a byte sequence that is not UTF-8 is an input error naming the line
 * (exit 254), never silently replaced by U+FFFD (which could turn two different values into one).
 */

/**
 * What a file that ends inside a UTF-8 sequence (a writer killed between the bytes of one character)
 * yields for that sequence with `tornEnd`: a replacement character, which no complete JSON line can
 * end with, so the line reads as torn (and `--allow-torn-tail` can drop it) instead of as invalid text.
 */
export const TORN_CHARACTER = '\uFFFD';

/**
 * Streams a file as strictly decoded UTF-8 text chunks. With `tornEnd`, an incomplete sequence at the
 * very end of the file yields {@link TORN_CHARACTER}; invalid bytes anywhere else are still an error.
 */
export async function* utf8Chunks(
  file: string,
  highWaterMark: number,
  opts: { tornEnd?: boolean } = {},
): AsyncGenerator<string> {
  const stream = createReadStream(file, { highWaterMark });
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let offset = 0;
  try {
    for await (const buf of stream as AsyncIterable<Buffer>) {
      let text: string;
      try {
        text = decoder.decode(buf, { stream: true });
      } catch {
        throw await invalidAt(file, offset + firstInvalid(buf));
      }
      offset += buf.length;
      if (text.length > 0) yield text;
    }
    let rest: string;
    try {
      rest = decoder.decode();
    } catch {
      if (!opts.tornEnd) throw await invalidAt(file, offset);
      rest = TORN_CHARACTER;
    }
    if (rest.length > 0) yield rest;
  } finally {
    stream.destroy();
  }
}

/** The whole file as strictly decoded UTF-8. */
export async function readUtf8(file: string): Promise<string> {
  const buf = await readFile(file);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf);
  } catch {
    throw utf8Error(file, buf, firstInvalid(buf));
  }
}

/** Length of the longest prefix of `buf` that decodes (an incomplete sequence at its end is allowed). */
export function firstInvalid(buf: Buffer): number {
  const ok = (n: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, n), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let lo = 0;
  let hi = buf.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

async function invalidAt(file: string, offset: number): Promise<InputError> {
  const buf = await readFile(file);
  return utf8Error(file, buf, offset);
}

export function utf8Error(file: string, buf: Buffer, offset: number): InputError {
  let line = 1;
  for (let i = buf.indexOf(10); i !== -1 && i < offset; i = buf.indexOf(10, i + 1)) line++;
  return new InputError(file, line, null, `invalid UTF-8 at byte ${offset} (the history must be UTF-8 text)`);
}
