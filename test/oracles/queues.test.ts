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
