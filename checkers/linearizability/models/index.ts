import type { AnyModel } from '../model.ts';
import { makeCounter } from './counter.ts';
import { makeFifoQueue } from './fifo-queue.ts';
import { makeKv } from './kv.ts';
import { makeMultiRegister } from './multi-register.ts';
import { makeMultiRegisterTxn } from './multi-register-txn.ts';
import { makeMutex } from './mutex.ts';
import { makeRegister, type RegisterSemantics } from './register.ts';
import { makeSetModel } from './set.ts';

/**
 * How a register history's nil reads and failed compare-and-sets are read. The defaults are Knossos's
 * (`knossos.model`): an ok read that returned nil says nothing about the register, and a failed op did
 * not happen. Histories whose clients mean more say so:
 * - `nilRead: 'value'`: nil is a value the register held (faultline's own clients record a read of a
 *   missing key as nil, and registers start at nil; Porcupine's etcd model reads nil the same way);
 * - `failedCas: 'mismatch'`: a failed cas compared and saw another value (faultline's clients, Porcupine's
 *   etcd model), unless its error is marked not-applied.
 */
export const NIL_READS = ['unknown', 'value'] as const;
export type NilRead = (typeof NIL_READS)[number];
export const FAILED_CAS = ['ignored', 'mismatch'] as const;
export type FailedCas = (typeof FAILED_CAS)[number];

export interface ModelOptions {
  /** Initial value of registers/counters/kv strings, or the key → value map of multi-register-txn. */
  initialValue?: unknown;
  /** register, cas-register, multi-register, multi-register-txn; default 'unknown' (Knossos). */
  nilRead?: NilRead;
  /** cas-register; default 'ignored' (Knossos). */
  failedCas?: FailedCas;
}

function semantics(o: ModelOptions): RegisterSemantics {
  return { nilRead: o.nilRead ?? 'unknown', failedCas: o.failedCas ?? 'ignored' };
}

const factories: Record<string, (o: ModelOptions) => AnyModel> = {
  register: (o) => makeRegister(false, o.initialValue ?? null, semantics(o)) as AnyModel,
  'cas-register': (o) => makeRegister(true, o.initialValue ?? null, semantics(o)) as AnyModel,
  kv: (o) => makeKv(o.initialValue) as AnyModel,
  'multi-register': (o) => makeMultiRegister(o.initialValue ?? null, semantics(o)) as AnyModel,
  'multi-register-txn': (o) => makeMultiRegisterTxn(o.initialValue, semantics(o)) as AnyModel,
  set: () => makeSetModel() as AnyModel,
  'fifo-queue': () => makeFifoQueue() as AnyModel,
  mutex: () => makeMutex() as AnyModel,
  counter: (o) => makeCounter(o.initialValue) as AnyModel,
};

export const MODEL_NAMES: readonly string[] = Object.keys(factories);

/** Models whose verdict depends on `nilRead` / `failedCas`. */
const NIL_READ_MODELS: ReadonlySet<string> = new Set([
  'register',
  'cas-register',
  'multi-register',
  'multi-register-txn',
]);
const FAILED_CAS_MODELS: ReadonlySet<string> = new Set(['cas-register']);

/**
 * The semantics a model was built with, in words (for a checker's evidence line), or null for models
 * that have no such choice.
 */
export function describeSemantics(name: string, options: ModelOptions): string | null {
  const s = semantics(options);
  const parts: string[] = [];
  if (NIL_READ_MODELS.has(name))
    parts.push(s.nilRead === 'value' ? 'nil reads are values' : 'nil reads constrain nothing');
  if (FAILED_CAS_MODELS.has(name))
    parts.push(s.failedCas === 'mismatch' ? 'a failed cas saw another value' : 'a failed cas did not happen');
  return parts.length > 0 ? parts.join(', ') : null;
}

export interface ModelSpec {
  name: string;
  options: ModelOptions;
}

/** How each registry-built model was made, so a worker thread can build the same one. */
const specs = new WeakMap<AnyModel, ModelSpec>();

/** Build a model by name; null for an unknown name (the caller reports it as bad input). */
export function createModel(name: string, options: ModelOptions = {}): AnyModel | null {
  const make = factories[name];
  if (!make) return null;
  const model = make(options);
  const kept: ModelOptions = { initialValue: options.initialValue };
  if (options.nilRead !== undefined) kept.nilRead = options.nilRead;
  if (options.failedCas !== undefined) kept.failedCas = options.failedCas;
  specs.set(model, { name, options: kept });
  return model;
}

/** The name and options a model was built from, or undefined for a model built by hand. */
export function modelSpecOf(model: AnyModel): ModelSpec | undefined {
  return specs.get(model);
}
