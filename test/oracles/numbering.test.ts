import test from 'ava';
import { bankChecker } from '../../checkers/catalogue/bank.ts';
import { setChecker } from '../../checkers/catalogue/set.ts';
import { setFullChecker } from '../../checkers/catalogue/set-full.ts';
import { uniqueIdsChecker } from '../../checkers/catalogue/unique-ids.ts';
import { elleChecker } from '../../checkers/elle/index.ts';
import { linearizabilityChecker } from '../../checkers/linearizability/index.ts';
import type { Anomaly } from '../../checkers/types.ts';
import { runChecks } from '../../src/app/test/checks.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { H } from './build.ts';

/**
 * One op numbering everywhere: an anomaly names its ops by the event index of their invocation, so
 * every number can be found as `"index":N` in history.jsonl. The histories here interleave processes, so
 * that numbering differs from the ops' dense ids; each test checks that the numbers in `ops` and in the
 * explanation land on the invoke events of the ops the anomaly is about.
 */

function invokeAt(events: readonly HistoryEvent[], n: number): HistoryEvent {
  const e = events[n];
  if (!e || e.index !== n || e.type !== 'invoke') throw new Error(`event ${n} is not an invocation`);
  return e;
}

function numbersIn(a: Anomaly): number[] {
  return [...a.explanation.matchAll(/\bop (\d+)\b/g)].map((m) => Number(m[1]));
}

test('set-full: a lost element names the read that missed it and the add, by event index', async (t) => {
  const h = new H()
    .invoke(9, 'read') // noise on another process shifts every later event index
    .invoke(0, 'add', 7)
    .ok(9, 'read', [])
    .ok(0, 'add', 7)
    .invoke(1, 'read')
    .ok(1, 'read', [7])
    .invoke(2, 'read')
    .ok(2, 'read', []);
  const events = h.history();
  const r = await setFullChecker.check(h.ops(), {});
  const lost = r.anomalies.find((a) => a.type === 'lost');
  if (!lost) throw new Error('no lost anomaly');
  t.deepEqual(lost.ops, [6, 1, 4], 'the read that missed it, the add, the last read that had it');
  t.is(invokeAt(events, 6).process, 2);
  t.is(invokeAt(events, 1).f, 'add');
  t.deepEqual(numbersIn(lost), [1, 6, 4]);
  t.regex(lost.explanation, /^lost element 7: added by op 1 and acknowledged before read op 6 was invoked/);
});

test('unique-ids, bank and set: the op numbers are invoke event indices', async (t) => {
  const ids = new H().invoke(0, 'generate').invoke(1, 'generate').ok(1, 'generate', 5).ok(0, 'generate', 5);
  const dup = (await uniqueIdsChecker.check(ids.ops(), {})).anomalies[0];
  t.deepEqual(dup?.ops, [1, 0], 'the second op given the id, then the first');
  t.is(dup?.explanation, 'duplicated id 5: op 0 and op 1 were both acknowledged with it');

  const bank = new H()
    .invoke(3, 'transfer', { from: 'a', to: 'b', amount: 1 })
    .invoke(0, 'read')
    .ok(0, 'read', { a: 5, b: 5 })
    .invoke(1, 'read')
    .ok(1, 'read', { a: 4, b: 5 });
  const wrong = (await bankChecker.check(bank.ops(), {})).anomalies[0];
  t.deepEqual(wrong?.ops, [3]);
  t.is(wrong?.explanation, 'read op 3 sums to 9, but every read must show the total 10');
  invokeAt(bank.history(), 3);

  const set = new H()
    .invoke(5, 'read')
    .invoke(0, 'add', 1)
    .ok(0, 'add', 1)
    .ok(5, 'read', [])
    .invoke(1, 'read')
    .ok(1, 'read', []);
  const lost = (await setChecker.check(set.ops(), {})).anomalies[0];
  t.deepEqual(lost?.ops, [4, 1], 'the final read, then the add that was acknowledged');
  t.is(
    lost?.explanation,
    '1 acknowledged add is missing from the final read (op 4): #{1}; 1 was acknowledged by op 1',
  );
});

test('linearizability per key (independent): ops keep the history numbering across keys', async (t) => {
  // Two keys interleaved: key "b" holds the stale read; its ops are not the first ones of the history.
  const h = new H()
    .invoke(0, 'write', 1, { key: 'a' })
    .invoke(1, 'write', 1, { key: 'b' })
    .ok(0, 'write', 1, { key: 'a' })
    .ok(1, 'write', 1, { key: 'b' })
    .invoke(1, 'write', 2, { key: 'b' })
    .ok(1, 'write', 2, { key: 'b' })
    .invoke(2, 'read', null, { key: 'b' })
    .ok(2, 'read', 1, { key: 'b' });
  const events = h.history();
  const paired = pairEvents(events);
  const { results } = await runChecks(
    paired,
    [{ name: 'linearizable', options: { model: 'register' }, independent: true }],
    null,
    await import('node:os').then((os) => os.tmpdir()),
  );
  const a = results[0]?.anomalies[0];
  t.is(a?.key, 'b');
  t.deepEqual(a?.ops, [6, 4], 'the stale read (event 6) and the write it missed (event 4)');
  t.is(invokeAt(events, 6).f, 'read');
  t.is(invokeAt(events, 4).value, 2);
  t.deepEqual(numbersIn(a as Anomaly), [6, 4]);
  // The same numbers from the checker run directly on the whole history (one partition per key there).
  const direct = await linearizabilityChecker.check(
    paired.ops.filter((o) => o.key === 'b'),
    { model: 'register' },
  );
  t.deepEqual(direct.anomalies[0]?.ops, [6, 4]);
});

test('elle: the cycle is one line with its type, over event indices', async (t) => {
  // G1c: T1 appends 1 to x and reads y = [1]; T2 appends 1 to y and reads x = [1].
  const h = new H()
    .invoke(7, 'txn', [['r', 'z', null]])
    .ok(7, 'txn', [['r', 'z', []]])
    .invoke(0, 'txn', [
      ['append', 'x', 1],
      ['r', 'y', null],
    ])
    .invoke(1, 'txn', [
      ['append', 'y', 1],
      ['r', 'x', null],
    ])
    .ok(0, 'txn', [
      ['append', 'x', 1],
      ['r', 'y', [1]],
    ])
    .ok(1, 'txn', [
      ['append', 'y', 1],
      ['r', 'x', [1]],
    ]);
  const r = elleChecker.check(h.ops(), { workload: 'list-append', consistencyModels: ['serializable'] });
  const g1c = r.anomalies.find((a) => a.type === 'G1c');
  if (!g1c) throw new Error(`no G1c: ${r.anomalies.map((a) => a.type).join(', ')}`);
  t.deepEqual([...(g1c.ops ?? [])].sort(), [2, 3]);
  t.regex(g1c.explanation, /^G1c cycle \(circular information flow\): op (2|3) –wr→ op (2|3) –wr→ op (2|3)$/);
});
