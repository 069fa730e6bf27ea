import test from 'ava';
import { RunClock } from '../../src/app/test/clock-readings.ts';
import { clockReadingsSchema } from '../../src/app/verdict/run-readings.ts';

test('RunClock records its own readings: count, none backwards, the wall clock beside it', (t) => {
  const c = new RunClock();
  let last = -1;
  for (let i = 0; i < 1000; i++) {
    const now = c.now();
    t.true(now >= last);
    last = now;
  }
  const r = clockReadingsSchema.parse(c.readings());
  t.is(r.readings, 1000);
  t.is(r.regressions, 0);
  t.is(r.source.api, 'process.hrtime.bigint');
  t.deepEqual(r.wallJumps, []);
  t.true(Math.abs(r.wallDriftMs) < 1000);
});

test('RunClock reports a wall-clock jump against the monotonic clock', (t) => {
  const c = new RunClock();
  c.now();
  const realNow = Date.now;
  try {
    Date.now = () => realNow() + 5000;
    c.now();
  } finally {
    Date.now = realNow;
  }
  const r = c.readings();
  t.is(r.wallJumps.length, 1);
  t.true((r.wallJumps[0]?.byMs ?? 0) >= 4900);
});
