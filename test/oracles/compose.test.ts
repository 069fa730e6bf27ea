import test from 'ava';
import { counterChecker } from '../../checkers/catalogue/counter.ts';
import { setChecker } from '../../checkers/catalogue/set.ts';
import { checkSafe, compose, composedChecker } from '../../checkers/compose.ts';
import { checkerNames, findChecker } from '../../checkers/registry.ts';
import type { Checker } from '../../checkers/types.ts';
import { H } from './build.ts';

const fixed = (name: string, valid: true | false | 'unknown'): Checker => ({
  name,
  check: () => ({
    checker: name,
    valid,
    evidence: `${name}: fixed`,
    scope: 'none',
    anomalies: [],
    stats: { opsConsumed: 0 },
  }),
});
const throwing: Checker = {
  name: 'boom',
  check() {
    throw new Error('kaboom');
  },
};

test('compose merges false > unknown > true', async (t) => {
  // One client op: an empty history is vacuously valid for every checker, whatever it would say.
  const ops = new H().call(0, 'add', 1).ops();
  t.is((await compose({ a: fixed('a', true), b: fixed('b', true) }, ops)).valid, true);
  t.is((await compose({ a: fixed('a', true), b: fixed('b', 'unknown') }, ops)).valid, 'unknown');
  t.is(
    (await compose({ a: fixed('a', false), b: fixed('b', 'unknown'), c: fixed('c', true) }, ops)).valid,
    false,
  );
});

test('a checker that throws yields unknown with the error, never a crash', async (t) => {
  const r = await compose({ ok: fixed('ok', true), boom: throwing }, new H().call(0, 'add', 1).ops());
  t.is(r.valid, 'unknown');
  t.is(r.results.boom?.valid, 'unknown');
  t.is(r.results.boom?.error, 'kaboom');
  t.is(r.results.ok?.valid, true);
  // Bad options are thrown by the checker and caught the same way.
  const bad = await checkSafe('set', setChecker as Checker<never>, new H().call(0, 'add', 1).ops(), {
    nope: 1,
  });
  t.is(bad.valid, 'unknown');
  t.regex(bad.error ?? '', /set: /);
});

test('rethrow lets chosen errors escape', async (t) => {
  await t.throwsAsync(
    () => compose({ boom: throwing }, new H().call(0, 'add', 1).ops(), undefined, { rethrow: () => true }),
    {
      message: 'kaboom',
    },
  );
});

test('real checkers compose with options, and compositions nest', async (t) => {
  const h = new H().call(0, 'add', 1).invoke(1, 'read').ok(1, 'read', [1]);
  const r = await compose(
    {
      set: { checker: setChecker as Checker<never>, options: {} },
      counter: counterChecker as Checker<never>,
    },
    h.ops(),
  );
  t.is(r.results.set?.valid, true);
  t.is(r.results.counter?.valid, false); // [1] is not a number: the counter read is out of bounds
  t.is(r.valid, false);
  const nested = composedChecker('both', { set: setChecker as Checker<never> });
  t.is((await nested.check(h.ops(), {})).valid, true);
});

test('registry: every catalogue entry loads lazily and names itself', async (t) => {
  for (const name of checkerNames()) {
    if (name === 'linearizable' || name === 'elle') continue;
    const e = findChecker(name);
    const loaded = await e?.load();
    t.is(loaded?.checker.name, name);
    t.truthy(loaded?.schema);
  }
  t.is(findChecker('unhandled-exceptions')?.name, 'unhandled-errors');
  t.is(findChecker('nope'), undefined);
});
