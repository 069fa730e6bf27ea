import test from 'ava';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import { PartitionSearch, type SearchOp } from '../../checkers/linearizability/search.ts';

/**
 * The search orders calls and returns by position, calls first at equal positions (closed intervals).
 * Distinct positions take a linear-time placement; equal ones the general sort: both must give the
 * same real-time order.
 */
const write1 = (call: number, ret: number): SearchOp => ({
  call,
  ret,
  input: { f: 'write', a: 1, b: null },
  output: { known: true, value: null, ok: true },
});
const readNil = (call: number, ret: number): SearchOp => ({
  call,
  ret,
  input: { f: 'read', a: null, b: null },
  output: { known: true, value: null, ok: true },
});

function verdict(ops: SearchOp[]): string {
  const model = createModel('register', {});
  if (!model) throw new Error('register');
  const s = new PartitionSearch(model, ops, { greedyReads: false });
  return s.run(1_000_000);
}

test('a read invoked exactly when a write returns may precede it (closed intervals)', (t) => {
  t.is(verdict([write1(0, 1), readNil(1, 2)]), 'ok');
  t.is(verdict([readNil(1, 2), write1(0, 1)]), 'ok');
});

test('a read invoked after a write returned cannot see the value before it', (t) => {
  t.is(verdict([write1(0, 1), readNil(2, 3)]), 'illegal');
  t.is(verdict([write1(0, 1), readNil(5, Number.POSITIVE_INFINITY), write1(2, 3)]), 'ok');
  t.is(verdict([write1(0, 1), readNil(5, 6), write1(2, 3)]), 'illegal');
});

test('positions far apart and unknown returns are ordered as with dense ones', (t) => {
  t.is(verdict([write1(0, 10_000_000), readNil(5_000_000, 5_000_001)]), 'ok');
  t.is(verdict([write1(0, 1), readNil(10_000_000, 10_000_001)]), 'illegal');
  t.is(verdict([readNil(2, 3), write1(0, Number.POSITIVE_INFINITY)]), 'ok');
});
