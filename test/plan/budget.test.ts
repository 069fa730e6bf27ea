import test from 'ava';
import fc from 'fast-check';
import { scheduledWindows } from '../../src/app/plan/binding.ts';
import {
  forbiddenBudgetReason,
  formatTier,
  notStrongerOn,
  parseBudget,
  parseReleaseDisclosure,
  toTier,
} from '../../src/app/plan/budget.ts';

const cases: [string, Record<string, number>][] = [
  ['3 nodes × 60s × 1 fault × 1 seed', { nodes: 3, durationS: 60, faultWindows: 1, seeds: 1 }],
  ['2 tenants × 60s × 1 fault × 1 seed', { tenants: 2, durationS: 60, faultWindows: 1, seeds: 1 }],
  [
    '8 tenants × 30min × 5 nemesis windows × 3 seeds',
    { tenants: 8, durationS: 1800, faultWindows: 5, seeds: 3 },
  ],
  ['5 nodes x 2h x 10 faults x 5 seeds', { nodes: 5, durationS: 7200, faultWindows: 10, seeds: 5 }],
  ['3 nodes * 90 s * no faults * 1 seed', { nodes: 3, durationS: 90, faultWindows: 0, seeds: 1 }],
  ['24h soak × 30 seeds × 5 nemesis variants, bootstrap CI on p99', { durationS: 86400, seeds: 30 }],
];

for (const [text, want] of cases) {
  test(`parseBudget: ${text}`, (t) => {
    const b = parseBudget(text);
    for (const [k, v] of Object.entries(want)) t.is(b[k as keyof typeof b], v, k);
  });
}

test('the release gate keeps what is not a tier dimension as notes', (t) => {
  t.deepEqual(parseBudget('24h soak × 30 seeds × 5 nemesis variants, bootstrap CI on p99').notes, [
    'soak',
    '5 nemesis variants',
    'bootstrap CI on p99',
  ]);
});

test('formatTier and parseBudget round-trip any tier', (t) => {
  fc.assert(
    fc.property(
      fc.record({
        nodes: fc.integer({ min: 1, max: 99 }),
        durationS: fc.integer({ min: 1, max: 200000 }),
        faultWindows: fc.integer({ min: 0, max: 500 }),
        seeds: fc.integer({ min: 1, max: 100 }),
      }),
      (tier) => {
        t.deepEqual(toTier(parseBudget(formatTier(tier))), tier);
      },
    ),
  );
});

test('forbidden budgets: empty, TBD, bare see §6b', (t) => {
  t.truthy(forbiddenBudgetReason(''));
  t.truthy(forbiddenBudgetReason('TBD'));
  t.truthy(forbiddenBudgetReason('see §6b'));
  t.truthy(forbiddenBudgetReason('(see 6b)'));
  t.is(forbiddenBudgetReason('3 nodes × 60s × 1 fault × 1 seed (see §6b for tools)'), null);
});

test('hardening must be strictly stronger on every dimension', (t) => {
  const smoke = toTier(parseBudget('3 nodes × 60s × 1 fault × 1 seed'))!;
  t.deepEqual(notStrongerOn(smoke, toTier(parseBudget('5 nodes × 30min × 5 faults × 3 seeds'))!), []);
  t.deepEqual(notStrongerOn(smoke, toTier(parseBudget('3 nodes × 30min × 1 fault × 3 seeds'))!), [
    'size',
    'faultWindows',
  ]);
});

test('a fault-free scenario has no fault dimension: its hardening need not add faults', (t) => {
  const smoke = toTier(parseBudget('3 nodes × 30s × 0 faults × 1 seed'))!;
  t.deepEqual(notStrongerOn(smoke, toTier(parseBudget('5 nodes × 5min × 0 faults × 3 seeds'))!), []);
  t.deepEqual(notStrongerOn(smoke, toTier(parseBudget('5 nodes × 5min × 0 faults × 1 seed'))!), ['seeds']);
  // A scenario with faults at smoke must grow them.
  const faulty = toTier(parseBudget('3 nodes × 30s × 2 faults × 1 seed'))!;
  t.deepEqual(notStrongerOn(faulty, toTier(parseBudget('5 nodes × 5min × 2 faults × 3 seeds'))!), [
    'faultWindows',
  ]);
});

test('release disclosure: exact form parsed, near misses flagged', (t) => {
  t.deepEqual(parseReleaseDisclosure('not provided — no soak rig. Revisit when: the lab exists.'), {
    reason: 'no soak rig',
    revisitWhen: 'the lab exists',
  });
  t.is(parseReleaseDisclosure('not provided'), 'malformed');
  t.is(parseReleaseDisclosure('24h soak × 30 seeds'), null);
});

test('scheduledWindows counts cycling windows within the run', (t) => {
  const step = { kind: 'partition' as const, topology: 'halves' as const, startS: 10, durationS: 20 };
  t.is(scheduledWindows([step], 60), 1);
  t.is(scheduledWindows([{ ...step, intervalS: 30 }], 100), 4);
  t.is(scheduledWindows([{ ...step, intervalS: 30, count: 2 }], 100), 2);
  t.is(scheduledWindows([{ ...step, startS: 200 }], 100), 0);
});
