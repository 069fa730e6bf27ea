import { eachThread, mix, repeat } from '../../core/generator/index.ts';
import type { Context } from '../../core/generator/types.ts';
import type { Workload, WorkloadOptions } from './types.ts';

/**
 * Transfers between accounts in transactions, and reads of every balance: each read must show the
 * constant total and no negative balance.
 */
export function bankWorkload(_o: WorkloadOptions & { accounts?: number; total?: number }): Workload {
  const accounts = Array.from({ length: _o.accounts ?? 5 }, (_v, i) => String(i));
  const total = _o.total ?? 100;
  const transfer = (ctx: Context) => {
    const from = ctx.rng.pick(accounts);
    let to = ctx.rng.pick(accounts);
    if (to === from) to = accounts[(accounts.indexOf(from) + 1) % accounts.length] as string;
    return { f: 'transfer', value: { from, to, amount: 1 + ctx.rng.int(5) } };
  };
  return {
    name: 'bank',
    generator: () => mix([repeat(transfer), repeat({ f: 'read', value: null })]),
    finalGenerator: () => eachThread(() => ({ f: 'read', value: null })),
    checkers: [{ name: 'bank', options: { accounts, totalAmount: total, negativeBalances: false } }],
    clientOptions: { accounts, totalBalance: total },
  };
}
