import test from 'ava';
import { CATALOGUE_CASES, catalogueDifferential } from './catalogue.ts';

const RUNS = 1500;
let total = 0;

for (const [i, c] of CATALOGUE_CASES.entries()) {
  test(`${c.label ?? c.checker}: agrees with the reference on ${RUNS} random histories`, async (t) => {
    const tally = await catalogueDifferential(c, RUNS, 5000 + i, false);
    total += tally.histories;
    t.true(
      tally.valid > RUNS / 20 && tally.invalid > RUNS * (c.invalidShare ?? 1 / 20),
      JSON.stringify(tally),
    );
  });
  test(`${c.label ?? c.checker}: never fails a correct system (${RUNS} histories with crashes and late ops)`, async (t) => {
    const tally = await catalogueDifferential(c, RUNS, 6000 + i, true);
    total += tally.histories;
    t.true(tally.valid > RUNS / 10, JSON.stringify(tally));
  });
}

test.after(() => {
  process.stdout.write(`catalogue differential: ${total} histories compared\n`);
});
