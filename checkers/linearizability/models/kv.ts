import type { Operation } from '../../../src/core/history/operation.ts';
import { exactInteger, ILLEGAL, type Model, ModelInputError, show } from '../model.ts';

/**
 * A string key/value store (Porcupine's kv model): get returns the key's current string, put replaces
 * it, append concatenates. Every key starts as the initial value ("" by default). The key comes from the
 * op's `key` field, or from a `[key value]` pair value. Partitioned by key.
 */
export interface KvInput {
  f: 'get' | 'put' | 'append';
  key: string;
  arg: string;
  /** Rolling hash of `arg` and BASE^arg.length, precomputed so a step hashes in O(1). */
  argHash: number;
  argPow: number;
}

export interface KvOutput {
  value: string;
  hash: number;
}

/**
 * A key's value with its polynomial hash. Appends grow the strings (hundreds of characters on
 * kv/c50), so hashing or comparing them on every step would dominate; the rolling hash of a
 * concatenation follows from the parts: H(s + a) = H(s) * BASE^|a| + H(a) (mod 2^32).
 */
export interface KvState {
  readonly s: string;
  readonly h: number;
}

const BASE = 0x9e3779b1;

function rollingHash(s: string): { hash: number; pow: number } {
  let hash = 0;
  let pow = 1;
  for (let i = 0; i < s.length; i++) {
    hash = (Math.imul(hash, BASE) + s.charCodeAt(i)) | 0;
    pow = Math.imul(pow, BASE);
  }
  return { hash, pow };
}

function argInput(f: KvInput['f'], key: string, arg: string): KvInput {
  const { hash, pow } = rollingHash(arg);
  return { f, key, arg, argHash: hash, argPow: pow };
}

function asString(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  const big = exactInteger(v);
  if (big !== null) return String(big);
  throw new ModelInputError(`${what} must be a string, got ${show(v)}`);
}

function split(op: Operation, v: unknown, what: string): { key: string; value: unknown } {
  if (op.key !== undefined) return { key: op.key, value: v };
  if (Array.isArray(v) && v.length === 2) return { key: asString(v[0], 'key'), value: v[1] };
  throw new ModelInputError(`${what}: no key (expected a key field or a [key value] value)`);
}

export function makeKv(initialValue: unknown): Model<KvState, KvInput, KvOutput> {
  const initialString =
    initialValue === undefined || initialValue === null ? '' : asString(initialValue, 'initial value');
  const initial: KvState = { s: initialString, h: rollingHash(initialString).hash };
  return {
    name: 'kv',
    init: () => initial,
    step(state, input, output) {
      switch (input.f) {
        case 'get':
          return state.h === output.hash && state.s === output.value ? state : ILLEGAL;
        case 'put':
          return { s: input.arg, h: input.argHash };
        case 'append':
          return { s: state.s + input.arg, h: (Math.imul(state.h, input.argPow) + input.argHash) | 0 };
      }
    },
    equal: (a, b) => a.h === b.h && a.s === b.s,
    readOnly: (input) => input.f === 'get',
    hash: (state) => state.h,
    encode(op) {
      switch (op.f) {
        case 'get': {
          if (op.type !== 'ok') return null;
          const { key } = split(op, op.input, 'get');
          const out = op.key !== undefined ? op.output : split(op, op.output, 'get result').value;
          const value = out === null ? '' : asString(out, 'get result');
          return { input: argInput('get', key, ''), output: { value, hash: rollingHash(value).hash } };
        }
        case 'put':
        case 'append': {
          if (op.type === 'fail') return null;
          const { key, value } = split(op, op.input, op.f);
          return {
            input: argInput(op.f, key, asString(value, `${op.f} value`)),
            output: { value: '', hash: 0 },
          };
        }
        default:
          throw new ModelInputError(
            `model kv has no function ${JSON.stringify(op.f)} (expected get, put, append)`,
          );
      }
    },
    partitionKey: (input) => input.key,
    describeOperation(input, output) {
      if (input.f === 'get') return `get(${JSON.stringify(input.key)}) → ${JSON.stringify(output.value)}`;
      return `${input.f}(${JSON.stringify(input.key)}, ${JSON.stringify(input.arg)})`;
    },
    describeState: (state) => JSON.stringify(state.s),
  };
}
