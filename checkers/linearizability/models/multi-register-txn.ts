import { tagOf, textOf } from '../../../src/core/history/values.ts';
import { deepEqual, hashValue, ILLEGAL, type Model, ModelInputError, show } from '../model.ts';
import { appliedValue, KNOSSOS_SEMANTICS, type RegisterSemantics, readIsKnown } from './register.ts';

/**
 * Knossos's `multi-register` (`knossos.model/multi-register`): registers identified by keys, read and
 * written by transactions. Every op has `f` "txn" and a value that is a list of `[f k v]` micro-ops, f
 * being read or write (r and w are accepted too, as Elle's rw-register writes them): `[[read x 1]
 * [write y 2]]`. A transaction applies its micro-ops in order, so a read sees the transaction's own
 * earlier writes. The state starts from the initial value, a map of key → value (keys it does not name
 * start at nil). As in Knossos, a nil read is always legal unless `nilRead: 'value'`, a failed
 * transaction did not happen, and an ok transaction is applied with its completion's value.
 *
 * Keys are compared as text: a keyword `:x`, the string "x" and the JSON key "x" are one key, and an
 * integer key 1 is the key "1" (the EDN reader turns `{1 0}` into {"1": 0}). Transactions span keys, so
 * the history is checked as one partition.
 */
export type TxnState = Readonly<Record<string, unknown>>;

export interface TxnMicroOp {
  f: 'read' | 'write';
  key: string;
  value: unknown;
  /** False for a read whose result says nothing (nil under Knossos semantics). */
  known: boolean;
}

export interface TxnInput {
  mops: readonly TxnMicroOp[];
}

function keyText(k: unknown): string {
  const t = textOf(k);
  if (t !== undefined) return t;
  if (typeof k === 'number' || typeof k === 'bigint') return String(k);
  return JSON.stringify(k);
}

/** The initial map: null/absent → empty; an object (or an EDN `#map`) → its entries, keys as text. */
function initialState(v: unknown): TxnState {
  if (v === null || v === undefined) return {};
  if (typeof v !== 'object' || Array.isArray(v))
    throw new ModelInputError(`initial value must be a map of key → value, got ${show(v)}`);
  const out: Record<string, unknown> = {};
  if (tagOf(v) === '#map') {
    for (const [k, x] of (v as { '#map': [unknown, unknown][] })['#map']) out[keyText(k)] = x;
    return out;
  }
  if (tagOf(v) !== undefined) throw new ModelInputError(`initial value must be a map, got ${show(v)}`);
  for (const [k, x] of Object.entries(v)) out[k] = x;
  return out;
}

const MICRO_F: Record<string, 'read' | 'write'> = { read: 'read', r: 'read', write: 'write', w: 'write' };

/**
 * The micro-ops of a txn. Reads of an op with unknown outcome carry what the invocation said, which is
 * no observation: nil there is unknown whatever the semantics.
 */
function microOps(v: unknown, s: RegisterSemantics, observed: boolean): TxnMicroOp[] {
  if (!Array.isArray(v))
    throw new ModelInputError(`txn value must be a list of [f k v] micro-ops, got ${show(v)}`);
  return v.map((m) => {
    if (!Array.isArray(m) || m.length !== 3)
      throw new ModelInputError(`micro-op must be [f k v], got ${show(m)}`);
    const name = textOf(m[0]);
    const f = name === undefined ? undefined : MICRO_F[name];
    if (!f) throw new ModelInputError(`micro-op function must be read or write, got ${show(m[0])}`);
    const value = m[2] ?? null;
    return {
      f,
      key: keyText(m[1]),
      value,
      known: f === 'write' || readIsKnown(value, observed ? s : KNOSSOS_SEMANTICS),
    };
  });
}

function txnStep(state: TxnState, input: TxnInput): TxnState | typeof ILLEGAL {
  let next: Record<string, unknown> | null = null;
  for (const m of input.mops) {
    const current = next ?? state;
    if (m.f === 'read') {
      if (m.known && !deepEqual(current[m.key] ?? null, m.value)) return ILLEGAL;
    } else {
      next ??= { ...state };
      next[m.key] = m.value;
    }
  }
  return next ?? state;
}

function describeMicroOp(m: TxnMicroOp): string {
  return `[${m.f} ${m.key} ${m.f === 'read' && !m.known ? '?' : show(m.value)}]`;
}

export function makeMultiRegisterTxn(
  initialValue: unknown,
  semantics: RegisterSemantics = KNOSSOS_SEMANTICS,
): Model<TxnState, TxnInput, null> {
  const initial = initialState(initialValue);
  return {
    name: 'multi-register-txn',
    init: () => initial,
    step: txnStep,
    equal: deepEqual,
    hash: hashValue,
    readOnly: (input) => input.mops.every((m) => m.f === 'read'),
    encode(op) {
      if (op.f !== 'txn') {
        throw new ModelInputError(
          `model multi-register-txn has no function ${JSON.stringify(op.f)} (expected txn; for [key value] registers use multi-register)`,
        );
      }
      if (op.type === 'fail') return null;
      const mops = microOps(appliedValue(op), semantics, op.type === 'ok');
      // Reads that say nothing and write nothing cannot affect the verdict.
      if (mops.every((m) => !m.known)) return null;
      return { input: { mops }, output: null };
    },
    describeOperation: (input) => `txn [${input.mops.map(describeMicroOp).join(' ')}]`,
    describeState: show,
  };
}
