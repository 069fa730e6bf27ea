import test from 'ava';
import { RawOpMemo } from '../../checkers/linearizability/prepare.ts';
import type { Operation } from '../../src/core/history/operation.ts';

/** The preparer's memo of raw ops: a hit only for ops whose f, type, input, output and key are equal. */
function op(f: string, type: Operation['type'], input: unknown, output: unknown, key?: string): Operation {
  return {
    id: 0,
    process: 0,
    f,
    type,
    input,
    output,
    invokeIndex: 0,
    completeIndex: 1,
    invokeTime: 0,
    completeTime: 1,
    node: null,
    key,
    error: null,
    faultEpoch: null,
    infoTime: null,
  };
}

test('equal raw fields hit (fresh arrays too); any difference misses', (t) => {
  const memo = new RawOpMemo<string>(100);
  const distinct = [
    op('write', 'ok', 1, null),
    op('write', 'ok', '1', null),
    op('write', 'ok', 1, undefined),
    op('write', 'fail', 1, null),
    op('read', 'ok', 1, null),
    op('write', 'ok', 1, null, 'k'),
    op('write', 'ok', 1, null, 'k2'),
    op('cas', 'ok', [1, 2], null),
    op('cas', 'ok', [2, 1], null),
    op('cas', 'ok', [1, null], null),
    op('cas', 'ok', [1], null),
    op('write', 'ok', true, null),
    op('write', 'ok', false, null),
    op('write', 'ok', 1.5, null),
  ];
  distinct.forEach((o, i) => {
    const h = memo.hash(o);
    t.false(Number.isNaN(h));
    t.is(memo.get(o, h), undefined, `op ${i} is new`);
    memo.set(o, h, `v${i}`);
  });
  distinct.forEach((o, i) => {
    const copy = { ...o, input: Array.isArray(o.input) ? [...o.input] : o.input, id: 7 };
    t.is(memo.get(copy, memo.hash(copy)), `v${i}`, `op ${i} is found again`);
  });
});

test('values that are not flat are not remembered; a memo past its size is dropped', (t) => {
  const memo = new RawOpMemo<number>(2);
  for (const v of [{ a: 1 }, [1, 2, 3, 4, 5], ['x'], [[1]]])
    t.true(Number.isNaN(memo.hash(op('w', 'ok', v, null))));
  const a = op('w', 'ok', 1, null);
  const b = op('w', 'ok', 2, null);
  memo.set(a, memo.hash(a), 1);
  memo.set(b, memo.hash(b), 2);
  t.is(memo.get(b, memo.hash(b)), 2);
  const c = op('w', 'ok', 3, null);
  memo.set(c, memo.hash(c), 3);
  t.true(Number.isNaN(memo.hash(a)), 'dropped once full');
});
