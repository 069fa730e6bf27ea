import { createRequire } from 'node:module';

/**
 * Parsing JSON history text without losing integers and without letting deep nesting crash a reader.
 *
 * **Big integers.** `JSON.parse` turns every number into a double, so `9007199254740993` silently
 * becomes `…992` (and a stale read can look like a fresh one). Integers beyond ±(2^53 − 1) are instead
 * read as `{"#bigint": "digits"}`, exactly as the EDN reader represents them (./values.ts), so every
 * checker compares them exactly and the EDN writer prints them back as `…N`. Only text holding a run of
 * 16 or more digits can hold such an integer, so the common path stays `JSON.parse`; only lines with a
 * long digit run go through lossless-json, which hands us each number's text. It is loaded (one bundled
 * file, synchronously) on the first such line, so reading an ordinary history never loads it.
 *
 * **Nesting.** `JSON.parse` itself is iterative, but checkers, writers and reports walk values
 * recursively, so values nested deeper than {@link MAX_NESTING} levels are rejected with an input
 * error instead of overflowing the stack later. A value that deep needs at least 2 × MAX_NESTING
 * characters, so only long lines are walked.
 */
export const MAX_NESTING = 1000;

// Sixteen explicit \d: V8 scans this several times faster than \d{16} (which re-tries inside every run).
const LONG_DIGIT_RUN = /\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d/;

/** Whether `text` may hold an integer a double cannot represent exactly. */
export function mayHoldBigInteger(text: string): boolean {
  return LONG_DIGIT_RUN.test(text);
}

/** Whether a JSON text of this length can nest deeper than {@link MAX_NESTING}. */
export function mayNestTooDeep(textLength: number): boolean {
  return textLength > 2 * MAX_NESTING;
}

const SAFE_INTEGER_TEXT = /^-?\d{1,15}$/;
const INTEGER_TEXT = /^-?\d+$/;

/** A JSON number's text as faultline's value: a double, or a tagged big integer. */
function numberValue(text: string): unknown {
  if (SAFE_INTEGER_TEXT.test(text) || !INTEGER_TEXT.test(text)) return Number(text);
  const big = BigInt(text);
  if (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(big);
  return { '#bigint': big.toString() };
}

let losslessJson: typeof import('lossless-json') | undefined;

/**
 * Parse JSON text that `JSON.parse` already accepted (so it is valid and its nesting was checked),
 * keeping big integers. Duplicate keys keep the last value, as `JSON.parse` does.
 */
export function parseJsonLossless(text: string): unknown {
  losslessJson ??= createRequire(import.meta.url)('lossless-json') as typeof import('lossless-json');
  return losslessJson.parse(text, null, {
    parseNumber: numberValue,
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

/** True when `v` holds arrays/objects nested more than `limit` levels deep (walked without recursion). */
export function nestsDeeperThan(v: unknown, limit = MAX_NESTING): boolean {
  if (v === null || typeof v !== 'object') return false;
  const values: unknown[] = [v];
  const depths: number[] = [1];
  while (values.length > 0) {
    const x = values.pop() as object;
    const d = depths.pop() as number;
    if (d > limit) return true;
    const children = Array.isArray(x) ? x : Object.values(x);
    for (const c of children) {
      if (c !== null && typeof c === 'object') {
        values.push(c);
        depths.push(d + 1);
      }
    }
  }
  return false;
}

export const NESTING_REASON = `value nested deeper than ${MAX_NESTING} levels (the limit for history values)`;

/** What {@link parseJsonValue} returns for a value past the nesting limit. */
export const NESTED_TOO_DEEP: unique symbol = Symbol('nested too deep');

/**
 * Parse one JSON text as a history value: throws SyntaxError for bad JSON, returns `NESTED_TOO_DEEP`
 * for a value past the nesting limit, and keeps big integers.
 */
export function parseJsonValue(text: string): unknown {
  const v = JSON.parse(text) as unknown;
  if (mayNestTooDeep(text.length) && nestsDeeperThan(v)) return NESTED_TOO_DEEP;
  return mayHoldBigInteger(text) ? parseJsonLossless(text) : v;
}
