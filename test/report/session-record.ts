import { fileURLToPath } from 'node:url';
import { loadPlan } from '../../src/app/plan/load.ts';
import type { SessionRecord } from '../../src/app/report/types.ts';
import { findingSchema } from '../../src/app/report/types.ts';
import { decidePlan } from '../../src/app/verdict/plan-verdicts.ts';
import { hardeningEvidence, smokeEvidence } from '../verdict/evidence-builders.ts';

export const completePlan = fileURLToPath(new URL('../plan/fixtures/complete.md', import.meta.url));

/** S2's FAIL headline, as the run would have built it. */
export const SAMPLE_HEADLINE =
  'On key x, acknowledged add of 7 (op 812, process 3 on n2, 5.10–5.20 s, during w1: n2 isolated from n1 n3 n4 n5) is missing from the final state read by op 1203 (process 1 on n1, ok at 30.10 s).';

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
          headline: SAMPLE_HEADLINE,
          focus: { op: 812, related: [1203], key: 'x', page: 'independent/x/page.html' },
          pages: [
            { key: 'x', valid: false, path: 'independent/x/page.html' },
            { key: 'y', valid: true, path: 'independent/y/page.html' },
          ],
        },
      ],
      faults: [
        {
          id: 'w1',
          kind: 'partition',
          topology: 'one',
          what: 'n2 isolated from n1 n3 n4 n5',
          nodes: ['n2', 'n1', 'n3', 'n4', 'n5'],
          startS: 4,
          endS: 10.5,
          landed: true,
          signals: [
            {
              side: 'injector',
              node: 'n2',
              signal: 'FAULTLINE DROP packets',
              before: 0,
              during: 23,
              landed: true,
            },
            { side: 'victim', node: 'n1', signal: 'tcp connect n1→n2:22', landed: true },
          ],
          healed: true,
        },
      ],
      runDir: 'artifacts/S2/01-run',
      artifacts: [
        { label: 'history', path: 'artifacts/S2/01-run/history.jsonl' },
        { label: 'timeline.html', path: 'artifacts/S2/01-run/timeline.html' },
        { label: 'latency.svg', path: 'artifacts/S2/01-run/latency.svg' },
      ],
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
