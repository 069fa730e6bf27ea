import { decimalHeldByDouble, MAX_NESTING, NESTING_REASON } from './json-text.ts';
import { looksLikeIntegerKey, looksLikeKeyword, tagOf } from './values.ts';

/**
 * A hand-written EDN reader and writer, sized for Jepsen histories of hundreds of MB: one pass over the
 * string with char codes, no tokenizer objects, string/keyword slices without copying where possible.
 *
 * Values are converted by the conventions in ./values.ts. Two modes:
 * - `plain` (default for {@link parseEdn}): what checkers want. Keywords, strings and chars all become
 *   plain JS strings; integral floats become numbers.
 * - `lossless` (used by history import): additionally tags the few values whose EDN type the writer
 *   could not recover from JSON (keyword-looking strings, odd keywords, chars, integral floats, maps
 *   with ambiguous keys), so EDN → JSON → EDN gives back an equal EDN value.
 *
 * Numbers: integers within ±2^53 are JS numbers; larger integers and `N` literals are
 * `{"#bigint": "digits"}`; `M` decimals are `{"#bigdec": "text"}`; ratios are `{"#ratio": "1/3"}`
 * (all as strings, so no precision is lost). `##Inf`, `##-Inf`, `##NaN` are `{"#double": "Inf"}` etc.
 *
 * Supported syntax: nil/true/false, numbers, strings with escapes (`\t \n \r \b \f \" \\ \uXXXX`),
 * chars (`\a`, `\newline`, `\space`, `\tab`, `\return`, `\formfeed`, `\backspace`, `\uXXXX`, `\oNNN`),
 * keywords, symbols, lists, vectors, maps, sets, tagged literals (`#inst "…"` → `{"#tag": ["inst", "…"]}`),
 * `#_` discard, `;` comments, commas as whitespace, `^meta` (read and dropped). Namespaced maps
 * (`#:ns{}`), reader conditionals and regexes are rejected with a clear error: they are Clojure, not EDN.
 */

export type EdnMode = 'plain' | 'lossless';

export class EdnSyntaxError extends Error {
  override readonly name = 'EdnSyntaxError';
  constructor(
    readonly line: number,
    readonly offset: number,
    readonly reason: string,
    /** The text ended inside a value: more input could complete it (used by the streaming reader). */
    readonly incomplete = false,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** 1-based line number of a character offset. Only called on error paths and for locating ops. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  let i = text.indexOf('\n');
  while (i !== -1 && i < offset) {
    line++;
    i = text.indexOf('\n', i + 1);
  }
  return line;
}

// Characters that end a token: whitespace, comma, brackets, quote, semicolon. (`#` and `\` do not.)
const DELIM = new Uint8Array(128);
for (const c of ' \t\n\r\f\v,()[]{}";') DELIM[c.charCodeAt(0)] = 1;
const WS = new Uint8Array(128);
for (const c of ' \t\n\r\f\v,') WS[c.charCodeAt(0)] = 1;

/** Char code returned by {@link EdnReader.skip} at the end of input. */
export const END = -1;

function isDelim(c: number): boolean {
  // charCodeAt past the end is NaN, which fails `c >= 0`: the end of input ends a token too.
  return !(c >= 0) || (c < 128 && DELIM[c] === 1);
}

const CHAR_NAMES: Record<string, string> = {
  newline: '\n',
  space: ' ',
  tab: '\t',
  return: '\r',
  formfeed: '\f',
  backspace: '\b',
};

const NO_VALUE: unique symbol = Symbol('no value');

export interface Keyword {
  name: string;
  kwLike: boolean;
}

export class EdnReader {
  pos = 0;
  private readonly n: number;
  /** Collections, tags and metadata being read: past MAX_NESTING the value is rejected (no stack overflow). */
  private depth = 0;
  constructor(
    readonly text: string,
    readonly mode: EdnMode = 'plain',
    /** Interned keywords; a streaming reader passes one cache to the reader of every chunk. */
    private readonly kwCache: Map<number, Keyword> = new Map(),
  ) {
    this.n = text.length;
  }

  fail(reason: string, offset = this.pos): never {
    throw new EdnSyntaxError(lineAt(this.text, offset), offset, reason);
  }

  /** Fails because the input ended inside a value. */
  failEnd(reason: string, offset = this.pos): never {
    throw new EdnSyntaxError(lineAt(this.text, offset), offset, reason, true);
  }

  /** Skips whitespace, commas, comments and `#_` discards; returns the next char code, or END. */
  skip(): number {
    const t = this.text;
    for (;;) {
      if (this.pos >= this.n) return END;
      const c = t.charCodeAt(this.pos);
      if (c < 128 && WS[c] === 1) {
        this.pos++;
      } else if (c === 59 /* ; */) {
        const nl = t.indexOf('\n', this.pos);
        this.pos = nl === -1 ? this.n : nl + 1;
      } else if (c === 35 /* # */ && t.charCodeAt(this.pos + 1) === 95 /* _ */) {
        this.pos += 2;
        if (++this.depth > MAX_NESTING) this.fail(NESTING_REASON);
        this.readRequired('a value after #_');
        this.depth--;
      } else if (c === 0xfeff /* BOM */) {
        this.pos++;
      } else {
        return c;
      }
    }
  }

  private readRequired(what: string): unknown {
    const c = this.skip();
    if (c === END) this.failEnd(`end of input while expecting ${what}`);
    const v = this.readValueAt(c);
    if (v === NO_VALUE) this.fail(`unexpected '${String.fromCharCode(c)}' while expecting ${what}`);
    return v;
  }

  /** Reads the next value; undefined at the end of input. Call {@link skip} first to learn its offset. */
  read(): unknown {
    const c = this.skip();
    if (c === END) return undefined;
    const v = this.readValueAt(c);
    if (v === NO_VALUE) this.fail(`unexpected '${String.fromCharCode(c)}'`);
    return v;
  }

  /** Returns NO_VALUE on a closing bracket (left unconsumed) so collections can stop there. */
  private readValueAt(c: number): unknown {
    switch (c) {
      case 123 /* { */:
      case 91 /* [ */:
      case 40 /* ( */:
      case 35 /* # */:
      case 94 /* ^ */:
        {
          if (++this.depth > MAX_NESTING) this.fail(NESTING_REASON);
          const v = this.readNested(c);
          this.depth--;
          return v;
        }
      case 34 /* " */:
        return this.readString();
      case 58 /* : */:
        return this.readKeyword();
      case 92 /* \ */:
        return this.readChar();
      case 41:
      case 93:
      case 125:
        return NO_VALUE;
      default:
        if ((c >= 48 && c <= 57) || ((c === 45 || c === 43) && isDigit(this.text.charCodeAt(this.pos + 1)))) {
          return this.readNumber();
        }
        return this.readSymbol();
    }
  }

  /** A value that may contain other values: a collection, a dispatch (`#…`) or metadata. */
  private readNested(c: number): unknown {
    switch (c) {
      case 123 /* { */:
        this.pos++;
        return this.readMap();
      case 91 /* [ */:
        this.pos++;
        return this.readSeq(93);
      case 40 /* ( */:
        this.pos++;
        return this.readSeq(41);
      case 35 /* # */:
        return this.readDispatch();
      default:
        this.pos++;
        this.readRequired('metadata after ^');
        return this.readRequired('a value after its metadata');
    }
  }

  private readSeq(close: number): unknown[] {
    const start = this.pos - 1;
    const out: unknown[] = [];
    for (;;) {
      const c = this.skip();
      if (c === END) this.failEnd(`unterminated ${close === 93 ? 'vector' : 'list'}`, start);
      if (c === close) {
        this.pos++;
        return out;
      }
      const v = this.readValueAt(c);
      if (v === NO_VALUE)
        this.fail(`unexpected '${String.fromCharCode(c)}' in ${close === 93 ? 'vector' : 'list'}`);
      out.push(v);
    }
  }

  private readMap(): unknown {
    const start = this.pos - 1;
    const obj: Record<string, unknown> = {};
    // Set when a key cannot be an object key without ambiguity; from then on pairs are collected.
    let pairs: [unknown, unknown][] | undefined;
    for (;;) {
      let c = this.skip();
      if (c === END) this.failEnd('unterminated map', start);
      if (c === 125 /* } */) {
        this.pos++;
        if (pairs) return { '#map': pairs };
        // A one-key map whose key is a tag name would read back as that tag.
        if (tagOf(obj) !== undefined) return { '#map': Object.keys(obj).map((p) => [decodeKey(p), obj[p]]) };
        return obj;
      }
      const keyOffset = this.pos;
      this.readMapKey(c);
      const prop = this.keyProp;
      const keyValue = this.keyValue;
      c = this.skip();
      if (c === END) this.failEnd('unterminated map', start);
      const value = this.readValueAt(c);
      if (value === NO_VALUE) this.fail('map has a key with no value', keyOffset);
      if (pairs) {
        pairs.push([keyValue, value]);
      } else if (prop !== undefined && (obj[prop] === undefined || !Object.hasOwn(obj, prop))) {
        if (prop === '__proto__') {
          Object.defineProperty(obj, prop, { value, enumerable: true, writable: true, configurable: true });
        } else obj[prop] = value;
      } else {
        pairs = Object.keys(obj).map((p) => [decodeKey(p), obj[p]] as [unknown, unknown]);
        pairs.push([keyValue, value]);
      }
    }
  }

  // Results of readMapKey, kept in fields so reading a key allocates nothing.
  private keyValue: unknown;
  private keyProp: string | undefined;

  /** Reads a map key: its value form, and its object-key form when it has an unambiguous one. */
  private readMapKey(c: number): void {
    const lossless = this.mode === 'lossless';
    if (c === 58 /* : */) {
      const kw = this.readKeywordName();
      if (!lossless || kw.kwLike) {
        this.keyValue = kw.name;
        this.keyProp = kw.name;
      } else {
        this.keyValue = { '#kw': kw.name };
        this.keyProp = undefined;
      }
      return;
    }
    if (c === 34 /* " */) {
      const s = this.readRawString();
      this.keyValue = s;
      this.keyProp = s;
      if (lossless) {
        const kwLike = looksLikeKeyword(s);
        if (kwLike) this.keyValue = { '#str': s };
        if (kwLike || looksLikeIntegerKey(s)) this.keyProp = undefined;
      }
      return;
    }
    const v = this.readValueAt(c);
    if (v === NO_VALUE) this.fail(`unexpected '${String.fromCharCode(c)}' as a map key`);
    this.keyValue = v;
    this.keyProp = undefined;
    if (typeof v === 'number' && Number.isInteger(v)) {
      const p = String(v);
      if (looksLikeIntegerKey(p)) this.keyProp = p;
    } else if (!lossless && typeof v === 'string') this.keyProp = v;
  }

  private readString(): unknown {
    const s = this.readRawString();
    return this.mode === 'lossless' && looksLikeKeyword(s) ? { '#str': s } : s;
  }

  private readRawString(): string {
    const t = this.text;
    const start = this.pos + 1;
    // Scan to the closing quote or the first backslash. (Not indexOf('\\'): with no backslash left in
    // the file, that would search to the end for every string, which is quadratic on big histories.)
    let i = start;
    for (;;) {
      if (i >= this.n) this.failEnd('unterminated string');
      const c = t.charCodeAt(i);
      if (c === 34) {
        this.pos = i + 1;
        return t.slice(start, i);
      }
      if (c === 92) break;
      i++;
    }
    // Slow path: escapes.
    let out = t.slice(start, i);
    for (;;) {
      if (i >= this.n) this.failEnd('unterminated string', start - 1);
      const c = t.charCodeAt(i);
      if (c === 34) break;
      if (c !== 92) {
        let j = i + 1;
        while (j < this.n) {
          const d = t.charCodeAt(j);
          if (d === 34 || d === 92) break;
          j++;
        }
        out += t.slice(i, j);
        i = j;
        continue;
      }
      const e = t.charCodeAt(i + 1);
      switch (e) {
        case 110:
          out += '\n';
          break;
        case 116:
          out += '\t';
          break;
        case 114:
          out += '\r';
          break;
        case 98:
          out += '\b';
          break;
        case 102:
          out += '\f';
          break;
        case 34:
          out += '"';
          break;
        case 92:
          out += '\\';
          break;
        case 117: {
          const hex = t.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad \\u escape in string', i);
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          this.fail(`unknown escape \\${String.fromCharCode(e)} in string`, i);
      }
      i += 2;
    }
    this.pos = i + 1;
    return out;
  }

  // Keywords repeat endlessly in histories (:type :invoke :f :txn ...). Interning them by a hash of
  // their characters avoids allocating a new string (and re-checking its shape) for each occurrence.

  private readKeywordName(): Keyword {
    const t = this.text;
    const start = this.pos + 1;
    let i = start;
    let h = 0;
    for (;;) {
      const c = t.charCodeAt(i);
      if (isDelim(c)) break;
      h = (Math.imul(h, 31) + c) | 0;
      i++;
    }
    const len = i - start;
    if (len === 0) this.fail('empty keyword');
    this.pos = i;
    h = (Math.imul(h, 31) + len) | 0;
    const hit = this.kwCache.get(h);
    if (hit !== undefined && hit.name.length === len && t.startsWith(hit.name, start)) return hit;
    const name = t.slice(start, i);
    const kw: Keyword = { name, kwLike: looksLikeKeyword(name) };
    if (this.kwCache.size < 4096) this.kwCache.set(h, kw);
    return kw;
  }

  private readKeyword(): unknown {
    const kw = this.readKeywordName();
    if (this.mode !== 'lossless' || kw.kwLike) return kw.name;
    return { '#kw': kw.name };
  }

  private readToken(): string {
    const t = this.text;
    const start = this.pos;
    let i = start;
    while (!isDelim(t.charCodeAt(i))) i++;
    this.pos = i;
    return t.slice(start, i);
  }

  private readNumber(): unknown {
    const t = this.text;
    const start = this.pos;
    // Fast path: a plain decimal integer that fits a double exactly.
    let i = start;
    let neg = false;
    const c0 = t.charCodeAt(i);
    if (c0 === 45 || c0 === 43) {
      neg = c0 === 45;
      i++;
    }
    let v = 0;
    const digitsStart = i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        i++;
      } else break;
    }
    if (isDelim(t.charCodeAt(i)) && i - digitsStart <= 15) {
      this.pos = i;
      return neg ? -v : v;
    }
    const tok = this.readToken();
    if (/^[-+]?[0-9]+$/.test(tok)) {
      const big = BigInt(tok);
      if (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER))
        return Number(big);
      return { '#bigint': big.toString() };
    }
    // Hex integers (Clojure prints object addresses this way inside #object[...]).
    const hex = /^([-+]?)0[xX]([0-9a-fA-F]+)(N?)$/.exec(tok);
    if (hex) {
      const big = BigInt(`0x${hex[2]}`) * (hex[1] === '-' ? -1n : 1n);
      if (hex[3] === '' && big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)) {
        return Number(big);
      }
      return { '#bigint': big.toString() };
    }
    if (/^[-+]?[0-9]+N$/.test(tok)) return { '#bigint': BigInt(tok.slice(0, -1)).toString() };
    if (/^[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?M$/.test(tok)) return { '#bigdec': tok.slice(0, -1) };
    if (/^[-+]?[0-9]+\/[0-9]+$/.test(tok)) return { '#ratio': tok.replace(/^\+/, '') };
    if (/^[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/.test(tok)) {
      const d = Number(tok);
      // Lossless: a float that JSON would print as an integer, or one a double cannot hold exactly
      // (1e400, 1e-400, 0.30000000000000001), keeps its text rather than be rounded into equality.
      if (this.mode === 'lossless' && (Number.isInteger(d) || !decimalHeldByDouble(tok, d)))
        return { '#double': tok };
      return d;
    }
    return this.fail(`bad number '${tok}'`, start);
  }

  private readChar(): unknown {
    const t = this.text;
    const start = this.pos;
    if (this.pos + 1 >= this.n) this.failEnd('end of input after \\');
    // The first character is taken literally even if it is a delimiter: `\(`, `\ ` (rare), `\,`.
    let i = this.pos + 2;
    while (!isDelim(t.charCodeAt(i))) i++;
    const name = t.slice(this.pos + 1, i);
    this.pos = i;
    let ch: string | undefined;
    if (name.length === 1) ch = name;
    else if (CHAR_NAMES[name] !== undefined) ch = CHAR_NAMES[name];
    else if (/^u[0-9a-fA-F]{4}$/.test(name)) ch = String.fromCharCode(Number.parseInt(name.slice(1), 16));
    else if (/^o[0-7]{1,3}$/.test(name)) ch = String.fromCharCode(Number.parseInt(name.slice(1), 8));
    else if (name.length === 2 && name.codePointAt(0)! > 0xffff) ch = name;
    if (ch === undefined) this.fail(`unknown character literal \\${name}`, start);
    return this.mode === 'lossless' ? { '#char': ch } : ch;
  }

  private readSymbol(): unknown {
    const start = this.pos;
    const tok = this.readToken();
    if (tok === 'nil') return null;
    if (tok === 'true') return true;
    if (tok === 'false') return false;
    if (tok.length === 0) this.fail(`unexpected '${this.text[start] ?? ''}'`, start);
    return { '#sym': tok };
  }

  private readDispatch(): unknown {
    const t = this.text;
    const start = this.pos;
    const c = t.charCodeAt(this.pos + 1);
    if (c === 123 /* { */) {
      this.pos += 2;
      const items = this.readSeq(125);
      return { '#set': items };
    }
    if (c === 35 /* # */) {
      this.pos += 2;
      const tok = this.readToken();
      if (tok === 'Inf' || tok === '-Inf' || tok === 'NaN') return { '#double': tok };
      return this.fail(`unknown symbolic value ##${tok}`, start);
    }
    if (c === 58 /* : */) this.fail('namespaced maps (#:ns{...}) are not supported', start);
    if (c === 34 /* " */) this.fail('regex literals (#"...") are not EDN', start);
    if (c === 63 /* ? */) this.fail('reader conditionals (#?) are not EDN', start);
    this.pos++;
    const tag = this.readToken();
    if (tag.length === 0 || !/^[A-Za-z]/.test(tag)) this.fail(`bad tag '#${tag}'`, start);
    const value = this.readRequired(`a value after #${tag}`);
    return { '#tag': [tag, value] };
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Inverse of a safe object key, for maps that switch to the `#map` form midway. */
function decodeKey(p: string): unknown {
  return looksLikeIntegerKey(p) ? Number(p) : p;
}

/** Parses every top-level value of an EDN text. Throws {@link EdnSyntaxError} naming the line. */
export function parseEdn(text: string, options: { mode?: EdnMode } = {}): unknown[] {
  const r = new EdnReader(text, options.mode ?? 'plain');
  const out: unknown[] = [];
  for (;;) {
    const c = r.skip();
    if (c === END) return out;
    out.push(r.read());
  }
}

/**
 * The values of an EDN history, by elle-cli's shape rule: a file holding exactly one vector or list is
 * that collection's elements; otherwise the top-level values themselves are the history. Yields each
 * value with the character offset where it starts (for error lines), one at a time.
 */
export function* ednHistoryValues(
  text: string,
  mode: EdnMode = 'lossless',
): Generator<{ value: unknown; offset: number }> {
  const r = new EdnReader(text, mode);
  const first = r.skip();
  if (first === 91 || first === 40) {
    const openAt = r.pos;
    const close = first === 91 ? 93 : 41;
    r.pos++;
    for (;;) {
      const c = r.skip();
      if (c === END) r.fail(`unterminated ${first === 91 ? 'vector' : 'list'} holding the history`, openAt);
      if (c === close) {
        r.pos++;
        break;
      }
      const offset = r.pos;
      yield { value: r.read(), offset };
    }
    const after = r.skip();
    if (after !== END) {
      r.fail('text after the history vector: a file is either one vector/list of ops or a series of op maps');
    }
    return;
  }
  for (;;) {
    const c = r.skip();
    if (c === END) return;
    const offset = r.pos;
    yield { value: r.read(), offset };
  }
}

// ---------------------------------------------------------------------------------------------------
// Writer

const STRING_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
  '\b': '\\b',
  '\f': '\\f',
};

// Characters a string cannot hold raw: quote, backslash, control characters, and UTF-16 surrogates
// without their pair (UTF-8 cannot encode one: written raw it would come back as U+FFFD).
const STRING_NEEDS_ESCAPE =
  /["\\\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function ednString(s: string): string {
  STRING_NEEDS_ESCAPE.lastIndex = 0;
  if (!STRING_NEEDS_ESCAPE.test(s)) return `"${s}"`;
  return `"${s.replace(STRING_NEEDS_ESCAPE, (ch) => STRING_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/**
 * A character literal, or undefined when `ch` is not exactly one character (a longer payload written
 * raw after `\\` would be read back as more values: a forged op). Anything but printable ASCII is
 * written as `\\uXXXX`, which reads back whatever bytes follow.
 */
function ednChar(ch: string): string | undefined {
  for (const [name, c] of Object.entries(CHAR_NAMES)) if (c === ch) return `\\${name}`;
  const code = ch.charCodeAt(0);
  if (ch.length === 1) {
    if (code > 32 && code < 127) return `\\${ch}`;
    if (code < 0xd800 || code > 0xdfff) return `\\u${code.toString(16).padStart(4, '0')}`;
    return undefined;
  }
  // A character beyond the BMP (one code point, two UTF-16 units): EDN has no escape for it.
  if (ch.length === 2 && (ch.codePointAt(0) as number) > 0xffff) return `\\${ch}`;
  return undefined;
}

// A keyword or symbol name the reader reads back as the same single token: no delimiter, whitespace
// or control character (each would end the token and let the rest read as further values).
const TOKEN_NAME = /^[^\s,()[\]{}";\u0000-\u001f\u007f\ud800-\udfff]+$/;
// Symbols that would read back as something else: literals, numbers, keywords, reader macros.
const NOT_A_SYMBOL = /^(?:nil|true|false|[-+]?\.?[0-9].*|[:#\\^@~`'].*)$/;
/** An EDN tag: a symbol that starts with a letter (so never `#_`, the discard macro, or `##Inf`). */
const TAG_NAME = /^[A-Za-z][A-Za-z0-9*+!\-_?$%&=<>.'/:]*$/;

function ednKeywordName(x: unknown): x is string {
  return typeof x === 'string' && TOKEN_NAME.test(x);
}

function ednSymbolName(x: unknown): x is string {
  return ednKeywordName(x) && !NOT_A_SYMBOL.test(x);
}

/** A map key: integer-looking → integer, keyword-looking → keyword, else string. */
export function ednKey(k: string): string {
  if (looksLikeIntegerKey(k)) return k;
  if (looksLikeKeyword(k)) return `:${k}`;
  return ednString(k);
}

/**
 * Writes a JSON-convention value as EDN text (the inverse of lossless parsing). Plain strings that look
 * like keywords become keywords; see ./values.ts for the tags.
 */
export function toEdn(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  switch (typeof v) {
    case 'string':
      return looksLikeKeyword(v) ? `:${v}` : ednString(v);
    case 'number':
      if (!Number.isFinite(v)) return Number.isNaN(v) ? '##NaN' : v > 0 ? '##Inf' : '##-Inf';
      return String(v).replace('e+', 'e');
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return `${v}N`;
    case 'object':
      break;
    default:
      throw new TypeError(`cannot write a ${typeof v} as EDN`);
  }
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ' ' : '') + toEdn(v[i]);
    return `${s}]`;
  }
  const tag = tagOf(v);
  if (tag !== undefined) {
    const x = (v as Record<string, unknown>)[tag];
    switch (tag) {
      case '#set':
        if (Array.isArray(x)) return `#{${x.map(toEdn).join(' ')}}`;
        break;
      case '#str':
        if (typeof x === 'string') return ednString(x);
        break;
      case '#kw':
        if (ednKeywordName(x)) return `:${x}`;
        break;
      case '#sym':
        if (ednSymbolName(x)) return x;
        break;
      case '#char': {
        const lit = typeof x === 'string' ? ednChar(x) : undefined;
        if (lit !== undefined) return lit;
        break;
      }
      case '#bigint':
        if (typeof x === 'string' && /^-?[0-9]+$/.test(x)) return `${x}N`;
        break;
      case '#bigdec':
        if (typeof x === 'string' && /^[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/.test(x)) return `${x}M`;
        break;
      case '#ratio':
        if (typeof x === 'string' && /^-?[0-9]+\/[0-9]+$/.test(x)) return x;
        break;
      case '#double':
        if (x === 'Inf' || x === '-Inf' || x === 'NaN') return `##${x}`;
        if (typeof x === 'string' && /^[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/.test(x)) {
          return /[.eE]/.test(x) ? x : `${x}.0`;
        }
        break;
      case '#map':
        if (Array.isArray(x) && x.every((p) => Array.isArray(p) && p.length === 2)) {
          return `{${(x as [unknown, unknown][]).map(([k, val]) => `${toEdn(k)} ${toEdn(val)}`).join(', ')}}`;
        }
        break;
      case '#tag':
        if (Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && TAG_NAME.test(x[0]))
          return `#${x[0]} ${toEdn(x[1])}`;
        break;
    }
    throw new TypeError(`malformed tagged value ${JSON.stringify(v)}`);
  }
  let s = '{';
  let first = true;
  for (const k in v as Record<string, unknown>) {
    if (!Object.hasOwn(v, k)) continue;
    s += `${first ? '' : ', '}${ednKey(k)} ${toEdn((v as Record<string, unknown>)[k])}`;
    first = false;
  }
  return `${s}}`;
}
