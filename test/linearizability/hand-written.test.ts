import test from 'ava';
import { checkOperations } from '../../checkers/linearizability/check.ts';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { badKvHistory } from '../helpers/failing-session.ts';
import { kvHistory } from '../helpers/kv-history.ts';

/** The default suite's own failing kv history (what the report and browser tests draw) has its answer. */
test('the hand-written kv history fails on key "3" and on no other key', async (t) => {
  const model = createModel('kv');
  if (!model) throw new Error('kv');
  const outcome = await checkOperations(model, pairEvents(badKvHistory()).ops);
  t.false(outcome.valid);
  t.deepEqual(
    outcome.failing.map((i) => outcome.partitions[i]?.key),
    ['3'],
  );
  t.is(outcome.partitions.length, 4);
});

test('the same history without the stale read linearizes on every key', async (t) => {
  const model = createModel('kv');
  if (!model) throw new Error('kv');
  const outcome = await checkOperations(model, pairEvents(kvHistory(null)).ops);
  t.true(outcome.valid);
  t.is(outcome.partitions.length, 4);
});
