import test from 'ava';
import { landingEvidence, notLandedReason, shownAt } from '../../nemeses/landing.ts';
import type { EvidenceSignal } from '../../nemeses/types.ts';

const sig = (
  node: string,
  landed: boolean,
  during: unknown,
  more: Partial<EvidenceSignal> = {},
): EvidenceSignal => ({
  side: 'victim',
  node,
  signal: 'probe',
  during,
  landed,
  ...more,
});

test('landed when every signal landed, with no reason; no signal at all is not landed unless allowed', (t) => {
  t.deepEqual(landingEvidence([sig('n1', true, 1)], {}), { landed: true, signals: [sig('n1', true, 1)] });
  t.deepEqual(landingEvidence([], { show: shownAt('during') }), {
    landed: false,
    reason: 'not landed: ',
    signals: [],
  });
  t.deepEqual(landingEvidence([], { noneLands: true, reason: 'still off' }), { landed: true, signals: [] });
});

test('the reason lists the signals that did not land, in the words reports compare', (t) => {
  const signals = [sig('n1', true, 'x'), sig('n2', false, { a: 1 }), sig('n3', false, 'down')];
  t.is(
    landingEvidence(signals, { show: shownAt('during', true) }).reason,
    'not landed: n2 probe={"a":1}; n3 probe="down"',
  );
  t.is(
    landingEvidence(signals, { show: shownAt('during') }).reason,
    'not landed: n2 probe=[object Object]; n3 probe=down',
  );
  const after = [sig('n1', false, null, { after: 'gone' })];
  t.is(
    landingEvidence(after, { prefix: 'not back after heal', show: shownAt('after') }).reason,
    'not back after heal: n1 probe=gone',
  );
  t.deepEqual(
    landingEvidence(after, { reason: 'a clock is still off after heal' }).reason,
    'a clock is still off after heal',
  );
  t.is(
    notLandedReason(signals, (s) => `${s.signal} = ${String(s.during)}`, 'not landed in 4000 ms'),
    'not landed in 4000 ms: probe = [object Object]; probe = down',
  );
});

test('judged signals, a further condition, known failures and a note', (t) => {
  const injector = sig('n1', false, 0, { side: 'injector' });
  const victim = sig('n2', true, 'timeout');
  const onlyVictims = { judged: [victim], show: shownAt('during') };
  t.true(landingEvidence([injector, victim], onlyVictims).landed, 'an informative signal does not decide');
  const noRules = landingEvidence([injector, victim], { ...onlyVictims, holds: false });
  t.deepEqual([noRules.landed, noRules.reason], [false, 'not landed: ']);
  const failed = landingEvidence([victim], {
    ...onlyVictims,
    failures: ['n2: not landed: libfaketime cannot'],
  });
  t.deepEqual([failed.landed, failed.reason], [false, 'n2: not landed: libfaketime cannot']);
  const note = 'substitution: iptables for nft';
  t.is(landingEvidence([victim], { note }).reason, note, 'the note alone when it landed');
  t.is(
    landingEvidence([injector], { show: (s) => `${s.signal}=${JSON.stringify(s.during)}`, note }).reason,
    `not landed: probe=0; ${note}`,
  );
});
