import { BUILT_IN, Registry } from '../../core/util/registry.ts';
import { bankWorkload } from './bank.ts';
import { counterWorkload } from './counter.ts';
import { listAppendWorkload } from './list-append.ts';
import { queueWorkload } from './queue.ts';
import { multiRegisterWorkload, registerWorkload } from './register.ts';
import { setWorkload } from './set.ts';
import type { Workload, WorkloadOptions } from './types.ts';

export type { CheckerSpec, Workload, WorkloadOptions } from './types.ts';

/**
 * Every workload by name: one registry. A definition says which op functions (`f`) its clients issue,
 * so `plan check` can refuse a checker that would find nothing to read, and builds the workload for a
 * run. Plugins add workloads with `defineWorkload`.
 */
export interface WorkloadDefinition {
  name: string;
  summary: string;
  /** The op functions this workload's clients are asked to perform. */
  ops: readonly string[];
  create(o: WorkloadOptions): Workload;
}

export const workloads = new Registry<WorkloadDefinition>('workload');

const builtIn: WorkloadDefinition[] = [
  {
    name: 'register',
    summary: 'read / write / cas of small integers on one key (linearizable, cas-register)',
    ops: ['read', 'write', 'cas'],
    create: registerWorkload,
  },
  {
    name: 'multi-register',
    summary: 'the register ops on independent keys, checked per key',
    ops: ['read', 'write', 'cas'],
    create: multiRegisterWorkload,
  },
  {
    name: 'set',
    summary: 'unique adds to one set, reads throughout (set-full)',
    ops: ['add', 'read'],
    create: setWorkload,
  },
  {
    name: 'list-append',
    summary: "Elle's list-append transactions over a few active keys (elle)",
    ops: ['txn'],
    create: listAppendWorkload,
  },
  {
    name: 'counter',
    summary: 'increments and reads (counter)',
    ops: ['add', 'read'],
    create: counterWorkload,
  },
  {
    name: 'bank',
    summary: 'transfers between accounts and reads of every balance (bank)',
    ops: ['transfer', 'read'],
    create: bankWorkload,
  },
  {
    name: 'queue',
    summary: 'unique enqueues and dequeues, one final drain (queue, total-queue)',
    ops: ['enqueue', 'dequeue', 'drain'],
    create: queueWorkload,
  },
];
for (const w of builtIn) workloads.register(w.name, w, BUILT_IN);

export function makeWorkload(name: string, o: WorkloadOptions, where = '--workload'): Workload {
  return workloads.require(name, where).create(o);
}
