import test from 'ava';
import { buildCsr, EdgeList, tarjan, WR, WW } from '../../checkers/elle/graph.ts';
import { PositionIndex } from '../../checkers/elle/list-append.ts';

/**
 * The list-append analysis finds an element's position in its key's version order through one flat
 * index for all keys (dense tables side by side, a Map for keys with large or negative values). A
 * lookup must see only its own key's table, and an element listed twice is at its first position.
 */
test('positions per key: dense tables side by side do not answer for each other', (t) => {
  const orders = [Int32Array.of(0, 1, 2), Int32Array.of(5, 0), new Int32Array(0), Int32Array.of(3, 1)];
  const p = new PositionIndex(orders);
  t.deepEqual([p.get(0, 0), p.get(0, 1), p.get(0, 2)], [0, 1, 2]);
  // Key 0's table holds 0..2; key 1's comes next in the flat array, so 3 past key 0's start is key 1's 0.
  t.is(p.get(0, 3), -1);
  t.is(p.get(0, 5), -1);
  t.is(p.get(1, 5), 0);
  t.is(p.get(1, 0), 1);
  t.is(p.get(1, 1), -1);
  t.is(p.get(1, 6), -1);
  t.is(p.get(2, 0), -1);
  t.deepEqual([p.get(3, 3), p.get(3, 1), p.get(3, 0), p.get(3, 2)], [0, 1, -1, -1]);
  t.is(p.get(0, -1), -1);
  t.deepEqual(p.dupes, [undefined, undefined, undefined, undefined]);
});

test('positions per key: large or negative values use a map; duplicates count from the first', (t) => {
  const orders = [Int32Array.of(7, 2_000_000, 7, -4, 7), Int32Array.of(1, 1, 0)];
  const p = new PositionIndex(orders);
  t.deepEqual([p.get(0, 7), p.get(0, 2_000_000), p.get(0, -4), p.get(0, 3)], [0, 1, 3, -1]);
  t.deepEqual([p.get(1, 1), p.get(1, 0), p.get(1, 2)], [0, 2, -1]);
  t.deepEqual(
    p.dupes.map((d) => (d ? [...d] : null)),
    [[[7, 3]], [[1, 2]]],
  );
});

test('Tarjan counts cyclic components with or without listing them', (t) => {
  const e = new EdgeList();
  // Two 2-cycles and a 3-cycle, plus a vertex on no cycle.
  for (const [a, b] of [
    [0, 1],
    [1, 0],
    [2, 3],
    [3, 2],
    [4, 5],
    [5, 6],
    [6, 4],
    [6, 7],
  ] as const)
    e.add(a, b, a === 6 && b === 7 ? WR : WW);
  const g = buildCsr(8, e);
  const listed = tarjan(g, WW | WR);
  t.is(listed.cyclic, 3);
  t.deepEqual(
    listed.multi.map((c) => [...c].sort()),
    [
      [0, 1],
      [2, 3],
      [4, 5, 6],
    ],
  );
  const counted = tarjan(g, WW | WR, undefined, false);
  t.is(counted.cyclic, 3);
  t.deepEqual(counted.multi, []);
  t.deepEqual(counted.comp, listed.comp);
  t.is(counted.count, listed.count);
});
