import { loadAllModels } from './registry.ts';

/**
 * The model registry with every built-in model's implementation loaded, so `createModel` builds any of
 * them synchronously: for tests, benches and the worker thread. The checker itself imports
 * `./registry.ts` and loads only the model it is asked for (`loadModel`), which keeps `faultline check`'s
 * start-up from compiling the others.
 */
export * from './registry.ts';

await loadAllModels();
