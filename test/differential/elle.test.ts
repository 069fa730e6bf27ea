import test from 'ava';
import { elleDifferential } from './elle.ts';

test('elle list-append: never invalid where brute force finds a serial order (one that keeps real time, for strict-serializable); every cycle step is an edge of the history; every minimal failing sub-history fails alone', async (t) => {
  const tally = await elleDifferential(2500, 7100);
  process.stdout.write(`elle differential: ${JSON.stringify(tally)}\n`);
  t.true(tally.serializable > 250 && tally.notSerializable > 250, JSON.stringify(tally));
  t.true(tally.elleInvalid > 100 && tally.cyclesVerified > 100, JSON.stringify(tally));
  t.true(tally.garbage > 50 && tally.ownOrder > 0, JSON.stringify(tally));
  t.is(tally.shrunk, tally.elleInvalid, JSON.stringify(tally));
  t.true(tally.strictInvalid > tally.elleInvalid, JSON.stringify(tally));
});
