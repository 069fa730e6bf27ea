import { parsePlanText } from '../../src/app/plan/load.ts';
import type { ResolvedScenario } from '../../src/app/plan/schema.ts';
import {
  parseEvidence,
  type ScenarioEvidence,
  type ScenarioEvidenceInput,
} from '../../src/app/verdict/evidence.ts';

/**
 * Builders for verdict tests: a serious scenario and a non-serious one taken from a small real plan,
 * and an evidence record that earns PASS-hardening, which each test then breaks in one way.
 */
const plan = parsePlanText(
  `# Test Plan: verdicts

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | registers are linearizable | safety | docs | no |
| C2 | p99 under 250ms | performance-SLO | slo | no |
| C3 | tenants are isolated | boundary | docs | no |

## 7. Scenarios

### Scenario S1: linearizable_register_under_partition

- Falsifies if it FAILs: C1
- Oracle: linearizability per key
- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed
- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds
- Release budget: 5 nodes × 24h × 30 faults × 30 seeds

#### §7.M — Model / history / checker discipline

- Model under test: register
- Operation history: 11 fields
- Checker: linearizable
- Nemesis + landing evidence: iptables counter 0→N and client timeouts
- Ambiguous outcomes: default
- Reduction plan: minimise

### Scenario S2: put_p99_under_slo

- Falsifies if it FAILs: C2
- Oracle: p99 <= 250ms
- Smoke budget: 3 nodes × 60s × 0 faults × 1 seed
- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds
- Release budget: not provided — no lab. Revisit when: lab exists.

§7.M: not applicable (no gated claim category falsified)

### Scenario S3: tenant_isolation

- Falsifies if it FAILs: C3
- Oracle: invariant: no cross-tenant read
- Smoke budget: 2 tenants × 60s × 0 faults × 1 seed
- Hardening budget: 4 tenants × 10min × 3 faults × 3 seeds
- Release budget: not provided — no lab. Revisit when: lab exists.

#### §7.M.S — Surface decomposition

- Scenario arms: S3/api, S3/admin
`,
  'verdicts.md',
);

export function scenario(id: string): ResolvedScenario {
  const r = plan.resolved.find((x) => x.id === id);
  if (!r) throw new Error(`no scenario ${id}`);
  return r;
}
export const testPlan = plan;

function fault(id: string, startS: number, topology = 'majorities-ring') {
  return {
    id,
    kind: 'partition',
    topology,
    startS,
    endS: startS + 20,
    landed: true,
    healed: true,
    signals: [
      {
        side: 'injector' as const,
        node: 'n1',
        signal: 'FAULTLINE DROP packets',
        before: 0,
        during: 14712,
        landed: true,
      },
      {
        side: 'victim' as const,
        node: 'n3',
        signal: 'client RPC timeouts/s',
        before: 0,
        during: 142,
        landed: true,
      },
    ],
  };
}

/** Evidence for S1 that earns PASS-hardening: every fact present, every audit item checked. */
export function hardeningEvidence(over: Partial<ScenarioEvidenceInput> = {}): ScenarioEvidence {
  const windows = Array.from({ length: 60 }, (_, i) => ({
    startS: i * 10,
    endS: (i + 1) * 10,
    ops: i % 20 === 1 ? 400 : 1000,
    faultActive: i % 20 === 1,
  }));
  return parseEvidence({
    scenario: 'S1',
    attempted: true,
    ran: { nodes: 5, durationS: 600, topologies: ['5 nodes', '3 nodes'] },
    seeds: [
      { seed: 1, outcome: 'pass' },
      { seed: 2, outcome: 'pass' },
      { seed: 3, outcome: 'pass' },
    ],
    faultsScheduled: 3,
    faults: [fault('w1', 10), fault('w2', 210, 'asymmetric'), fault('w3', 410)],
    oracles: [
      {
        checker: 'linearizable',
        ran: true,
        valid: true,
        evidence: 'linearizable: 60,000 ops over 5 keys, 0 anomalies',
        scope: 'cannot see anomalies outside single keys',
        opsConsumed: 60000,
      },
    ],
    history: measuredHistory(60000),
    intendedOpsPerSec: 100,
    throughput: windows,
    recovery: { baselineOpsPerSec: 100, afterHealOpsPerSec: 98, measuredAfterS: 10 },
    sutLog: { filesScanned: 5, matches: [] },
    failovers: null,
    ...over,
  });
}

/** Evidence for a run with no fault: a smoke run. */
export function smokeEvidence(over: Partial<ScenarioEvidenceInput> = {}): ScenarioEvidence {
  return hardeningEvidence({
    ran: { nodes: 3, durationS: 60, topologies: ['3 nodes'] },
    seeds: [{ seed: 1, outcome: 'pass' }],
    faultsScheduled: 0,
    faults: [],
    oracles: [{ checker: 'linearizable', ran: true, valid: true, evidence: 'ok', opsConsumed: 6000 }],
    history: measuredHistory(6000),
    throughput: Array.from({ length: 6 }, (_, i) => ({
      startS: i * 10,
      endS: (i + 1) * 10,
      ops: 1000,
      faultActive: false,
    })),
    recovery: null,
    ...over,
  });
}

/**
 * History facts as a real run measures them: the recorder's clock readings (clock.json), the
 * timeouts read from the history, and the client's wire count (wire.json), one request per op.
 */
export function measuredHistory(ops: number, over: Record<string, unknown> = {}) {
  return {
    ops,
    clock: 'monotonic' as const,
    clockReadings: {
      source: { kind: 'monotonic' as const, api: 'process.hrtime.bigint' },
      readings: ops * 3,
      regressions: 0,
      spanS: 600,
      wallDriftMs: 2,
      wallJumps: [],
    },
    timeouts: { count: 12, withCompletion: 0 },
    wire: { requests: ops, perOp: 1, what: 'HTTP requests' },
    ...over,
  };
}
