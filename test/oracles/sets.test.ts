import test from 'ava';
import { setChecker } from '../../checkers/catalogue/set.ts';
import { setFullChecker } from '../../checkers/catalogue/set-full.ts';
import { H, run, types } from './build.ts';

test('set: all acked adds in the final read is valid; counts recovered', async (t) => {
  const h = new H().call(0, 'add', 1).call(1, 'add', 2).invoke(2, 'add', 3).info(2, 'add', 3);
  h.invoke(0, 'read').ok(0, 'read', [1, 2, 3]);
  const r = await run(setChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.recoveredCount, 1);
  t.deepEqual(r.anomalies, []);
  t.regex(r.evidence, /3 attempted adds, 2 acked, final read of 3 elements/);
});

test('set: a lost acked add and an unexpected element make it invalid', async (t) => {
  const h = new H()
    .call(0, 'add', 1)
    .call(0, 'add', 2)
    .invoke(1, 'read')
    .ok(1, 'read', { '#set': [1, 99] });
  const r = await run(setChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['lost', 'unexpected']);
});

test('set: only the last ok read counts', async (t) => {
  const h = new H()
    .call(0, 'add', 1)
    .invoke(1, 'read')
    .ok(1, 'read', [])
    .invoke(1, 'read')
    .ok(1, 'read', [1]);
  t.is((await run(setChecker, h.ops(), {})).valid, true);
});

test('set: no ok read is unknown', async (t) => {
  const h = new H().call(0, 'add', 1).invoke(1, 'read').fail(1, 'read');
  t.is((await run(setChecker, h.ops(), {})).valid, 'unknown');
});

test('set-full: elements seen by every later read are stable; valid', async (t) => {
  const h = new H().call(0, 'add', 1).call(0, 'add', 2);
  h.invoke(1, 'read')
    .ok(1, 'read', [1, 2])
    .invoke(1, 'read')
    .ok(1, 'read', { '#set': [1, 2] });
  const r = await run(setFullChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.stableCount, 2);
  t.is(r.stats.staleCount, 0);
});

test('set-full: an element that disappears from a later read is lost', async (t) => {
  const h = new H().call(0, 'add', 1).call(0, 'add', 2);
  h.invoke(1, 'read').ok(1, 'read', [1, 2]).invoke(1, 'read').ok(1, 'read', [1]);
  const r = await run(setFullChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['lost']);
  t.is(r.stats.lostCount, 1);
});

test('set-full: a read concurrent with the add that misses it is not a loss', async (t) => {
  // read invoked, add invoked + acked, read completes without the element, later read sees it.
  const h = new H()
    .invoke(1, 'read')
    .call(0, 'add', 1)
    .ok(1, 'read', [])
    .invoke(1, 'read')
    .ok(1, 'read', [1]);
  t.is((await run(setFullChecker, h.ops(), {})).valid, true);
});

test('set-full: stale reads fail only with linearizable: true', async (t) => {
  // Acked at t, a read invoked after the ack misses it, a later read sees it: stable, but stale.
  const h = new H()
    .call(0, 'add', 1)
    .invoke(1, 'read')
    .ok(1, 'read', [])
    .invoke(1, 'read')
    .ok(1, 'read', [1]);
  const loose = await run(setFullChecker, h.ops(), {});
  t.is(loose.valid, true);
  t.is(loose.stats.staleCount, 1);
  const strict = await run(setFullChecker, h.ops(), { linearizable: true });
  t.is(strict.valid, false);
  t.deepEqual(types(strict), ['stale']);
});

test('set-full: staleness is decided by event order, so a shared timestamp never makes a concurrent read stale', async (t) => {
  // The first read runs beside the add and misses it; every event has the same time (a history with
  // coarse or no timestamps). Linearizable: the read takes effect before the add.
  const h = new H()
    .invoke(0, 'add', 1, { at: 0 })
    .invoke(1, 'read', null, { at: 0 })
    .ok(0, 'add', 1, { at: 0 })
    .ok(1, 'read', [], { at: 0 })
    .invoke(1, 'read', null, { at: 0 })
    .ok(1, 'read', [1], { at: 0 });
  const r = await run(setFullChecker, h.ops(), { linearizable: true });
  t.is(r.valid, true);
  t.is(r.stats.staleCount, 0);
  // The same read invoked after the ack, still at the same time: stale, 0 ms later, naming the read.
  const late = new H()
    .invoke(0, 'add', 1, { at: 0 })
    .ok(0, 'add', 1, { at: 0 })
    .invoke(1, 'read', null, { at: 0 })
    .ok(1, 'read', [], { at: 0 })
    .invoke(1, 'read', null, { at: 0 })
    .ok(1, 'read', [1], { at: 0 });
  const stale = await run(setFullChecker, late.ops(), { linearizable: true });
  t.is(stale.valid, false);
  t.deepEqual(types(stale), ['stale']);
  t.regex(
    stale.anomalies[0]?.explanation ?? '',
    /missing from read op 2, invoked 0\.000 ms after it was known present/,
  );
});

test("set-full: an element repeated inside one read is a duplicate (frequency > 1, not Jepsen's < 1)", async (t) => {
  const h = new H().call(0, 'add', 1).call(0, 'add', 2).invoke(1, 'read').ok(1, 'read', [1, 2, 2]);
  const r = await run(setFullChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['duplicated']);
  t.is(r.stats.duplicatedCount, 1);
  // Element 1 appears once: not duplicated.
  t.deepEqual(r.stats.duplicated, [{ element: 2, count: 2 }]);
});

test('set-full: an element no add attempted is unexpected', async (t) => {
  const h = new H().call(0, 'add', 1).invoke(1, 'read').ok(1, 'read', [1, 7]);
  const r = await run(setFullChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['unexpected']);
});

test('set-full: nothing stable (no read) is unknown, never-read counted', async (t) => {
  const h = new H().call(0, 'add', 1).invoke(1, 'read').info(1, 'read');
  const r = await run(setFullChecker, h.ops(), {});
  t.is(r.valid, 'unknown');
  t.is(r.stats.neverReadCount, 1);
});

test('set-full: structured elements compare by value', async (t) => {
  const h = new H()
    .call(0, 'add', [0, 1])
    .invoke(1, 'read')
    .ok(1, 'read', [[0, 1]]);
  t.is((await run(setFullChecker, h.ops(), {})).valid, true);
});

test('set: an add invoked after the final read completed is not lost (a killed run)', async (t) => {
  // The last read completes, then the run is killed while adds are still being acknowledged.
  const h = new H().call(0, 'add', 1).invoke(1, 'read').ok(1, 'read', [1]).call(0, 'add', 2);
  const r = await run(setChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.lostCount, 0);
  t.is(r.stats.unverifiedCount, 1);
  t.regex(r.evidence, /1 acked after the final read began and absent from it \(unverified\)/);
});

test('set: an add concurrent with the final read may miss it; one acked before it began may not', async (t) => {
  const h = new H()
    .call(0, 'add', 1)
    .invoke(1, 'read')
    .call(0, 'add', 2)
    .ok(1, 'read', [])
    .invoke(2, 'read')
    .info(2, 'read');
  const r = await run(setChecker, h.ops(), {});
  // 1 was acked before the read began: lost; 2 was acked while it ran: unverified. The crashed
  // later read is no final read.
  t.is(r.valid, false);
  t.is(r.stats.lostCount, 1);
  t.is(r.stats.unverifiedCount, 1);
  t.is(r.stats.lost, '#{1}');
});

test('set: of two acks of one element, the earlier completion is the one the read must show', async (t) => {
  // Add 5 by p0 invoked first but acked late; add 5 by p1 acked before the read began.
  const h = new H().invoke(0, 'add', 5).call(1, 'add', 5).invoke(2, 'read').ok(0, 'add', 5).ok(2, 'read', []);
  const r = await run(setChecker, h.ops(), {});
  t.is(r.valid, false);
  t.is(r.stats.lostCount, 1);
});
