import { valueKey as keyOf } from '../../../src/core/history/values.ts';
import type { Refutation } from '../model.ts';
import { show } from '../model.ts';
import type { EncodedOps } from '../op-columns.ts';
import type { RegisterInput, RegisterOutput } from './register-values.ts';

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

/** What the refutation needs of an op's encoding, worked out once per interned class. */
const PRODUCES = 1; // writes a value: input.a (write) or input.b (cas, ok or unknown)
const DEFINITE = 2; // certainly changed the value when it completed (ok write or ok cas)
const OBSERVES = 4; // an ok read (its output) or an ok cas (its expected value)

function flagsOf(input: RegisterInput, output: RegisterOutput): number {
  let flags = 0;
  if (input.f === 'write' || (input.f === 'cas' && (output.ok || !output.known))) flags |= PRODUCES;
  if (input.f !== 'read' && output.known && output.ok) flags |= DEFINITE;
  if (output.known && output.ok && (input.f === 'read' || input.f === 'cas')) flags |= OBSERVES;
  return flags;
}

const produced = (input: RegisterInput): unknown => (input.f === 'write' ? input.a : input.b);
const observed = (input: RegisterInput, output: RegisterOutput): unknown =>
  input.f === 'read' ? output.value : input.a;

/** No producer: the value was never written (distinct from INITIAL, MANY and op indices). */
const NONE = -3;

export function refuteStaleObservation(ops: EncodedOps, initialValue: unknown): Refutation | null {
  const { call, ret, io } = ops;
  const n = ops.length;
  // Keyed by valueKey: no string is built per op on a history of numbers.
  const producer = new Map<unknown, number>();
  const produce = (v: unknown, i: number) => {
    const k = keyOf(v);
    producer.set(k, producer.has(k) ? MANY : i);
  };
  produce(initialValue, INITIAL);
  // Ops of one interned class share their encoding: its flags, and how many of them produce (two or
  // more producers of a value make it MANY, whichever they are), are worked out per class; ops with an
  // encoding of their own one by one. A history of a million ops over a few values then costs two
  // passes over typed arrays instead of a map update per write.
  // (A partition with few ops among many classes takes every op one by one.)
  const classes = ops.fewClasses ? ops.classCount : 0;
  const classFlags = new Uint8Array(classes);
  for (let c = 0; c < classes; c++)
    classFlags[c] = flagsOf(ops.classInput(c) as RegisterInput, ops.classOutput(c) as RegisterOutput);
  const count = new Int32Array(classes);
  const firstOp = new Int32Array(classes);
  const definite: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = classes === 0 ? -1 : (io[i] as number);
    let flags: number;
    if (c >= 0) {
      flags = classFlags[c] as number;
      if ((flags & PRODUCES) !== 0) {
        const k = count[c] as number;
        if (k === 0) firstOp[c] = i;
        count[c] = k + 1;
      }
    } else {
      const input = ops.inputOf(i) as RegisterInput;
      flags = flagsOf(input, ops.outputOf(i) as RegisterOutput);
      if ((flags & PRODUCES) !== 0) produce(produced(input), i);
    }
    if ((flags & DEFINITE) !== 0 && Number.isFinite(ret[i] as number)) definite.push(i);
  }
  for (let c = 0; c < classes; c++) {
    const k = count[c] as number;
    if (k === 0) continue;
    const v = produced(ops.classInput(c) as RegisterInput);
    if (k === 1) produce(v, firstOp[c] as number);
    else producer.set(keyOf(v), MANY);
  }
  // The producer of what each observing class saw (NONE: never written).
  const classProducer = new Int32Array(classes);
  for (let c = 0; c < classes; c++) {
    if (((classFlags[c] as number) & OBSERVES) === 0) continue;
    const seen = observed(ops.classInput(c) as RegisterInput, ops.classOutput(c) as RegisterOutput);
    classProducer[c] = producer.get(keyOf(seen)) ?? NONE;
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
  for (let r = 0; r < n; r++) {
    const c = classes === 0 ? -1 : (io[r] as number);
    let p: number;
    if (c >= 0) {
      if (((classFlags[c] as number) & OBSERVES) === 0) continue;
      p = classProducer[c] as number;
      if (p === MANY) continue;
    } else {
      const input = ops.inputOf(r) as RegisterInput;
      const output = ops.outputOf(r) as RegisterOutput;
      if ((flagsOf(input, output) & OBSERVES) === 0) continue;
      p = producer.get(keyOf(observed(input, output))) ?? NONE;
    }
    if (!Number.isFinite(ret[r] as number)) continue;
    const seen = observed(ops.inputOf(r) as RegisterInput, ops.outputOf(r) as RegisterOutput);
    if (p === NONE) {
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
