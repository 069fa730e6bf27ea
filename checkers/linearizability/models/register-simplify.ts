import { valueKey } from '../../../src/core/history/values.ts';
import type { EncodedOps } from '../op-columns.ts';
import type { RegisterInput, RegisterOutput } from './register-values.ts';

/**
 * Register partitions simplified before the search, into partitions linearizable exactly when the
 * originals are ({@link simplifyRegisterOps}): open writes nobody observed are left out
 * ({@link unobservedRegisterWrites}), and open writes that were observed are bounded by their first
 * observer ({@link boundObservedWrites}).
 */
export function simplifyRegisterOps(ops: EncodedOps, initialValue: unknown): EncodedOps | null {
  const out = unobservedRegisterWrites(ops, initialValue);
  const kept = out === null ? ops : ops.without(out);
  const ret = boundObservedWrites(kept, initialValue);
  if (ret === null) return out === null ? null : kept;
  return kept.withReturns(ret);
}

/**
 * Open writes to a register that no other op could observe, which the search can leave out.
 *
 * An op whose outcome is unknown (a crashed write or cas: `info`, or never completed) may take effect at
 * any time after its invocation, or never. When no other op reads the value it would write, or compares
 * against it (an ok read returning it, or a cas, ok or open, expecting it), it is left out: the register
 * is linearizable with it exactly when it is linearizable without it. Without it, a linearization is
 * one with it never taking effect. With it taking effect (writing v), every op after it until the next
 * write sees v: no read or ok cas can (none observes v), and an open cas expecting another value does
 * nothing there and may as well never happen; so dropping it and those open cas ops leaves every other
 * op legal and the state after the next write unchanged.
 *
 * Leaving ops out is repeated until nothing more goes: an open cas left out no longer expects its value,
 * which may free an open write of that value. A known failed cas (with `failedCas: 'mismatch'`) says
 * the register held anything but its expected value, which a dropped write could have made true: so only
 * ops invoked after every such cas returned are left out. Each of those failed cas ops is linearized
 * before such an op's invocation, hence before its effect, and dropping the effect changes nothing
 * before it. A failed cas expecting a value that is not the initial value and that no op of the
 * partition writes (a cas expecting a value never written) says nothing: the register never held it.
 * Dropping ops only removes writers, so it never will.
 *
 * This is what keeps Knossos-hard histories (many crashed writes of unique values, each open to the end
 * of the history) decidable: every one of them multiplies the orders the search may try.
 */
const WRITES = 1; // an open write or cas: a candidate to leave out, writing `produced`
const NEEDS = 2; // observes a value: an ok read (its value), or a cas that is ok or open (its expected value)
const REFUSES = 4; // a known failed cas: the register held another value

function flagsOf(input: RegisterInput, output: RegisterOutput, open: boolean): number {
  let flags = 0;
  if (open && !output.known && (input.f === 'write' || input.f === 'cas')) flags |= WRITES;
  if (input.f === 'read' || (input.f === 'cas' && (output.ok || !output.known))) flags |= NEEDS;
  if (input.f === 'cas' && output.known && !output.ok) flags |= REFUSES;
  return flags;
}

const produced = (input: RegisterInput): unknown => (input.f === 'write' ? input.a : input.b);
const needed = (input: RegisterInput, output: RegisterOutput): unknown =>
  input.f === 'read' ? output.value : input.a;

/** The ops to leave out (1 = out), or null when there are none. */
export function unobservedRegisterWrites(ops: EncodedOps, initialValue: unknown = null): Uint8Array | null {
  const { ret, io } = ops;
  const n = ops.length;
  // Most histories have no open op at all: one pass over the return column says so.
  let anyOpen = false;
  for (let i = 0; i < n && !anyOpen; i++) if (ret[i] === Number.POSITIVE_INFINITY) anyOpen = true;
  if (!anyOpen) return null;

  const classes = ops.fewClasses ? ops.classCount : 0;
  const classFlags = new Uint8Array(classes);
  for (let c = 0; c < classes; c++) {
    const input = ops.classInput(c) as RegisterInput;
    const output = ops.classOutput(c) as RegisterOutput;
    // An interned class is shared by open and completed ops alike; WRITES is decided per op below.
    classFlags[c] = flagsOf(input, output, true);
  }
  const classNeeds = new Int32Array(classes);
  /** How many ops (not left out) observe each value, by valueKey. */
  const needs = new Map<unknown, number>();
  const need = (k: unknown, by: number) => needs.set(k, (needs.get(k) ?? 0) + by);
  const candidates: number[] = [];
  /** Known failed cas ops, by the value each expected: the last return among them. */
  const refusals = new Map<unknown, number>();
  for (let i = 0; i < n; i++) {
    const c = classes === 0 ? -1 : (io[i] as number);
    const open = ret[i] === Number.POSITIVE_INFINITY;
    let flags: number;
    if (c >= 0) {
      flags = classFlags[c] as number;
      if (!open) flags &= ~WRITES;
      if ((flags & NEEDS) !== 0) classNeeds[c]!++;
    } else {
      const input = ops.inputOf(i) as RegisterInput;
      const output = ops.outputOf(i) as RegisterOutput;
      flags = flagsOf(input, output, open);
      if ((flags & NEEDS) !== 0) need(valueKey(needed(input, output)), 1);
    }
    if ((flags & REFUSES) !== 0) {
      const k = valueKey((ops.inputOf(i) as RegisterInput).a);
      refusals.set(k, Math.max(refusals.get(k) ?? Number.NEGATIVE_INFINITY, ret[i] as number));
    }
    if ((flags & WRITES) !== 0) candidates.push(i);
  }
  // The last return of a failed cas whose expected value the register could hold: only open ops
  // invoked after it may be left out.
  let lastRefusal = Number.NEGATIVE_INFINITY;
  if (refusals.size > 0) {
    /** The values some op may write (an ok or open write or cas), and the initial value. */
    const writable = new Set<unknown>([valueKey(initialValue)]);
    for (let i = 0; i < n; i++) {
      const input = ops.inputOf(i) as RegisterInput;
      const output = ops.outputOf(i) as RegisterOutput;
      if (input.f === 'write' || (input.f === 'cas' && (output.ok || !output.known)))
        writable.add(valueKey(produced(input)));
    }
    for (const [k, at] of refusals) if (writable.has(k) && at > lastRefusal) lastRefusal = at;
  }
  if (lastRefusal !== Number.NEGATIVE_INFINITY) {
    const call = ops.call;
    let k = 0;
    for (const i of candidates) if ((call[i] as number) > lastRefusal) candidates[k++] = i;
    candidates.length = k;
  }
  if (candidates.length === 0) return null;
  for (let c = 0; c < classes; c++) {
    const k = classNeeds[c] as number;
    if (k > 0)
      need(valueKey(needed(ops.classInput(c) as RegisterInput, ops.classOutput(c) as RegisterOutput)), k);
  }

  // Candidates by the value they would write; a worklist of values whose observers dropped to none.
  const byValue = new Map<unknown, number[]>();
  for (const i of candidates) {
    const k = valueKey(produced(ops.inputOf(i) as RegisterInput));
    const list = byValue.get(k);
    if (list) list.push(i);
    else byValue.set(k, [i]);
  }
  const out = new Uint8Array(n);
  let left = 0;
  const work: unknown[] = [...byValue.keys()];
  while (work.length > 0) {
    const k = work.pop();
    const list = byValue.get(k);
    if (!list) continue;
    // A cas expecting the very value it writes changes nothing: its own need does not keep it.
    let own = 0;
    for (const i of list) if (ownNeed(ops, i, k)) own++;
    if ((needs.get(k) ?? 0) - own > 0) continue;
    byValue.delete(k);
    for (const i of list) {
      out[i] = 1;
      left++;
      const input = ops.inputOf(i) as RegisterInput;
      if (input.f !== 'cas') continue;
      // The dropped cas no longer observes its expected value: writes of that value may go too.
      const expected = valueKey(input.a);
      needs.set(expected, (needs.get(expected) ?? 0) - 1);
      if (expected !== k && byValue.has(expected)) work.push(expected);
    }
  }
  return left > 0 ? out : null;
}

/** Whether candidate `i` (writing the value keyed `k`) is a cas expecting that same value. */
function ownNeed(ops: EncodedOps, i: number, k: unknown): boolean {
  const input = ops.inputOf(i) as RegisterInput;
  return input.f === 'cas' && valueKey(input.a) === k;
}

/**
 * Open writes that were observed, bounded by their first observer. When an open write or cas w is the
 * only op that writes v, and v is not the initial value, every op that saw v (an ok read of it, an ok cas
 * expecting it) saw w's effect: so in every linearization w took effect, and before each such op r, whose
 * own effect lies before r returned. w is then given the earliest return among them as its own: w must
 * be linearized, before every op invoked after that return. Each linearization of the original meets
 * both (w precedes r, which precedes whatever was invoked after r returned), and every linearization of
 * the bounded partition is one of the original's, so the two stand or fall together. An op of unknown
 * outcome open to the end of the history is the search's worst case (it is a candidate at every step);
 * bounded, it is an ordinary op. Values written by more than one op are left as they are.
 */
const PRODUCES = 1; // writes a value: input.a (write) or input.b (cas, ok or unknown)
const OBSERVES = 2; // an ok read (its output) or an ok cas (its expected value)

function boundFlagsOf(input: RegisterInput, output: RegisterOutput): number {
  let flags = 0;
  if (input.f === 'write' || (input.f === 'cas' && (output.ok || !output.known))) flags |= PRODUCES;
  if (output.known && output.ok && (input.f === 'read' || input.f === 'cas')) flags |= OBSERVES;
  return flags;
}

const observed = (input: RegisterInput, output: RegisterOutput): unknown =>
  input.f === 'read' ? output.value : input.a;

/** Two or more producers (or the initial value and one): not bounded. */
const MANY = -1;

/** The bounded return column, or null when no open write was observed. */
export function boundObservedWrites(ops: EncodedOps, initialValue: unknown): Float64Array | null {
  const { ret, io } = ops;
  const n = ops.length;
  const classes = ops.fewClasses ? ops.classCount : 0;
  const classFlags = new Uint8Array(classes);
  for (let c = 0; c < classes; c++)
    classFlags[c] = boundFlagsOf(ops.classInput(c) as RegisterInput, ops.classOutput(c) as RegisterOutput);
  const flagsAt = (i: number): number => {
    const c = classes === 0 ? -1 : (io[i] as number);
    return c >= 0
      ? (classFlags[c] as number)
      : boundFlagsOf(ops.inputOf(i) as RegisterInput, ops.outputOf(i) as RegisterOutput);
  };
  // The open producers, by value: the candidates.
  const single = new Map<unknown, number>();
  for (let i = 0; i < n; i++) {
    if (ret[i] !== Number.POSITIVE_INFINITY || (flagsAt(i) & PRODUCES) === 0) continue;
    const k = valueKey(produced(ops.inputOf(i) as RegisterInput));
    single.set(k, single.has(k) ? MANY : i);
  }
  if (single.size === 0) return null;
  // Any other producer spoils a candidate: the initial value, or an op that completed (per class once).
  const initial = valueKey(initialValue);
  if (single.has(initial)) single.set(initial, MANY);
  const classCompleted = new Uint8Array(classes);
  for (let i = 0; i < n; i++) {
    if (ret[i] === Number.POSITIVE_INFINITY) continue;
    const c = classes === 0 ? -1 : (io[i] as number);
    if (c >= 0) {
      if (((classFlags[c] as number) & PRODUCES) !== 0) classCompleted[c] = 1;
      continue;
    }
    const input = ops.inputOf(i) as RegisterInput;
    if ((boundFlagsOf(input, ops.outputOf(i) as RegisterOutput) & PRODUCES) === 0) continue;
    const k = valueKey(produced(input));
    if (single.has(k)) single.set(k, MANY);
  }
  for (let c = 0; c < classes; c++) {
    if (classCompleted[c] === 0) continue;
    const k = valueKey(produced(ops.classInput(c) as RegisterInput));
    if (single.has(k)) single.set(k, MANY);
  }
  // The earliest return among the observers of each candidate's value.
  const classProducer = new Int32Array(classes).fill(MANY);
  for (let c = 0; c < classes; c++) {
    if (((classFlags[c] as number) & OBSERVES) === 0) continue;
    const seen = observed(ops.classInput(c) as RegisterInput, ops.classOutput(c) as RegisterOutput);
    classProducer[c] = single.get(valueKey(seen)) ?? MANY;
  }
  let bounded: Float64Array | null = null;
  for (let r = 0; r < n; r++) {
    const at = ret[r] as number;
    if (at === Number.POSITIVE_INFINITY) continue;
    const c = classes === 0 ? -1 : (io[r] as number);
    let p: number;
    if (c >= 0) p = classProducer[c] as number;
    else {
      const input = ops.inputOf(r) as RegisterInput;
      const output = ops.outputOf(r) as RegisterOutput;
      if ((boundFlagsOf(input, output) & OBSERVES) === 0) continue;
      p = single.get(valueKey(observed(input, output))) ?? MANY;
    }
    if (p < 0 || p === r) continue;
    bounded ??= ret.slice();
    if (at < (bounded[p] as number)) bounded[p] = at;
  }
  return bounded;
}
