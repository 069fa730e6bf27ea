import test from 'ava';
import fc from 'fast-check';
import { buildCsr, type Csr, EdgeList, REALTIME, RW, WR, WW } from '../../checkers/elle/graph.ts';
import { elleChecker } from '../../checkers/elle/index.ts';
import { insertionSorted, realtimeOrder } from '../../checkers/elle/order-edges.ts';
import { simulate } from '../../checkers/elle/simulate.ts';
import { extractTxns, FAIL, OK, type TxnHistory } from '../../checkers/elle/txns.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { byCompletion, concurrent, ok } from './helpers.ts';

/**
 * The realtime order is written straight into the graph, and lost-update candidates are grouped in
 * typed arrays. Both are checked against the plain constructions they replaced: the realtime edges
 * listed one by one (three per txn) before the graph is built, and a map of maps of txn lists.
 */

/**
 * The realtime edges as a list, the way they were built before: the reference. A failed txn is not in
 * the serialization graph, so it is neither pointed at nor counted as an invocation.
 */
function listedRealtimeEdges(h: TxnHistory, edges: EdgeList): number {
  const done = (t: number) => h.status[t] === OK && !Number.isNaN(h.completeIndex[t]!);
  const completed = [...Array(h.n).keys()]
    .filter(done)
    .sort((a, b) => h.completeIndex[a]! - h.completeIndex[b]!);
  let next = h.n;
  let lastTime = -1;
  let c = 0;
  for (let t = 0; t < h.n; t++) {
    if (h.status[t] === FAIL) continue;
    // The completions since the last invocation share a node.
    if (c < completed.length && h.completeIndex[completed[c]!]! < h.invokeIndex[t]!) {
      const node = next++;
      while (c < completed.length && h.completeIndex[completed[c]!]! < h.invokeIndex[t]!)
        edges.add(completed[c++]!, node, REALTIME);
      if (lastTime >= 0) edges.add(lastTime, node, REALTIME);
      lastTime = node;
    }
    if (lastTime >= 0) edges.add(lastTime, t, REALTIME);
  }
  return next - h.n;
}

/** Random data edges among the txns, with repeats and some vertices of high out-degree. */
function dataEdges(n: number, seed: number): EdgeList {
  const e = new EdgeList();
  let x = seed;
  const rand = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x;
  };
  for (let i = 0; i < 3 * n; i++) {
    const a = rand() % n;
    // Every 50th source gets a burst of edges, so merging goes through stamps as well as comparisons.
    const burst = a % 50 === 0 ? 20 : 1;
    for (let j = 0; j < burst; j++) e.add(a, rand() % n, [WW, WR, RW][rand() % 3]!);
  }
  return e;
}

function sameGraph(t: import('ava').ExecutionContext, got: Csr, want: Csr, label: string): void {
  t.is(got.n, want.n, `${label}: vertices`);
  t.deepEqual(Array.from(got.offsets), Array.from(want.offsets), `${label}: offsets`);
  t.deepEqual(Array.from(got.targets), Array.from(want.targets), `${label}: targets in order`);
  t.deepEqual(Array.from(got.masks), Array.from(want.masks), `${label}: relations`);
}

for (const [isolation, concurrency] of [
  ['snapshot-isolation', 5],
  ['read-committed', 12],
  ['serializable', 30],
] as const) {
  test(`realtime order written into the graph equals the listed edges, edge for edge (${isolation}, ${concurrency} clients)`, (t) => {
    const ops = simulate({ isolation, txns: 3000, concurrency, seed: concurrency, infoRate: 0.05 });
    const h = extractTxns(ops, 'append');
    const failed = h.status.filter((s) => s === FAIL).length;
    // The serializable simulator aborts nothing; the other two abort on conflicts.
    if (isolation !== 'serializable') t.true(failed > 0, `${isolation}: some txn failed`);
    const rt = realtimeOrder(h);
    const copy = (e: EdgeList) => {
      const c = new EdgeList();
      for (let i = 0; i < e.length; i++) c.add(e.src[i]!, e.dst[i]!, e.rel[i]!);
      return c;
    };
    const data = dataEdges(h.n, concurrency);
    const listed = copy(data);
    const count = listedRealtimeEdges(h, listed);
    t.is(rt.count, count, 'time vertices');
    const want = buildCsr(h.n + count, listed);
    sameGraph(t, buildCsr(h.n, copy(data), rt), want, 'with data edges');
    const alone = new EdgeList();
    sameGraph(
      t,
      buildCsr(h.n, new EdgeList(), rt),
      buildCsr(h.n + listedRealtimeEdges(h, alone), alone),
      'alone',
    );
    // Every realtime edge is there once: a lost or repeated one would change the count.
    let realtimeEdges = 0;
    for (let i = 0; i < want.masks.length; i++) if (want.masks[i] === REALTIME) realtimeEdges++;
    const targets = h.n - failed;
    t.true(realtimeEdges > 2 * targets * 0.9, `${realtimeEdges} realtime edges for ${targets} txns`);
  });
}

test('realtime order: a txn reaches exactly the txns that did not fail, invoked after it completed ok', (t) => {
  // By definition, pair by pair, on histories small enough to walk from every txn.
  for (const [isolation, concurrency, seed] of [
    ['serializable', 3, 1],
    ['snapshot-isolation', 8, 2],
    ['read-committed', 20, 3],
  ] as const) {
    const h = extractTxns(simulate({ isolation, txns: 300, concurrency, seed, infoRate: 0.1 }), 'append');
    const g = buildCsr(h.n, new EdgeList(), realtimeOrder(h));
    let sharedVertices = 0;
    for (let v = h.n; v < g.n; v++) {
      let into = 0;
      for (let u = 0; u < h.n; u++)
        for (let e = g.offsets[u]!; e < g.offsets[u + 1]!; e++) if (g.targets[e] === v) into++;
      if (into >= 2) sharedVertices++;
    }
    t.true(sharedVertices > 0, `${isolation}: some time vertex is shared`);
    if (isolation !== 'serializable')
      t.true(
        h.status.some((s) => s === FAIL),
        `${isolation}: some txn failed, so leaving failed txns out is tested`,
      );
    for (let a = 0; a < h.n; a++) {
      const seen = new Uint8Array(g.n);
      const stack = [a];
      while (stack.length > 0) {
        const v = stack.pop()!;
        for (let e = g.offsets[v]!; e < g.offsets[v + 1]!; e++) {
          const d = g.targets[e]!;
          if (!seen[d]) {
            seen[d] = 1;
            stack.push(d);
          }
        }
      }
      const completed = h.status[a] === OK && !Number.isNaN(h.completeIndex[a]!);
      for (let b = 0; b < h.n; b++) {
        const want = completed && h.status[b] !== FAIL && h.completeIndex[a]! < h.invokeIndex[b]!;
        if (Boolean(seen[b]) !== want) {
          t.fail(`${isolation}: txn ${a} ${want ? 'does not reach' : 'reaches'} txn ${b}`);
          return;
        }
      }
    }
  }
  t.pass();
});

test('completions put in order by insertion: sorted as a sort would, or given up with the same txns', (t) => {
  // Keys as completion indices: each txn out of place by up to `spread` (a history's concurrency), and
  // sometimes far more; a budget too small for the moves must leave the txns for the fallback sort.
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 0, max: 2000 }),
      fc.integer(),
      (n, spread, budget, seed) => {
        let x = seed | 1;
        const rand = () => {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          return (x >>> 0) / 2 ** 32;
        };
        const key = Array.from({ length: n }, (_, i) => i + rand() * spread + i / (n + 1));
        const a = Int32Array.from({ length: n }, (_, i) => i);
        const want = Array.from(a).sort((p, q) => key[p]! - key[q]!);
        const done = insertionSorted(a, key, budget);
        if (done) t.deepEqual(Array.from(a), want);
        else
          t.deepEqual(
            Array.from(a).sort((p, q) => p - q),
            Array.from({ length: n }, (_, i) => i),
          );
        let moves = 0;
        for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (key[i]! > key[j]!) moves++;
        // It gives up exactly when the moves (the inversions) exceed the budget.
        t.is(done, moves <= budget, `${moves} moves, budget ${budget}`);
      },
    ),
    { numRuns: 300, seed: 37 },
  );
});

/** lost-update by the construction it replaced: per key, per value read last, the txns in history order. */
function listedLostUpdates(ops: readonly Operation[]): {
  groups: { key: string; ops: number[] }[];
  candidates: number[];
} {
  const byKey = new Map<string, Map<string, number[]>>();
  for (const op of [...ops].sort((a, b) => a.id - b.id)) {
    if (op.type !== 'ok' || !Array.isArray(op.output)) continue;
    const mops = op.output as [string, unknown, unknown][];
    mops.forEach(([f, k, v], i) => {
      if (f !== 'r' || mops.slice(0, i).some((m) => m[1] === k)) return;
      if (!mops.slice(i + 1).some((m) => m[0] === 'append' && m[1] === k)) return;
      const list = Array.isArray(v) ? v : [];
      const value = list.length === 0 ? 'init' : JSON.stringify(list[list.length - 1]);
      const byValue = byKey.get(String(k)) ?? new Map<string, number[]>();
      byKey.set(String(k), byValue);
      byValue.set(value, [...(byValue.get(value) ?? []), op.invokeIndex]);
    });
  }
  return {
    groups: [...byKey].flatMap(([key, byValue]) =>
      [...byValue.values()].filter((txns) => txns.length >= 2).map((txns) => ({ key, ops: txns })),
    ),
    candidates: [...byKey.values()].map((byValue) => [...byValue.values()].reduce((a, l) => a + l.length, 0)),
  };
}

test('lost-update groups come out as a map of maps gives them, for keys with few and many candidates', (t) => {
  // Read committed loses updates; a few keys with many appends each give keys with more than 32
  // candidates (grouped by lookup) and fewer (grouped by comparing), in completion order.
  const ops = simulate({
    isolation: 'read-committed',
    txns: 3000,
    concurrency: 8,
    seed: 3,
    activeKeys: 2,
    maxWritesPerKey: 5000,
  });
  const completed = byCompletion(ops);
  const r = elleChecker.check(completed, {
    workload: 'list-append',
    consistencyModels: ['read-committed'],
    anomalies: ['lost-update'],
  });
  const { groups: want, candidates } = listedLostUpdates(ops);
  t.true(
    candidates.some((c) => c > 32) && candidates.some((c) => c >= 2 && c <= 32),
    `candidates per key: ${candidates}`,
  );
  t.true(want.length > 10 && want.length < 100, `${want.length} groups (all in the result)`);
  const got = r.anomalies.filter((a) => a.type === 'lost-update').map((a) => ({ key: a.key, ops: a.ops }));
  t.deepEqual(got, want);
  t.is((r.stats.anomalyCounts as Record<string, number>)['lost-update'], want.length);
});

test('lost-update: keys in the order of their first candidate, values in the order first read', (t) => {
  // Key "b" is touched first (an append), but key "a" has the first candidate; on "a" the value 2
  // is read before 1 and both are read twice.
  const ops = concurrent(
    ok(['append', 'b', 1]),
    ok(['r', 'a', [2]], ['append', 'a', 10]),
    ok(['r', 'b', [1]], ['append', 'b', 11]),
    ok(['r', 'a', [1]], ['append', 'a', 12]),
    ok(['r', 'b', [1]], ['append', 'b', 13]),
    ok(['r', 'a', [1]], ['append', 'a', 14]),
    ok(['r', 'a', [2]], ['append', 'a', 15]),
    ok(['append', 'a', 1], ['append', 'a', 2]),
  );
  const r = elleChecker.check(ops, {
    workload: 'list-append',
    consistencyModels: [],
    anomalies: ['lost-update'],
  });
  t.deepEqual(
    r.anomalies.filter((a) => a.type === 'lost-update').map((a) => [a.key, a.ops, a.value]),
    [
      ['a', [1, 6], 2],
      ['a', [3, 5], 1],
      ['b', [2, 4], 1],
    ],
  );
});
