import { runCheckers } from '../../../checkers/compose.ts';
import { faultBands } from '../../../checkers/fault-bands.ts';
import type { CheckResult, Validity } from '../../../checkers/types.ts';
import { mergeValidity } from '../../../checkers/types.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import type { PairedHistory } from '../../core/history/operation.ts';
import type { CheckerSpec } from '../../lib/workloads/types.ts';

/**
 * Runs the declared checkers on the paired history (through the checker runner), plus two checks of the
 * run itself, so a green result never hides a workload that did nothing or a fault that never landed:
 *  - workload: unknown when no client op completed ok;
 *  - faults: unknown when a fault was injected without landing evidence (or could not be injected).
 * A checker that throws (or cannot run) gives 'unknown' with the error, never a pass.
 */
export async function runChecks(
  history: PairedHistory,
  specs: readonly CheckerSpec[],
  faults: readonly FaultRecord[] | null,
  outDir: string,
): Promise<{ valid: Validity; results: CheckResult[] }> {
  // The fault windows once, from the whole history: per-key checkers never see the nemesis ops.
  const { results } = await runCheckers(
    specs.map((s) => ({ name: s.name, options: s.options, ...(s.independent && { independent: true }) })),
    history.ops,
    { outDir, faults: faultBands(history.ops, history.events) },
    { badOptions: 'unknown' },
  );
  results.push(activityCheck(history));
  if (faults) results.push(faultCheck(faults));
  return { valid: mergeValidity(results.map((r) => r.valid)), results };
}

export function activityCheck(history: PairedHistory): CheckResult {
  let ok = 0;
  let client = 0;
  for (const op of history.ops) {
    if (op.process === 'nemesis') continue;
    client++;
    if (op.type === 'ok') ok++;
  }
  return {
    checker: 'workload',
    valid: ok > 0 ? true : 'unknown',
    evidence: `${client} client ops, ${ok} ok`,
    scope: 'Only says the workload did something; correctness is for the other checkers.',
    anomalies: [],
    stats: { opsConsumed: client, ok },
  };
}

export function faultCheck(records: readonly FaultRecord[]): CheckResult {
  const notLanded = records.filter((r) => !r.evidence?.landed);
  const unhealed = records.filter((r) => !r.healedAt);
  const valid: Validity = notLanded.length === 0 && unhealed.length === 0 ? true : 'unknown';
  return {
    checker: 'faults',
    valid,
    evidence: `${records.length} faults injected, ${records.length - notLanded.length} with landing evidence, ${records.length - unhealed.length} healed`,
    scope: 'Says whether each fault provably took effect and was undone; not whether the system handled it.',
    anomalies: [
      ...notLanded.map((r) => ({
        type: 'fault-not-proven',
        explanation: `${r.id} ${r.spec.kind}/${r.spec.action} on ${r.nodes.join(', ')}: ${r.evidence?.reason ?? 'no landing evidence'}`,
      })),
      ...unhealed.map((r) => ({ type: 'fault-not-healed', explanation: `${r.id} was never healed` })),
    ],
    stats: {
      opsConsumed: records.length,
      injected: records.length,
      landed: records.length - notLanded.length,
    },
  };
}
