import { defineWorkload, type Workload } from 'faultline';
import { elleTransactions, repeat } from 'faultline/generators';

/**
 * Elle's rw-register: transactions of 1–4 micro-ops, each a read of a key or a write of a value never
 * written to that key before, over a small pool of active keys; a key written `maxWritesPerKey` times is
 * retired for a fresh one, so every read names exactly one write (Elle needs unique written values).
 * Reads alone do not reveal the version order: Elle infers it from the writes each read observed and
 * from writes following reads within one transaction.
 *
 * The transactions are faultline's own (`elleTransactions`, the list-append workload's generator),
 * with `w` for the write.
 */
export function rwRegisterWorkload(keyCount = 4, maxWritesPerKey = 24): Workload {
  const { txn, finalRead } = elleTransactions({ keyCount, maxWritesPerKey, write: 'w' });
  return {
    name: 'rw-register',
    generator: () => repeat(txn),
    finalGenerator: finalRead,
    checkers: [
      {
        name: 'elle',
        options: { workload: 'rw-register', consistencyModels: ['serializable'] },
      },
    ],
    clientOptions: {},
  };
}

export const rwRegister = defineWorkload({
  name: 'rw-register',
  summary: "Elle's rw-register transactions (reads and unique writes) over a few active keys (elle)",
  ops: ['txn'],
  create: () => rwRegisterWorkload(),
});
