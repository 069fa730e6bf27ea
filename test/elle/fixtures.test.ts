import { elleChecker } from '../../checkers/elle/index.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { conformance } from '../helpers/conformance.ts';
import { type ElleCase as Case, elleOptionsOf, fixtureCases } from '../helpers/elle-cases.ts';
import { fixture } from '../helpers/fixtures.ts';

/**
 * Every Elle case in shared/fixtures/elle/cases.json: the stated verdict, and the stated anomaly types
 * and `not` set where the case gives them. Options use Elle's names (see the fixtures README).
 */
const test = conformance('Elle reference cases');
const cases = fixtureCases();
const elleCases = cases.filter((c) => c.checker === 'elle');

async function run(c: Case) {
  const { ops } = pairEvents(await loadHistory(fixture(`elle/${c.history}`)));
  return elleChecker.check(ops, elleOptionsOf(c));
}

test('the fixture list has the Elle cases the README describes', (t) => {
  t.is(elleCases.length, 13);
});

for (const c of elleCases) {
  // A case with no source for its verdict ("none: not used by any test") states no expectation.
  const stated = !c.expectedSource.startsWith('none');
  test(`${c.id}: ${stated ? `valid ${String(c.valid)}` : 'no stated verdict'}`, async (t) => {
    const r = await run(c);
    if (!stated) {
      // Same transactions as the elle-cli paper example, only without :process: still the read skew.
      t.deepEqual(r.anomalyTypes, ['G-single-item']);
      return;
    }
    t.is(r.valid, c.valid, r.evidence);
    if (c.id === 'elle-huge-scc') {
      // Elle's own test says the exact types depend on search speed and timeouts; the boundary does not.
      t.deepEqual(r.not, c.not);
      t.true(r.anomalyTypes.some((a) => a.endsWith('-realtime')));
      return;
    }
    if (c.anomalyTypes) t.deepEqual(r.anomalyTypes, c.anomalyTypes);
    if (c.not) t.deepEqual(r.not, [...c.not].sort());
  });
}

test('paper example: the G-single-item cycle and its not set, as elle-cli reports', async (t) => {
  const c = elleCases.find((x) => x.id === 'list-append-paper-example-edn')!;
  const r = await run(c);
  t.deepEqual(r.anomalyTypes, ['G-single-item']);
  t.deepEqual(r.not, ['consistent-view', 'repeatable-read']);
});

test('list-append-gh-30 under serializable is G2-item, not repeatable-read', async (t) => {
  const r = await run(elleCases.find((x) => x.id === 'list-append-gh-30')!);
  t.deepEqual(r.anomalyTypes, ['G2-item']);
  t.deepEqual(r.not, ['repeatable-read']);
});

test('huge-scc with the search cancelled reports cycle-search-timeout and cycle-exists, not a verdict of valid', async (t) => {
  const c = elleCases.find((x) => x.id === 'elle-huge-scc')!;
  const { ops } = pairEvents(await loadHistory(fixture(`elle/${c.history}`)));
  const controller = new AbortController();
  controller.abort();
  const r = elleChecker.check(ops, { workload: 'list-append' }, { signal: controller.signal });
  t.true(r.anomalyTypes.includes('cycle-search-timeout'));
  // The pre-pass still proves a cycle in the strong-SI relations, so the history is invalid.
  t.true(r.anomalyTypes.includes('strong-snapshot-isolation-cycle-exists'));
  t.is(r.valid, false);
  t.deepEqual(r.not, ['strong-snapshot-isolation']);
});

test('si-without-g-single, search cancelled: the pre-pass proves a repeatable-read cycle but no snapshot-isolation one', async (t) => {
  // Elle's regression: the SI relation (ww ∪ wr, each optionally followed by one rw) must not close a
  // cycle in this history, although ww ∪ wr ∪ rw does (T3 and T4 each missed the other's append).
  const { ops } = pairEvents(await loadHistory(fixture('elle/elle-histories/si-without-g-single.edn')));
  const controller = new AbortController();
  controller.abort();
  const r = elleChecker.check(
    ops,
    { workload: 'list-append', consistencyModels: ['snapshot-isolation', 'repeatable-read'] },
    { signal: controller.signal },
  );
  t.true(r.anomalyTypes.includes('cycle-search-timeout'));
  t.true(r.anomalyTypes.includes('PL-2.99-cycle-exists'));
  t.false(r.anomalyTypes.includes('PL-SI-cycle-exists'));
  t.is(r.valid, false);
  t.deepEqual(r.not, ['repeatable-read']);
});
