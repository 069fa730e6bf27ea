import { canonicalJson } from '../../../src/core/history/values.ts';
import { deepEqual, hashValue, type Model, ModelInputError, show } from '../model.ts';
import {
  appliedValue,
  describeRegisterOp,
  KNOSSOS_SEMANTICS,
  type RegisterInput,
  type RegisterOutput,
  type RegisterSemantics,
  readIsKnown,
  registerReadOnly,
  registerStep,
} from './register.ts';
import { simplifyRegisterOps } from './register-simplify.ts';

/**
 * Many independent registers addressed as `[k v]` values (Jepsen's independent workloads): a write
 * invokes `[k v]`, a read invokes `[k nil]` and completes `[k v]`. Partitioned by key. Nil reads follow
 * {@link RegisterSemantics} (by default, as in Knossos, `[k nil]` read back constrains nothing).
 * Knossos's own `multi-register`, whose ops are transactions over several keys, is `multi-register-txn`.
 */
export interface MultiRegisterInput extends RegisterInput {
  key: string;
}

/** Whether a string key must be quoted to stay apart from other keys' text, by key (a history has few keys). */
const quoteKey = new Map<string, boolean>();

/**
 * A key as its partition's text, one text per key: a non-string as its canonical JSON (`1`, `[1,2]`), a
 * string as itself unless it could be another key's text (it reads as JSON, or starts with a quote),
 * then quoted. So `1` and `"1"` are two registers, as in Knossos, where one text for both merged them
 * into one register and made a linearizable history fail; the keys histories use read as they are.
 */
export function multiRegisterKey(k: unknown): string {
  if (typeof k !== 'string') return canonicalJson(k);
  let quote = quoteKey.get(k);
  if (quote === undefined) {
    quote = k.startsWith('"') || readsAsJson(k);
    if (quoteKey.size < 100_000) quoteKey.set(k, quote);
  }
  return quote ? JSON.stringify(k) : k;
}

function readsAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function pair(v: unknown, what: string): [unknown, unknown] {
  if (!Array.isArray(v) || v.length !== 2)
    throw new ModelInputError(`${what} must be [key value], got ${show(v)}`);
  return [v[0], v[1]];
}

export function makeMultiRegister(
  initialValue: unknown,
  semantics: RegisterSemantics = KNOSSOS_SEMANTICS,
): Model<unknown, MultiRegisterInput, RegisterOutput> {
  return {
    name: 'multi-register',
    init: () => initialValue,
    step: registerStep,
    readOnly: registerReadOnly,
    simplify: (ops) => simplifyRegisterOps(ops, initialValue),
    equal: deepEqual,
    hash: hashValue,
    encode(op) {
      if (op.f !== 'read' && op.f !== 'write') {
        const hint = op.f === 'txn' ? " (Knossos's transactional multi-register is multi-register-txn)" : '';
        throw new ModelInputError(
          `model multi-register has no function ${JSON.stringify(op.f)} (expected read, write)${hint}`,
        );
      }
      const [k] = pair(op.input, `${op.f} value`);
      const key = op.key ?? multiRegisterKey(k);
      if (op.f === 'read') {
        if (op.type !== 'ok') return null;
        const [, seen] = pair(op.output, 'read result');
        if (!readIsKnown(seen, semantics)) return null;
        return {
          input: { f: 'read', key, a: null, b: null },
          output: { known: true, value: seen ?? null, ok: true },
        };
      }
      if (op.type === 'fail') return null;
      const [, v] = pair(appliedValue(op), 'write value');
      return {
        input: { f: 'write', key, a: v ?? null, b: null },
        output: { known: op.type !== 'info', value: null, ok: true },
      };
    },
    partitionKey: (input) => input.key,
    describeOperation: (input, output) => `${input.key}: ${describeRegisterOp(input, output)}`,
    describeState: show,
  };
}
