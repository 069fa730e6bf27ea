import test from 'ava';
import { elleRwDifferential } from './elle-rw.ts';

test('elle rw-register: never invalid where brute force finds a (strictly) serial order, with every version-order source; a written nil stops it; G1a, internal and lost-update always found; every minimal failing sub-history fails alone', async (t) => {
  const tally = await elleRwDifferential(2500, 7300);
  process.stdout.write(`elle rw-register differential: ${JSON.stringify(tally)}\n`);
  t.true(tally.serializable > 250 && tally.notSerializable > 250, JSON.stringify(tally));
  t.true(tally.strictSerializable > 100 && tally.strictInvalid > tally.elleInvalid, JSON.stringify(tally));
  t.true(tally.elleInvalid > 100 && tally.mustFind > 100 && tally.nilWrites > 50, JSON.stringify(tally));
  t.is(tally.shrunk, tally.elleInvalid, JSON.stringify(tally));
});
