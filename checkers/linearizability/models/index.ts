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

const factories: Record<string, (o: ModelOptions) => AnyModel> = {
  register: (o) => makeRegister(false, o.initialValue ?? null) as AnyModel,
  'cas-register': (o) => makeRegister(true, o.initialValue ?? null) as AnyModel,
  kv: (o) => makeKv(o.initialValue) as AnyModel,
  'multi-register': (o) => makeMultiRegister(o.initialValue ?? null) as AnyModel,
  set: () => makeSetModel() as AnyModel,
  'fifo-queue': () => makeFifoQueue() as AnyModel,
  mutex: () => makeMutex() as AnyModel,
  counter: (o) => makeCounter(o.initialValue) as AnyModel,
};

export const MODEL_NAMES: readonly string[] = Object.keys(factories);

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
  specs.set(model, { name, options: { initialValue: options.initialValue } });
  return model;
}

/** The name and options a model was built from, or undefined for a model built by hand. */
export function modelSpecOf(model: AnyModel): ModelSpec | undefined {
  return specs.get(model);
}
