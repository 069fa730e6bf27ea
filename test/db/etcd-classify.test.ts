import test from 'ava';
import { NOT_APPLIED, wasNotApplied } from '../../src/core/history/operation.ts';
import { classify } from '../../src/lib/clients/etcd.ts';

const refused = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
const reset = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' }) });

test('a cas refused before it reached etcd is a fail marked not-applied; checkers drop it', (t) => {
  const c = classify({ f: 'cas', value: [1, 2] } as never, refused());
  t.is(c.type, 'fail');
  t.true(String(c.error).startsWith(NOT_APPLIED));
  t.true(wasNotApplied({ type: c.type as 'fail', error: c.error }));
});

test('a cas whose connection broke after sending may have happened: info, never a fail', (t) => {
  const c = classify({ f: 'cas', value: [1, 2] } as never, reset());
  t.is(c.type, 'info');
  t.false(wasNotApplied({ type: 'info', error: c.error }));
});

test('an unanswered write is info; a refused write is a not-applied fail', (t) => {
  t.is(classify({ f: 'write', value: 3 } as never, reset()).type, 'info');
  const c = classify({ f: 'write', value: 3 } as never, refused());
  t.is(c.type, 'fail');
  t.true(String(c.error).startsWith(NOT_APPLIED));
});
