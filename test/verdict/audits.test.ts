import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parsePlanText } from '../../src/app/plan/load.ts';
import { baselineFrom } from '../../src/app/run/baseline.ts';
import { RED_FLAGS, runAudits, WEAK_ORACLE_ITEMS } from '../../src/app/verdict/audits.ts';
import { decideVerdict } from '../../src/app/verdict/decide.ts';
import { parseEvidence } from '../../src/app/verdict/evidence.ts';
import { decidePlan } from '../../src/app/verdict/plan-verdicts.ts';
import {
  hardeningEvidence,
  measuredHistory,
  scenario,
  smokeEvidence,
  testPlan,
} from './evidence-builders.ts';

const S1 = scenario('S1');

function item<T extends { id: string; status: string; evidence: string }>(list: T[], id: string): T {
  const i = list.find((x) => x.id === id);
  if (!i) throw new Error(id);
  return i;
}

test('the item lists are the spec’s 10 red flags and 14 weak-oracle items', (t) => {
  t.is(RED_FLAGS.length, 10);
  t.is(WEAK_ORACLE_ITEMS.length, 14);
  t.regex(RED_FLAGS[2], /injector and from at least one victim/);
  t.regex(WEAK_ORACLE_ITEMS[10], /One seed/);
});

test('a complete hardening run: every required item checked or N/A with a reason', (t) => {
  const a = runAudits(hardeningEvidence(), S1, 'hardening');
  for (const i of [...a.redFlags, ...a.weakOracle]) {
    if (!i.required) continue;
    t.true(i.status === 'checked' || i.status === 'n/a', `${i.id}: ${i.status} ${i.evidence}`);
    t.true(i.evidence.length > 0);
  }
  // RF9 with no baseline is reported unchecked: the oracle compares with none, so it does not block.
  t.is(item(a.redFlags, 'RF9').status, 'unchecked');
  t.false(item(a.redFlags, 'RF9').required);
  t.regex(item(a.redFlags, 'RF2').evidence, /linearizable consumed 60,000\/60,000 ops/);
  t.regex(item(a.weakOracle, 'WO7').evidence, /asymmetric/);
});

test('a smoke run: fault items are N/A because no fault was planned', (t) => {
  const a = runAudits(smokeEvidence(), S1, 'smoke');
  for (const id of ['RF3', 'RF4', 'RF8', 'RF10']) t.is(item(a.redFlags, id).status, 'n/a', id);
  t.is(item(a.weakOracle, 'WO7').status, 'n/a');
});

test('computed failures: rate collapse, ops not consumed, no victim evidence, no recovery, one seed', (t) => {
  const e = hardeningEvidence({
    seeds: [{ seed: 1, outcome: 'pass' }],
    recovery: { baselineOpsPerSec: 100, afterHealOpsPerSec: 40, measuredAfterS: 10 },
    oracles: [{ checker: 'linearizable', ran: true, valid: true, opsConsumed: 100 }],
  });
  e.throughput[5]!.ops = 50;
  e.faults[0]!.signals = e.faults[0]!.signals.filter((s) => s.side === 'injector');
  const a = runAudits(e, S1, 'hardening');
  t.regex(item(a.redFlags, 'RF1').evidence, /rate collapse/);
  t.is(item(a.redFlags, 'RF2').status, 'failed');
  t.regex(item(a.redFlags, 'RF3').evidence, /w1: no victim evidence/);
  t.regex(item(a.redFlags, 'RF8').evidence, /degraded/);
  t.is(item(a.redFlags, 'RF10').status, 'failed');
  t.is(item(a.weakOracle, 'WO11').status, 'failed');
});

test('failovers: a single failover is a weak oracle; none counted is unchecked', (t) => {
  const kill = { ...hardeningEvidence().faults[0]!, kind: 'process', action: 'kill', topology: null };
  t.is(
    item(runAudits(hardeningEvidence({ faults: [kill], failovers: 1 }), S1, 'hardening').weakOracle, 'WO4')
      .status,
    'failed',
  );
  t.is(
    item(runAudits(hardeningEvidence({ faults: [kill], failovers: 3 }), S1, 'hardening').weakOracle, 'WO4')
      .status,
    'checked',
  );
  t.is(
    item(runAudits(hardeningEvidence({ faults: [kill] }), S1, 'hardening').weakOracle, 'WO4').status,
    'unchecked',
  );
});

test('declarations settle unchecked items but never override a measured failure', (t) => {
  const base = hardeningEvidence({ history: { ops: 60000, hiddenRetries: null }, sutLog: null });
  t.is(item(runAudits(base, S1, 'hardening').weakOracle, 'WO8').status, 'unchecked');
  const declared = hardeningEvidence({
    history: { ops: 60000, hiddenRetries: null },
    sutLog: { filesScanned: 2, matches: [{ node: 'n1', file: 'x.log', line: 3, text: 'panic: boom' }] },
    declarations: {
      WO8: { status: 'checked', evidence: 'faultline etcd client: one record per attempt' },
      RF7: { status: 'checked', evidence: 'logs fine' },
    },
  });
  const a = runAudits(declared, S1, 'hardening');
  t.is(item(a.weakOracle, 'WO8').status, 'checked');
  t.regex(item(a.weakOracle, 'WO8').evidence, /\(declared\)$/);
  t.is(item(a.redFlags, 'RF7').status, 'failed');
});

test('boundary arms: single-surface item N/A per arm; negative controls required', (t) => {
  const arm = scenario('S3/api');
  const a = runAudits(smokeEvidence({ scenario: 'S3/api' }), arm, 'smoke');
  t.is(item(a.weakOracle, 'WO12').status, 'n/a');
  t.is(item(a.weakOracle, 'WO13').status, 'failed');
  const b = runAudits(
    smokeEvidence({ scenario: 'S3/api', negativeControls: { run: 40, denied: 40, leakChecked: true } }),
    arm,
    'smoke',
  );
  t.is(item(b.weakOracle, 'WO13').status, 'checked');
  const parent = runAudits(smokeEvidence({ scenario: 'S3' }), scenario('S3'), 'smoke');
  t.is(item(parent.weakOracle, 'WO12').status, 'checked');
});

test('decidePlan: scenarios without evidence are NOT-RUN; arms roll up into their parent', (t) => {
  const v = decidePlan(testPlan, [
    hardeningEvidence(),
    parseEvidence({
      ...smokeEvidence(),
      scenario: 'S3/api',
      ran: { tenants: 2, durationS: 60, topologies: [] },
    }),
  ]);
  t.deepEqual(
    v.rows.map((d) => [d.scenario, d.verdict]),
    [
      ['S1', 'PASS-hardening'],
      ['S2', 'NOT-RUN'],
      ['S3', 'PARTIAL-surface'],
      ['S3/api', 'PASS-smoke'],
      ['S3/admin', 'NOT-RUN'],
    ],
  );
  t.deepEqual(
    v.topLevel.map((d) => d.scenario),
    ['S1', 'S2', 'S3'],
  );
  t.is(v.session.verdict, 'DONE_WITH_CONCERNS');
  // the same run counted in nodes when the tier is in tenants does not meet the smoke budget
  const wrongUnit = decidePlan(testPlan, [parseEvidence({ ...smokeEvidence(), scenario: 'S3/api' })]);
  const api = wrongUnit.rows.find((d) => d.scenario === 'S3/api')!;
  t.is(api.verdict, 'PARTIAL-surface');
  // and says why: nothing counts tenants, so a run sized in nodes can never meet it
  t.true(
    api.reasons.some((r) =>
      /below the smoke budget \(size \(2 tenants: faultline counts no tenants \(no tenant audit is defined\)/.test(
        r,
      ),
    ),
    api.reasons.join(' | '),
  );
});

test('WO10 counts topologies as cluster sizes × landed partition shapes', (t) => {
  const wo10 = (ran: Record<string, unknown>) =>
    item(
      runAudits(
        hardeningEvidence({ ran: { nodes: 5, durationS: 600, topologies: [], ...ran } }),
        S1,
        'hardening',
      ).weakOracle,
      'WO10',
    );
  t.is(wo10({ topologies: ['asymmetric'], clusterSizes: [5] }).status, 'failed');
  t.regex(wo10({ topologies: ['asymmetric'], clusterSizes: [5] }).evidence, /5 nodes\/asymmetric/);
  t.is(wo10({ topologies: ['asymmetric', 'majorities-ring'], clusterSizes: [5] }).status, 'checked');
  t.is(wo10({ topologies: [], clusterSizes: [3, 5] }).status, 'checked');
  t.is(wo10({ topologies: [], clusterSizes: [5] }).status, 'failed');
});

test('RF5/WO9: judged from the recorder’s clock readings, never from a declaration', (t) => {
  const audit = (over: Record<string, unknown>) => {
    const a = runAudits(hardeningEvidence({ history: measuredHistory(60000, over) }), S1, 'hardening');
    return { rf5: item(a.redFlags, 'RF5'), wo9: item(a.weakOracle, 'WO9') };
  };
  const good = audit({});
  t.is(good.rf5.status, 'checked');
  t.is(good.wo9.status, 'checked');
  t.regex(good.rf5.evidence, /180,000 readings of process\.hrtime\.bigint over 600s, none backwards/);
  // A declared monotonic clock with no readings is not a measurement.
  t.is(audit({ clockReadings: null }).rf5.status, 'unchecked');
  t.regex(audit({ clockReadings: null }).rf5.evidence, /no clock\.json/);
  t.is(audit({ clock: 'wall', clockReadings: null }).rf5.status, 'failed');
  const base = measuredHistory(1).clockReadings;
  t.is(audit({ clockReadings: { ...base, regressions: 2 } }).wo9.status, 'failed');
  t.is(audit({ timeInversions: 1 }).rf5.status, 'failed');
  // A wall-clock jump is reported; the history's monotonic times are unaffected by it.
  const jumped = audit({ clockReadings: { ...base, wallJumps: [{ atS: 12.5, byMs: 5000 }] } }).rf5;
  t.is(jumped.status, 'checked');
  t.regex(jumped.evidence, /wall clock jumped \+5000 ms at 12\.5s/);
});

test('WO5 from the history: timeouts recorded as info, and a history checker consumed them', (t) => {
  const wo5 = (history: Record<string, unknown>, opsConsumed = 60000) =>
    item(
      runAudits(
        hardeningEvidence({
          history: measuredHistory(60000, history),
          oracles: [{ checker: 'linearizable', ran: true, valid: true, opsConsumed }],
        }),
        S1,
        'hardening',
      ).weakOracle,
      'WO5',
    );
  t.is(wo5({}).status, 'checked');
  t.regex(wo5({}).evidence, /12 timed-out op\(s\) recorded as info .* linearizable consumed all 60,000 ops/);
  t.is(wo5({ timeouts: null }).status, 'unchecked');
  t.is(wo5({ timeouts: { count: 12, withCompletion: 3 } }).status, 'failed');
  t.is(wo5({}, 59000).status, 'failed');
  t.regex(wo5({ timeouts: { count: 0, withCompletion: 0 } }).evidence, /no op timed out/);
});

test('WO8 from the wire count: a surplus of requests is a hidden retry; no count is unchecked', (t) => {
  const wo8 = (history: Record<string, unknown>) =>
    item(
      runAudits(hardeningEvidence({ history: measuredHistory(60000, history) }), S1, 'hardening').weakOracle,
      'WO8',
    );
  t.is(wo8({}).status, 'checked');
  t.is(wo8({ wire: { requests: 60010, perOp: 1, what: 'HTTP requests' } }).status, 'failed');
  t.regex(
    wo8({ wire: { requests: 60010, perOp: 1, what: 'HTTP requests' } }).evidence,
    /10 request\(s\) the history does not show/,
  );
  // The client's own declaration that it never retries is not an observation.
  t.is(wo8({ wire: null, hiddenRetries: false }).status, 'unchecked');
  t.is(wo8({ wire: { requests: 90000, perOp: null, what: 'HTTP requests' } }).status, 'unchecked');
  t.is(wo8({ wire: null, hiddenRetries: true }).status, 'failed');
});

test('an unchecked required item caps PASS-hardening at PARTIAL-surface, naming it', (t) => {
  const d = decideVerdict(hardeningEvidence({ history: measuredHistory(60000, { wire: null }) }), S1);
  t.is(d.verdict, 'PARTIAL-surface');
  t.regex(d.reasons.join(' | '), /WO8 unchecked \(no wire count/);
});

test('WO13 measures the plan’s negative controls: each one run must have FAILed', (t) => {
  const wo13 = (negativeControls?: { id: string; verdict: string }[]) =>
    item(runAudits(hardeningEvidence(), S1, 'hardening', { negativeControls }).weakOracle, 'WO13');
  t.is(wo13().status, 'n/a');
  t.regex(wo13().evidence, /declares no negative control/);
  const caught = wo13([{ id: 'S9', verdict: 'FAIL-reproducible' }]);
  t.is(caught.status, 'checked');
  t.regex(caught.evidence, /S9 FAIL-reproducible/);
  const missed = wo13([{ id: 'S9', verdict: 'PASS-smoke' }]);
  t.is(missed.status, 'failed');
  t.regex(missed.evidence, /did not FAIL: S9 PASS-smoke/);
  const notRun = wo13([{ id: 'S9', verdict: 'NOT-RUN' }]);
  t.is(notRun.status, 'unchecked');
  t.regex(notRun.evidence, /S9 not run/);
  // A negative control that missed blocks PASS-hardening like any failed weak-oracle item.
  const capped = decideVerdict(hardeningEvidence(), S1, {
    negativeControls: [{ id: 'S9', verdict: 'PASS-smoke' }],
  });
  t.not(capped.verdict, 'PASS-hardening');
  t.is(capped.cappedBy, 'weak-oracle');
  t.is(decideVerdict(hardeningEvidence(), S1).verdict, 'PASS-hardening');
});

test('WO13 in a plan: the negative control is decided first and read by the other rows', (t) => {
  const plan = parsePlanText(
    `# Test Plan: controls

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | registers are linearizable | safety | docs | no |

## 7. Scenarios

### Scenario S1: linearizable_register

- Falsifies if it FAILs: C1
- Oracle: linearizability per key
- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed
- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds
- Release budget: 5 nodes × 24h × 30 faults × 30 seeds

§7.M: not applicable (no gated claim category falsified)

### Scenario S2: stale_reads_negative_control

- Falsifies if it FAILs: C1
- Expected verdict: FAIL-reproducible
- Oracle: linearizability per key
- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed
- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds
- Release budget: 5 nodes × 24h × 30 faults × 30 seeds

§7.M: not applicable (no gated claim category falsified)
`,
    'controls.md',
  );
  const s1 = hardeningEvidence();
  const wo13Of = (s2: ReturnType<typeof hardeningEvidence>) =>
    item(decidePlan(plan, [s1, s2]).rows.find((r) => r.scenario === 'S1')?.audits?.weakOracle ?? [], 'WO13');
  const failed = hardeningEvidence({
    scenario: 'S2',
    seeds: [{ seed: 1, outcome: 'fail', rerun: 'reproduced', reproducer: 'faultline run …' }],
  });
  t.is(wo13Of(failed).status, 'checked');
  const passed = hardeningEvidence({ scenario: 'S2' });
  t.is(wo13Of(passed).status, 'failed');
});

test('RF9 reads the baseline’s harness from the baseline file and compares it with the running one', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-baseline-'));
  const file = join(dir, 'metrics', 'S1.json');
  mkdirSync(join(dir, 'metrics'));
  writeFileSync(
    file,
    JSON.stringify({
      baselineOpsPerSec: 98,
      baselineHarness: 'faultline 0.9.0 abc',
      baselineCapturedAt: 'T0',
    }),
  );
  const same = baselineFrom(file, dir, 'faultline 0.9.0 abc');
  t.deepEqual(same, {
    harnessVersion: 'faultline 0.9.0 abc',
    currentHarnessVersion: 'faultline 0.9.0 abc',
    capturedAt: 'T0',
    source: 'metrics/S1.json',
    earlier: false,
    ageS: null,
    opsPerSec: 98,
    currentOpsPerSec: null,
  });
  const rf9 = (baseline: typeof same, sc = S1) =>
    item(runAudits(hardeningEvidence({ baseline }), sc, 'hardening').redFlags, 'RF9');
  // This run's own baseline against this run's harness is equal by construction: not a measurement.
  t.is(rf9(same).status, 'unchecked');
  t.regex(rf9(same).evidence, /no earlier baseline given \(--baseline\)/);
  t.false(rf9(same).required, 'an oracle that compares with no baseline does not need RF9');
  const earlier = same && { ...same, earlier: true, source: '/old/session/metrics/S1.json' };
  t.is(rf9(earlier).status, 'checked');
  t.regex(rf9(earlier).evidence, /earlier session \(\/old\/session\/metrics\/S1\.json\)/);
  const changed = baselineFrom(file, dir, 'faultline 1.0.0 def');
  const changedEarlier = changed && { ...changed, earlier: true };
  t.is(rf9(changedEarlier).status, 'failed');
  t.regex(
    rf9(changedEarlier).evidence,
    /captured by harness faultline 0\.9\.0 abc .* run with faultline 1\.0\.0 def: re-baseline/,
  );
  // A file that names no harness, or holds no baseline figure, is no baseline.
  writeFileSync(file, JSON.stringify({ baselineOpsPerSec: 98 }));
  t.is(baselineFrom(file, dir, 'x'), null);
  writeFileSync(
    file,
    JSON.stringify({ baselineOpsPerSec: null, baselineHarness: 'h', baselineCapturedAt: 'T0' }),
  );
  t.is(baselineFrom(file, dir, 'x'), null);
});

type HealWindow = NonNullable<ReturnType<typeof hardeningEvidence>['recovery']>['windows'][number];

/** Hardening evidence with one healed window (10 s budget from the plan) and a steady 50 ops/s. */
function oneHeal(w: Omit<HealWindow, 'budgetS' | 'budgetFrom'>) {
  return hardeningEvidence({
    recovery: {
      baselineOpsPerSec: 50,
      afterHealOpsPerSec: 50,
      measuredAfterS: 10,
      windows: [{ ...w, budgetS: 10, budgetFrom: "the plan's recoveryBudgetS" }],
    },
  });
}

test('RF8: keys answering within budget is not enough when the rate stayed below nominal past it', (t) => {
  const heal = (rate: { backAfterS: number | null; referenceOpsPerSec: number; cutBy?: string }) =>
    oneHeal({
      id: 'w1',
      healS: 20,
      keys: 40,
      recoveredAfterS: rate.backAfterS === null ? 0.5 : Math.max(0.5, rate.backAfterS),
      slowestKey: '7',
      rate,
    });
  const back = item(
    runAudits(heal({ backAfterS: 4, referenceOpsPerSec: 50 }), S1, 'hardening').redFlags,
    'RF8',
  );
  t.is(back.status, 'checked', back.evidence);
  t.regex(back.evidence, /rate was back to ≥ 80% of 50\.0 ops\/s within 4\.0s/);
  const never = item(
    runAudits(heal({ backAfterS: null, referenceOpsPerSec: 50 }), S1, 'hardening').redFlags,
    'RF8',
  );
  t.is(never.status, 'failed');
  t.regex(never.evidence, /w1 healed at 20\.0s: the rate was never back to ≥ 80% of 50\.0 ops\/s/);
  const cut = item(
    runAudits(heal({ backAfterS: null, referenceOpsPerSec: 50, cutBy: 'w2' }), S1, 'hardening').redFlags,
    'RF8',
  );
  t.is(cut.status, 'checked', cut.evidence);
  t.regex(cut.evidence, /w1: rate not judged, w2 came first/);
});

test('RF8: the workload ending before the rate was back, inside the budget, is not shown either way', (t) => {
  // A restarted broker refusing connections until after the last op: the keys answered through the
  // other members at once, the rate stayed at two thirds, and the budget ran past the workload's end.
  const unsettled = hardeningEvidence({
    recovery: {
      baselineOpsPerSec: 20,
      afterHealOpsPerSec: null,
      measuredAfterS: 0,
      windows: [
        {
          id: 'w1',
          healS: 13,
          keys: 1,
          recoveredAfterS: 0.1,
          slowestKey: 'q',
          budgetS: 15.2,
          budgetFrom: 'the end of the history',
          rate: { backAfterS: null, referenceOpsPerSec: 20, cutBy: 'the end of the workload' },
        },
      ],
    },
  });
  const rf8 = item(runAudits(unsettled, S1, 'hardening').redFlags, 'RF8');
  t.is(rf8.status, 'unchecked', rf8.evidence);
  t.regex(rf8.evidence, /the workload ended before the rate was back after w1, inside the budget/);
  t.notRegex(rf8.evidence, /degraded|the rate was back to/);
});

test('RF8: keys the workload stopped asking are named and not judged; with none judged RF8 is unchecked', (t) => {
  const heal = (keys: number, retired: string[]) =>
    oneHeal({ id: 'w13', healS: 153.6, keys, recoveredAfterS: 6.4, slowestKey: '38', retired });
  const some = item(runAudits(heal(2, ['37']), S1, 'hardening').redFlags, 'RF8');
  t.is(some.status, 'checked', some.evidence);
  t.regex(
    some.evidence,
    /w13: 1 key\(s\) not judged, the workload stopped asking them inside the budget \(37\)/,
  );
  const none = item(runAudits(heal(1, ['37']), S1, 'hardening').redFlags, 'RF8');
  t.is(none.status, 'unchecked', none.evidence);
});

test('RF8: permanent damage is named, not timed; the heals after it are judged, and alone it is unchecked', (t) => {
  const withDamage = hardeningEvidence({
    recovery: {
      baselineOpsPerSec: 50,
      afterHealOpsPerSec: 50,
      measuredAfterS: 10,
      permanent: ['w1'],
      windows: [
        {
          id: 'w2',
          healS: 20,
          keys: 4,
          recoveredAfterS: 2,
          slowestKey: '7',
          budgetS: 20,
          budgetFrom: 'the end of the history',
          rate: { backAfterS: 2, referenceOpsPerSec: 50 },
        },
      ],
    },
  });
  const judged = item(runAudits(withDamage, S1, 'hardening').redFlags, 'RF8');
  t.is(judged.status, 'checked', judged.evidence);
  t.regex(judged.evidence, /w1: permanent damage, nothing heals it/);
  t.regex(judged.evidence, /within 2\.0s \(slowest w2/);
  const alone = hardeningEvidence({
    recovery: {
      baselineOpsPerSec: 50,
      afterHealOpsPerSec: null,
      measuredAfterS: 0,
      permanent: ['w1'],
      windows: [],
    },
  });
  const none = item(runAudits(alone, S1, 'hardening').redFlags, 'RF8');
  t.is(none.status, 'unchecked');
  t.regex(none.evidence, /^no heal to recover from: w1: permanent damage/);
});

test('RF8: a heal no key was asked after (a restart done after the workload) is unchecked and says so', (t) => {
  const late = hardeningEvidence({
    recovery: {
      baselineOpsPerSec: 50,
      afterHealOpsPerSec: null,
      measuredAfterS: 0,
      permanent: ['w1'],
      windows: [
        {
          id: 'w2',
          healS: 47.3,
          keys: 0,
          recoveredAfterS: 0,
          slowestKey: null,
          budgetS: 0,
          budgetFrom: 'the end of the history',
        },
      ],
    },
  });
  const rf8 = item(runAudits(late, S1, 'hardening').redFlags, 'RF8');
  t.is(rf8.status, 'unchecked');
  t.regex(
    rf8.evidence,
    /^nothing to judge: w2 healed at 47\.3s: no key in use was asked after it; w1: permanent damage/,
  );
});
