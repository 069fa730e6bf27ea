import type { Refutation } from '../model.ts';
import { show } from '../model.ts';
import type { EncodedOps } from '../op-columns.ts';

/** The register model's op encoding (./register.ts), as far as this file reads it. */
interface RegisterInput {
  f: 'read' | 'write' | 'cas';
  a: unknown;
  b: unknown;
}
interface RegisterOutput {
  known: boolean;
  value: unknown;
  ok: boolean;
}

/**
 * A quick, sound refutation for registers: an observation of a value that cannot be the register's
 * value at that time. It lets a long history with a stale read be decided without the search, which
 * could only refute it by exhausting every order of everything before the read.
 *
 * Observations are ok reads (the value read) and ok cas ops (the expected value). For an observed value
 * v with exactly one possible producer p (a write of v or a cas to v, of any outcome but fail, or the
 * initial value), the observation r is impossible when
 * - no op could have produced v and v is not the initial value; or
 * - some op x that certainly changed the value (an ok write or ok cas) was invoked after p returned
 *   and returned before r was invoked: x's effect falls between p's and r's in every linearization, x
 *   wrote another value, and only p could write v again.
 * Values with more than one producer are left to the search.
 */
const INITIAL = -1;
const MANY = -2;

export function refuteStaleObservation(ops: EncodedOps, initialValue: unknown): Refutation | null {
  const { call, ret } = ops;
  // Keyed by the value itself when it is not a string or object (Map's SameValueZero agrees with
  // deepEqual there, and such keys never equal a string), else by its canonical string: no string is
  // built per op on a history of numbers.
  const producer = new Map<unknown, number>();
  const keyOf = (v: unknown): unknown =>
    typeof v === 'string' || (v !== null && typeof v === 'object') ? canonicalKey(v) : v;
  const produce = (v: unknown, i: number) => {
    const k = keyOf(v);
    producer.set(k, producer.has(k) ? MANY : i);
  };
  produce(initialValue, INITIAL);
  const definite: number[] = [];
  for (let i = 0; i < ops.length; i++) {
    const input = ops.inputOf(i) as RegisterInput;
    const output = ops.outputOf(i) as RegisterOutput;
    if (input.f === 'write') produce(input.a, i);
    else if (input.f === 'cas' && (output.ok || !output.known)) produce(input.b, i);
    if (input.f !== 'read' && output.known && output.ok && Number.isFinite(ret[i] as number))
      definite.push(i);
  }
  // Definite writers by invocation; suffixMin[j] = the one with the earliest return among definite[j..].
  definite.sort((a, b) => (call[a] as number) - (call[b] as number));
  const suffixMin = new Int32Array(definite.length + 1).fill(-1);
  for (let j = definite.length - 1; j >= 0; j--) {
    const here = definite[j] as number;
    const later = suffixMin[j + 1] as number;
    suffixMin[j] = later >= 0 && (ret[later] as number) < (ret[here] as number) ? later : here;
  }
  /** The definite writer invoked after `after` that returns first, or -1. */
  const firstOverwriteAfter = (after: number): number => {
    let lo = 0;
    let hi = definite.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((call[definite[mid] as number] as number) > after) hi = mid;
      else lo = mid + 1;
    }
    return suffixMin[lo] as number;
  };
  for (let r = 0; r < ops.length; r++) {
    const output = ops.outputOf(r) as RegisterOutput;
    if (!output.known || !output.ok || !Number.isFinite(ret[r] as number)) continue;
    const input = ops.inputOf(r) as RegisterInput;
    let seen: unknown;
    if (input.f === 'read') seen = output.value;
    else if (input.f === 'cas') seen = input.a;
    else continue;
    const p = producer.get(keyOf(seen));
    if (p === undefined) {
      return {
        op: r,
        witnesses: [],
        reason: `#0 saw ${show(seen)}, a value no op wrote and not the initial value`,
      };
    }
    if (p === MANY || p === r) continue;
    const producedBy = p === INITIAL ? Number.NEGATIVE_INFINITY : (ret[p] as number);
    if (!Number.isFinite(producedBy) && p !== INITIAL) continue;
    const x = firstOverwriteAfter(producedBy);
    if (x < 0 || (ret[x] as number) >= (call[r] as number)) continue;
    if (p === INITIAL) {
      return {
        op: r,
        witnesses: [x],
        reason: `#0 saw ${show(seen)}, the initial value, but #1 had already replaced it before #0 was invoked, and no op writes ${show(seen)}`,
      };
    }
    return {
      op: r,
      witnesses: [p, x],
      reason: `#0 saw ${show(seen)}, which only #1 writes, but #2 (invoked after #1 returned) replaced it before #0 was invoked`,
    };
  }
  return null;
}

/** A string equal for deep-equal values (object keys sorted), distinct otherwise. */
function canonicalKey(v: unknown): string {
  if (v === undefined) return 'u';
  if (v === null || typeof v !== 'object') return `${typeof v}:${String(v)}`;
  if (Array.isArray(v)) return `[${v.map(canonicalKey).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalKey((v as Record<string, unknown>)[k])}`).join(',')}}`;
}
