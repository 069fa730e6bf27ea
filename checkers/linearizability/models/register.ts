import type { Operation } from '../../../src/core/history/operation.ts';
import { deepEqual, hashValue, ILLEGAL, type Illegal, type Model, ModelInputError, show } from '../model.ts';
import { simplifyRegisterOps } from './register-simplify.ts';
import type { RegisterInput, RegisterOutput } from './register-values.ts';
import { refuteStaleObservation } from './stale-read.ts';

export type { RegisterInput, RegisterOutput } from './register-values.ts';

/**
 * Single registers with Knossos's semantics (`knossos.model/register`, `cas-register`). `register` knows
 * read and write; `cas-register` adds compare-and-set, where an `ok` cas saw the expected value. By
 * default, as in Knossos, a failed op did not happen and an ok read that returned nil constrains nothing
 * (the client did not know what it read); {@link RegisterSemantics} turns either into an observation. As
 * Knossos's `history/complete` does, an ok op is applied with its completion's value and an op with
 * unknown outcome with its invocation's. One deliberate difference: an ok write or cas whose completion
 * carries nil keeps its invocation's value (Knossos would write nil, or cas from nil to nil), since such
 * completions come from clients that do not echo what they sent.
 */
export interface RegisterSemantics {
  /** 'unknown': an ok nil read constrains nothing (Knossos); 'value': the register held nil. */
  nilRead: 'unknown' | 'value';
  /** 'ignored': a failed cas did not happen (Knossos); 'mismatch': it compared and saw another value. */
  failedCas: 'ignored' | 'mismatch';
}

export const KNOSSOS_SEMANTICS: RegisterSemantics = { nilRead: 'unknown', failedCas: 'ignored' };

/** The value an op was applied with: the ok completion's when it is not nil, else the invocation's. */
export function appliedValue(op: Operation): unknown {
  return op.type === 'ok' && op.output !== undefined && op.output !== null ? op.output : op.input;
}

/** Whether an ok read result says something under these semantics (nil may mean "unknown"). */
export function readIsKnown(value: unknown, s: RegisterSemantics): boolean {
  return s.nilRead === 'value' || (value !== null && value !== undefined);
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

function casArgs(v: unknown): [unknown, unknown] {
  if (!Array.isArray(v) || v.length !== 2) {
    throw new ModelInputError(`cas value must be [expected new], got ${show(v)}`);
  }
  return [v[0], v[1]];
}

export function encodeRegisterOp(
  op: Operation,
  allowCas: boolean,
  s: RegisterSemantics = KNOSSOS_SEMANTICS,
): { input: RegisterInput; output: RegisterOutput } | null {
  const known = op.type !== 'info';
  switch (op.f) {
    case 'read':
      if (op.type !== 'ok' || !readIsKnown(op.output, s)) return null;
      return {
        input: { f: 'read', a: null, b: null },
        output: { known: true, value: op.output ?? null, ok: true },
      };
    case 'write':
      if (op.type === 'fail') return null;
      return {
        input: { f: 'write', a: appliedValue(op) ?? null, b: null },
        output: { known, value: null, ok: true },
      };
    case 'cas': {
      if (!allowCas) break;
      if (op.type === 'fail' && s.failedCas === 'ignored') return null;
      const [a, b] = casArgs(op.type === 'fail' ? op.input : appliedValue(op));
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
  semantics: RegisterSemantics = KNOSSOS_SEMANTICS,
): Model<unknown, RegisterInput, RegisterOutput> {
  return {
    name: allowCas ? 'cas-register' : 'register',
    init: () => initialValue,
    step: registerStep,
    readOnly: registerReadOnly,
    refute: (ops) => refuteStaleObservation(ops, initialValue),
    simplify: (ops) => simplifyRegisterOps(ops, initialValue),
    equal: deepEqual,
    hash: hashValue,
    encode: (op) => encodeRegisterOp(op, allowCas, semantics),
    describeOperation: describeRegisterOp,
    describeState: show,
  };
}
