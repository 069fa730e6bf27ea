import test from 'ava';
import { setFullChecker } from '../../checkers/catalogue/set-full.ts';
import { linearizabilityChecker } from '../../checkers/linearizability/index.ts';
import type { Anomaly } from '../../checkers/types.ts';
import { verdictTable } from '../../src/app/cli/commands/run-action.ts';
import { sessionVerdict } from '../../src/app/verdict/aggregate.ts';
import { decideVerdict } from '../../src/app/verdict/decide.ts';
import { anomalyHeadline, opsByEventIndex, resultHeadline } from '../../src/app/verdict/headline.ts';
import { H } from '../oracles/build.ts';
import { hardeningEvidence, scenario } from '../verdict/evidence-builders.ts';

/**
 * A FAIL leads with one sentence naming what failed: the op (by its event index), process, node, key,
 * time and the fault window active then with what that fault did, and what the checker expected.
 */

const partition = new Map([['w1', { what: 'n2 isolated from n1 n3 n4 n5' }]]);

/** The negative control's shape: write 3 acknowledged, then a read of 4 on the isolated node. */
function staleRead() {
  return new H()
    .invoke(0, 'write', 4, { key: '1', node: 'n1', at: 11.0e9 })
    .ok(0, 'write', 4, { key: '1', node: 'n1', at: 11.2e9 })
    .invoke(1, 'write', 3, { key: '1', node: 'n1', at: 11.5e9 })
    .ok(1, 'write', 3, { key: '1', node: 'n1', at: 11.9e9 })
    .invoke(7, 'read', null, { key: '1', node: 'n2', at: 12.1e9, faultEpoch: ['w1'] })
    .ok(7, 'read', 4, { key: '1', node: 'n2', at: 12.3e9, faultEpoch: ['w1'] });
}

test('a stale read: the whole story in one sentence, ops by event index', async (t) => {
  const h = staleRead();
  const ops = h.ops();
  const r = await linearizabilityChecker.check(ops, { model: 'register' });
  const a = { ...(r.anomalies[0] as Anomaly), key: '1' };
  const sentence = anomalyHeadline(a, { ops: opsByEventIndex(ops), faults: partition });
  t.is(
    sentence,
    'On key 1, read → 4 (op 4, process 7 on n2, 12.10–12.30 s, during w1: n2 isolated from n1 n3 n4 n5) ' +
      'cannot be linearized: it must come right after the longest linearizable prefix (2 of 3 ops), where the ' +
      'register can only hold 3, last set by write(3) (op 2, process 1 on n1, ok at 11.90 s).',
  );
  // Every op number is an invoke line of the history.
  for (const m of sentence.matchAll(/\bop (\d+)\b/g)) t.is(h.history()[Number(m[1])]?.type, 'invoke');
});

test('never cut, one full stop, more anomalies counted in the same sentence', (t) => {
  const ctx = { ops: opsByEventIndex(staleRead().ops()), faults: partition };
  const long = 'x'.repeat(500);
  const first: Anomaly = { type: 'lost', explanation: `element ${long} is gone;`, ops: [4] };
  const s = resultHeadline(
    [first, { type: 'lost', explanation: 'y', key: '2' }, { type: 'lost', explanation: 'z', key: '3' }],
    ctx,
  );
  t.truthy(s);
  t.true((s as string).includes(long), 'nothing is cut');
  t.regex(
    s as string,
    /^Element x+ is gone \(op 4, process 7 on n2, 12\.10–12\.30 s, during w1: n2 isolated/,
  );
  t.regex(s as string, /; 2 more anomalies on keys 2, 3\.$/);
  t.is((s as string).match(/\.(\s|$)/g)?.length, 1, 'one sentence');
  t.is(resultHeadline([], ctx), null);
});

test('an op outside every fault window says so; an op the text does not name is still placed', async (t) => {
  const h = new H()
    .invoke(0, 'add', 7, { node: 'n3', at: 1e9 })
    .ok(0, 'add', 7, { node: 'n3', at: 1.1e9 })
    .invoke(1, 'read', null, { node: 'n1', at: 2e9 })
    .ok(1, 'read', [7], { node: 'n1', at: 2.1e9 })
    .invoke(2, 'read', null, { node: 'n2', at: 3e9 })
    .ok(2, 'read', [], { node: 'n2', at: 3.2e9 });
  const r = await setFullChecker.check(h.ops(), {});
  const s = resultHeadline(r.anomalies, { ops: opsByEventIndex(h.ops()), faults: new Map() });
  t.is(
    s,
    'Lost element 7: added by op 0 (process 0 on n3, ok at 1.10 s) and acknowledged before read op 4 ' +
      '(process 2 on n2, 3.00–3.20 s, with no fault active) was invoked, which did not contain it; the last ' +
      'read that contained it was op 2 (process 1 on n1, ok at 2.10 s).',
  );
  const unnamed = anomalyHeadline(
    { type: 'x', explanation: 'something went wrong', ops: [4] },
    {
      ops: opsByEventIndex(h.ops()),
      faults: new Map(),
    },
  );
  t.is(unnamed, 'Something went wrong (op 4, process 2 on n2, 3.00–3.20 s, with no fault active).');
});

test('the FAIL reason, the session headline and the terminal table carry the headline uncut', (t) => {
  const headline = `On key 1, read → 4 (op 4, process 7 on n2) cannot be linearized: ${'because '.repeat(20)}so.`;
  const ev = hardeningEvidence({
    seeds: [{ seed: 7, outcome: 'fail', rerun: 'reproduced', reproducer: 'faultline run …' }],
    oracles: [
      {
        checker: 'linearizable',
        ran: true,
        valid: false,
        evidence: 'linearizable per key: 10 keys, 2 invalid',
        anomalies: 2,
        opsConsumed: 1800,
        headline,
      },
    ],
  });
  const d = decideVerdict(ev, scenario('S1'));
  t.is(d.verdict, 'FAIL-reproducible');
  t.is(d.reasons[0], headline);
  const session = sessionVerdict([d]);
  t.is(session.headline, `FAIL: S1 FAIL-reproducible: ${headline}`);
  const table = verdictTable({
    exitCode: 1,
    sessionDir: '/tmp/s',
    verdict: 'FAIL',
    rows: [
      { scenario: 'S1', verdict: d.verdict, expected: '—', tier: 'smoke', reason: d.reasons[0] as string },
    ],
  });
  t.true(table.includes(headline), 'the terminal shows the whole sentence');
  t.regex(table, /^S1 +FAIL-reproducible +— +smoke +On key 1/m);
  t.regex(table, /report: \/tmp\/s\/findings\/report\.html/);
});

test('an anomaly seen with no fault active is placed after the latest heal before it', (t) => {
  const h = new H()
    .invoke(0, 'write', 4, { key: '1', node: 'n1', at: 11.0e9 })
    .ok(0, 'write', 4, { key: '1', node: 'n1', at: 11.2e9 })
    .invoke(1, 'write', 3, { key: '1', node: 'n1', at: 11.5e9 })
    .ok(1, 'write', 3, { key: '1', node: 'n1', at: 11.9e9 })
    .invoke(7, 'read', null, { key: '1', node: 'n2', at: 12.1e9 })
    .ok(7, 'read', 4, { key: '1', node: 'n2', at: 12.3e9 });
  const a: Anomaly = { type: 'stale', explanation: 'read → 4 is stale', ops: [4], key: '1' };
  const ops = opsByEventIndex(h.ops());
  const faults = new Map([
    ['w1', { what: 'n2 isolated from n1 n3', healedAtNs: 8.0e9 }],
    ['w2', { what: 'n2 isolated from n1 n3', healedAtNs: 11.2e9 }],
    // Healed after the read was invoked: not before it, so not named.
    ['w3', { what: 'n1 killed', healedAtNs: 12.2e9 }],
  ]);
  t.is(
    anomalyHeadline(a, { ops, faults }),
    'On key 1, read → 4 is stale (op 4, process 7 on n2, 12.10–12.30 s, with no fault active, 0.90 s after ' +
      'w2 healed (n2 isolated from n1 n3)).',
  );
  // No heal time known, or no window at all: just "with no fault active".
  t.regex(
    anomalyHeadline(a, { ops, faults: new Map([['w1', { what: 'x' }]]) }),
    /12\.30 s, with no fault active\)\.$/,
  );
});
