import { existsSync, readFileSync } from 'node:fs';
import { InputError } from './errors.ts';

/**
 * A file's JSON, or null when it is missing or not JSON (a truncated or foreign file): the caller's zod
 * schema then says what it expected in one line, or the caller goes on without the file.
 */
export function readJsonOrNull(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** One JSON value of a JSON-lines text and its 1-based line number. */
export interface JsonLine {
  line: number;
  value: unknown;
}

export interface JsonLinesOptions {
  /**
   * When given, a line that is not JSON is an InputError `file:line: <reject>`, except a torn tail (the
   * last line with text, not ended by a newline: an append cut short by a crash), which is dropped.
   * Without it every line that is not JSON is dropped.
   */
  reject?: string;
  /** Called on each line with text before it is parsed (a cap on its length, say); may throw. */
  check?: (text: string, line: number) => void;
}

/**
 * The values of an append-only JSON-lines file (ledger, index, samples) in file order, one at a time (an
 * error names the first bad line, whether the file or the caller's schema finds it); blank lines are
 * skipped. What a line must hold is the caller's schema.
 */
export function* parseJsonLines(text: string, file: string, o: JsonLinesOptions = {}): Generator<JsonLine> {
  const lines = text.split('\n');
  // The last line with text: found once (a check per line of what follows it was quadratic in the lines).
  let lastText = lines.length - 1;
  while (lastText >= 0 && (lines[lastText] as string).trim() === '') lastText--;
  const torn = !text.endsWith('\n');
  for (const [i, l] of lines.entries()) {
    if (l.trim() === '') continue;
    o.check?.(l, i + 1);
    let value: unknown;
    try {
      value = JSON.parse(l);
    } catch {
      if (o.reject !== undefined && !(i === lastText && torn))
        throw new InputError(file, i + 1, null, o.reject);
      continue;
    }
    yield { line: i + 1, value };
  }
}

/** {@link parseJsonLines} of a file; null when there is no such file. */
export function readJsonLines(path: string, o: JsonLinesOptions = {}): Iterable<JsonLine> | null {
  if (!existsSync(path)) return null;
  return parseJsonLines(readFileSync(path, 'utf8'), path, o);
}
