import type { Operation } from '../src/core/history/operation.ts';

/**
 * Synthetic histories for `npm run bench:oracles`: n operations shaped for one checker, built directly
 * as Operation records (pairing is the history layer's cost, benchmarked in bench/history.ts). Ops run
 * on 10 processes, 1 ms apart, 2–20 ms latency, each invocation and completion a distinct event index.
 */
export interface Generated {
  ops: Operation[];
  options: Record<string, unknown>;
  /** A note on the shape, printed with the figures. */
  shape: string;
}

function mk(
  id: number,
  f: string,
  input: unknown,
  output: unknown,
  type: Operation['type'] = 'ok',
  extra: Partial<Operation> = {},
): Operation {
  const invokeTime = id * 1e6;
  const lat = (2 + ((id * 7919) % 19)) * 1e6;
  return {
    id,
    process: id % 10,
    f,
    type,
    input,
    output: type === 'ok' ? output : null,
    invokeIndex: 2 * id,
    completeIndex: 2 * id + 1,
    invokeTime,
    completeTime: type === 'info' ? null : invokeTime + lat,
    node: `n${id % 5}`,
    key: undefined,
    error: type === 'info' ? 'timeout' : null,
    faultEpoch: null,
    infoTime: type === 'info' ? invokeTime + lat : null,
    ...extra,
  };
}

export const GENERATORS: Record<string, (n: number) => Generated> = {
  set(n) {
    const ops: Operation[] = [];
    const all: number[] = [];
    for (let i = 0; i < n - 1; i++) {
      ops.push(mk(i, 'add', i, i));
      all.push(i);
    }
    ops.push(mk(n - 1, 'read', null, all));
    return { ops, options: {}, shape: `${n - 1} adds, 1 final read of all` };
  },
  'set-full'(n) {
    // Reads every 100 ops return the last 200 elements added: each element is read about twice, then
    // drops out (lost). Total read size ≈ 2n, like Jepsen set-full per-key histories.
    const ops: Operation[] = [];
    const recent: number[] = [];
    let next = 0;
    for (let i = 0; i < n; i++) {
      if (i % 100 === 99) ops.push(mk(i, 'read', null, recent.slice(-200)));
      else {
        ops.push(mk(i, 'add', next, next));
        recent.push(next++);
        if (recent.length > 400) recent.splice(0, 200);
      }
    }
    return { ops, options: {}, shape: 'adds, a read of the last 200 elements every 100 ops' };
  },
  counter(n) {
    const ops: Operation[] = [];
    let sum = 0;
    for (let i = 0; i < n; i++) {
      if (i % 10 === 9) ops.push(mk(i, 'read', null, sum));
      else {
        ops.push(mk(i, 'add', 1, 1));
        sum++;
      }
    }
    return { ops, options: {}, shape: '90% adds, 10% reads' };
  },
  bank(n) {
    const ops: Operation[] = [];
    const bal = Array.from({ length: 10 }, () => 10);
    for (let i = 0; i < n; i++) {
      if (i % 2 === 0) {
        const from = i % 10;
        const to = (i + 3) % 10;
        const ok = (bal[from] as number) > 0;
        if (ok) {
          bal[from] = (bal[from] as number) - 1;
          bal[to] = (bal[to] as number) + 1;
        }
        ops.push(mk(i, 'transfer', { from, to, amount: 1 }, null, ok ? 'ok' : 'fail'));
      } else ops.push(mk(i, 'read', null, Object.fromEntries(bal.map((b, k) => [String(k), b]))));
    }
    return { ops, options: { totalAmount: 100 }, shape: 'half transfers, half reads of 10 accounts' };
  },
  'unique-ids'(n) {
    return {
      ops: Array.from({ length: n }, (_, i) => mk(i, 'generate', null, i * 3 + 1)),
      options: {},
      shape: 'generate',
    };
  },
  queue(n) {
    const ops: Operation[] = [];
    for (let i = 0; i < n; i++)
      ops.push(i % 2 === 0 ? mk(i, 'enqueue', i, i) : mk(i, 'dequeue', null, i - 1));
    return { ops, options: {}, shape: 'alternating enqueue / dequeue' };
  },
  'total-queue'(n) {
    const ops: Operation[] = [];
    for (let i = 0; i < n; i++)
      ops.push(i % 2 === 0 ? mk(i, 'enqueue', i, i) : mk(i, 'dequeue', null, i - 1));
    return { ops, options: {}, shape: 'alternating enqueue / dequeue' };
  },
  'no-lost-ack'(n) {
    const ops: Operation[] = [];
    const all: number[] = [];
    for (let i = 0; i < n - 3; i++) {
      const type = i % 50 === 0 ? 'info' : 'ok';
      ops.push(mk(i, 'append', i, i, type));
      all.push(i);
    }
    for (let r = 0; r < 3; r++) ops.push(mk(n - 3 + r, 'final-read', null, all, 'ok', { node: `n${r}` }));
    return { ops, options: {}, shape: 'appends (2% timed out), final reads of 3 replicas' };
  },
  'exactly-once'(n) {
    const ops: Operation[] = [];
    const ledger: { key: string }[] = [];
    for (let i = 0; i < n - 1; i++) {
      // Every 20th op retries the previous key.
      const k = i % 20 === 19 ? `k${i - 1}` : `k${i}`;
      ops.push(mk(i, 'credit', { key: k, amount: 1 }, { entry: i }));
      if (i % 20 !== 19) ledger.push({ key: k });
    }
    ops.push(mk(n - 1, 'final-read', null, ledger));
    return { ops, options: { keyPath: 'key' }, shape: 'credits, 5% retries, final ledger dump' };
  },
  session(n) {
    const ops: Operation[] = [];
    const version = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const key = i % 100;
      const v = (version.get(key) ?? 0) + (i % 3 === 0 ? 1 : 0);
      version.set(key, v);
      ops.push(
        i % 3 === 0
          ? mk(i, 'write', [key, i], { version: v })
          : mk(i, 'read', [key, null], { value: i, version: v }),
      );
    }
    return { ops, options: {}, shape: '1/3 writes, 2/3 reads, 100 keys, SUT versions' };
  },
  'final-state-invariant'(n) {
    const ops: Operation[] = [];
    const state: Record<string, number> = {};
    let sum = 0;
    for (let i = 0; i < n - 1; i++) {
      ops.push(mk(i, 'write', [`k${i}`, i % 2 ? 1 : -1], null));
      state[`k${i}`] = i % 2 ? 1 : -1;
      sum += i % 2 ? 1 : -1;
    }
    ops.push(mk(n - 1, 'final-read', null, state));
    return {
      ops,
      options: { invariant: { type: 'sum', equals: sum } },
      shape: 'writes, final map dump (sum)',
    };
  },
  'replica-reconciliation'(n) {
    const ops: Operation[] = [];
    // n writes over n/3 keys; the three replica dumps together hold n entries, as many as there are ops.
    const keys = Math.floor(n / 3);
    const state: Record<string, number> = {};
    for (let i = 0; i < n - 3; i++) {
      ops.push(mk(i, 'write', [`k${i % keys}`, i], null));
      state[`k${i % keys}`] = i;
    }
    for (let r = 0; r < 3; r++)
      ops.push(mk(n - 3 + r, 'final-read', null, { ...state }, 'ok', { node: `n${r}` }));
    return { ops, options: {}, shape: 'writes over n/3 keys, 3 replica dumps (n entries in all)' };
  },
  'long-fork'(n) {
    const ops: Operation[] = [];
    for (let i = 0; i < n; i++) {
      const g = Math.floor(i / 30) * 3;
      // Each group of 30 ops: its 3 keys written once (ops 0–2), then 27 reads seeing a growing prefix.
      if (i % 30 < 3) ops.push(mk(i, 'txn', [['w', g + (i % 30), 1]], [['w', g + (i % 30), 1]]));
      else {
        const seen = Math.min(3, Math.floor((i % 30) / 10) + 1);
        const r = [0, 1, 2].map((j) => ['r', g + j, j < seen ? 1 : null]);
        ops.push(
          mk(
            i,
            'txn',
            r.map(([f, k]) => [f, k, null]),
            r,
          ),
        );
      }
    }
    return { ops, options: { groupSize: 3 }, shape: 'writes and 3-key group reads' };
  },
};

function latencyHistory(n: number): Generated {
  const ops: Operation[] = [];
  for (let i = 0; i < n; i++) {
    const type = i % 100 === 0 ? 'info' : i % 37 === 0 ? 'fail' : 'ok';
    ops.push(mk(i, i % 2 ? 'read' : 'write', i, i, type));
  }
  for (let k = 0; k < 10; k++) {
    ops.push(mk(n + k, 'start-partition', null, null, 'info', { process: 'nemesis', invokeTime: k * 100e9 }));
  }
  return { ops, options: {}, shape: 'reads/writes, 1% info, 2.7% fail' };
}

GENERATORS.stats = latencyHistory;
GENERATORS['unhandled-errors'] = latencyHistory;
GENERATORS.perf = (n) => ({ ...latencyHistory(n), options: { plots: false } });
GENERATORS['perf+svg'] = (n) => ({ ...latencyHistory(n), options: { plots: true } });
GENERATORS.slo = (n) => ({
  ...latencyHistory(n),
  options: { p99Ms: 50, maxErrorRate: 0.05, minThroughput: 100 },
});
GENERATORS.fairness = (n) => ({
  ...latencyHistory(n),
  options: { worstP99Ratio: 1.5, minGroupThroughput: 10, errorFree: false },
});
