import { BUILT_IN, Registry } from '../../../src/core/util/registry.ts';
import type { AnyModel } from '../model.ts';
import { makeCounter } from './counter.ts';
import { makeFifoQueue } from './fifo-queue.ts';
import { makeKv } from './kv.ts';
import { makeMultiRegister } from './multi-register.ts';
import { makeMutex } from './mutex.ts';
import { makeRegister } from './register.ts';
import { makeSetModel } from './set.ts';

export interface ModelOptions {
  /** Initial value of registers/counters/kv strings; models without one ignore it. */
  initialValue?: unknown;
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
  create(options: ModelOptions): AnyModel;
}

export const models = new Registry<ModelDefinition>('model');

const builtIn: ModelDefinition[] = [
  {
    name: 'register',
    ops: ['read', 'write'],
    create: (o) => makeRegister(false, o.initialValue ?? null) as AnyModel,
  },
  {
    name: 'cas-register',
    ops: ['read', 'write', 'cas'],
    create: (o) => makeRegister(true, o.initialValue ?? null) as AnyModel,
  },
  { name: 'kv', ops: ['get', 'put', 'append'], create: (o) => makeKv(o.initialValue) as AnyModel },
  {
    name: 'multi-register',
    ops: ['read', 'write'],
    create: (o) => makeMultiRegister(o.initialValue ?? null) as AnyModel,
  },
  { name: 'set', ops: ['add', 'read'], create: () => makeSetModel() as AnyModel },
  { name: 'fifo-queue', ops: ['enqueue', 'dequeue'], create: () => makeFifoQueue() as AnyModel },
  { name: 'mutex', ops: ['acquire', 'release'], create: () => makeMutex() as AnyModel },
  { name: 'counter', ops: ['add', 'read'], create: (o) => makeCounter(o.initialValue) as AnyModel },
];
for (const m of builtIn) models.register(m.name, m);

/** The built-in models' names (plugins' models are in `models.names()`). */
export const MODEL_NAMES: readonly string[] = builtIn.map((m) => m.name);

export interface ModelSpec {
  name: string;
  options: ModelOptions;
}

/** How each registry-built model was made, so a worker thread can build the same one. */
const specs = new WeakMap<AnyModel, ModelSpec>();

/** Build a model by name; null for an unknown name (the caller reports it as bad input). */
export function createModel(name: string, options: ModelOptions = {}): AnyModel | null {
  const def = models.get(name);
  if (!def) return null;
  const model = def.create(options);
  // Only built-in models can be rebuilt inside a worker thread.
  if (models.originOf(name) === BUILT_IN)
    specs.set(model, { name, options: { initialValue: options.initialValue } });
  return model;
}

/** The name and options a model was built from, or undefined for a model built by hand. */
export function modelSpecOf(model: AnyModel): ModelSpec | undefined {
  return specs.get(model);
}
