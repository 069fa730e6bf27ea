import type { Operation } from '../../../src/core/history/operation.ts';
import { deepEqual, hashValue, ILLEGAL, type Illegal, type Model, ModelInputError, show } from '../model.ts';
import { refuteStaleObservation } from './stale-read.ts';

/**
 * Single registers with Jepsen semantics. `register` knows read and write; `cas-register` adds
 * compare-and-set, where an `ok` cas saw the expected value and a `fail` cas is a real operation that
 * saw a different one. A failed write did not happen; a read with unknown result constrains nothing.
 */
export interface RegisterInput {
  f: 'read' | 'write' | 'cas';
  a: unknown;
  b: unknown;
}

export interface RegisterOutput {
  /** False for an `info`/open op: any outcome is allowed. */
  known: boolean;
  /** What a read returned. */
  value: unknown;
  /** Whether a cas succeeded. */
  ok: boolean;
}

export function registerStep(
  state: unknown,
  input: RegisterInput,
  output: RegisterOutput,
): unknown | Illegal {
  switch (input.f) {
    case 'read':
      return deepEqual(state, output.value) ? state : ILLEGAL;
    case 'write':
      return input.a;
    case 'cas': {
      const matches = deepEqual(state, input.a);
      if (!output.known) return matches ? input.b : state;
      if (output.ok) return matches ? input.b : ILLEGAL;
      return matches ? ILLEGAL : state;
    }
  }
}

/** A read, or a cas known to have failed: legal only when it leaves the value as it is. */
export function registerReadOnly(input: RegisterInput, output: RegisterOutput): boolean {
  return input.f === 'read' || (input.f === 'cas' && output.known && !output.ok);
}

function casArgs(op: Operation): [unknown, unknown] {
  const v = op.input;
  if (!Array.isArray(v) || v.length !== 2) {
    throw new ModelInputError(`cas value must be [expected new], got ${show(v)}`);
  }
  return [v[0], v[1]];
}

export function encodeRegisterOp(
  op: Operation,
  allowCas: boolean,
): { input: RegisterInput; output: RegisterOutput } | null {
  const known = op.type !== 'info';
  switch (op.f) {
    case 'read':
      if (op.type !== 'ok') return null;
      return { input: { f: 'read', a: null, b: null }, output: { known: true, value: op.output, ok: true } };
    case 'write':
      if (op.type === 'fail') return null;
      return { input: { f: 'write', a: op.input, b: null }, output: { known, value: null, ok: true } };
    case 'cas': {
      if (!allowCas) break;
      const [a, b] = casArgs(op);
      return { input: { f: 'cas', a, b }, output: { known, value: null, ok: op.type === 'ok' } };
    }
    default:
      break;
  }
  throw new ModelInputError(
    `model ${allowCas ? 'cas-register' : 'register'} has no function ${JSON.stringify(op.f)} (expected read, write${allowCas ? ', cas' : ''})`,
  );
}

export function describeRegisterOp(input: RegisterInput, output: RegisterOutput): string {
  switch (input.f) {
    case 'read':
      return `read → ${show(output.value)}`;
    case 'write':
      return `write(${show(input.a)})${output.known ? '' : ' ?'}`;
    case 'cas':
      return `cas(${show(input.a)}, ${show(input.b)}) → ${output.known ? (output.ok ? 'ok' : 'fail') : '?'}`;
  }
}

export function makeRegister(
  allowCas: boolean,
  initialValue: unknown,
): Model<unknown, RegisterInput, RegisterOutput> {
  return {
    name: allowCas ? 'cas-register' : 'register',
    init: () => initialValue,
    step: registerStep,
    readOnly: registerReadOnly,
    refute: (ops) => refuteStaleObservation(ops, initialValue),
    equal: deepEqual,
    hash: hashValue,
    encode: (op) => encodeRegisterOp(op, allowCas),
    describeOperation: describeRegisterOp,
    describeState: show,
  };
}
