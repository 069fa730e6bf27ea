import { BUILT_IN, Registry } from '../../../src/core/util/registry.ts';
import { type AnyModel, completeModel, type Model } from '../model.ts';
import type { RegisterSemantics } from './register.ts';

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

/**
 * The model registry: one entry per sequential model, with the op functions (`f`) it reads, so `plan
 * check` can tell whether a workload's history gives the model anything to check. Plugins add models
 * with `defineModel`; those run inline (a worker thread cannot rebuild a model it never loaded).
 */
export interface ModelDefinition {
  name: string;
  summary?: string;
  /** The op functions the model reads. */
  ops: readonly string[];
  create(options: ModelOptions): Model;
}

export const models = new Registry<ModelDefinition>('model');

/**
 * A built-in model's implementation module is loaded only when that model is asked for: `faultline
 * check --model cas-register` starts without compiling the other eight (module loading is most of the
 * command's start-up). `loadModel` loads one; `./index.ts` loads them all, for code that creates models
 * synchronously by any name (tests, benches, the worker thread).
 */
interface BuiltInModel<M> {
  name: string;
  ops: readonly string[];
  load: () => Promise<M>;
  make: (module: M, options: ModelOptions) => Model;
}

/** The loaded implementation modules of built-in models, by model name. */
const loadedModules = new Map<string, unknown>();
/** How to load each built-in model's implementation, by model name. */
const loaders = new Map<string, () => Promise<void>>();

function builtIn<M>(m: BuiltInModel<M>): ModelDefinition {
  loaders.set(m.name, async () => {
    if (!loadedModules.has(m.name)) loadedModules.set(m.name, await m.load());
  });
  return {
    name: m.name,
    ops: m.ops,
    create: (o) => {
      const module = loadedModules.get(m.name) as M | undefined;
      if (module === undefined)
        throw new Error(`model ${m.name}: its implementation is not loaded (await loadModel first)`);
      return m.make(module, o);
    },
  };
}

const builtIns: ModelDefinition[] = [
  builtIn({
    name: 'register',
    ops: ['read', 'write'],
    load: () => import('./register.ts'),
    make: (r, o) => r.makeRegister(false, o.initialValue ?? null, semantics(o)) as AnyModel,
  }),
  builtIn({
    name: 'cas-register',
    ops: ['read', 'write', 'cas'],
    load: () => import('./register.ts'),
    make: (r, o) => r.makeRegister(true, o.initialValue ?? null, semantics(o)) as AnyModel,
  }),
  builtIn({
    name: 'kv',
    ops: ['get', 'put', 'append'],
    load: () => import('./kv.ts'),
    make: (k, o) => k.makeKv(o.initialValue) as AnyModel,
  }),
  builtIn({
    name: 'multi-register',
    ops: ['read', 'write'],
    load: () => import('./multi-register.ts'),
    make: (r, o) => r.makeMultiRegister(o.initialValue ?? null, semantics(o)) as AnyModel,
  }),
  builtIn({
    name: 'multi-register-txn',
    ops: ['txn'],
    load: () => import('./multi-register-txn.ts'),
    make: (r, o) => r.makeMultiRegisterTxn(o.initialValue, semantics(o)) as AnyModel,
  }),
  builtIn({
    name: 'set',
    ops: ['add', 'read'],
    load: () => import('./set.ts'),
    make: (s) => s.makeSetModel() as AnyModel,
  }),
  builtIn({
    name: 'fifo-queue',
    ops: ['enqueue', 'dequeue'],
    load: () => import('./fifo-queue.ts'),
    make: (q) => q.makeFifoQueue() as AnyModel,
  }),
  builtIn({
    name: 'mutex',
    ops: ['acquire', 'release'],
    load: () => import('./mutex.ts'),
    make: (m) => m.makeMutex() as AnyModel,
  }),
  builtIn({
    name: 'counter',
    ops: ['add', 'read'],
    load: () => import('./counter.ts'),
    make: (c, o) => c.makeCounter(o.initialValue) as AnyModel,
  }),
];
for (const m of builtIns) models.register(m.name, m);

/** The built-in models' names (plugins' models are in `models.names()`). */
export const MODEL_NAMES: readonly string[] = builtIns.map((m) => m.name);

/**
 * Makes `createModel(name)` work: loads a built-in model's implementation (once). A plugin's model, or
 * a name no model has, needs nothing loaded (`createModel` then builds it, or answers null).
 */
export async function loadModel(name: string): Promise<void> {
  const canonical = models.canonical(name);
  if (canonical !== undefined && models.originOf(canonical) === BUILT_IN) await loaders.get(canonical)?.();
}

/** Loads every built-in model's implementation. */
export async function loadAllModels(): Promise<void> {
  await Promise.all(MODEL_NAMES.map(loadModel));
}

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

/**
 * Build a model by name; null for an unknown name (the caller reports it as bad input). A built-in
 * model's implementation must be loaded first ({@link loadModel}, or import `./index.ts`).
 */
export function createModel(name: string, options: ModelOptions = {}): AnyModel | null {
  const def = models.get(name);
  if (!def) return null;
  const model = completeModel(def.create(options));
  // Only built-in models can be rebuilt inside a worker thread.
  if (models.originOf(name) === BUILT_IN) {
    const kept: ModelOptions = { initialValue: options.initialValue };
    if (options.nilRead !== undefined) kept.nilRead = options.nilRead;
    if (options.failedCas !== undefined) kept.failedCas = options.failedCas;
    specs.set(model, { name, options: kept });
  }
  return model;
}

/** The name and options a model was built from, or undefined for a model built by hand. */
export function modelSpecOf(model: AnyModel): ModelSpec | undefined {
  return specs.get(model);
}
