/**
 * How EDN values live in faultline's JSON histories.
 *
 * The everyday conventions, which every checker relies on:
 * - keywords are plain strings without the colon (`:append` → "append", `:nemesis` → "nemesis");
 * - nil → null; true/false; integers and floats → JSON numbers;
 * - vectors and lists → arrays (EDN equality treats `[1 2]` and `(1 2)` as equal, so nothing is lost);
 * - maps → objects. Keyword, string and integer keys become the object's string keys (`{0 100}` →
 *   `{"0": 100}`, as in elle-cli's JSON twins);
 * - sets → `{"#set": [...]}`.
 *
 * Everything JSON cannot say directly is a **tagged value**: an object with exactly one key that
 * starts with `#`. Keys starting with `#` are reserved for these tags. The tags:
 *
 * | tag | meaning |
 * |---|---|
 * | `{"#set": [...]}` | an EDN set |
 * | `{"#str": "x"}` | an EDN string that looks like a keyword (lossless mode only, see below) |
 * | `{"#kw": "0"}` | a keyword whose name does not look like one, e.g. `:0` (lossless mode only) |
 * | `{"#sym": "java.sql.SQLException"}` | a symbol |
 * | `{"#char": "a"}` | a character literal `\a` (lossless mode; plain mode gives "a") |
 * | `{"#bigint": "123"}` | an integer written with `N`, or too large for a double |
 * | `{"#bigdec": "1.50"}` | a decimal written with `M` |
 * | `{"#ratio": "1/3"}` | a ratio |
 * | `{"#double": "1.0"}` | a float JSON would print as an integer, or `##Inf` / `##-Inf` / `##NaN` |
 * | `{"#map": [[k, v], ...]}` | a map whose keys cannot all be object keys without ambiguity |
 * | `{"#tag": ["inst", v]}` | a tagged literal `#inst v` (any tag) |
 *
 * **Strings vs keywords.** JSON has one string type, EDN has two. The EDN writer prints a plain string
 * as a keyword when it looks like one ({@link looksLikeKeyword}: `"read"`, `"timed-out"`, `"x"`) and as
 * an EDN string otherwise (`"x 0 1 y"`, `"0"`, `""`). The lossless reader (used for history import)
 * therefore tags only the EDN strings the writer would get wrong: those that look like keywords, such
 * as a nemesis value `"n1"`. Such strings are rare in histories (nemesis values, error texts) and never
 * sit where checkers read keys or micro-ops. Map keys follow the same rule, plus "integer-looking key →
 * integer"; a map whose keys would not survive that rule becomes `#map`.
 */

export type Tagged = { readonly [tag: `#${string}`]: unknown };

export const TAGS = [
  '#set',
  '#str',
  '#kw',
  '#sym',
  '#char',
  '#bigint',
  '#bigdec',
  '#ratio',
  '#double',
  '#map',
  '#tag',
] as const;
export type TagName = (typeof TAGS)[number];

/** The tag of a tagged value, or undefined for any other value. */
export function tagOf(v: unknown): TagName | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  let tag: string | undefined;
  for (const k in v) {
    if (tag !== undefined) return undefined;
    tag = k;
  }
  return tag !== undefined && tag.charCodeAt(0) === 35 /* # */ && (TAGS as readonly string[]).includes(tag)
    ? (tag as TagName)
    : undefined;
}

export function isEdnSet(v: unknown): v is { '#set': unknown[] } {
  return tagOf(v) === '#set' && Array.isArray((v as { '#set': unknown })['#set']);
}

/** The elements of an EDN set; also accepts a plain array, so callers can treat both alike. */
export function setItems(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isEdnSet(v)) return v['#set'];
  throw new TypeError('not an EDN set or array');
}

export function ednSet(items: unknown[]): { '#set': unknown[] } {
  return { '#set': items };
}

/**
 * The text of a string-like value: a plain string, or a tagged string, keyword, symbol or char.
 * Checkers that compare names (nemesis values, error reasons) can use this to ignore the tagging.
 */
export function textOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  const tag = tagOf(v);
  if (tag === '#str' || tag === '#kw' || tag === '#sym' || tag === '#char') {
    const s = (v as Record<string, unknown>)[tag];
    return typeof s === 'string' ? s : undefined;
  }
  return undefined;
}

/**
 * Whether the EDN writer prints this string as a keyword. Deliberately narrower than the EDN grammar:
 * a first character that cannot start a number (so "0", "-1", "+2" stay strings), then symbol
 * characters. No `#` anywhere at the start (reserved for tags), no whitespace, non-empty.
 */
export function looksLikeKeyword(s: string): boolean {
  const n = s.length;
  if (n === 0 || n > 200) return false;
  const c0 = s.charCodeAt(0);
  if (!isKeywordStart(c0)) {
    // "-" / "+" / "." alone or followed by a non-digit still reads as a symbol name.
    if (c0 !== 45 && c0 !== 43 && c0 !== 46) return false;
    if (n > 1) {
      const c1 = s.charCodeAt(1);
      if (c1 >= 48 && c1 <= 57) return false;
    }
  }
  for (let i = 1; i < n; i++) {
    if (!isKeywordChar(s.charCodeAt(i))) return false;
  }
  // A trailing or doubled "/" or ":" reads differently (namespace syntax, `::auto`).
  const last = s.charCodeAt(n - 1);
  if (last === 47 || last === 58) return false;
  if (s.includes('::') || s.indexOf('/') !== s.lastIndexOf('/')) return s === '/';
  return true;
}

function isKeywordStart(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || // a-z
    (c >= 65 && c <= 90) || // A-Z
    c === 42 || // *
    c === 33 || // !
    c === 95 || // _
    c === 63 || // ?
    c === 60 || // <
    c === 62 || // >
    c === 61 || // =
    c === 38 || // &
    c === 36 || // $
    c === 37 // %
  );
}

function isKeywordChar(c: number): boolean {
  return (
    isKeywordStart(c) ||
    (c >= 48 && c <= 57) ||
    c === 45 || // -
    c === 43 || // +
    c === 46 || // .
    c === 47 || // /
    c === 39 || // '
    c === 35 || // #
    c === 58 // :
  );
}

/** Whether an object key is printed as an EDN integer key (`"0"` → `0`). */
export function looksLikeIntegerKey(s: string): boolean {
  return /^-?(?:0|[1-9][0-9]{0,14})$/.test(s);
}

/**
 * An integer as an exact JS value: a number within ±(2^53 − 1), a bigint beyond (from a JSON/EDN
 * `{"#bigint": "…"}` or from arithmetic), so equal integers are `===`. Null when `v` is not an integer.
 */
export function exactInteger(v: unknown): number | bigint | null {
  if (typeof v === 'number') return Number.isInteger(v) ? v : null;
  if (typeof v === 'bigint') return canonicalInteger(v);
  if (tagOf(v) === '#bigint') {
    const digits = (v as { '#bigint': unknown })['#bigint'];
    if (typeof digits === 'string' && /^-?\d+$/.test(digits)) return canonicalInteger(BigInt(digits));
  }
  return null;
}

/** A bigint within the safe range as a number, so each integer has one representation. */
export function canonicalInteger(b: bigint): number | bigint {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** Exact integer sum (falls back to bigint arithmetic beyond the safe range). */
export function addIntegers(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const s = a + b;
    if (Number.isSafeInteger(s)) return s;
  }
  return canonicalInteger(BigInt(a) + BigInt(b));
}

/** Compare two exact integers (numbers or bigints): negative, zero or positive. */
export function compareIntegers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** An exact integer as JSON can hold it: a number when safe, else `{"#bigint": "digits"}`. */
export function integerValue(i: number | bigint): number | { '#bigint': string } {
  return typeof i === 'bigint' ? { '#bigint': i.toString() } : i;
}

/**
 * A decimal held exactly: `units` × 10^-`scale`. Balances such as 0.1 and 0.2 sum to exactly 0.3 this
 * way; as doubles they sum to 0.30000000000000004, and a correct bank would read as losing money.
 */
export interface ExactDecimal {
  readonly units: bigint;
  readonly scale: number;
}

/**
 * The most decimal places (or powers of ten) a decimal may carry: a double's shortest form needs at most
 * 324, and a `#bigdec` from a stranger's history must not make a sum allocate a number of a billion digits.
 */
const MAX_DECIMAL_EXPONENT = 400;

/**
 * A number as its shortest decimal form (what the history wrote, for any decimal a double holds), an
 * exact integer, or a `{"#bigdec": "1.50"}`, as an exact decimal; null for anything else (infinities
 * and NaN included).
 */
export function exactDecimal(v: unknown): ExactDecimal | null {
  const i = exactInteger(v);
  if (i !== null) return { units: BigInt(i), scale: 0 };
  if (typeof v === 'number') return Number.isFinite(v) ? parseDecimal(String(v)) : null;
  if (tagOf(v) === '#bigdec') {
    const text = (v as { '#bigdec': unknown })['#bigdec'];
    return typeof text === 'string' ? parseDecimal(text) : null;
  }
  return null;
}

function parseDecimal(text: string): ExactDecimal | null {
  const m = /^([+-]?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?M?$/.exec(text);
  if (!m) return null;
  const fraction = m[3] ?? '';
  const exponent = Number(m[4] ?? 0);
  if (Math.abs(exponent) > MAX_DECIMAL_EXPONENT || fraction.length > MAX_DECIMAL_EXPONENT) return null;
  let units = BigInt(`${m[2]}${fraction}`);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units: m[1] === '-' ? -units : units, scale };
}

/** The exact sum of two decimals. */
export function addDecimals(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  const scale = Math.max(a.scale, b.scale);
  return {
    units: a.units * 10n ** BigInt(scale - a.scale) + b.units * 10n ** BigInt(scale - b.scale),
    scale,
  };
}

/** Compare two exact decimals: negative, zero or positive. */
export function compareDecimals(a: ExactDecimal, b: ExactDecimal): number {
  const d = addDecimals(a, { units: -b.units, scale: b.scale }).units;
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** A decimal in plain notation, without trailing zeros after the point (`0.3`, `-12.5`, `100`). */
export function decimalText(d: ExactDecimal): string {
  const negative = d.units < 0n;
  const digits = (negative ? -d.units : d.units).toString().padStart(d.scale + 1, '0');
  const whole = digits.slice(0, digits.length - d.scale);
  const fraction = digits.slice(digits.length - d.scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * A decimal as JSON can hold it: an exact integer as {@link integerValue} gives it, a number when the
 * double reads back as the same decimal, else `{"#bigdec": "…"}`.
 */
export function decimalValue(d: ExactDecimal): number | { '#bigint': string } | { '#bigdec': string } {
  const text = decimalText(d);
  if (!text.includes('.')) return integerValue(canonicalInteger(BigInt(text)));
  const n = Number(text);
  const back = exactDecimal(n);
  return back !== null && compareDecimals(back, d) === 0 ? n : { '#bigdec': text };
}

/**
 * A Map key equal exactly for equal JSON values: a number, boolean or bigint as itself, nil (null or
 * absent) as null, a string as itself, and any structure as its canonical JSON text ({@link canonicalJson})
 * behind a NUL. Object key order and EDN set member order do not matter: two replicas, or a write and
 * the read of it, may list the same object's keys in different orders. A string that itself starts with
 * NUL is escaped, so no string shares a key with a structure.
 */
export function valueKey(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v.charCodeAt(0) === 0 ? `\u0000s${v}` : v;
  if (typeof v !== 'object') return v;
  return `\u0000${canonicalJson(v)}`;
}

/** JSON text with object keys sorted and EDN set members (`{"#set": [...]}`) in sorted order. */
export function canonicalJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return String(v);
  if (typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === '#set' && Array.isArray(o['#set']))
    return `{"#set":[${o['#set'].map(canonicalJson).sort().join(',')}]}`;
  keys.sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}
