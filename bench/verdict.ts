/**
 * `npm run bench:verdict [-- --ops N] [--json]`
 *
 * Cost of turning a run into evidence and a verdict: throughput windows and history facts over a
 * history of N client ops (default 1M) with 20 fault windows, then the decision tree and audits. Prints
 * seconds per stage. Target: evidence extraction well under the checkers' ≤ 2 s per 1M ops, so it never
 * dominates a run's post-processing.
 */

import { parsePlanText } from '../src/app/plan/load.ts';
import { decideVerdict } from '../src/app/verdict/decide.ts';
import { parseEvidence } from '../src/app/verdict/evidence.ts';
import { historyFacts, recoveryAfterHeal, throughputWindows } from '../src/app/verdict/measure.ts';
import type { Operation } from '../src/core/history/operation.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const n = Number(arg('--ops') ?? 1_000_000);
const durationS = 600;
const faults = Array.from({ length: 20 }, (_, i) => ({
  id: `w${i + 1}`,
  startS: 20 + i * 28,
  endS: 30 + i * 28,
}));

function generate(): Operation[] {
  const ops: Operation[] = new Array(n);
  const step = (durationS * 1e9) / n;
  for (let i = 0; i < n; i++) {
    const t = i * step;
    const s = t / 1e9;
    const epoch = faults.find((f) => s >= f.startS && s < f.endS);
    ops[i] = {
      id: i,
      process: i % 50,
      f: i % 3 === 0 ? 'read' : 'write',
      type: 'ok',
      input: i,
      output: null,
      invokeIndex: 2 * i,
      completeIndex: 2 * i + 1,
      invokeTime: t,
      completeTime: t + step / 2,
      node: `n${(i % 5) + 1}`,
      key: `k${i % 10}`,
      error: undefined,
      faultEpoch: epoch ? [epoch.id] : null,
      infoTime: null,
    };
  }
  return ops;
}

const plan = parsePlanText(
  `# Test Plan: bench\n\n## 1b. Claims under test\n\n| ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n| C1 | c | safety | s | no |\n\n## 7. Scenarios\n\n### Scenario S1: a\n\n- Falsifies if it FAILs: C1\n- Oracle: linearizable\n- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed\n- Hardening budget: 5 nodes × 10min × 20 faults × 3 seeds\n- Release budget: not provided — x. Revisit when: y.\n\n#### §7.M\n\n- Model under test: register\n- Operation history: 11\n- Checker: linearizable\n- Nemesis + landing evidence: counter\n- Ambiguous outcomes: default\n- Reduction plan: minimise\n`,
  'bench.md',
);

const ops = generate();
const t0 = performance.now();
const windows = throughputWindows(ops, { windowS: 1, durationS, faults });
const t1 = performance.now();
const facts = historyFacts(ops, faults);
const t2 = performance.now();
const recovery = recoveryAfterHeal(ops, windows, faults, { endS: durationS });
const evidence = parseEvidence({
  scenario: 'S1',
  attempted: true,
  ran: { nodes: 5, durationS, topologies: ['5 nodes', '3 nodes'] },
  seeds: [1, 2, 3].map((seed) => ({ seed, outcome: 'pass' as const })),
  faultsScheduled: faults.length,
  faults: faults.map((f) => ({
    ...f,
    kind: 'partition',
    topology: 'asymmetric',
    landed: true,
    healed: true,
    signals: [
      { side: 'injector' as const, node: 'n1', signal: 'drops', landed: true },
      { side: 'victim' as const, node: 'n2', signal: 'timeouts', landed: true },
    ],
  })),
  oracles: [{ checker: 'linearizable', ran: true, valid: true, opsConsumed: facts.ops }],
  history: { ...facts, hiddenRetries: false },
  throughput: windows,
  recovery,
  sutLog: { filesScanned: 5, matches: [] },
});
const t3 = performance.now();
const d = decideVerdict(evidence, plan.resolved[0]!);
const t4 = performance.now();

const result = {
  ops: n,
  throughputWindowsS: (t1 - t0) / 1000,
  historyFactsS: (t2 - t1) / 1000,
  decideVerdictS: (t4 - t3) / 1000,
  verdict: d.verdict,
  peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
};
if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
else {
  process.stdout.write(
    `${n.toLocaleString('en-US')} ops: throughputWindows ${result.throughputWindowsS.toFixed(3)}s, historyFacts ${result.historyFactsS.toFixed(3)}s, decideVerdict+audits ${(result.decideVerdictS * 1000).toFixed(2)}ms → ${d.verdict}, peak RSS ${result.peakRssMb} MB\n`,
  );
}
