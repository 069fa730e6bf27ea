import { fileURLToPath } from 'node:url';
import { loadPlan } from '../../src/app/plan/load.ts';
import type { SessionRecord } from '../../src/app/report/types.ts';
import { findingSchema } from '../../src/app/report/types.ts';
import { decidePlan } from '../../src/app/verdict/plan-verdicts.ts';
import { hardeningEvidence, smokeEvidence } from '../verdict/evidence-builders.ts';

export const completePlan = fileURLToPath(new URL('../plan/fixtures/complete.md', import.meta.url));

/**
 * A session over test/plan/fixtures/complete.md: S1 passes under faults, S2 fails reproducibly,
 * S3/api passes a smoke run while S3/watch and S3/snapshot never ran, S4 has no binding (NOT-RUN).
 */
export async function sampleSession(sessionDir: string): Promise<SessionRecord> {
  const plan = await loadPlan(completePlan);
  const evidence = [
    hardeningEvidence({ scenario: 'S1', startedAt: '2026-11-30T03:00:00Z', endedAt: '2026-11-30T03:10:00Z' }),
    hardeningEvidence({
      scenario: 'S2',
      seeds: [
        {
          seed: 42,
          outcome: 'fail',
          rerun: 'reproduced',
          reproducer: 'faultline run plan.md --scenario S2 --seed 42',
        },
      ],
      oracles: [
        {
          checker: 'no-lost-ack',
          ran: true,
          valid: false,
          evidence: 'no-lost-ack: 5,000 acked adds, 3 lost',
          anomalies: 3,
          opsConsumed: 5000,
        },
      ],
      artifacts: [{ label: 'history', path: 'artifacts/S2/history.jsonl' }],
    }),
    smokeEvidence({
      scenario: 'S3/api',
      ran: { tenants: 2, durationS: 60, topologies: [] },
      oracles: [
        {
          checker: 'set',
          ran: true,
          valid: true,
          evidence: 'invariant: 600 reads, 0 cross-tenant keys',
          opsConsumed: 6000,
        },
      ],
      history: {
        ops: 6000,
        fieldsPresent: ['invoke_ts/complete_ts', 'timeout_marker', 'key', 'node_seen'],
        hiddenRetries: false,
      },
    }),
  ];
  const verdicts = decidePlan(plan, evidence);
  return {
    plan,
    startedAt: '2026-11-30T03:00:00.000Z',
    sessionDir,
    commit: 'abc1234',
    operator: 'ci',
    toolbox: [{ path: 'scripts/chaos.sh', role: 'fault wiring' }],
    capabilities: [
      { requirement: 'iptables', present: true, version: '1.8.9', source: 'which iptables' },
      { requirement: 'etcd', present: true, version: '3.4.23', source: 'brought up by SUT' },
    ],
    preconditions: {
      clusterUp: true,
      observabilityLive: true,
      baselineCaptured: false,
      faultPlaneResponsive: true,
    },
    timeline: [
      { time: '2026-11-30T03:00:01Z', scenario: 'S1', event: 'start', notes: 'seed 1' },
      {
        time: '2026-11-30T03:00:11Z',
        scenario: 'S1',
        event: 'fault injected: partition',
        notes: 'majorities-ring',
      },
      { time: '2026-11-30T03:10:00Z', scenario: 'S1', event: 'oracle: valid', notes: '60,000 ops' },
    ],
    evidence,
    verdicts,
    findings: [
      findingSchema.parse({
        id: 'F1',
        title: 'Acked adds lost after leader kill',
        scenario: 'S2',
        hypothesis: 'H2',
        whatHappened: '3 acknowledged adds were missing from the final read',
        reproducer: 'faultline run plan.md --scenario S2 --seed 42',
        reduction: '40→3 events over 12 re-runs',
        reductionClassification: 'SUT',
        classification: 'Crash-recovery',
        tags: ['Durability'],
        severity: 'P0',
        evidence: 'artifacts/S2/history.jsonl ops 812, 907, 1203',
        nextAction: 'file upstream with the reduced history',
      }),
    ],
    artifacts: [{ label: 'S2 history', path: 'artifacts/S2/history.jsonl' }],
  };
}
