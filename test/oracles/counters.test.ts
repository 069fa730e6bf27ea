import test from 'ava';
import { bankChecker } from '../../checkers/catalogue/bank.ts';
import { counterChecker } from '../../checkers/catalogue/counter.ts';
import { longForkChecker } from '../../checkers/catalogue/long-fork.ts';
import { H, run, types } from './build.ts';

test('counter: reads within [acked, attempted] are valid, including in-flight adds', async (t) => {
  const h = new H().call(0, 'add', 1).invoke(1, 'add', 5).invoke(2, 'read').ok(2, 'read', 6).ok(1, 'add', 5);
  h.invoke(2, 'read').ok(2, 'read', 6);
  const r = await run(counterChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.reads, 2);
});

test('counter: a read below the acked sum is out of bounds', async (t) => {
  const h = new H().call(0, 'add', 1).call(0, 'add', 1).invoke(1, 'read').ok(1, 'read', 1);
  const r = await run(counterChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['out-of-bounds-read']);
  t.like(r.anomalies[0], { lower: 2, value: 1, upper: 2 });
});

test('counter: a read above every attempted add is out of bounds; failed adds never count', async (t) => {
  const h = new H()
    .call(0, 'add', 1)
    .invoke(0, 'add', 10)
    .fail(0, 'add', 10)
    .invoke(1, 'read')
    .ok(1, 'read', 11);
  const r = await run(counterChecker, h.ops(), {});
  t.is(r.valid, false);
  t.like(r.anomalies[0], { lower: 1, upper: 1 });
});

test('counter: an add still in flight at the read counts toward the upper bound only', async (t) => {
  const h = new H()
    .invoke(0, 'add', 3)
    .info(0, 'add', 3)
    .invoke(1, 'read')
    .ok(1, 'read', 0)
    .invoke(1, 'read')
    .ok(1, 'read', 3);
  t.is((await run(counterChecker, h.ops(), {})).valid, true);
});

test('counter: a decrement running beside a read may or may not be in it; one acked before it must be', async (t) => {
  // Initial 10. The read is invoked, then a decrement of 5 is invoked and acknowledged, then the read
  // returns. Linearizable whether the read saw the decrement (5) or not (10).
  for (const seen of [5, 10]) {
    const h = new H().invoke(0, 'read').invoke(1, 'add', -5).ok(1, 'add', -5).ok(0, 'read', seen);
    const r = await run(counterChecker, h.ops(), { initial: 10 });
    t.is(r.valid, true, `read ${seen}: ${r.evidence}`);
  }
  // The decrement still in flight when the read returns: the same two values.
  for (const seen of [5, 10]) {
    const h = new H().invoke(0, 'read').invoke(1, 'add', -5).ok(0, 'read', seen).ok(1, 'add', -5);
    t.is((await run(counterChecker, h.ops(), { initial: 10 })).valid, true, `in flight, read ${seen}`);
  }
  // Acknowledged before the read began: it must be in the read.
  const h = new H().call(1, 'add', -5).invoke(0, 'read').ok(0, 'read', 10);
  const r = await run(counterChecker, h.ops(), { initial: 10 });
  t.is(r.valid, false);
  t.regex(r.anomalies[0]?.explanation ?? '', /returned 10, outside \[5, 5\]/);
});

test('counter: no reads is valid as in Jepsen, unknown with requireReads', async (t) => {
  const h = new H().call(0, 'add', 1);
  t.is((await run(counterChecker, h.ops(), {})).valid, true);
  t.is((await run(counterChecker, h.ops(), { requireReads: true })).valid, 'unknown');
});

const bal = (...v: number[]) => Object.fromEntries(v.map((x, i) => [String(i), x]));

test('bank: constant total, no negatives is valid', async (t) => {
  const h = new H().call(0, 'read', null, bal(10, 10)).call(1, 'transfer', { from: 0, to: 1, amount: 5 });
  h.call(0, 'read', null, bal(5, 15));
  const r = await run(bankChecker, h.ops(), { totalAmount: 20 });
  t.is(r.valid, true);
  t.is(r.stats.readCount, 2);
});

test('bank: wrong total, negative value, nil balance and unexpected key are each reported', async (t) => {
  const h = new H()
    .call(0, 'read', null, bal(10, 11))
    .call(0, 'read', null, bal(25, -5))
    .call(0, 'read', null, { '0': 10, '1': null })
    .call(0, 'read', null, { '0': 10, '1': 10, '9': 0 });
  const r = await run(bankChecker, h.ops(), { totalAmount: 20, accounts: [0, 1] });
  t.is(r.valid, false);
  t.deepEqual(types(r), ['negative-value', 'nil-balance', 'unexpected-key', 'wrong-total']);
});

test('bank: decimal balances are summed exactly, so cents moved between accounts keep the total', async (t) => {
  // As doubles, 0.1 + 0.2 is 0.30000000000000004, which is not the total 0.3.
  const h = new H()
    .call(0, 'read', null, bal(0.1, 0.2))
    .call(0, 'read', null, bal(0.3, 0))
    .call(0, 'read', null, { '0': 0.15, '1': { '#bigdec': '0.150' } });
  const given = await run(bankChecker, h.ops(), { totalAmount: 0.3 });
  t.is(given.valid, true, given.evidence);
  const inferred = await run(bankChecker, h.ops(), {});
  t.is(inferred.valid, true, inferred.evidence);
  t.regex(inferred.evidence, /total 0\.3 \(inferred: accounts from read op 0, total 0\.3 from read op 0\)/);
  t.is(inferred.stats.totalAmount, 0.3);
  // A cent gone is still a wrong total, and a negative decimal still negative.
  const wrong = new H().call(0, 'read', null, bal(0.1, 0.2)).call(0, 'read', null, bal(0.31, -0.02));
  const r = await run(bankChecker, wrong.ops(), { totalAmount: 0.3 });
  t.deepEqual(types(r), ['negative-value', 'wrong-total']);
  t.regex(
    r.anomalies.find((a) => a.type === 'wrong-total')?.explanation ?? '',
    /sums to 0\.29, but every read must show the total 0\.3/,
  );
  t.is(r.stats.lowestTotal, 0.29);
});

test('bank: negative balances allowed by option', async (t) => {
  const h = new H().call(0, 'read', null, bal(25, -5));
  t.is((await run(bankChecker, h.ops(), { totalAmount: 20, negativeBalances: true })).valid, true);
});

test('bank: total inferred from the first read when not given, and the evidence says so', async (t) => {
  const h = new H().call(0, 'read', null, bal(10, 10)).call(0, 'read', null, bal(10, 9));
  const r = await run(bankChecker, h.ops(), {});
  t.is(r.valid, false);
  t.regex(r.evidence, /inferred: .*total 20/);
});

test('long-fork: chained reads are valid, incomparable reads are a fork', async (t) => {
  const w = (k: number) => [['w', k, 1]];
  const r3 = (a: unknown, b: unknown, c: unknown) => [
    ['r', 0, a],
    ['r', 1, b],
    ['r', 2, c],
  ];
  const ok = new H().call(0, 'txn', w(0)).call(1, 'txn', w(1));
  ok.call(2, 'txn', r3(null, null, null), r3(1, null, null)).call(
    2,
    'txn',
    r3(null, null, null),
    r3(1, 1, null),
  );
  t.is((await run(longForkChecker, ok.ops(), {})).valid, true);
  const bad = new H().call(0, 'txn', w(0)).call(1, 'txn', w(1));
  bad
    .call(2, 'txn', r3(null, null, null), r3(1, null, null))
    .call(3, 'txn', r3(null, null, null), r3(null, 1, null));
  const r = await run(longForkChecker, bad.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['long-fork']);
});
