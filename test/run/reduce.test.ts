import test from 'ava';
import { reduceSchedule, reductionLine } from '../../src/app/run/reduce.ts';

test('reduces to the events the failure needs, counting re-runs', async (t) => {
  const events = ['a1', 'b1', 'a2', 'c1', 'b2', 'a3'];
  // The failure needs one "b" event and a3.
  const fails = async (c: string[]) => c.includes('a3') && c.some((e) => e.startsWith('b'));
  const r = await reduceSchedule(events, fails, { maxReruns: 50 });
  t.is(r.events.length, 2);
  t.true(r.events.includes('a3'));
  t.true(r.events.some((e) => e.startsWith('b')));
  t.false(r.budgetExhausted);
  t.is(r.log.length, r.reruns);
  t.regex(reductionLine(r), /^6→2 events over \d+ re-runs$/);
  // Fixed point: removing any remaining event kills the repro.
  for (const e of r.events) t.false(await fails(r.events.filter((x) => x !== e)));
});

test('a failure that needs no fault reduces to zero events', async (t) => {
  const r = await reduceSchedule(['e1', 'e2'], async () => true, { maxReruns: 10 });
  t.deepEqual(r.events, []);
});

test('a failure that needs every event keeps them all', async (t) => {
  const all = ['e1', 'e2', 'e3'];
  const r = await reduceSchedule(all, async (c) => c.length === 3, { maxReruns: 20 });
  t.deepEqual(r.events, all);
  t.false(r.budgetExhausted);
});

test('the re-run budget stops the reduction and says so', async (t) => {
  let calls = 0;
  const r = await reduceSchedule(
    ['e1', 'e2', 'e3', 'e4'],
    async (c) => {
      calls++;
      return c.includes('e4');
    },
    { maxReruns: 1 },
  );
  t.is(calls, 1);
  t.true(r.budgetExhausted);
  t.regex(reductionLine(r), /re-run budget spent/);
});
