import { UserError } from '../../core/util/errors.ts';
import { bankWorkload } from './bank.ts';
import { counterWorkload } from './counter.ts';
import { listAppendWorkload } from './list-append.ts';
import { multiRegisterWorkload, registerWorkload } from './register.ts';
import { setWorkload } from './set.ts';
import type { Workload, WorkloadOptions } from './types.ts';

export type { CheckerSpec, Workload, WorkloadOptions } from './types.ts';

const WORKLOADS: Record<string, (o: WorkloadOptions) => Workload> = {
  register: registerWorkload,
  'multi-register': multiRegisterWorkload,
  set: setWorkload,
  'list-append': listAppendWorkload,
  counter: counterWorkload,
  bank: bankWorkload,
};

export const WORKLOAD_NAMES: readonly string[] = Object.keys(WORKLOADS);

export function makeWorkload(name: string, o: WorkloadOptions): Workload {
  const make = WORKLOADS[name];
  if (!make)
    throw new UserError(`--workload: unknown workload "${name}" (one of ${WORKLOAD_NAMES.join(', ')})`);
  return make(o);
}
