import test, { type TestFn } from 'ava';
import { fixturesAbsence, fixturesPresent } from './fixtures.ts';

/** `FAULTLINE_REQUIRE_FIXTURES=1` (CI): a conformance suite that cannot run fails instead of skipping. */
export const fixturesRequired = process.env.FAULTLINE_REQUIRE_FIXTURES === '1';

/**
 * ava's `test` for the tests of one conformance suite (tests that read the reference corpora). Without
 * the corpora the suite's first test is replaced by one skipped test that names the suite and why, and
 * the rest register nothing; under FAULTLINE_REQUIRE_FIXTURES=1 that one test fails instead.
 */
export function conformance(suite: string): TestFn {
  if (fixturesPresent) return test;
  let said = false;
  const absent = (_title: string) => {
    if (said) return;
    said = true;
    const why = `conformance suite "${suite}" skipped: ${fixturesAbsence}`;
    if (fixturesRequired)
      test(`conformance suite "${suite}"`, (t) => t.fail(`FAULTLINE_REQUIRE_FIXTURES=1: ${why}`));
    else test.skip(why, () => {});
  };
  return absent as unknown as TestFn;
}
