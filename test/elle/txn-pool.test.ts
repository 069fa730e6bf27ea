import test from 'ava';
import { readCodes, TxnBuilder } from '../../checkers/elle/txns.ts';
import type { Operation } from '../../src/core/history/operation.ts';

const read = (id: number, list: number[]): Operation => ({
  id,
  process: id % 5,
  f: 'txn',
  type: 'ok',
  input: [['r', id % 7, null]],
  output: [['r', id % 7, list]],
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
