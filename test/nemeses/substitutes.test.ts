import test from 'ava';
import { PACKET_BEHAVIOURS } from '../../nemeses/params.ts';
import { SUBSTITUTES, substituteRow, substitutionFor } from '../../nemeses/substitutes.ts';
import { parseEvidence } from '../../src/app/verdict/evidence.ts';

test('every packet behaviour has a row: a substitute that reproduces it, or none and why', (t) => {
  for (const b of PACKET_BEHAVIOURS) {
    const row = substituteRow(`packet ${b}`);
    t.truthy(row, b);
    if (row?.substitute) t.true(row.substitute.reproduces.length > 0 && row.substitute.cannot.length > 0);
    else t.true((row?.noSubstitute ?? '').length > 0, b);
  }
  // Delay is never substituted (by loss or anything else).
  t.is(substituteRow('packet delay')?.substitute, null);
  t.throws(() => substitutionFor('packet delay'), { message: /no substitute/ });
  t.is(substituteRow('disk flakey')?.substitute, null);
  t.regex(substitutionFor('packet loss').applied, /iptables statistic/);
  t.true(SUBSTITUTES.every((r) => r.needs.length > 0));
});

test('a fault window carries its substitutions into the evidence; an older text substitute is kept', (t) => {
  const ev = parseEvidence({
    scenario: 'S1',
    attempted: true,
    faults: [
      { id: 'w1', kind: 'packet', startS: 1, landed: true, substitute: [substitutionFor('packet loss')] },
      { id: 'w2', kind: 'packet', startS: 2, landed: true, substitute: 'iptables statistic' },
      { id: 'w3', kind: 'packet', startS: 3, landed: true },
    ],
  });
  t.regex(ev.faults[0]?.substitute[0]?.asked ?? '', /packet loss by tc netem loss/);
  t.is(ev.faults[1]?.substitute[0]?.applied, 'iptables statistic');
  t.deepEqual(ev.faults[2]?.substitute, []);
});
