import test from 'ava';
import { queueChecker } from '../../checkers/catalogue/queue.ts';
import { totalQueueChecker } from '../../checkers/catalogue/total-queue.ts';
import { uniqueIdsChecker } from '../../checkers/catalogue/unique-ids.ts';
import { H, run, types } from './build.ts';

test('unique-ids: distinct ids are valid, with range and counts', async (t) => {
  const h = new H()
    .call(0, 'generate', null, 1)
    .call(1, 'generate', null, 7)
    .invoke(2, 'generate')
    .info(2, 'generate');
  const r = await run(uniqueIdsChecker, h.ops(), {});
  t.is(r.valid, true);
  t.like(r.stats, { attemptedCount: 3, acknowledgedCount: 2, range: [1, 7] });
});

test('unique-ids: an id acknowledged twice is duplicated', async (t) => {
  const h = new H().call(0, 'generate', null, 5).call(1, 'generate', null, 5).call(1, 'generate', null, 6);
  const r = await run(uniqueIdsChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['duplicated']);
  t.like(r.anomalies[0], { id: 5, count: 2 });
});

test('queue: dequeues of enqueued values are valid, including an enqueue still in flight', async (t) => {
  const h = new H()
    .call(0, 'enqueue', 1)
    .invoke(0, 'enqueue', 2)
    .invoke(1, 'dequeue')
    .ok(1, 'dequeue', 2)
    .ok(0, 'enqueue', 2);
  h.invoke(1, 'dequeue').ok(1, 'dequeue', 1).invoke(1, 'dequeue').ok(1, 'dequeue', null);
  const r = await run(queueChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.dequeues, 2);
});

test('queue: a value never enqueued is unexpected, one dequeued twice is duplicated', async (t) => {
  const h = new H()
    .call(0, 'enqueue', 1)
    .invoke(1, 'dequeue')
    .ok(1, 'dequeue', 1)
    .invoke(1, 'dequeue')
    .ok(1, 'dequeue', 1);
  h.invoke(1, 'dequeue').ok(1, 'dequeue', 42);
  const r = await run(queueChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['duplicated', 'unexpected']);
});

test('queue: a dequeue that finished before the enqueue began is unexpected', async (t) => {
  const h = new H().invoke(1, 'dequeue').ok(1, 'dequeue', 3).call(0, 'enqueue', 3);
  t.deepEqual(types(await run(queueChecker, h.ops(), {})), ['unexpected']);
});

test('total-queue: every acked enqueue dequeued (drain expanded) is valid; recovered counted', async (t) => {
  const h = new H().call(0, 'enqueue', 1).call(0, 'enqueue', 2).invoke(0, 'enqueue', 3).info(0, 'enqueue', 3);
  h.invoke(1, 'dequeue').ok(1, 'dequeue', 1).invoke(1, 'drain').ok(1, 'drain', [2, 3]);
  const r = await run(totalQueueChecker, h.ops(), {});
  t.is(r.valid, true);
  t.like(r.stats, { lostCount: 0, recoveredCount: 1, dequeuedCount: 3 });
});

test('total-queue: lost, unexpected and duplicated', async (t) => {
  const h = new H().call(0, 'enqueue', 1).call(0, 'enqueue', 2).invoke(1, 'drain').ok(1, 'drain', [2, 2, 9]);
  const r = await run(totalQueueChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['duplicated', 'lost', 'unexpected']);
  t.like(r.stats, { lostCount: 1, unexpectedCount: 1, duplicatedCount: 1 });
});

test('total-queue: duplicates alone pass (at-least-once) unless duplicatesInvalid', async (t) => {
  const h = new H().call(0, 'enqueue', 1).invoke(1, 'drain').ok(1, 'drain', [1, 1]);
  t.is((await run(totalQueueChecker, h.ops(), {})).valid, true);
  t.is((await run(totalQueueChecker, h.ops(), { duplicatesInvalid: true })).valid, false);
});

test('total-queue: a drain with unknown outcome makes an otherwise clean result unknown', async (t) => {
  const h = new H()
    .call(0, 'enqueue', 1)
    .invoke(1, 'dequeue')
    .ok(1, 'dequeue', 1)
    .invoke(1, 'drain')
    .info(1, 'drain');
  t.is((await run(totalQueueChecker, h.ops(), {})).valid, 'unknown');
});

test('total-queue: a crashed drain that may have taken the message makes the count unknown, not lost', async (t) => {
  // Three events of the user's plan: enqueue acked, a drain that crashed (info) after taking it, an empty drain.
  const h = new H()
    .call(0, 'enqueue', 1)
    .invoke(1, 'drain')
    .info(1, 'drain')
    .invoke(2, 'drain')
    .ok(2, 'drain', []);
  const r = await run(totalQueueChecker, h.ops(), {});
  t.is(r.valid, 'unknown');
  t.is(r.stats.lostCount, 0);
  t.is(r.stats.missingUnknownCount, 1);
  t.deepEqual(types(r), []);
});

test('total-queue: crashed dequeues explain at most one message each', async (t) => {
  const h = new H()
    .call(0, 'enqueue', 1)
    .call(0, 'enqueue', 2)
    .call(0, 'enqueue', 3)
    .invoke(1, 'dequeue')
    .info(1, 'dequeue')
    .invoke(2, 'drain')
    .ok(2, 'drain', [3]);
  const one = await run(totalQueueChecker, h.ops(), {});
  // Two messages missing, one crashed dequeue: at least one is lost.
  t.is(one.valid, false);
  t.is(one.stats.lostCount, 2);
  const h2 = new H()
    .call(0, 'enqueue', 1)
    .call(0, 'enqueue', 2)
    .invoke(1, 'dequeue')
    .info(1, 'dequeue')
    .invoke(2, 'drain')
    .ok(2, 'drain', [2]);
  const two = await run(totalQueueChecker, h2.ops(), {});
  t.is(two.valid, 'unknown');
  t.is(two.stats.missingUnknownCount, 1);
});

test('total-queue: a drain cut off that lists what it took counts those, and at most one more unknown', async (t) => {
  // drainQueue's record of a drain whose connection dropped after two takes: info listing them.
  const enqueued = (n: number) => {
    const h = new H();
    for (let v = 1; v <= n; v++) h.call(0, 'enqueue', v);
    return h
      .invoke(1, 'drain')
      .info(1, 'drain', [1, 2], { error: 'indeterminate: drain stopped after 2 elements' });
  };
  // Taken: 1 and 2. Then an empty drain: 3 is missing, which the cut-off take may have taken.
  const one = await run(totalQueueChecker, enqueued(3).invoke(2, 'drain').ok(2, 'drain', []).ops(), {});
  t.is(one.valid, 'unknown');
  t.is(one.stats.dequeuedCount, 2, 'the listed elements were dequeued');
  t.is(one.stats.missingUnknownCount, 1);
  t.deepEqual(one.stats.cutDrains, [6]);
  t.regex(one.evidence, /1 drains cut off/);
  // 3 and 4 missing: one take cannot have taken both, so they are lost (a drain listing nothing
  // could have taken any number, and this would stay unknown).
  const two = await run(totalQueueChecker, enqueued(4).invoke(2, 'drain').ok(2, 'drain', []).ops(), {});
  t.is(two.valid, false);
  t.is(two.stats.lostCount, 2);
  t.regex(types(two).join(), /lost/);
  // Nothing missing: the cut-off drain does not make a clean result unknown.
  const clean = await run(totalQueueChecker, enqueued(2).invoke(2, 'drain').ok(2, 'drain', []).ops(), {});
  t.is(clean.valid, true);
  // What it listed is held to the same rules: a value never enqueued is unexpected.
  const odd = new H()
    .call(0, 'enqueue', 1)
    .invoke(1, 'drain')
    .info(1, 'drain', [1, 7])
    .invoke(2, 'drain')
    .ok(2, 'drain', []);
  t.is((await run(totalQueueChecker, odd.ops(), {})).valid, false);
});

test('total-queue: an info drain that lists nothing, or echoes a list it was invoked with, may have taken any number', async (t) => {
  const missing = (invoked: unknown, info: unknown) =>
    new H()
      .call(0, 'enqueue', 1)
      .call(0, 'enqueue', 2)
      .call(0, 'enqueue', 3)
      .invoke(1, 'drain', invoked)
      .info(1, 'drain', info)
      .invoke(2, 'drain')
      .ok(2, 'drain', [])
      .ops();
  // No list: any number.
  t.is((await run(totalQueueChecker, missing(null, null), {})).valid, 'unknown');
  // Invoked with a list and its info echoes it: not a record of what it took.
  const echoed = await run(totalQueueChecker, missing([], []), {});
  t.is(echoed.valid, 'unknown');
  t.is(echoed.stats.dequeuedCount, 0);
});

test('total-queue: an enqueue acknowledged after the final drain began is unverified, not lost', async (t) => {
  const h = new H().call(0, 'enqueue', 1).invoke(1, 'drain').ok(1, 'drain', [1]).call(0, 'enqueue', 2);
  const r = await run(totalQueueChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.lostCount, 0);
  t.is(r.stats.unverifiedCount, 1);
  // Acked before the drain began and not in it: lost.
  const lost = new H().call(0, 'enqueue', 1).invoke(1, 'drain').ok(1, 'drain', []);
  t.is((await run(totalQueueChecker, lost.ops(), {})).valid, false);
});

test('total-queue: with no drain and no empty dequeue, nothing has to be gone yet: unknown, never lost', async (t) => {
  // Found by the differential test: a correct queue still holding acked messages was called lossy.
  const none = new H().call(0, 'enqueue', 1);
  t.is((await run(totalQueueChecker, none.ops(), {})).valid, 'unknown');
  const h = new H().call(0, 'enqueue', 1).call(0, 'enqueue', 2).invoke(1, 'dequeue').ok(1, 'dequeue', 1);
  const r = await run(totalQueueChecker, h.ops(), {});
  t.is(r.valid, true);
  t.is(r.stats.unverifiedCount, 1);
  // A dequeue of nothing saw the queue empty: 2, acked before it began, is lost.
  h.invoke(1, 'dequeue').ok(1, 'dequeue', null);
  t.is((await run(totalQueueChecker, h.ops(), {})).valid, false);
});
