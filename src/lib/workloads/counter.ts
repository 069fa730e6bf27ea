import { eachThread, mix, repeat } from '../../core/generator/index.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/** Increments by 1 and reads; every ok read must lie between acknowledged and attempted increments. */
export function counterWorkload(_o: WorkloadOptions): Workload {
  return {
    name: 'counter',
    generator: () =>
      mix([
        repeat({ f: 'add', value: 1 }),
        repeat({ f: 'add', value: 1 }),
        repeat({ f: 'read', value: null }),
      ]),
    finalGenerator: () => eachThread(() => ({ f: 'read', value: null })),
    checkers: [{ name: 'counter', options: {} }],
    clientOptions: {},
  };
}
