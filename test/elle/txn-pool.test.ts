import test from 'ava';
import fc from 'fast-check';
import { readCodes, TxnBuilder, type TxnHistory } from '../../checkers/elle/txns.ts';
import type { Operation } from '../../src/core/history/operation.ts';

const read = (id: number, list: unknown[], key = id % 7): Operation => ({
  id,
  process: id % 5,
  f: 'txn',
  type: 'ok',
  input: [['r', key, null]],
  output: [['r', key, list]],
  invokeIndex: 2 * id,
  completeIndex: 2 * id + 1,
  invokeTime: 2 * id,
  completeTime: 2 * id + 1,
  node: null,
  key: undefined,
  error: undefined,
  faultEpoch: null,
  infoTime: null,
});

test('read lists come back whole across pool chunks, including one longer than a chunk', (t) => {
  // 4,500 lists of 1,000 fill the first 4M-element chunk and spill into the next (no list split
  // across them); then a 5M-element list (a chunk of its own) and short and empty lists around it.
  const lists: number[][] = [];
  for (let i = 0; i < 4500; i++) lists.push(Array.from({ length: 1000 }, (_, j) => (i * 7 + j) % 100_000));
  lists.push([]);
  lists.push(Array.from({ length: 5_000_000 }, (_, j) => j));
  lists.push([]);
  lists.push([1, 2, 3]);
  lists.push([]);
  const b = new TxnBuilder('append');
  for (const [i, l] of lists.entries()) b.add(read(i, l));
  const h = b.finish();
  t.is(h.n, lists.length);
  t.true(h.pool.length >= 3, `${h.pool.length} chunks`);
  for (const [i, l] of lists.entries()) {
    const codes = readCodes(h, i);
    if (codes?.length !== l.length || codes.some((c, j) => c !== l[j])) {
      t.fail(`list ${i} (${l.length} elements) came back as ${codes?.length} elements, differing`);
      return;
    }
  }
  t.pass();
});

test('an empty read right after a list longer than a chunk, at the end of the history', (t) => {
  const b = new TxnBuilder('append');
  b.add(
    read(
      0,
      Array.from({ length: 4_500_000 }, (_, j) => j),
    ),
  );
  b.add(read(1, []));
  const h = b.finish();
  t.is(readCodes(h, 0)?.length, 4_500_000);
  t.deepEqual(Array.from(readCodes(h, 1) ?? [9]), []);
});

/** Every read comes back as written (codes are the integers themselves). */
function readsBack(t: import('ava').ExecutionContext, h: TxnHistory, lists: readonly unknown[][]): void {
  for (const [i, l] of lists.entries()) {
    const got = Array.from(readCodes(h, i) ?? [], (c) => h.values.decode(c));
    if (JSON.stringify(got) !== JSON.stringify(l)) {
      t.fail(`read ${i} ${JSON.stringify(l).slice(0, 80)} came back as ${JSON.stringify(got).slice(0, 80)}`);
      return;
    }
  }
  t.pass();
}

const stored = (h: TxnHistory) => h.pool.reduce((n, c) => n + c.length, 0);

test("a key's reads share its reference list: prefixes point into it, extensions grow it in place", (t) => {
  const lists = [
    [1, 2], // key 1's reference, no room after it (a key read once costs its list)
    [1], // a prefix: the same position
    [1, 2, 3], // an extension past the room: the reference moves to a copy with room
    [1, 2, 3, 4], // an extension within the room: written in place, the same position
    [1, 9], // disagrees: stored apart, the reference kept
    [1, 2, 3, 4, 5], // extends the reference (not the list that disagreed)
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], // past the room: the reference moves again
    [1, 2, 3], // a prefix of the moved reference
    [], // empty
  ];
  const b = new TxnBuilder('append');
  for (const [i, l] of lists.entries()) b.add(read(i, l, 1));
  const h = b.finish();
  readsBack(t, h, lists);
  const at = (i: number) => h.mopCode[i];
  t.is(at(1), at(0));
  t.not(at(2), at(0));
  t.is(at(3), at(2));
  t.not(at(4), at(2));
  t.is(at(5), at(2));
  t.not(at(6), at(2));
  t.is(at(7), at(6));
  // The first list (2), its moved copy's room (3 + 8), the list apart (2), the next move's room (28).
  t.is(stored(h), 2 + 11 + 2 + 28);
});

test('a key read once costs its list, no room', (t) => {
  const lists = Array.from({ length: 100 }, (_, i) => [i, i + 1, i + 2]);
  const b = new TxnBuilder('append');
  for (const [i, l] of lists.entries()) b.add(read(i, l, i));
  const h = b.finish();
  readsBack(t, h, lists);
  t.is(stored(h), 300);
});

test('a reference in a kept chunk grows in place after later chunks fill', (t) => {
  // Key 0's reference (1,000 elements, moved by its first extension to a copy with room for 2,000),
  // then 4,500 lists on other keys (two chunks of 4M positions), then key 0 read again, longer: written
  // into the first chunk.
  const first = Array.from({ length: 1000 }, (_, j) => j);
  const lists: number[][] = [first.slice(0, 999), first];
  for (let i = 1; i <= 4500; i++) lists.push(Array.from({ length: 1000 }, (_, j) => (i * 7 + j) % 100_000));
  const longer = Array.from({ length: 1800 }, (_, j) => j);
  lists.push(longer, first.slice(0, 10));
  const b = new TxnBuilder('append');
  for (const [i, l] of lists.entries()) b.add(read(i, l, i <= 1 || i > 4501 ? 0 : i));
  const h = b.finish();
  t.true(h.pool.length >= 2, `${h.pool.length} chunks`);
  t.true(h.mopCode[4502]! < 1 << 22, 'in the first chunk');
  readsBack(t, h, lists);
  t.is(h.mopCode[4502], h.mopCode[1]);
  t.is(h.mopCode[4503], h.mopCode[1]);
});

test('property: reads kept against references come back as read, whatever their order', (t) => {
  // Each key has a true order; a read is a prefix of it (growing it first, sometimes), a list that
  // departs from it somewhere, or holds values that are not codes of their own (strings, negatives).
  const step = fc.record({
    key: fc.integer({ min: 0, max: 3 }),
    grow: fc.integer({ min: 0, max: 12 }),
    cut: fc.integer({ min: 0, max: 40 }),
    kind: fc.constantFrom('prefix', 'prefix', 'prefix', 'depart', 'odd'),
  });
  fc.assert(
    fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
      const truth: number[][] = [[], [], [], []];
      let next = 0;
      const lists: unknown[][] = [];
      for (const s of steps) {
        const order = truth[s.key]!;
        for (let g = 0; g < s.grow; g++) order.push(next++);
        const l: unknown[] = order.slice(0, Math.min(s.cut, order.length));
        if (s.kind === 'depart' && l.length > 0) l[s.cut % l.length] = -1 - s.cut;
        if (s.kind === 'odd') l.push('x', -7);
        lists.push(l);
      }
      const b = new TxnBuilder('append');
      for (const [i, l] of lists.entries()) b.add(read(i, l, steps[i]!.key));
      const h = b.finish();
      for (const [i, l] of lists.entries()) {
        const got = Array.from(readCodes(h, i) ?? [], (c) => h.values.decode(c));
        if (JSON.stringify(got) !== JSON.stringify(l)) return false;
      }
      return true;
    }),
    { numRuns: 1500, seed: 4242 },
  );
  t.pass();
});
