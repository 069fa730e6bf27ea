import { CompactValue, TREE_INT, TREE_LIST, TREE_NULL, TREE_STRING, treeValueAt } from './compact-value.ts';
import type { EventType, HistoryEvent } from './event.ts';

export { TREE_INT, TREE_LIST, TREE_NULL, TREE_STRING } from './compact-value.ts';

/**
 * A compact, transferable form of a batch of history events, for handing parsed events from a reading
 * thread to the thread that consumes them. Posting event objects costs more than parsing them
 * (structured cloning walks every object), so each field becomes a typed-array column (moved, not
 * copied) and every string a small integer into a table both threads keep in step: the sender interns a
 * string once and ships it once, in the first batch that uses it.
 *
 * References (`f`, `node`, `key`, `faultEpoch`, and string or structured values and errors) are int32:
 * `>= 0` an entry of the shared table, `-1` null or absent, `<= -2` the batch's own `texts[-ref - 2]`
 * (strings beyond the table's limits travel with their batch and are not kept).
 * Events that do not fit these columns (extra fields, a process id beyond int32) travel whole.
 *
 * A value that is a list of lists of int32 integers, nulls and strings (a transaction's micro-ops,
 * `[["append", 3, 7], ["r", 5, [1, 2]]]`) travels as a compact tree in `tree` (see {@link isCompactTree}):
 * such values are mostly distinct, and as JSON text each one was written on one thread and parsed again
 * on the other, costing the consumer about what parsing the line did; rebuilt from the tree it costs
 * only the arrays.
 *
 * Decoded events equal the originals field for field; equal structured values (a cas's `[3, 2]`,
 * a fault epoch) decode to one shared object per distinct value, which readers never mutate.
 */
export interface EventColumns {
  n: number;
  /** Per event (row i): index, time, intendedTime (NaN when absent), value number, error number, at
   *  `5 * i + FLOAT_…`. */
  floats: Float64Array;
  /** Per event: process (-1 the nemesis), f, node, key, faultEpoch (a JSON array), value ref, error
   *  ref, at `7 * i + INT_…`. */
  ints: Int32Array;
  /** Per event: type, value tag, error tag, at `3 * i + TAG_…`. */
  tags: Uint8Array;
  /** New entries of the shared table, in id order. */
  strings: string[];
  texts: string[];
  /** Compact tree values, two int32 per node in pre-order: a kind (TREE_…) and an int, a string ref
   *  or a list's length (its elements follow). A TREE value's ref is its first node. */
  tree: Int32Array;
  /** Events sent whole, by row. */
  whole: [number, HistoryEvent][];
}

export const FLOATS = 5;
export const F_INDEX = 0;
export const F_TIME = 1;
export const F_INTENDED = 2;
export const F_VALUE = 3;
export const F_ERROR = 4;
export const INTS = 7;
export const I_PROCESS = 0;
export const I_F = 1;
export const I_NODE = 2;
export const I_KEY = 3;
export const I_EPOCH = 4;
export const I_VALUE = 5;
export const I_ERROR = 6;
export const TAGS = 3;
export const T_TYPE = 0;
export const T_VALUE = 1;
export const T_ERROR = 2;

const TYPES: readonly EventType[] = ['invoke', 'ok', 'fail', 'info'];
export const TYPE_CODE: Record<string, number> = { invoke: 0, ok: 1, fail: 2, info: 3 };

/** Value tags. JSON refs hold JSON text of an array or object; STRING refs the string itself. */
export const ABSENT = 0;
export const NULL = 1;
export const NUMBER = 2;
const TRUE = 3;
const FALSE = 4;
export const STRING = 5;
export const JSON_TEXT = 6;
export const TREE = 7;

/** Lists nested deeper than this travel as JSON text (a transaction's micro-ops nest three deep). */
export const TREE_MAX_DEPTH = 4;

/**
 * Whether `v` travels as a compact tree: an array whose elements are int32 integers (not -0), nulls,
 * strings or such arrays, at most {@link TREE_MAX_DEPTH} deep. Anything else structured (objects,
 * booleans, decimals, tagged big integers) travels as JSON text.
 */
export function isCompactTree(v: unknown, depth = 1): boolean {
  if (!Array.isArray(v) || depth > TREE_MAX_DEPTH) return false;
  for (const e of v) {
    if (e === null || typeof e === 'string') continue;
    if (typeof e === 'number') {
      if ((e | 0) !== e || (e === 0 && 1 / e < 0)) return false;
    } else if (!isCompactTree(e, depth + 1)) return false;
  }
  return true;
}

/** Strings longer than this are not interned (unique payloads would only fill the table). */
const MAX_INTERNED_LENGTH = 256;
/** Table entries at most: past it, new strings travel with their batch. */
const MAX_TABLE = 1 << 16;

/** The sending side: events in, columns out (keeps the string table). */
export class EventColumnsEncoder {
  private readonly table = new Map<string, number>();
  private fresh: string[] = [];
  private texts: string[] = [];
  private tree = new Int32Array(1024);
  private treeLength = 0;

  encode(events: readonly HistoryEvent[]): EventColumns {
    const n = events.length;
    const floats = new Float64Array(FLOATS * n);
    const ints = new Int32Array(INTS * n);
    const tags = new Uint8Array(TAGS * n);
    const whole: [number, HistoryEvent][] = [];
    this.begin();
    for (let i = 0; i < n; i++) {
      const ev = events[i] as HistoryEvent;
      const p = ev.process;
      if ((p !== 'nemesis' && (p as number) > 0x7fffffff) || hasExtraFields(ev)) {
        whole.push([i, ev]);
        continue;
      }
      const fo = FLOATS * i;
      const io = INTS * i;
      const to = TAGS * i;
      floats[fo + F_INDEX] = ev.index;
      floats[fo + F_TIME] = ev.time;
      floats[fo + F_INTENDED] = typeof ev.intendedTime === 'number' ? ev.intendedTime : Number.NaN;
      tags[to + T_TYPE] = TYPE_CODE[ev.type] as number;
      ints[io + I_PROCESS] = p === 'nemesis' ? -1 : p;
      ints[io + I_F] = this.ref(ev.f);
      ints[io + I_NODE] = ev.node === null ? -1 : this.ref(ev.node);
      ints[io + I_KEY] = ev.key === undefined ? -1 : this.ref(ev.key);
      ints[io + I_EPOCH] = ev.faultEpoch === null ? -1 : this.ref(JSON.stringify(ev.faultEpoch));
      tags[to + T_VALUE] = this.putValue(floats, fo + F_VALUE, ints, io + I_VALUE, ev.value);
      tags[to + T_ERROR] = this.putValue(floats, fo + F_ERROR, ints, io + I_ERROR, ev.error);
    }
    return this.columns(n, floats, ints, tags, whole);
  }

  /** Starts a batch: strings new to the table and the tree are the batch's own from here. */
  begin(): void {
    this.fresh = [];
    this.texts = [];
    this.treeLength = 0;
  }

  /** Ends a batch whose rows were written into these arrays (by {@link encode} or a scanner). */
  columns(
    n: number,
    floats: Float64Array,
    ints: Int32Array,
    tags: Uint8Array,
    whole: [number, HistoryEvent][] = [],
  ): EventColumns {
    const tree = this.tree.slice(0, this.treeLength);
    return { n, floats, ints, tags, strings: this.fresh, texts: this.texts, tree, whole };
  }

  /**
   * Abandons a batch begun with {@link begin}: the strings it added leave the table again (the
   * receiving side never saw them), so the next batch numbers its strings as if it never was.
   */
  abandon(): void {
    for (const s of this.fresh) this.table.delete(s);
    this.begin();
  }

  /** Appends a tree node; returns its number (a TREE value's ref is its first node's). */
  node(kind: number, x: number): number {
    if (this.treeLength + 2 > this.tree.length) {
      const next = new Int32Array(this.tree.length * 2);
      next.set(this.tree);
      this.tree = next;
    }
    const at = this.treeLength;
    this.tree[at] = kind;
    this.tree[at + 1] = x;
    this.treeLength += 2;
    return at >> 1;
  }

  /**
   * The tree being built, for a scanner that appends nodes itself (cheaper than a call per node): it
   * writes from {@link treeUsed} on and hands the array back, grown or not, with {@link treeDone}.
   */
  treeInProgress(): Int32Array<ArrayBuffer> {
    return this.tree;
  }

  /** Int32 slots of the tree in use (two per node). */
  treeUsed(): number {
    return this.treeLength;
  }

  /** Takes back the tree a scanner appended to (the same array or a larger copy) and its slots in use. */
  treeDone(tree: Int32Array<ArrayBuffer>, used: number): void {
    this.tree = tree;
    this.treeLength = used;
  }

  /** The buffers to transfer with `c`. */
  static transferList(c: EventColumns): ArrayBuffer[] {
    return [
      c.floats.buffer as ArrayBuffer,
      c.ints.buffer as ArrayBuffer,
      c.tags.buffer as ArrayBuffer,
      c.tree.buffer as ArrayBuffer,
    ];
  }

  /** Appends `v` (an {@link isCompactTree}) to the batch's tree in pre-order. */
  private putTree(v: unknown): void {
    if (v === null) this.node(TREE_NULL, 0);
    else if (typeof v === 'number') this.node(TREE_INT, v);
    else if (typeof v === 'string') this.node(TREE_STRING, this.ref(v));
    else {
      const list = v as unknown[];
      this.node(TREE_LIST, list.length);
      for (const e of list) this.putTree(e);
    }
  }

  /** Stores `v` at `floats[fi]` or `ints[ii]`; returns its tag. */
  private putValue(floats: Float64Array, fi: number, ints: Int32Array, ii: number, v: unknown): number {
    if (v === undefined) return ABSENT;
    if (v === null) return NULL;
    if (typeof v === 'number') {
      floats[fi] = v;
      return NUMBER;
    }
    if (v === true) return TRUE;
    if (v === false) return FALSE;
    if (typeof v === 'string') {
      ints[ii] = this.ref(v);
      return STRING;
    }
    if (isCompactTree(v)) {
      ints[ii] = this.treeLength >> 1;
      this.putTree(v);
      return TREE;
    }
    ints[ii] = this.ref(JSON.stringify(v));
    return JSON_TEXT;
  }

  /** The table entry (or batch text) for `s`, interning it. */
  ref(s: string): number {
    const known = this.table.get(s);
    if (known !== undefined) return known;
    if (s.length > MAX_INTERNED_LENGTH || this.table.size >= MAX_TABLE) {
      this.texts.push(s);
      return -this.texts.length - 1;
    }
    const id = this.table.size;
    this.table.set(s, id);
    this.fresh.push(s);
    return id;
  }
}

/**
 * Whether `ev` has fields the columns do not carry (it then travels whole). Counting keys costs less
 * than walking them: a validated event has the eight required fields (a missing value is read as null).
 */
export function hasExtraFields(ev: HistoryEvent): boolean {
  const carried =
    8 +
    (ev.key === undefined ? 0 : 1) +
    (ev.error === undefined ? 0 : 1) +
    (ev.intendedTime === undefined ? 0 : 1);
  return Object.keys(ev).length !== carried;
}

/**
 * A number read from a Float64Array, as a small integer when it is one. V8 keeps small integers inside
 * the object, as JSON.parse does, where a double read from a typed array would be a heap number of its
 * own: 16 more bytes per field and more work for the garbage collector.
 */
function small(v: number): number {
  const i = v | 0;
  return i === v && (i !== 0 || 1 / v > 0) ? i : v;
}

/**
 * The receiving side: columns in, events out (keeps its copy of the string table). With `views`, a
 * compact tree value becomes a {@link CompactValue} over the batch's tree instead of rebuilt arrays,
 * for consumers that read it in place (see `compactValues` in ./read.ts).
 */
export class EventColumnsDecoder {
  private readonly strings: string[] = [];
  /** Parsed JSON of table entries used as structured values or fault epochs, by id. */
  private readonly parsed: unknown[] = [];

  constructor(private readonly views = false) {}

  decode(c: EventColumns): HistoryEvent[] {
    for (const s of c.strings) this.strings.push(s);
    const { floats, ints, tags } = c;
    const out = new Array<HistoryEvent>(c.n);
    let w = 0;
    let nextWhole = c.whole.length > 0 ? (c.whole[0] as [number, HistoryEvent])[0] : -1;
    for (let i = 0; i < c.n; i++) {
      if (i === nextWhole) {
        out[i] = (c.whole[w] as [number, HistoryEvent])[1];
        w++;
        nextWhole = w < c.whole.length ? (c.whole[w] as [number, HistoryEvent])[0] : -1;
        continue;
      }
      const fo = FLOATS * i;
      const io = INTS * i;
      const to = TAGS * i;
      const p = ints[io + I_PROCESS] as number;
      const node = ints[io + I_NODE] as number;
      const epoch = ints[io + I_EPOCH] as number;
      const ev: HistoryEvent = {
        index: small(floats[fo + F_INDEX] as number),
        type: TYPES[tags[to + T_TYPE] as number] as EventType,
        f: this.text(c, ints[io + I_F] as number),
        value:
          this.value(
            c,
            tags[to + T_VALUE] as number,
            floats[fo + F_VALUE] as number,
            ints[io + I_VALUE] as number,
          ) ?? null,
        process: p === -1 ? 'nemesis' : p,
        time: small(floats[fo + F_TIME] as number),
        node: node === -1 ? null : this.text(c, node),
        faultEpoch: epoch === -1 ? null : (this.json(c, epoch) as string[]),
      };
      const key = ints[io + I_KEY] as number;
      if (key !== -1) ev.key = this.text(c, key);
      const errorTag = tags[to + T_ERROR] as number;
      if (errorTag !== ABSENT)
        ev.error = this.value(c, errorTag, floats[fo + F_ERROR] as number, ints[io + I_ERROR] as number);
      const intended = floats[fo + F_INTENDED] as number;
      if (!Number.isNaN(intended)) ev.intendedTime = small(intended);
      out[i] = ev;
    }
    return out;
  }

  private text(c: EventColumns, ref: number): string {
    return (ref >= 0 ? this.strings[ref] : c.texts[-ref - 2]) as string;
  }

  private json(c: EventColumns, ref: number): unknown {
    if (ref < 0) return JSON.parse(c.texts[-ref - 2] as string);
    let v = this.parsed[ref];
    if (v === undefined) {
      v = JSON.parse(this.strings[ref] as string);
      this.parsed[ref] = v;
    }
    return v;
  }

  private value(c: EventColumns, tag: number, num: number, ref: number): unknown {
    switch (tag) {
      case NULL:
        return null;
      case NUMBER:
        return small(num);
      case TRUE:
        return true;
      case FALSE:
        return false;
      case STRING:
        return this.text(c, ref);
      case JSON_TEXT:
        return this.json(c, ref);
      case TREE:
        return this.views
          ? new CompactValue(c.tree, ref, this.strings, c.texts)
          : treeValueAt(c.tree, ref, this.strings, c.texts);
      default:
        return undefined;
    }
  }
}
