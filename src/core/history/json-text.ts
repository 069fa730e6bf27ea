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

/**
 * The one scan ordinary text pays: every number a double may not hold exactly has a run of 16 digits
 * (a big integer, or a decimal with that many digits before its point), or a digit followed by a point
 * or an exponent (JSON's grammar puts a digit before both). Text without either (histories of integers)
 * is answered after this single pass instead of three; text with one goes on to the exact tests.
 */
const MAY_BE_INEXACT = /\d[.eE]|\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d/;
// Sixteen explicit \d: V8 scans this several times faster than \d{16} (which re-tries inside every run).
const LONG_DIGIT_RUN = /\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d/;
// An exponent of three digits or more: the only way a short number leaves the double range (1e400, 1e-400).
const LONG_EXPONENT = /[eE][-+]?\d\d\d/;
// A decimal with sixteen or more significant digits split by its point (123456789012.3456).
const LONG_DECIMAL = /\d\.\d|\d[eE]/;
const DECIMAL_TOKENS = /-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;

/**
 * Whether `text` may hold a number a double cannot represent exactly: an integer beyond 2^53, a number
 * outside the double range, or a decimal with more significant digits than a double keeps. Cheap tests
 * first: ordinary histories (integers, short decimals) never reach the token scan.
 */
export function mayHoldInexactNumber(text: string): boolean {
  if (!MAY_BE_INEXACT.test(text)) return false;
  if (LONG_DIGIT_RUN.test(text) || LONG_EXPONENT.test(text)) return true;
  if (!LONG_DECIMAL.test(text)) return false;
  for (const m of text.matchAll(DECIMAL_TOKENS)) if (significantDigits(m[0]) > 15) return true;
  return false;
}

/** Digits of a number's text without sign, leading zeros, point or exponent (the number 0 has none). */
function mantissaDigits(text: string): string {
  const e = text.search(/[eE]/);
  return (e === -1 ? text : text.slice(0, e)).replace(/[-+.]/g, '').replace(/^0+/, '');
}

function significantDigits(text: string): number {
  return mantissaDigits(text).replace(/0+$/, '').length;
}

/**
 * A decimal number's exact value as (digits, exponent): `digits × 10^exponent` with no trailing zeros,
 * so two texts compare equal exactly when they denote the same number (`1.50e2` and `150`).
 */
function exactDecimal(text: string): { negative: boolean; digits: string; exponent: number } {
  const e = text.search(/[eE]/);
  const mantissa = e === -1 ? text : text.slice(0, e);
  let exponent = e === -1 ? 0 : Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  if (point !== -1) exponent -= mantissa.length - point - 1;
  let digits = mantissa.replace(/[-+.]/g, '').replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return {
    negative: mantissa.startsWith('-') && digits !== '',
    digits,
    exponent: digits === '' ? 0 : exponent,
  };
}

/**
 * Whether the double `d` that `text` parses to is exactly the number `text` denotes, as far as decimal
 * text can tell: `d`'s shortest decimal form (what every JSON and EDN writer prints for a double) must
 * denote the same number. `0.1` passes (it is how 0.1 is written); `1e400` (Infinity), `1e-400` (0) and
 * `0.30000000000000001` (0.3) do not: reading them as doubles would make different values equal.
 */
export function decimalHeldByDouble(text: string, d: number): boolean {
  if (!Number.isFinite(d)) return false;
  const a = exactDecimal(text);
  const b = exactDecimal(String(d));
  return a.digits === b.digits && a.exponent === b.exponent && (a.negative === b.negative || a.digits === '');
}

/** Whether a JSON text of this length can nest deeper than {@link MAX_NESTING}. */
export function mayNestTooDeep(textLength: number): boolean {
  return textLength > 2 * MAX_NESTING;
}

const SAFE_INTEGER_TEXT = /^-?\d{1,15}$/;
const INTEGER_TEXT = /^-?\d+$/;

/**
 * A JSON number's text as faultline's value: a double when it holds the number exactly, else a tagged
 * big integer, or a tagged decimal (`{"#bigdec": text}`, as EDN's `M` decimals) for a number outside
 * the double range or with more digits than a double keeps, so it is never rounded into equality.
 */
function numberValue(text: string): unknown {
  if (SAFE_INTEGER_TEXT.test(text)) return Number(text);
  if (!INTEGER_TEXT.test(text)) {
    const d = Number(text);
    return decimalHeldByDouble(text, d) ? d : { '#bigdec': text };
  }
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
  return mayHoldInexactNumber(text) ? parseJsonLossless(text) : v;
}
