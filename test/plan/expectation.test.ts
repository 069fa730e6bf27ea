import { readFile } from 'node:fs/promises';
import test from 'ava';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { judge, parseExpectation } from '../../src/app/plan/expectation.ts';
import { parsePlanText } from '../../src/app/plan/load.ts';
import type { Verdict } from '../../src/app/plan/verdict-states.ts';
import { junitOutcome } from '../../src/app/report/junit.ts';
import { NOT_SELECTED, sessionVerdict } from '../../src/app/verdict/aggregate.ts';
import type { Decision } from '../../src/app/verdict/decide.ts';
import { parseEvidence } from '../../src/app/verdict/evidence.ts';
import { decidePlan } from '../../src/app/verdict/plan-verdicts.ts';
import { completePlan } from '../report/session-record.ts';
import { hardeningEvidence, smokeEvidence } from '../verdict/evidence-builders.ts';

const parsed = (text: string) => {
  const r = parseExpectation(text);
  if ('error' in r) throw new Error(r.error);
  return r.expectation;
};

const row = (scenario: string, verdict: Verdict, expected?: string, sharedClock: boolean | null = true) => {
  const d: Decision = {
    scenario,
    verdict,
    reasons: ['why'],
    step: 8,
    tierMet: null,
    release: false,
    audits: null,
  };
  const j = expected ? judge(verdict, parsed(expected), { sharedClock }) : undefined;
  return j ? { ...d, expectation: j } : d;
};

test('parse: lists, conditions, remarks; unknown verdicts and conditions are errors', (t) => {
  const e = parsed(
    'INCONCLUSIVE-fault-not-proven on shared-clock (a Go binary); PASS-smoke or PASS-hardening on own-clock',
  );
  t.deepEqual(e.clauses, [
    { verdicts: ['INCONCLUSIVE-fault-not-proven'], on: 'shared-clock' },
    { verdicts: ['PASS-smoke', 'PASS-hardening'], on: 'own-clock' },
  ]);
  t.deepEqual(parsed('`FAIL-reproducible`, FAIL-nondeterministic').clauses[0]!.verdicts, [
    'FAIL-reproducible',
    'FAIL-nondeterministic',
  ]);
  t.regex((parseExpectation('FAIL') as { error: string }).error, /"FAIL" is not a verdict/);
  t.regex((parseExpectation('PASS-smoke on mars') as { error: string }).error, /on mars/);
  t.regex((parseExpectation(' ; ') as { error: string }).error, /empty/);
});

test('judge: the clause for this cluster decides; PASS-hardening meets an expected PASS-smoke', (t) => {
  const e = parsed('INCONCLUSIVE-fault-not-proven on shared-clock; PASS-smoke on own-clock');
  t.true(judge('INCONCLUSIVE-fault-not-proven', e, { sharedClock: true })!.met);
  t.false(
    judge('PASS-smoke', e, { sharedClock: true })!.met,
    'a PASS where the fault cannot land is a surprise',
  );
  t.true(judge('PASS-hardening', e, { sharedClock: false })!.met);
  t.false(judge('INCONCLUSIVE-fault-not-proven', e, { sharedClock: false })!.met);
  t.deepEqual(judge('PASS-smoke', e, { sharedClock: false })!.on, 'own-clock');
  // an unknown cluster accepts every clause
  t.true(judge('PASS-smoke', e, { sharedClock: null })!.met);
  t.false(judge('PASS-smoke', parsed('PASS-hardening'), { sharedClock: null })!.met);
  t.false(judge('FAIL-nondeterministic', parsed('FAIL-reproducible'), { sharedClock: null })!.met);
  // only conditional clauses, none for this cluster: no expectation here
  t.is(judge('PASS-smoke', parsed('PASS-smoke on own-clock'), { sharedClock: true }), undefined);
});

test('session: met expectations are successes, unmet ones failures, both named', (t) => {
  const demo = [
    row('S1', 'PASS-smoke', 'PASS-smoke'),
    row(
      'S2',
      'INCONCLUSIVE-fault-not-proven',
      'INCONCLUSIVE-fault-not-proven on shared-clock; PASS-smoke on own-clock',
    ),
    row('S3', 'FAIL-reproducible', 'FAIL-reproducible'),
  ];
  const ok = sessionVerdict(demo);
  t.is(ok.verdict, 'DONE');
  t.regex(ok.headline, /3 as the plan expects/);
  const control = sessionVerdict([row('S1', 'PASS-smoke'), row('S3', 'PASS-smoke', 'FAIL-reproducible')]);
  t.is(control.verdict, 'FAIL', 'a negative control that passes is a failure');
  t.regex(control.headline, /S3 PASS-smoke where the plan expects FAIL-reproducible/);
  t.is(sessionVerdict([row('S1', 'PASS-smoke'), row('S2', 'NOT-RUN')]).verdict, 'DONE_WITH_CONCERNS');
  t.is(sessionVerdict([row('S1', 'INCONCLUSIVE-env', 'PASS-smoke')]).verdict, 'FAIL');
  t.is(
    sessionVerdict([row('S1', 'FAIL-reproducible')]).verdict,
    'FAIL',
    'no expectation: a FAIL still fails',
  );
});

test('session: a row stopped early short of a FAIL is a concern (exit 2), a FAIL before the stop still fails', (t) => {
  const stopped = (d: Decision): Decision => ({ ...d, stoppedEarly: 'interrupted (SIGINT)' });
  const cut = sessionVerdict([
    row('S1', 'PASS-smoke', 'PASS-smoke'),
    stopped(row('S2', 'INCONCLUSIVE-fault-not-proven', 'PASS-smoke')),
    stopped(row('S3', 'NOT-RUN', 'FAIL-reproducible')),
  ]);
  t.is(cut.verdict, 'DONE_WITH_CONCERNS');
  t.regex(cut.headline, /S2 INCONCLUSIVE-fault-not-proven \(stopped early: interrupted \(SIGINT\)\)/);
  t.regex(cut.headline, /S3 NOT-RUN \(stopped early/);
  const nothingPassed = sessionVerdict([stopped(row('S1', 'INCONCLUSIVE-fault-not-proven', 'PASS-smoke'))]);
  t.is(nothingPassed.verdict, 'INCONCLUSIVE');
  // Evidence against the plan found before the stop is still a failure.
  t.is(sessionVerdict([stopped(row('S1', 'FAIL-reproducible', 'PASS-smoke'))]).verdict, 'FAIL');
  t.is(sessionVerdict([stopped(row('S1', 'FAIL-reproducible'))]).verdict, 'FAIL');
  // The same rows not stopped: unmet expectations fail the session.
  t.is(sessionVerdict([row('S1', 'INCONCLUSIVE-fault-not-proven', 'PASS-smoke')]).verdict, 'FAIL');
  t.is(junitOutcome(stopped(row('S2', 'NOT-RUN', 'PASS-smoke'))).kind, 'error');
});

test('junit: met → passed, unmet → failure, inconclusive → error (or failure when asked), never skipped', (t) => {
  t.deepEqual(junitOutcome(row('S3', 'FAIL-reproducible', 'FAIL-reproducible')), { kind: 'pass' });
  t.is(junitOutcome(row('S3', 'PASS-smoke', 'FAIL-reproducible')).kind, 'failure');
  t.is(junitOutcome(row('S2', 'INCONCLUSIVE-env')).kind, 'error');
  t.is(junitOutcome(row('S2', 'NOT-RUN'), 'failure').kind, 'failure');
  t.is(junitOutcome(row('S2', 'PARTIAL-surface')).kind, 'error');
});

test('plans: Expected verdict parses for scenarios and arms, and a bad one stops the plan', async (t) => {
  const text = (await readFile(completePlan, 'utf8'))
    .replace(
      '- **Oracle:** no-lost-ack over the final read at quiescence',
      '- **Oracle:** no-lost-ack over the final read at quiescence\n- **Expected verdict:** FAIL-reproducible',
    )
    .replace(
      '- **Oracle:** invariant: no cross-tenant event on any watch',
      '- **Oracle:** invariant: no cross-tenant event on any watch\n- **Expected verdict:** NOT-RUN',
    );
  const plan = parsePlanText(text, completePlan);
  t.deepEqual(
    plan.resolved.filter((r) => r.expected).map((r) => [r.id, r.expected!.text]),
    [
      ['S2', 'FAIL-reproducible'],
      ['S3/watch', 'NOT-RUN'],
    ],
  );
  t.deepEqual(
    checkPlan(plan).filter((p) => p.field === 'Expected verdict'),
    [],
  );
  const v = decidePlan(plan, [
    hardeningEvidence({ scenario: 'S1' }),
    hardeningEvidence({
      scenario: 'S2',
      seeds: [{ seed: 1, outcome: 'fail', rerun: 'reproduced', reproducer: 'faultline run --seed 1' }],
      oracles: [
        { checker: 'no-lost-ack', ran: true, valid: false, evidence: '3 lost', anomalies: 3, opsConsumed: 9 },
      ],
    }),
    parseEvidence({
      ...smokeEvidence(),
      scenario: 'S3/api',
      ran: { tenants: 2, durationS: 60, topologies: [] },
    }),
  ]);
  const by = new Map(v.rows.map((d) => [d.scenario, d]));
  t.is(by.get('S2')!.verdict, 'FAIL-reproducible');
  t.true(by.get('S2')!.expectation!.met);
  t.true(by.get('S3/watch')!.expectation!.met);
  t.false(by.get('S3')!.expectation!.met, 'S3/snapshot did not run and declares nothing');
  t.is(v.session.verdict, 'FAIL');
  const bad = parsePlanText(
    text.replace('Expected verdict:** FAIL-reproducible', 'Expected verdict:** FAILED'),
    completePlan,
  );
  const problems = checkPlan(bad).filter((p) => p.field === 'Expected verdict');
  t.is(problems.length, 1);
  t.is(problems[0]!.severity, 'error');
  t.true((problems[0]!.line ?? 0) > 0);
});

test('a scenario whose Technique is "negative control" expects FAIL-reproducible without an Expected verdict line', async (t) => {
  const path = new URL('../../plans/etcd-hardening-ci.md', import.meta.url).pathname;
  const plan = parsePlanText(await readFile(path, 'utf8'), path);
  const s3 = plan.resolved.find((r) => r.id === 'S3')!;
  t.is(s3.scenario.expectedVerdict, null, 'the plan declares no Expected verdict for S3');
  t.deepEqual(
    s3.expected?.clauses.map((c) => c.verdicts),
    [['FAIL-reproducible']],
  );
  t.is(plan.resolved.find((r) => r.id === 'S1')!.expected, null, 'other techniques imply nothing');
  const fail = hardeningEvidence({
    scenario: 'S3',
    seeds: [{ seed: 1, outcome: 'fail', rerun: 'reproduced', reproducer: 'faultline run …' }],
    oracles: [{ checker: 'linearizable', ran: true, valid: false, evidence: '1 anomaly', anomalies: 1 }],
  });
  const left = ['S1', 'S2'].map((id) =>
    parseEvidence({ scenario: id, attempted: false, notRunReason: NOT_SELECTED }),
  );
  const v = decidePlan(plan, [fail, ...left], undefined, {
    sharedClock: true,
    unselected: new Set(['S1', 'S2']),
  });
  const d = v.rows.find((r) => r.scenario === 'S3')!;
  t.is(d.verdict, 'FAIL-reproducible');
  t.true(d.expectation?.met);
  t.is(v.session.verdict, 'DONE', 'the negative control FAILing is the session succeeding (exit 0)');
});
