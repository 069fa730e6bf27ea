import type { Operation } from '../../src/core/history/operation.ts';
import { valueKey } from '../../src/core/history/values.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { groupThousands } from '../../src/core/util/format.ts';
import type { Anomaly, CheckResult, Validity } from '../types.ts';

/**
 * Small helpers shared by the catalogue checkers: value identity, EDN set unwrapping, number
 * formatting for evidence lines, and quantiles. Kept allocation-light because checkers run over
 * millions of operations.
 */

/** Format a count the way evidence lines print it: 4217 → "4,217". */
export const fmt = groupThousands;

/** The history layer's value key (equal exactly for equal JSON values), shared by every catalogue checker. */
export { valueKey };

/** True for an EDN set converted by the history layer: `{"#set": [...]}`. */
export function isSetTag(v: unknown): v is { '#set': unknown[] } {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Array.isArray((v as Record<string, unknown>)['#set'])
  );
}

/** The members of a collection value (array or EDN set), or null when the value is not a collection. */
export function collectionItems(v: unknown): unknown[] | null {
  if (Array.isArray(v)) return v;
  if (isSetTag(v)) return v['#set'];
  return null;
}

/** Client operations only: the nemesis is not a client and never counts toward a workload. */
export function isClient(op: Operation): boolean {
  return op.process !== 'nemesis';
}

/** Plain-object test that excludes arrays and EDN set tags. */
export function isPlainMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isSetTag(v);
}

/** Read a dotted path ("meta.version") out of a value; undefined when any step is missing. */
export function getPath(v: unknown, path: string): unknown {
  let cur: unknown = v;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * Nearest-rank quantile over a sorted numeric array (the definition the perf tests check against):
 * the smallest value with at least q·n values at or below it.
 */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * n));
  return sorted[Math.min(n, rank) - 1] as number;
}

/** Sort a copy of numbers into a Float64Array (numeric sort, much faster than Array#sort on 1M). */
export function sortedFloat64(values: ArrayLike<number>): Float64Array {
  const a = Float64Array.from(values);
  a.sort();
  return a;
}

/** Cap a list for reports: the first `n` entries, so a result stays small on huge histories. */
export function sample<T>(items: readonly T[], n = 16): T[] {
  return items.length <= n ? items.slice() : items.slice(0, n);
}

/**
 * Compress sorted integers into Jepsen-style interval text: [1,2,3,5] → "#{1..3 5}". Non-integers are
 * listed as they are.
 */
export function intervalText(values: readonly unknown[], limit = 64): string {
  const ints = values
    .filter((v): v is number => typeof v === 'number' && Number.isInteger(v))
    .sort((a, b) => a - b);
  const others = values.filter((v) => !(typeof v === 'number' && Number.isInteger(v)));
  const parts: string[] = [];
  let i = 0;
  while (i < ints.length && parts.length < limit) {
    const start = ints[i] as number;
    let end = start;
    while (i + 1 < ints.length && (ints[i + 1] as number) <= end + 1) {
      i++;
      end = ints[i] as number;
    }
    parts.push(start === end ? String(start) : `${start}..${end}`);
    i++;
  }
  for (const o of others) {
    if (parts.length >= limit) break;
    parts.push(JSON.stringify(o));
  }
  const truncated = parts.length >= limit && (i < ints.length || others.length > 0);
  return `#{${parts.join(' ')}${truncated ? ' …' : ''}}`;
}

/** Assemble a result; keeps every checker's return shape identical. */
export function result(
  checker: string,
  valid: Validity,
  evidence: string,
  scope: string,
  anomalies: Anomaly[],
  stats: Record<string, unknown> & { opsConsumed: number },
  extra?: { error?: string; artifacts?: string[] },
): CheckResult {
  const r: CheckResult = { checker, valid, evidence, scope, anomalies, stats };
  if (extra?.error !== undefined) r.error = extra.error;
  if (extra?.artifacts !== undefined && extra.artifacts.length > 0) r.artifacts = extra.artifacts;
  return r;
}

/** Checker misuse the user can fix (bad options): the CLI maps it to exit 254, compose to 'unknown'. */
export class CheckerOptionsError extends UserError {
  override readonly name: string = 'CheckerOptionsError';
}

/** Validate options with a zod schema, turning failures into one readable line. */
export function parseOptions<T>(
  checker: string,
  schema: {
    safeParse(
      v: unknown,
    ):
      | { success: true; data: T }
      | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  raw: unknown,
): T {
  const r = schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'options';
  throw new CheckerOptionsError(`${checker}: ${where}: ${issue?.message ?? 'invalid options'}`);
}

/** Cap on anomalies kept in a result: counts stay exact in stats, the list stays readable. */
export const MAX_ANOMALIES = 100;

/** Push an anomaly unless the cap is reached. */
export function pushCapped(list: Anomaly[], a: Anomaly, cap = MAX_ANOMALIES): void {
  if (list.length < cap) list.push(a);
}

/**
 * The history's events in index order, as codes: `op.id * 2` for an invocation, `op.id * 2 + 1` for a
 * completion (only ops that have a completion event). Dense histories (the usual case) are bucketed in
 * O(n); sparse indexes (EDN files with gaps) fall back to a sort.
 */
export function eventOrder(ops: readonly Operation[]): Int32Array {
  let count = 0;
  let maxIndex = -1;
  for (const op of ops) {
    count++;
    if (op.invokeIndex > maxIndex) maxIndex = op.invokeIndex;
    if (op.completeIndex !== null) {
      count++;
      if (op.completeIndex > maxIndex) maxIndex = op.completeIndex;
    }
  }
  const out = new Int32Array(count);
  if (maxIndex < 4 * count + 16) {
    const slots = new Int32Array(maxIndex + 1).fill(-1);
    let collision = false;
    for (const op of ops) {
      if (slots[op.invokeIndex] !== -1) collision = true;
      slots[op.invokeIndex] = op.id * 2;
      if (op.completeIndex !== null) {
        if (slots[op.completeIndex] !== -1) collision = true;
        slots[op.completeIndex] = op.id * 2 + 1;
      }
    }
    if (!collision) {
      let j = 0;
      for (let i = 0; i <= maxIndex; i++) {
        const c = slots[i] as number;
        if (c !== -1) out[j++] = c;
      }
      return out;
    }
  }
  const pairs: [number, number][] = [];
  for (const op of ops) {
    pairs.push([op.invokeIndex, op.id * 2]);
    if (op.completeIndex !== null) pairs.push([op.completeIndex, op.id * 2 + 1]);
  }
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  pairs.forEach((p, i) => {
    out[i] = p[1];
  });
  return out;
}

/** Op lookup by id that tolerates arrays whose ids are not their positions. */
export function opsById(ops: readonly Operation[]): readonly Operation[] {
  let dense = true;
  for (let i = 0; i < ops.length; i++) {
    if ((ops[i] as Operation).id !== i) {
      dense = false;
      break;
    }
  }
  if (dense) return ops;
  const out: Operation[] = [];
  for (const op of ops) out[op.id] = op;
  return out;
}

/**
 * Interns history values into dense slots 0..n-1 so checkers can keep per-value state in arrays.
 * Non-negative integers below 2^24 (the common case: Jepsen elements and ids) go through a direct
 * Int32Array table, several times faster than a Map on million-element histories; every other value
 * goes through a Map keyed by {@link valueKey}.
 */
export class ValueIndex {
  private static readonly DIRECT_LIMIT = 1 << 24;
  private direct = new Int32Array(1024).fill(-1);
  private readonly other = new Map<unknown, number>();
  /** The first value seen for each slot. */
  readonly values: unknown[] = [];

  get size(): number {
    return this.values.length;
  }

  /** The slot of `v`, or -1 when it was never interned. */
  slot(v: unknown): number {
    if (typeof v === 'number' && v >= 0 && v < ValueIndex.DIRECT_LIMIT && Number.isInteger(v)) {
      return v < this.direct.length ? (this.direct[v] as number) : -1;
    }
    return this.other.get(valueKey(v)) ?? -1;
  }

  /** The slot of `v`, creating one when new. */
  intern(v: unknown): number {
    if (typeof v === 'number' && v >= 0 && v < ValueIndex.DIRECT_LIMIT && Number.isInteger(v)) {
      if (v >= this.direct.length) {
        let len = this.direct.length;
        while (len <= v) len *= 2;
        const next = new Int32Array(Math.min(len, ValueIndex.DIRECT_LIMIT)).fill(-1);
        next.set(this.direct);
        this.direct = next;
      }
      const s = this.direct[v] as number;
      if (s !== -1) return s;
      const n = this.values.length;
      this.direct[v] = n;
      this.values.push(v);
      return n;
    }
    const k = valueKey(v);
    const s = this.other.get(k);
    if (s !== undefined) return s;
    const n = this.values.length;
    this.other.set(k, n);
    this.values.push(v);
    return n;
  }
}

/** A growable Uint8 / Int32 array addressed by slot; reads past the end give 0. */
export class SlotArray {
  private a: Int32Array;
  constructor(initial = 1024) {
    this.a = new Int32Array(initial);
  }
  get(i: number): number {
    return i < this.a.length ? (this.a[i] as number) : 0;
  }
  set(i: number, v: number): void {
    if (i >= this.a.length) {
      let len = this.a.length;
      while (len <= i) len *= 2;
      const next = new Int32Array(len);
      next.set(this.a);
      this.a = next;
    }
    this.a[i] = v;
  }
  add(i: number, d: number): void {
    this.set(i, this.get(i) + d);
  }
}

/**
 * The values of a plain object. `Object.values` is several times slower than `Object.keys` plus
 * indexing on million-key (dictionary-mode) objects, which is what big final-state dumps are.
 */
export function mapValues(obj: Record<string, unknown>): unknown[] {
  const keys = Object.keys(obj);
  const out = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = obj[keys[i] as string];
  return out;
}

/**
 * A getter for a dotted path, compiled once: {@link getPath} splits the path on every call, which
 * shows on million-op histories.
 */
export function pathGetter(path: string): (v: unknown) => unknown {
  const parts = path.split('.');
  if (parts.length === 1) {
    const p = parts[0] as string;
    return (v) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined);
  }
  return (v) => {
    let cur: unknown = v;
    for (const part of parts) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string, unknown>)[part];
    }
    return cur;
  };
}
