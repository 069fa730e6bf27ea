import type { Operation } from '../../src/core/history/operation.ts';

/** A hand-written transaction: its micro-ops as observed (reads filled in), how it ended, its process. */
export interface T {
  mops: [string, unknown, unknown][];
  type?: 'ok' | 'fail' | 'info';
  process?: number;
}

export const ok = (...mops: [string, unknown, unknown][]): T => ({ mops });
export const failed = (...mops: [string, unknown, unknown][]): T => ({ mops, type: 'fail' });
export const on = (process: number, t: T): T => ({ ...t, process });

/**
 * Build operations from a schedule of events: `['i', n]` invokes txn n, `['c', n]` completes it. The
 * invocation carries the micro-ops with reads blanked (nil), as a client sends them.
 */
export function history(txns: T[], schedule: ['i' | 'c', number][]): Operation[] {
  const ops: Operation[] = [];
  const byTxn = new Map<number, Operation>();
  schedule.forEach(([what, n], index) => {
    const t = txns[n]!;
    if (what === 'i') {
      const op: Operation = {
        id: ops.length,
        process: t.process ?? n,
        f: 'txn',
        type: 'info',
        input: t.mops.map(([f, k, v]) => [f, k, f === 'r' ? null : v]),
        output: null,
        invokeIndex: index,
        completeIndex: null,
        invokeTime: index,
        completeTime: null,
        node: null,
        key: undefined,
        error: undefined,
        faultEpoch: null,
        infoTime: null,
      };
      ops.push(op);
      byTxn.set(n, op);
    } else {
      const op = byTxn.get(n)!;
      const type = t.type ?? 'ok';
      op.type = type;
      op.completeIndex = index;
      if (type === 'info') op.infoTime = index;
      else op.completeTime = index;
      op.output = type === 'ok' ? t.mops : null;
    }
  });
  return ops;
}

/** Every txn overlaps every other: all invoked, then all completed (no realtime or process order). */
export function concurrent(...txns: T[]): Operation[] {
  const schedule: ['i' | 'c', number][] = [];
  txns.forEach((_, i) => {
    schedule.push(['i', i]);
  });
  txns.forEach((_, i) => {
    schedule.push(['c', i]);
  });
  return history(txns, schedule);
}

/** One after another: each completes before the next is invoked. */
export function sequential(...txns: T[]): Operation[] {
  const schedule: ['i' | 'c', number][] = [];
  txns.forEach((_, i) => {
    schedule.push(['i', i], ['c', i]);
  });
  return history(txns, schedule);
}

/** The ops in completion order (never-completed ones last): what a streamed history hands a checker. */
export function byCompletion(ops: readonly Operation[]): Operation[] {
  return [...ops].sort(
    (a, b) => (a.completeIndex ?? Number.POSITIVE_INFINITY) - (b.completeIndex ?? Number.POSITIVE_INFINITY),
  );
}
