import test from 'ava';
import { caseLabel, LINEARIZABILITY_CASES, linearizabilityDifferential } from './differential.ts';
import { simulate } from './generate.ts';
import { referenceLinearizable, referenceModel } from './reference-linearizability.ts';

// Fixed seeds: the same histories on every run. `npm run fuzz:oracles` runs many more with fresh seeds.
const RUNS = 2000;
let total = 0;

for (const [i, c] of LINEARIZABILITY_CASES.entries()) {
  test(`linearizability: faultline agrees with brute force on ${RUNS} histories (${caseLabel(c)})`, async (t) => {
    const tally = await linearizabilityDifferential(c, RUNS, 3000 + i);
    total += tally.histories;
    // Both verdicts must be common, or agreement proves little.
    t.true(tally.valid > RUNS / 10 && tally.invalid > RUNS / 10, JSON.stringify(tally));
  });
}

test('the reference itself: known verdicts', (t) => {
  const reg = referenceModel('register', { nilRead: 'value' });
  const w = (call: number, ret: number | null, v: unknown, type: 'ok' | 'info' = 'ok') => ({
    process: call,
    f: 'write',
    input: v,
    output: v,
    type,
    call,
    ret,
  });
  const r = (call: number, ret: number, v: unknown) => ({
    process: 9,
    f: 'read',
    input: null,
    output: v,
    type: 'ok' as const,
    call,
    ret,
  });
  t.true(referenceLinearizable(reg, [w(0, 1, 1), r(2, 3, 1)]));
  t.false(referenceLinearizable(reg, [w(0, 1, 1), r(2, 3, null)]), 'stale nil read');
  t.true(referenceLinearizable(reg, [w(0, 3, 1), r(1, 2, null)]), 'concurrent read may precede');
  t.true(
    referenceLinearizable(reg, [w(0, null, 1, 'info'), r(5, 6, 1), r(7, 8, 1)]),
    'crashed write took effect',
  );
  t.false(
    referenceLinearizable(reg, [w(0, null, 1, 'info'), r(5, 6, 1), r(7, 8, null)]),
    'took effect once only',
  );
  // Generated histories are not all trivially one verdict.
  const ops = simulate('register', [{ thread: 0, pick: 5, value: 1, outcome: 0 }], true);
  t.is(ops.length, 1);
});

test.after(() => {
  process.stdout.write(`linearizability differential: ${total} histories compared\n`);
});
