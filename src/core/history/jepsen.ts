import { ednKey, ednString, parseEdn, toEdn } from './edn.ts';
import { ABSENT, absentFields, CORE_FIELDS, type HistoryEvent } from './event.ts';
import { describe } from './validate.ts';
import { tagOf, textOf } from './values.ts';

/**
 * Conversion between Jepsen op maps (EDN, or elle-cli's JSON twins) and faultline events.
 *
 * Jepsen ops often lack fields faultline requires. The defaults, and the marker that keeps the import
 * lossless, are:
 * - `:index` missing → the op's position (0-based); present but different from the position (Elle's
 *   sparse indices) → `index` is still the position, and the source index is kept as extra `#index`;
 * - `:time` missing → the position (so order is kept; the unit is then meaningless);
 * - `:process` missing → 0; `:f` missing → "txn" when the value is a list of micro-ops;
 * - `:value` missing → null;
 * - `:node` missing or nil → null; `:faultEpoch` missing → null.
 * Every core field that was missing is listed in the extra field `#absent`, so the EDN writer omits it
 * again and `stats` can say when times are synthetic. Jepsen `:time` is kept verbatim even where it is
 * not monotonic in file order (bank-tidb): history order is the position.
 */

export const SOURCE_INDEX = '#index';

/** Core fields an import may fill in with a default. */
export type DefaultedField = 'index' | 'f' | 'value' | 'process' | 'time';

export class OpMapError extends Error {
  constructor(
    readonly field: string | null,
    readonly reason: string,
  ) {
    super(`${field ? `${field}: ` : ''}${reason}`);
  }
}

const TYPES: ReadonlySet<string> = new Set(['invoke', 'ok', 'fail', 'info']);

/** Converts one Jepsen op map (already parsed by the value conventions) into a history event. */
export function eventFromOpMap(m: unknown, position: number): HistoryEvent {
  if (m === null || typeof m !== 'object' || Array.isArray(m) || tagOf(m) !== undefined) {
    throw new OpMapError(null, `expected an op map, got ${describe(m)}`);
  }
  const op = m as Record<string, unknown>;
  const absent: DefaultedField[] = [];

  const index = position;
  const srcIndex = op.index;
  if (srcIndex === undefined) absent.push('index');

  const type = textOf(op.type);
  if (type === undefined || !TYPES.has(type)) {
    throw new OpMapError(
      'type',
      op.type === undefined ? 'missing' : `expected invoke|ok|fail|info, got ${describe(op.type)}`,
    );
  }

  const hasValue = Object.hasOwn(op, 'value');
  const value = hasValue ? op.value : null;
  if (!hasValue) absent.push('value');

  let f: string;
  if (op.f === undefined) {
    if (!isMicroOpList(value))
      throw new OpMapError('f', 'missing (and the value is not a list of micro-ops)');
    f = 'txn';
    absent.push('f');
  } else {
    const t = textOf(op.f);
    if (t === undefined) throw new OpMapError('f', `expected a keyword or string, got ${describe(op.f)}`);
    f = t;
  }

  let process: number | 'nemesis';
  const p = op.process;
  if (p === undefined) {
    process = 0;
    absent.push('process');
  } else if (typeof p === 'number' && Number.isInteger(p) && p >= 0) {
    process = p;
  } else if (textOf(p) === 'nemesis') {
    process = 'nemesis';
  } else {
    throw new OpMapError('process', `expected a non-negative integer or :nemesis, got ${describe(p)}`);
  }

  let time: number;
  if (op.time === undefined) {
    time = position;
    absent.push('time');
  } else if (typeof op.time === 'number' && op.time >= 0 && Number.isFinite(op.time)) {
    time = op.time;
  } else {
    throw new OpMapError('time', `expected non-negative nanoseconds, got ${describe(op.time)}`);
  }

  let node: string | null = null;
  if (op.node !== undefined && op.node !== null) {
    const t = textOf(op.node);
    if (t === undefined) throw new OpMapError('node', `expected a string, got ${describe(op.node)}`);
    node = t;
  }

  let faultEpoch: string[] | null = null;
  if (op.faultEpoch !== undefined && op.faultEpoch !== null) {
    const fe = op.faultEpoch;
    if (!Array.isArray(fe) || fe.some((x) => textOf(x) === undefined)) {
      throw new OpMapError('faultEpoch', `expected a vector of fault ids, got ${describe(fe)}`);
    }
    faultEpoch = fe.map((x) => textOf(x)!);
  }

  const ev: HistoryEvent = {
    index,
    type: type as HistoryEvent['type'],
    f,
    value,
    process,
    time,
    node,
    faultEpoch,
  };
  if (op.key !== undefined) {
    const k = textOf(op.key);
    if (k === undefined) throw new OpMapError('key', `expected a string or keyword, got ${describe(op.key)}`);
    ev.key = k;
    // faultline's own EDN: the value is Jepsen's independent tuple `[k v]`, and `:key k` says so.
    if (Array.isArray(value) && value.length === 2 && textOf(value[0]) === k) ev.value = value[1];
  }
  if (Object.hasOwn(op, 'error')) ev.error = op.error;
  for (const k in op) {
    if (!Object.hasOwn(op, k) || CONVERTED.has(k)) continue;
    (ev as Record<string, unknown>)[k] = op[k];
  }
  if (srcIndex !== undefined && srcIndex !== position)
    (ev as Record<string, unknown>)[SOURCE_INDEX] = srcIndex;
  if (absent.length > 0) (ev as Record<string, unknown>)[ABSENT] = absent;
  return ev;
}

const CONVERTED: ReadonlySet<string> = new Set([...CORE_FIELDS, ABSENT, SOURCE_INDEX]);

function isMicroOpList(v: unknown): boolean {
  return Array.isArray(v) && v.every((x) => Array.isArray(x));
}

/**
 * One event as a Jepsen op map in EDN (one line, no newline), as Jepsen writes history.edn. Inverse of
 * {@link eventFromOpMap}: fields listed in `#absent` are left out again and `#index` restores the source
 * index. Where faultline and Jepsen differ, Jepsen's form is written:
 * - an event with a `key` (faultline's independent keys) has Jepsen's `independent` tuple as its value,
 *   `:value [k v]`, plus `:key k`, from which the reader takes the tuple apart again;
 * - a nemesis invocation is `:type :info`, as Jepsen records nemesis ops (Knossos would take an
 *   `:invoke` of process `:nemesis` for a client op); pairing reads it back as the same operation.
 * `node` and `faultEpoch` are written only when set; `key` and `node` are always EDN strings.
 */
export function eventToEdn(ev: HistoryEvent): string {
  const e = ev as Record<string, unknown>;
  const absent = absentFields(ev);
  const has = (f: string) => absent.length === 0 || !absent.includes(f);
  const parts: string[] = [];
  if (has('index')) parts.push(`:index ${toEdn(e[SOURCE_INDEX] ?? ev.index)}`);
  if (has('time')) parts.push(`:time ${toEdn(ev.time)}`);
  parts.push(`:type :${ev.process === 'nemesis' && ev.type === 'invoke' ? 'info' : ev.type}`);
  if (has('process')) parts.push(`:process ${ev.process === 'nemesis' ? ':nemesis' : ev.process}`);
  if (has('f')) parts.push(`:f ${toEdn(ev.f)}`);
  if (has('value'))
    parts.push(`:value ${ev.key === undefined ? toEdn(ev.value) : `[${toEdn(ev.key)} ${toEdn(ev.value)}]`}`);
  if (ev.node !== null) parts.push(`:node ${ednString(ev.node)}`);
  if (ev.key !== undefined) parts.push(`:key ${ednString(ev.key)}`);
  if (ev.error !== undefined) parts.push(`:error ${toEdn(ev.error)}`);
  if (ev.faultEpoch !== null) parts.push(`:faultEpoch [${ev.faultEpoch.map(ednString).join(' ')}]`);
  for (const k in e) {
    if (!Object.hasOwn(e, k) || CONVERTED.has(k)) continue;
    parts.push(`${ednKey(k)} ${toEdn(e[k])}`);
  }
  return `{${parts.join(', ')}}`;
}

/** Renames one object key everywhere in a JSON-like value. */
function renameKey(v: unknown, from: string, to: string): unknown {
  if (Array.isArray(v)) return v.map((x) => renameKey(x, from, to));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k === from ? to : k] = renameKey(x, from, to);
  return out;
}

/**
 * A run's results (JSON data, as in results.json) as Jepsen's results.edn: a map whose `valid` keys are
 * written `:valid?` (Jepsen's name; `"unknown"` becomes `:unknown`), one top-level entry per line and
 * one element per line in top-level vectors. {@link resultsFromEdn} reads it back to the same data.
 */
export function resultsToEdn(results: unknown): string {
  const data = renameKey(JSON.parse(JSON.stringify(results ?? null)), 'valid', 'valid?');
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return `${toEdn(data)}\n`;
  const entries = Object.entries(data).map(([k, v]) => {
    const body = Array.isArray(v) ? `[${v.map(toEdn).join('\n  ')}]` : toEdn(v);
    return `${ednKey(k)} ${body}`;
  });
  return `{${entries.join(',\n ')}}\n`;
}

/** The results data written by {@link resultsToEdn}. */
export function resultsFromEdn(text: string): unknown {
  const [value] = parseEdn(text);
  return renameKey(value, 'valid?', 'valid');
}
