import test from 'ava';
import { i32, recycleIntoArena, reserveArena, u8, withArena } from '../../checkers/elle/arena.ts';
import { EdgeList, WR } from '../../checkers/elle/graph.ts';
import { elleHistoryBuilder, runElleOn } from '../../checkers/elle/index.ts';
import { simulate } from '../../checkers/elle/simulate.ts';
import { mopValue, TxnBuilder, type TxnHistory } from '../../checkers/elle/txns.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { byCompletion } from './helpers.ts';

/**
 * A stream of completions arrives out of op id order, and the builder sorts the history into its own
 * arrays, then gives what it no longer needs to the check's arena; the edge list is given back once the
 * graph is built. Both are compared with the plain path: the same ops fed in op id order (no sorting at
 * all, so nothing given back before the graph).
 */

function built(ops: readonly Operation[]): TxnHistory {
  const b = new TxnBuilder('append');
  for (const op of ops) b.add(op);
  return b.finish();
}

const ARRAYS = ['status', 'process', 'invokeIndex', 'completeIndex', 'mopStart', 'mopKind'] as const;

test('a history fed in completion order is sorted into the same arrays as one fed in op id order', (t) => {
  // Sizes across the builders' growth steps (1,024, then eightfold), with crashed (info) ops.
  for (const txns of [10, 900, 9_000]) {
    const ops = simulate({
      isolation: 'snapshot-isolation',
      txns,
      concurrency: 7,
      seed: txns,
      infoRate: 0.05,
    });
    const arrived = byCompletion(ops);
    t.notDeepEqual(
      arrived.map((op) => op.id),
      ops.map((op) => op.id),
      `${txns}: completion order differs from op id order`,
    );
    const want = built(ops);
    // Inside an arena scope too, where the builder's spent arrays are given back and handed out again.
    for (const got of [built(arrived), withArena(() => built(arrived))]) {
      t.is(got.n, want.n);
      for (const name of ARRAYS)
        t.deepEqual(Array.from(got[name]), Array.from(want[name]), `${txns}: ${name}`);
      // Keys are numbered as first seen and read lists placed in the pool as they arrive: compare the
      // keys and values themselves.
      const mops = Array.from(want.mopKind.keys());
      t.deepEqual(
        mops.map((m) => mopValue(got, m)),
        mops.map((m) => mopValue(want, m)),
        `${txns}: micro-op values`,
      );
      t.deepEqual(
        Array.from(got.mopKey, (k) => got.keys[k]),
        Array.from(want.mopKey, (k) => want.keys[k]),
        `${txns}: mopKey`,
      );
    }
  }
});

test('the check of a history large enough to reuse the spent arrays matches the check in op id order', (t) => {
  // 40,000 txns: the spent arrays (above 64 KB each) are carved again by the analysis.
  const ops = simulate({
    isolation: 'read-committed',
    txns: 40_000,
    concurrency: 10,
    seed: 3,
    infoRate: 0.02,
  });
  const options = { workload: 'list-append' };
  const checked = (fed: readonly Operation[]) => {
    const b = elleHistoryBuilder(options);
    for (const op of fed) b.add(op);
    return runElleOn(b, options);
  };
  const inOrder = checked(ops);
  const streamed = checked(byCompletion(ops));
  t.is(streamed.valid, false);
  const strip = (r: typeof inOrder) => ({ ...r, stats: { ...r.stats, seconds: 0, phaseSeconds: {} } });
  t.deepEqual(strip(streamed), strip(inOrder));
});

test('given-back memory is handed out zero-filled, without overlaps, and only inside a scope', (t) => {
  const dirty = new Int32Array(1 << 16).fill(-7);
  recycleIntoArena([dirty]);
  t.is(dirty[0], -7, 'outside a scope nothing is taken');
  withArena(() => {
    reserveArena(1 << 20);
    recycleIntoArena([dirty, new Uint8Array(100).fill(9)]);
    const a = i32(1 << 15);
    const b = i32(1 << 14);
    const c = u8(1 << 16);
    // Too large for what is left of the given-back piece: from the reservation.
    const d = i32(1 << 15);
    t.is(a.buffer, dirty.buffer);
    t.is(b.buffer, dirty.buffer);
    t.not(d.buffer, dirty.buffer);
    for (const x of [a, b, c, d]) t.true(x.every((v) => v === 0));
    a.fill(1);
    b.fill(2);
    t.true(a.every((v) => v === 1) && b.every((v) => v === 2), 'regions do not overlap');
    t.is(b.byteOffset, a.byteOffset + a.byteLength);
    // A request under 64 KB is never cut from given-back memory.
    t.not(i32(100).buffer, dirty.buffer);
  });
});

test('an edge list given back is empty and takes edges again; its memory is handed out again', (t) => {
  withArena(() => {
    const e = new EdgeList();
    for (let i = 0; i < 70_000; i++) e.add(i, i + 1, WR);
    const src = e.src;
    e.recycle();
    t.is(e.length, 0);
    e.add(1, 2, WR);
    t.deepEqual([e.length, e.src[0], e.dst[0], e.rel[0]], [1, 1, 2, WR]);
    const again = i32(70_000);
    t.is(again.buffer, src.buffer);
    t.true(again.every((v) => v === 0));
  });
});
