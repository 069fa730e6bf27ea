import {
  addIntegers,
  exactInteger,
  hashValue,
  ILLEGAL,
  type Model,
  ModelInputError,
  show,
} from '../model.ts';

/**
 * A counter: add a delta (1 when the value is nil), read the total. Failed adds did not happen;
 * a read with unknown result constrains nothing. Integers are exact at any size: values beyond 2^53
 * (`{"#bigint": "…"}` in histories) and sums past it are bigints.
 */
type Int = number | bigint;

export interface CounterInput {
  f: 'add' | 'read';
  delta: Int;
}

export interface CounterOutput {
  value: Int;
}

function num(v: unknown, what: string): Int {
  const exact = exactInteger(v);
  if (exact !== null) return exact;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw new ModelInputError(`${what} must be a number, got ${show(v)}`);
}

function add(a: Int, b: Int): Int {
  // Integers add exactly; a fractional delta (unusual for a counter) adds as doubles.
  if (typeof a === 'number' && typeof b === 'number' && !(Number.isInteger(a) && Number.isInteger(b)))
    return a + b;
  return addIntegers(a, b);
}

export function makeCounter(initialValue: unknown): Model<Int, CounterInput, CounterOutput> {
  const initial =
    initialValue === undefined || initialValue === null ? 0 : num(initialValue, 'initial value');
  return {
    name: 'counter',
    init: () => initial,
    step(state, input, output) {
      if (input.f === 'add') return add(state, input.delta);
      return state === output.value ? state : ILLEGAL;
    },
    equal: (a, b) => a === b,
    readOnly: (input) => input.f === 'read',
    hash: hashValue,
    encode(op) {
      if (op.f === 'add') {
        if (op.type === 'fail') return null;
        const delta = op.input === null || op.input === undefined ? 1 : num(op.input, 'add value');
        return { input: { f: 'add', delta }, output: { value: 0 } };
      }
      if (op.f === 'read') {
        if (op.type !== 'ok') return null;
        return { input: { f: 'read', delta: 0 }, output: { value: num(op.output, 'read result') } };
      }
      throw new ModelInputError(`model counter has no function ${JSON.stringify(op.f)} (expected add, read)`);
    },
    describeOperation: (input, output) =>
      input.f === 'add' ? `add(${input.delta})` : `read → ${output.value}`,
    describeState: String,
  };
}
