import test from 'ava';
import type { Verdict } from '../../src/app/plan/verdict-states.ts';
import { aggregateArms, sessionVerdict } from '../../src/app/verdict/aggregate.ts';
import { type Decision, decideVerdict } from '../../src/app/verdict/decide.ts';
import type { ScenarioEvidence } from '../../src/app/verdict/evidence.ts';
import { hardeningEvidence, measuredHistory, scenario, smokeEvidence } from './evidence-builders.ts';

const S1 = scenario('S1');
const S2 = scenario('S2');

/** One row per branch of the decision tree and per downgrade rule: evidence in, verdict (and step) out. */
const table: {
  name: string;
  ev: () => ScenarioEvidence;
  sc?: typeof S1;
  verdict: Verdict;
  step?: number;
  cappedBy?: string;
  reason?: RegExp;
}[] = [
  {
    name: 'baseline: everything proven → PASS-hardening',
    ev: () => hardeningEvidence(),
    verdict: 'PASS-hardening',
    step: 8,
  },
  {
    name: 'a run that failed before its history: the failure is the first reason, not only what is missing',
    ev: () =>
      hardeningEvidence({
        seeds: [
          {
            seed: 22,
            outcome: 'unknown',
            error:
              "postgres: teardown on n1 failed: exit 1\nstderr (last 1 lines):\n  rm: cannot remove '/d': Is a directory",
          },
        ],
        faultsScheduled: 1,
        faults: [],
        oracles: [],
        history: null,
      }),
    verdict: 'INCONCLUSIVE-fault-not-proven',
    step: 4,
    reason:
      /^seed 22: the run failed: postgres: teardown on n1 failed: exit 1 stderr \(last 1 lines\): rm: cannot remove '\/d': Is a directory \| landing not proven/,
  },
  {
    name: 'step 1: not attempted → NOT-RUN',
    ev: () => hardeningEvidence({ attempted: false, notRunReason: 'time ran out' }),
    verdict: 'NOT-RUN',
    step: 1,
    reason: /time ran out/,
  },
  {
    name: 'step 2: capability missing → INCONCLUSIVE-env',
    ev: () =>
      hardeningEvidence({ capabilitiesMissing: [{ name: 'tc-netem', reason: 'no sch_netem module' }] }),
    verdict: 'INCONCLUSIVE-env',
    step: 2,
    reason: /tc-netem/,
  },
  {
    name: 'step 3: reproduced FAIL → FAIL-reproducible (precedes an unproven fault)',
    ev: () =>
      hardeningEvidence({
        seeds: [{ seed: 7, outcome: 'fail', rerun: 'reproduced' }],
        faults: [],
        oracles: [{ checker: 'linearizable', ran: true, valid: false, anomalies: 1, opsConsumed: 60000 }],
      }),
    verdict: 'FAIL-reproducible',
    step: 3,
  },
  {
    name: 'step 3: FAIL not reproduced by an identical re-run → FAIL-nondeterministic',
    ev: () =>
      hardeningEvidence({
        seeds: [{ seed: 7, outcome: 'fail', rerun: 'not-reproduced' }],
        oracles: [{ checker: 'linearizable', ran: true, valid: false, anomalies: 1, opsConsumed: 60000 }],
      }),
    verdict: 'FAIL-nondeterministic',
    step: 3,
    reason: /did not reproduce/,
  },
  {
    name: 'step 3: oracle FAIL with no re-run → FAIL-nondeterministic',
    ev: () =>
      hardeningEvidence({
        oracles: [{ checker: 'linearizable', ran: true, valid: false, anomalies: 2, opsConsumed: 60000 }],
      }),
    verdict: 'FAIL-nondeterministic',
    step: 3,
  },
  {
    name: 'step 4: fault scheduled, no victim evidence → INCONCLUSIVE-fault-not-proven',
    ev: () => {
      const e = hardeningEvidence();
      e.faults[1]!.signals = e.faults[1]!.signals.filter((s) => s.side === 'injector');
      return e;
    },
    verdict: 'INCONCLUSIVE-fault-not-proven',
    step: 4,
    reason: /w2.*no victim signal/,
  },
  {
    name: 'step 4: fault scheduled but never recorded → INCONCLUSIVE-fault-not-proven',
    ev: () => hardeningEvidence({ faults: [] }),
    verdict: 'INCONCLUSIVE-fault-not-proven',
    step: 4,
  },
  {
    name: 'step 4: no fault planned → continues to a smoke pass',
    ev: () => smokeEvidence(),
    verdict: 'PASS-smoke',
    step: 8,
  },
  {
    name: 'step 5: declared checker did not run → PARTIAL-surface',
    ev: () =>
      hardeningEvidence({ oracles: [{ checker: 'linearizable', ran: false, error: 'out of memory' }] }),
    verdict: 'PARTIAL-surface',
    step: 5,
  },
  {
    name: 'step 6: history lacks node_seen for a register → INCONCLUSIVE-oracle-too-weak',
    ev: () =>
      hardeningEvidence({
        history: {
          ops: 60000,
          fieldsPresent: ['op_id', 'process_id', 'invoke_ts/complete_ts', 'timeout_marker', 'fault_epoch'],
        },
      }),
    verdict: 'INCONCLUSIVE-oracle-too-weak',
    step: 6,
    reason: /node_seen/,
  },
  {
    name: 'step 6: checker mismatched with the model → INCONCLUSIVE-oracle-too-weak',
    ev: () =>
      hardeningEvidence({
        oracles: [
          {
            checker: 'linearizable',
            ran: true,
            valid: true,
            opsConsumed: 60000,
            mismatch: 'linearizability on a session claim',
          },
        ],
      }),
    verdict: 'INCONCLUSIVE-oracle-too-weak',
    step: 6,
  },
  {
    name: 'step 7: checker covered a subset → PARTIAL-model naming it',
    ev: () =>
      hardeningEvidence({
        oracles: [{ checker: 'linearizable', ran: true, valid: true, opsConsumed: 41000 }],
      }),
    verdict: 'PARTIAL-model',
    step: 7,
    reason: /41,000 of 60,000/,
  },
  {
    name: 'step 7: per-key only → PARTIAL-model',
    ev: () =>
      hardeningEvidence({
        oracles: [
          {
            checker: 'linearizable',
            ran: true,
            valid: true,
            opsConsumed: 60000,
            subset: 'per-key, not cross-key',
          },
        ],
      }),
    verdict: 'PARTIAL-model',
    reason: /per-key/,
  },
  {
    name: 'cap: config size below hardening, smoke met → PASS-smoke',
    ev: () =>
      hardeningEvidence({
        seeds: [
          { seed: 1, outcome: 'pass' },
          { seed: 2, outcome: 'pass' },
          { seed: 3, outcome: 'pass' },
        ],
        ran: { nodes: 3, durationS: 600, topologies: ['3 nodes', '5 nodes'] },
      }),
    verdict: 'PASS-smoke',
    cappedBy: 'budget',
    reason: /size/,
  },
  {
    name: 'cap: duration below hardening → PASS-smoke',
    ev: () => hardeningEvidence({ ran: { nodes: 5, durationS: 120, topologies: ['3 nodes', '5 nodes'] } }),
    verdict: 'PASS-smoke',
    cappedBy: 'budget',
    reason: /durationS/,
  },
  {
    name: 'cap: below even the smoke budget → PARTIAL-surface',
    ev: () => smokeEvidence({ ran: { nodes: 1, durationS: 5, topologies: [] } }),
    verdict: 'PARTIAL-surface',
    cappedBy: 'budget',
  },
  {
    // A hardening budget that asks for one seed is met by one seed; the seed rule still forbids the pass.
    name: 'single-seed rule: serious pass under faults, hardening budget met on one seed → PARTIAL-model',
    ev: () => hardeningEvidence({ seeds: [{ seed: 1, outcome: 'pass' }] }),
    sc: {
      ...S1,
      tiers: { ...S1.tiers, hardening: { ...S1.tiers.hardening!, seeds: 1 } },
    },
    verdict: 'PARTIAL-model',
    cappedBy: 'seeds',
  },
  {
    // A smoke-sized run (shorter than the hardening tier, one seed) makes a smoke claim: the budget caps
    // it at PASS-smoke, the seed rule does not apply.
    name: 'single-seed rule after budget gating: one seed under faults at smoke size → PASS-smoke',
    ev: () => {
      const e = hardeningEvidence({ seeds: [{ seed: 1, outcome: 'pass' }] });
      e.ran.durationS = 60;
      return e;
    },
    verdict: 'PASS-smoke',
    cappedBy: 'budget',
  },
  {
    name: 'weak-oracle downgrade: symmetric partitions only → PARTIAL-surface',
    ev: () => {
      const e = hardeningEvidence();
      e.faults[1]!.topology = 'halves';
      return e;
    },
    verdict: 'PARTIAL-surface',
    cappedBy: 'weak-oracle',
    reason: /WO7/,
  },
  {
    name: 'weak-oracle downgrade: unknown hidden retries (unchecked) blocks PASS-hardening',
    ev: () => hardeningEvidence({ history: { ops: 60000, hiddenRetries: null } }),
    verdict: 'PARTIAL-surface',
    reason: /WO8 unchecked/,
  },
  {
    name: 'red flag: silent stop outside fault windows blocks PASS-hardening',
    ev: () => {
      const e = hardeningEvidence();
      e.throughput[30]!.ops = 0;
      return e;
    },
    verdict: 'PARTIAL-surface',
    cappedBy: 'red-flag',
    reason: /RF1 failed.*silent stop/,
  },
  {
    name: 'red flag: panic in SUT logs also blocks PASS-smoke',
    ev: () =>
      smokeEvidence({
        sutLog: {
          filesScanned: 3,
          matches: [{ node: 'n2', file: 'etcd.log', line: 88, text: 'panic: runtime error' }],
        },
      }),
    verdict: 'PARTIAL-surface',
    cappedBy: 'red-flag',
    reason: /RF7/,
  },
  {
    name: 'release: release budget met → PASS-hardening with release annotation',
    ev: () =>
      hardeningEvidence({
        ran: { nodes: 5, durationS: 86400, topologies: ['3 nodes', '5 nodes'] },
        seeds: Array.from({ length: 30 }, (_, i) => ({ seed: i, outcome: 'pass' as const })),
        faultsScheduled: 30,
        faults: Array.from({ length: 30 }, (_, i) => ({
          ...hardeningEvidence().faults[i % 3]!,
          id: `w${i + 1}`,
        })),
      }),
    verdict: 'PASS-hardening',
  },
  {
    name: 'non-serious: skips 5–7, oracle passed under a fault → PASS-hardening',
    sc: S2,
    ev: () =>
      hardeningEvidence({
        scenario: 'S2',
        seeds: [
          { seed: 1, outcome: 'pass' },
          { seed: 2, outcome: 'pass' },
          { seed: 3, outcome: 'pass' },
        ],
        oracles: [
          {
            checker: 'slo',
            ran: true,
            valid: true,
            evidence: 'p99 212ms <= 250ms over 600s',
            opsConsumed: 60000,
            subset: 'puts only',
          },
        ],
        history: { ...measuredHistory(60000), fieldsPresent: ['op_id'] },
      }),
    verdict: 'PASS-hardening',
  },
  {
    name: 'non-serious: no fault → PASS-smoke',
    sc: S2,
    ev: () =>
      smokeEvidence({
        scenario: 'S2',
        oracles: [{ checker: 'slo', ran: true, valid: true, opsConsumed: 6000 }],
      }),
    verdict: 'PASS-smoke',
  },
  {
    name: 'non-serious: oracle undecided → INCONCLUSIVE-oracle-too-weak',
    sc: S2,
    ev: () =>
      smokeEvidence({
        scenario: 'S2',
        oracles: [{ checker: 'slo', ran: true, valid: 'unknown', opsConsumed: 0 }],
      }),
    verdict: 'INCONCLUSIVE-oracle-too-weak',
  },
];

for (const row of table) {
  test(`decision tree: ${row.name}`, (t) => {
    const d = decideVerdict(row.ev(), row.sc ?? S1);
    t.is(d.verdict, row.verdict, d.reasons.join(' | '));
    if (row.step !== undefined) t.is(d.step, row.step);
    if (row.cappedBy !== undefined) t.is(d.cappedBy, row.cappedBy);
    if (row.reason) t.regex(d.reasons.join(' | '), row.reason);
    t.true(d.reasons.length > 0);
  });
}

test('release annotation is set only when the release tier was met', (t) => {
  t.false(decideVerdict(hardeningEvidence(), S1).release);
  const release = table.find((r) => r.name.startsWith('release'))!;
  const d = decideVerdict(release.ev(), S1);
  t.is(d.tierMet, 'release');
  t.true(d.release);
});

function arm(id: string, verdict: Verdict): Decision {
  return { scenario: id, verdict, reasons: ['r'], step: 8, tierMet: 'smoke', release: false, audits: null };
}

test('arms: any NOT-RUN arm caps the parent at PARTIAL-surface', (t) => {
  const p = aggregateArms('S5', [arm('S5/api', 'PASS-hardening'), arm('S5/sdk', 'NOT-RUN')]);
  t.is(p.verdict, 'PARTIAL-surface');
  t.is(p.cappedBy, 'arms');
});

test('arms: any PARTIAL-model arm caps the parent at PARTIAL-surface', (t) => {
  t.is(
    aggregateArms('S5', [arm('S5/api', 'PASS-hardening'), arm('S5/x', 'PARTIAL-model')]).verdict,
    'PARTIAL-surface',
  );
});

test('arms: a FAIL arm makes the parent FAIL, whatever else', (t) => {
  t.is(
    aggregateArms('S5', [arm('S5/api', 'NOT-RUN'), arm('S5/x', 'FAIL-reproducible')]).verdict,
    'FAIL-reproducible',
  );
  t.is(
    aggregateArms('S5', [arm('S5/api', 'PASS-smoke'), arm('S5/x', 'FAIL-nondeterministic')]).verdict,
    'FAIL-nondeterministic',
  );
});

test('arms: all passing → the weakest pass; all NOT-RUN → NOT-RUN', (t) => {
  t.is(aggregateArms('S5', [arm('S5/a', 'PASS-hardening'), arm('S5/b', 'PASS-smoke')]).verdict, 'PASS-smoke');
  t.is(aggregateArms('S5', [arm('S5/a', 'NOT-RUN'), arm('S5/b', 'NOT-RUN')]).verdict, 'NOT-RUN');
  t.is(
    aggregateArms('S5', [arm('S5/a', 'PASS-smoke'), arm('S5/b', 'INCONCLUSIVE-env')]).verdict,
    'INCONCLUSIVE-env',
  );
});

test('session: FAIL needs a reproducer; DONE needs everything clean', (t) => {
  t.is(sessionVerdict([arm('S1', 'FAIL-reproducible'), arm('S2', 'PASS-hardening')]).verdict, 'FAIL');
  t.is(sessionVerdict([arm('S1', 'PASS-smoke'), arm('S2', 'PASS-hardening')]).verdict, 'DONE');
  t.is(sessionVerdict([arm('S1', 'PASS-smoke'), arm('S2', 'NOT-RUN')]).verdict, 'DONE_WITH_CONCERNS');
  const nd = sessionVerdict([arm('S1', 'PASS-smoke'), arm('S2', 'FAIL-nondeterministic')]);
  t.is(nd.verdict, 'DONE_WITH_CONCERNS');
  t.deepEqual(nd.nondeterministic, ['S2']);
  t.regex(nd.headline, /FAIL-nondeterministic/);
});

test('session: INCONCLUSIVE without PASS or FAIL; BLOCKED only when nothing ran', (t) => {
  t.is(sessionVerdict([arm('S1', 'PARTIAL-model'), arm('S2', 'NOT-RUN')]).verdict, 'INCONCLUSIVE');
  t.is(sessionVerdict([arm('S1', 'FAIL-nondeterministic')]).verdict, 'INCONCLUSIVE');
  t.is(sessionVerdict([arm('S1', 'NOT-RUN'), arm('S2', 'NOT-RUN')]).verdict, 'BLOCKED');
  t.is(sessionVerdict([]).verdict, 'BLOCKED');
  t.is(sessionVerdict([arm('S1', 'PASS-smoke')], 'SUT unreachable').verdict, 'BLOCKED');
});
