import type { EventColumns, EventColumnsEncoder } from './event-columns.ts';
import * as columnLayout from './event-columns.ts';

// Bound once here: a module loader that compiles imports into getters would otherwise call one for
// every constant in the scanner's inner loops.
const {
  F_ERROR,
  F_INDEX,
  F_INTENDED,
  F_TIME,
  F_VALUE,
  FLOATS,
  I_EPOCH,
  I_ERROR,
  I_F,
  I_KEY,
  I_NODE,
  I_PROCESS,
  I_VALUE,
  INTS,
  NULL,
  NUMBER,
  STRING,
  T_ERROR,
  T_TYPE,
  T_VALUE,
  TAGS,
  TREE,
  TREE_INT,
  TREE_LIST,
  TREE_MAX_DEPTH,
  TREE_NULL,
  TREE_STRING,
  TYPE_CODE,
} = columnLayout;

/**
 * A scanner that turns a block of history lines straight into event columns (./event-columns.ts),
 * without `JSON.parse` and without making an event object, for lines in the common shape writers
 * produce. `JSON.parse`, then validating, then encoding each event cost a reading thread about three
 * times what scanning the characters once does; on a transaction history (mostly distinct lists)
 * that was most of the time to read it.
 *
 * The fast grammar is a strict subset of what the reader accepts, chosen so that a line in it means
 * exactly what `JSON.parse` plus the event check (./validate.ts) make of it:
 * - an object with no whitespace, each field at most once, only the fields the columns carry, and
 *   every required one (`index type f value process time node faultEpoch`; `key error intendedTime`
 *   optional);
 * - strings without escapes or control characters (their text is their value);
 * - numbers that are integers of at most 15 digits (exact as doubles, so no inexact-number handling
 *   applies), no leading zero, no `-0`, no fraction or exponent; values and list elements within
 *   int32 where the columns need it;
 * - values that are null, such an integer, a string, or a compact tree (lists of those, as
 *   {@link isCompactTree} in ./event-columns.ts defines).
 *
 * A block with any line off this grammar (a blank line, CRLF, a decimal, an escape, an extra field, an
 * invalid event, an index out of sequence) yields null and is parsed the ordinary way, which gives the
 * same events or the exact error with its line. So the scanner never decides anything the reader
 * would decide otherwise; it only skips work on lines whose meaning is plain.
 */
export class EventLineScanner {
  private s: Buffer = EMPTY;
  private i = 0;
  /** How far a line may be read: the block's end (each line's own end is found by parsing it). */
  private end = 0;
  /** Last string seen per (length, first character), so repeated short strings skip slicing. */
  private readonly recent: (string | undefined)[] = new Array(STRING_CACHE);
  private readonly recentRef = new Int32Array(STRING_CACHE);
  /** Each field name's length by its place in the last line read (the next line's first guess). */
  private readonly nameLength = new Uint8Array(16);
  /** The encoder's tree while a batch is scanned, and its int32 slots in use (two per node). */
  private tree: Int32Array<ArrayBuffer> = EMPTY_TREE;
  private treeUsed = 0;

  constructor(private readonly encoder: EventColumnsEncoder) {}

  /**
   * Columns for `text[from, to)` (UTF-8 bytes of `lines` lines, no trailing newline), each line an
   * event, the first with index `next` (or, when null, its own index, as a part read on its own takes
   * it); null when any line is off the fast grammar (nothing is then left in the encoder's tables).
   */
  scan(text: Buffer, from: number, to: number, lines: number, next: number | null): EventColumns | null {
    const encoder = this.encoder;
    encoder.begin();
    this.tree = encoder.treeInProgress();
    this.treeUsed = encoder.treeUsed();
    this.recent.fill(undefined);
    const floats = new Float64Array(FLOATS * lines);
    const ints = new Int32Array(INTS * lines);
    const tags = new Uint8Array(TAGS * lines);
    this.s = text;
    let start = from;
    let base = next;
    // A line ends where its object closes, which must be at a newline or at `to`: the parse finds each
    // line's end, so no search for newlines goes before it (a line is read once). Until then the block's
    // end bounds what a line may read; a newline inside a string or a name ends the fast grammar.
    this.end = to;
    for (let row = 0; row < lines; row++) {
      this.i = start;
      if (!this.event(floats, ints, tags, row)) return this.abandon();
      const end = this.i;
      if (end !== to && text[end] !== NEWLINE) return this.abandon();
      const index = floats[FLOATS * row + F_INDEX] as number;
      if (base === null) base = index;
      else if (index !== base + row) return this.abandon();
      start = end + 1;
    }
    this.s = EMPTY;
    if (start !== to + 1) return this.abandon();
    encoder.treeDone(this.tree, this.treeUsed);
    this.tree = EMPTY_TREE;
    return encoder.columns(lines, floats, ints, tags);
  }

  private abandon(): null {
    this.s = EMPTY;
    this.encoder.treeDone(this.tree, 0);
    this.tree = EMPTY_TREE;
    this.encoder.abandon();
    return null;
  }

  /** One line, `{…}` from `this.i`, into row `row`; leaves `this.i` just after its closing brace. */
  private event(floats: Float64Array, ints: Int32Array, tags: Uint8Array, row: number): boolean {
    const s = this.s;
    if (s[this.i] !== OPEN_BRACE) return false;
    const fo = FLOATS * row;
    const io = INTS * row;
    const to = TAGS * row;
    ints[io + I_KEY] = -1;
    floats[fo + F_INTENDED] = Number.NaN;
    let seen = 0;
    const nameLength = this.nameLength;
    this.i++;
    for (let k = 0; ; k++) {
      const ks = this.i + 1;
      if (s[this.i] !== QUOTE) return false;
      // Lines repeat their fields in one order: where the previous line's k-th name ended is the first
      // place to look. A known name there, closed by a quote and a colon, is this name (names have no
      // quotes, so the first quote after its start is that one); anything else is looked for.
      let ke = ks + (nameLength[k & 15] as number);
      let field = ke < this.end && s[ke] === QUOTE && s[ke + 1] === COLON ? fieldAt(s, ks, ke - ks) : 0;
      if (field === 0) {
        ke = ks;
        while (ke < this.end && s[ke] !== QUOTE) ke++;
        if (ke >= this.end || s[ke + 1] !== COLON) return false;
        nameLength[k & 15] = ke - ks;
        field = fieldAt(s, ks, ke - ks);
      }
      this.i = ke + 2;
      if (field === 0 || (seen & field) !== 0) return false;
      seen |= field;
      switch (field) {
        case INDEX: {
          const v = this.integer(false, 15);
          if (v < 0) return false;
          floats[fo + F_INDEX] = v;
          break;
        }
        case TYPE: {
          const t = this.type();
          if (t < 0) return false;
          tags[to + T_TYPE] = t;
          break;
        }
        case F: {
          const r = this.string();
          if (r === NO_STRING) return false;
          ints[io + I_F] = r;
          break;
        }
        case VALUE: {
          const tag = this.value(floats, fo + F_VALUE, ints, io + I_VALUE);
          if (tag < 0) return false;
          tags[to + T_VALUE] = tag;
          break;
        }
        case PROCESS: {
          if (word4(s, this.i) === Q_NEM && word4(s, this.i + 4) === ESIS && s[this.i + 8] === QUOTE) {
            this.i += 9;
            ints[io + I_PROCESS] = -1;
          } else {
            const v = this.integer(false, 10);
            if (v < 0 || v > 0x7fffffff) return false;
            ints[io + I_PROCESS] = v;
          }
          break;
        }
        case TIME: {
          const v = this.integer(false, 15);
          if (v < 0) return false;
          floats[fo + F_TIME] = v;
          break;
        }
        case NODE: {
          const r = this.nullOrString();
          if (r === NO_STRING) return false;
          ints[io + I_NODE] = r;
          break;
        }
        case EPOCH: {
          const r = this.faultEpoch();
          if (r === NO_STRING) return false;
          ints[io + I_EPOCH] = r;
          break;
        }
        case KEY: {
          const r = this.string();
          if (r === NO_STRING) return false;
          ints[io + I_KEY] = r;
          break;
        }
        case ERROR: {
          const tag = this.value(floats, fo + F_ERROR, ints, io + I_ERROR);
          if (tag < 0) return false;
          tags[to + T_ERROR] = tag;
          break;
        }
        default: {
          // INTENDED: a non-negative integer here (anything else goes the ordinary way).
          const v = this.integer(false, 15);
          if (v < 0) return false;
          floats[fo + F_INTENDED] = v;
        }
      }
      const c = s[this.i] as number;
      if (c === COMMA) {
        this.i++;
        continue;
      }
      this.i++;
      return c === CLOSE_BRACE && (seen & REQUIRED) === REQUIRED;
    }
  }

  /** `"invoke"`, `"ok"`, `"fail"` or `"info"` as its type code; -1 for anything else. */
  private type(): number {
    const s = this.s;
    const i = this.i;
    const w = word4(s, i);
    if (w === Q_OK_Q) {
      this.i = i + 4;
      return CODE_OK;
    }
    if (w === Q_INV && word4(s, i + 4) === OKE_Q) {
      this.i = i + 8;
      return CODE_INVOKE;
    }
    if (w === Q_FAI && word4(s, i + 2) === AIL_Q) {
      this.i = i + 6;
      return CODE_FAIL;
    }
    if (w === Q_INF && word4(s, i + 2) === NFO_Q) {
      this.i = i + 6;
      return CODE_INFO;
    }
    return -1;
  }

  /**
   * The magnitude of an integer of at most `digits` digits, -1 when the text there is not one; with
   * `negative` it may have a minus sign ({@link negative} says whether it had).
   */
  private integer(negative: boolean, digits: number): number {
    const s = this.s;
    let i = this.i;
    let minus = false;
    if (negative && s[i] === MINUS) {
      minus = true;
      i++;
    }
    const d0 = i;
    let v = 0;
    let c = s[i] as number;
    while (c >= ZERO && c <= NINE) {
      v = v * 10 + (c - ZERO);
      c = s[++i] as number;
    }
    const n = i - d0;
    if (n === 0 || n > digits || (n > 1 && s[d0] === ZERO)) return -1;
    if (c === DOT || c === LOWER_E || c === UPPER_E) return -1;
    if (minus && v === 0) return -1; // -0 is not 0 to JSON.parse
    this.i = i;
    this.negative = minus;
    return v;
  }

  /** Whether the last {@link integer} read with `negative` had a minus sign. */
  private negative = false;

  /** A value or error: null, an integer, a string or a compact tree; its tag, or -1. */
  private value(floats: Float64Array, fi: number, ints: Int32Array, ii: number): number {
    const s = this.s;
    const c = s[this.i] as number;
    if (c === LOWER_N) {
      if (word4(s, this.i) !== NULL4) return -1;
      this.i += 4;
      return NULL;
    }
    if (c === QUOTE) {
      const r = this.string();
      if (r === NO_STRING) return -1;
      ints[ii] = r;
      return STRING;
    }
    if (c === OPEN_BRACKET) {
      ints[ii] = this.treeUsed >> 1;
      return this.list(1) ? TREE : -1;
    }
    const v = this.integer(true, 15);
    if (v < 0) return -1;
    floats[fi] = this.negative ? -v : v;
    return NUMBER;
  }

  /**
   * A list at `this.i` (its `[`), `depth` levels deep: its node, then its elements', appended to the
   * tree. Integers are read here rather than by {@link integer} and nodes written straight into the
   * array: this loop runs for every element of every transaction, and the calls were most of its cost.
   */
  private list(depth: number): boolean {
    const s = this.s;
    const node = this.treeUsed;
    // Every node starts at a distinct byte, so twice the bytes left to read (two slots per node) is room
    // for the whole list: made once here, not checked per element.
    const room = node + 2 * (this.end - this.i) + 2;
    let tree = room > this.tree.length ? this.growTo(room) : this.tree;
    tree[node] = TREE_LIST;
    let used = node + 2;
    let i = this.i + 1;
    let length = 0;
    if (s[i] === CLOSE_BRACKET) {
      tree[node + 1] = 0;
      this.treeUsed = used;
      this.i = i + 1;
      return true;
    }
    for (;;) {
      // `| 0` makes a read past the end 0, not undefined: `undefined - ZERO` is NaN, and `NaN >>> 0` is 0,
      // a digit to the unsigned compare below.
      let c = (s[i] as number) | 0;
      let d = c - ZERO;
      if (d >>> 0 < 10 || c === MINUS) {
        // As `integer(true, 10)`: no leading zero, no -0; then int32. A fraction or exponent is refused
        // by the separator check below, and more than ten digits by the range check.
        const minus = c === MINUS;
        if (minus) d = ((s[++i] as number) | 0) - ZERO;
        let v = d;
        if (d === 0) {
          d = ((s[++i] as number) | 0) - ZERO;
          if (d >>> 0 < 10 || minus) return false;
        } else if (d >>> 0 < 10) {
          for (d = ((s[++i] as number) | 0) - ZERO; d >>> 0 < 10; d = ((s[++i] as number) | 0) - ZERO)
            v = v * 10 + d;
          if (v > 0x7fffffff && (!minus || v !== 0x80000000)) return false;
        } else return false;
        tree[used] = TREE_INT;
        tree[used + 1] = minus ? -v : v;
        used += 2;
      } else if (c === OPEN_BRACKET) {
        if (depth >= TREE_MAX_DEPTH) return false;
        this.treeUsed = used;
        this.i = i;
        if (!this.list(depth + 1)) return false;
        i = this.i;
        tree = this.tree;
        used = this.treeUsed;
      } else if (c === QUOTE) {
        this.i = i;
        const r = this.string();
        if (r === NO_STRING) return false;
        i = this.i;
        tree[used] = TREE_STRING;
        tree[used + 1] = r;
        used += 2;
      } else if (c === LOWER_N) {
        if (word4(s, i) !== NULL4) return false;
        i += 4;
        tree[used] = TREE_NULL;
        tree[used + 1] = 0;
        used += 2;
      } else return false;
      length++;
      c = s[i++] as number;
      if (c === COMMA) continue;
      if (c !== CLOSE_BRACKET) return false;
      tree[node + 1] = length;
      this.treeUsed = used;
      this.i = i;
      return true;
    }
  }

  /** The tree with room for `slots` slots in all (doubled at least, its slots in use kept). */
  private growTo(slots: number): Int32Array<ArrayBuffer> {
    const next = new Int32Array(Math.max(1024, slots, this.tree.length * 2));
    next.set(this.tree.subarray(0, this.treeUsed));
    this.tree = next;
    return next;
  }

  private nullOrString(): number {
    if (word4(this.s, this.i) === NULL4) {
      this.i += 4;
      return -1;
    }
    return this.string();
  }

  /** A fault epoch: null (-1), or a list of strings as a ref to its JSON text (the line's own). */
  private faultEpoch(): number {
    const s = this.s;
    if (word4(s, this.i) === NULL4) {
      this.i += 4;
      return -1;
    }
    const a = this.i;
    if (s[a] !== OPEN_BRACKET) return NO_STRING;
    this.i++;
    if (s[this.i] !== CLOSE_BRACKET) {
      for (;;) {
        if (this.stringEnd() < 0) return NO_STRING;
        const d = s[this.i] as number;
        if (d === CLOSE_BRACKET) break;
        if (d !== COMMA) return NO_STRING;
        this.i++;
      }
    }
    this.i++;
    // Plain strings without whitespace: the text is what JSON.stringify writes for the parsed list.
    return this.encoder.ref(s.toString('latin1', a, this.i));
  }

  /** Moves past a plain string (no escapes, no control characters); its closing quote's index, or -1. */
  private stringEnd(): number {
    const s = this.s;
    if (s[this.i] !== QUOTE) return -1;
    let i = this.i + 1;
    const end = this.end;
    for (;;) {
      if (i >= end) return -1;
      const c = s[i] as number;
      if (c === QUOTE) break;
      // Escapes, control characters and anything not ASCII (whose bytes are not its characters).
      if (c === BACKSLASH || c < SPACE || c > TILDE) return -1;
      i++;
    }
    this.i = i + 1;
    return i;
  }

  /** A plain string as its table ref, or {@link NO_STRING}. */
  private string(): number {
    const a = this.i + 1;
    const e = this.stringEnd();
    if (e < 0) return NO_STRING;
    const s = this.s;
    const length = e - a;
    if (length < STRING_CACHE_LENGTH && length > 0) {
      const slot = (length << 7) | ((s[a] as number) & 127);
      const known = this.recent[slot];
      if (known !== undefined && sameText(s, a, known)) return this.recentRef[slot] as number;
      const text = s.toString('latin1', a, e);
      const r = this.encoder.ref(text);
      this.recent[slot] = text;
      this.recentRef[slot] = r;
      return r;
    }
    return this.encoder.ref(s.toString('latin1', a, e));
  }
}

/** Not a string ref (refs are >= -1 for table entries and null, <= -2 for batch texts: never this). */
const NO_STRING = -0x80000000;

const STRING_CACHE_LENGTH = 16;
const STRING_CACHE = STRING_CACHE_LENGTH << 7;

const INDEX = 1;
const TYPE = 2;
const F = 4;
const VALUE = 8;
const PROCESS = 16;
const TIME = 32;
const NODE = 64;
const EPOCH = 128;
const KEY = 256;
const ERROR = 512;
const INTENDED = 1024;
const REQUIRED = INDEX | TYPE | F | VALUE | PROCESS | TIME | NODE | EPOCH;

/** The field named by the `length` characters at `at` (its bit), or 0 for any other name. */
function fieldAt(s: Uint8Array, at: number, length: number): number {
  switch (length) {
    case 1:
      return s[at] === 102 ? F : 0;
    case 3:
      return s[at] === 107 && s[at + 1] === 101 && s[at + 2] === 121 ? KEY : 0;
    case 4: {
      const w = word4(s, at);
      return w === N_TYPE ? TYPE : w === N_TIME ? TIME : w === N_NODE ? NODE : 0;
    }
    case 5: {
      const w = word4(s, at);
      const last = s[at + 4];
      if (w === N_INDE && last === 120) return INDEX;
      if (w === N_VALU && last === 101) return VALUE;
      return w === N_ERRO && last === 114 ? ERROR : 0;
    }
    case 7:
      return word4(s, at) === N_PROC && word4(s, at + 3) === N_CESS ? PROCESS : 0;
    case 10:
      return word4(s, at) === N_FAUL && word4(s, at + 4) === N_TEPO && word4(s, at + 6) === N_POCH
        ? EPOCH
        : 0;
    case 12:
      return word4(s, at) === N_INTE && word4(s, at + 4) === N_NDED && word4(s, at + 8) === N_CAP_TIME
        ? INTENDED
        : 0;
    default:
      return 0;
  }
}

const QUOTE = 34;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const COLON = 58;
const UPPER_E = 69;
const OPEN_BRACKET = 91;
const BACKSLASH = 92;
const CLOSE_BRACKET = 93;
const LOWER_E = 101;
const LOWER_N = 110;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const SPACE = 32;
const TILDE = 126;
const NEWLINE = 10;
const EMPTY = Buffer.alloc(0);

const EMPTY_TREE = new Int32Array(0);

/**
 * The four bytes at `at` as one little-endian int32, to compare a word in one step; bytes past the end
 * read as 0, which no word compared here contains.
 */
function word4(s: Uint8Array, at: number): number {
  return (
    (s[at] as number) |
    ((s[at + 1] as number) << 8) |
    ((s[at + 2] as number) << 16) |
    ((s[at + 3] as number) << 24)
  );
}

const w4 = (text: string) => word4(Buffer.from(text, 'latin1'), 0);
const NULL4 = w4('null');
const Q_OK_Q = w4('"ok"');
const Q_INV = w4('"inv');
const OKE_Q = w4('oke"');
const Q_FAI = w4('"fai');
const AIL_Q = w4('ail"');
const Q_INF = w4('"inf');
const NFO_Q = w4('nfo"');
const Q_NEM = w4('"nem');
const ESIS = w4('esis');
const N_TYPE = w4('type');
const N_TIME = w4('time');
const N_NODE = w4('node');
const N_INDE = w4('inde');
const N_VALU = w4('valu');
const N_ERRO = w4('erro');
const N_PROC = w4('proc');
const N_CESS = w4('cess');
const N_FAUL = w4('faul');
const N_TEPO = w4('tEpo');
const N_POCH = w4('poch');
const N_INTE = w4('inte');
const N_NDED = w4('nded');
const N_CAP_TIME = w4('Time');
const CODE_OK = TYPE_CODE.ok as number;
const CODE_INVOKE = TYPE_CODE.invoke as number;
const CODE_FAIL = TYPE_CODE.fail as number;
const CODE_INFO = TYPE_CODE.info as number;

/** Whether the ASCII string `text` is at `at` in `s` (the caller knows the lengths are equal). */
function sameText(s: Uint8Array, at: number, text: string): boolean {
  for (let j = 0; j < text.length; j++) if (s[at + j] !== text.charCodeAt(j)) return false;
  return true;
}
