import { eachThread, mix, repeat } from '../../core/generator/index.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/**
 * Unique integers added to one set, with reads throughout and a final read per thread; checked by
 * set-full in linearizable mode (a read that misses an acknowledged add is stale, then lost).
 */
export function setWorkload(_o: WorkloadOptions): Workload {
  let next = 0;
  return {
    name: 'set',
    generator: () => mix([repeat(() => ({ f: 'add', value: next++ })), repeat({ f: 'read', value: null })]),
    finalGenerator: () => eachThread(() => ({ f: 'read', value: null })),
    checkers: [{ name: 'set-full', options: { linearizable: true } }],
    clientOptions: {},
  };
}
