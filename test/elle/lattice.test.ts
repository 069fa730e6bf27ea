import test from 'ava';
import { boundary, prohibitedAnomalies } from '../../checkers/elle/lattice.ts';

test('not / also-not: the weakest models each anomaly rules out (Elle’s boundaries)', (t) => {
  const cases: [string[], string[]][] = [
    [['G0'], ['read-uncommitted']],
    [['G1a'], ['read-committed']],
    [['G1c-process'], ['strong-session-read-committed']],
    [['G1c-realtime'], ['strong-read-committed']],
    [['G-single-item'], ['consistent-view', 'repeatable-read']],
    [['G-nonadjacent-item'], ['repeatable-read', 'snapshot-isolation']],
    [['G2-item'], ['repeatable-read']],
    [['G-single-item-realtime'], ['strong-snapshot-isolation']],
    [['lost-update'], ['cursor-stability', 'update-atomic']],
    [['internal'], ['read-atomic']],
    [['garbage-read'], ['read-uncommitted']],
    [
      ['incompatible-order', 'strong-PL-1-cycle-exists'],
      ['read-committed', 'strong-read-uncommitted'],
    ],
    [['empty-transaction-graph'], []],
  ];
  for (const [found, not] of cases) t.deepEqual(boundary(found).not, not, found.join(','));
});

test('also-not holds the stronger models ruled out', (t) => {
  const { alsoNot } = boundary(['G2-item']);
  t.deepEqual(alsoNot, ['serializable', 'strict-serializable', 'strong-session-serializable']);
});

test('prohibited anomalies: snapshot isolation allows G2-item but not G-single; serializable forbids both', (t) => {
  const si = prohibitedAnomalies(['snapshot-isolation']);
  t.false(si.has('G2-item'));
  t.true(si.has('G-single-item'));
  t.true(si.has('lost-update'));
  const ser = prohibitedAnomalies(['serializable']);
  t.true(ser.has('G2-item'));
  t.false(ser.has('G2-item-realtime'));
  t.true(prohibitedAnomalies(['strict-serializable']).has('G2-item-realtime'));
  // Aliases and repeatable-read's quirk: it does not forbid internal.
  t.true(prohibitedAnomalies(['PL-SS']).has('G0-realtime'));
  t.false(prohibitedAnomalies(['repeatable-read']).has('internal'));
  // Extra anomalies bring everything that implies them.
  const g1 = prohibitedAnomalies([], ['G1']);
  for (const a of ['G0', 'G1a', 'G1b', 'G1c', 'dirty-update', 'incompatible-order', 'future-read'])
    t.true(g1.has(a), a);
});
