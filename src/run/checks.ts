import { findChecker } from '../../checkers/registry.ts';
import type { CheckResult, Validity } from '../../checkers/types.ts';
import { mergeValidity } from '../../checkers/types.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import type { PairedHistory } from '../history/operation.ts';
import { errorMessage } from '../util/errors.ts';
import type { CheckerSpec } from '../workload/types.ts';

/**
 * Runs a workload's checkers on the paired history, plus two checks of the run itself, so a green
 * result never hides a workload that did nothing or a fault that never landed:
 *  - workload: unknown when no client op completed ok;
 *  - faults: unknown when a fault was injected without landing evidence (or could not be injected).
 * A checker that throws (or is not available) gives 'unknown' with the error, never a pass.
 */
export async function runChecks(
  history: PairedHistory,
  specs: readonly CheckerSpec[],
  faults: readonly FaultRecord[] | null,
  outDir: string,
): Promise<{ valid: Validity; results: CheckResult[] }> {
  const results: CheckResult[] = [];
  for (const spec of specs) results.push(await runOne(history, spec, outDir));
  results.push(activityCheck(history));
  if (faults) results.push(faultCheck(faults));
  return { valid: mergeValidity(results.map((r) => r.valid)), results };
}

async function runOne(history: PairedHistory, spec: CheckerSpec, outDir: string): Promise<CheckResult> {
  const entry = findChecker(spec.name);
  const fail = (error: string): CheckResult => ({
    checker: spec.name,
    valid: 'unknown',
    evidence: `not run: ${error}`,
    scope: 'nothing was checked',
    anomalies: [],
    stats: { opsConsumed: 0 },
    error,
  });
  if (!entry) return fail(`checker "${spec.name}" is not available in this build`);
  try {
    const loaded = await entry.load();
    let options: unknown = spec.options;
    if (loaded.schema) {
      const parsed = loaded.schema.safeParse(spec.options);
      if (!parsed.success) return fail(`options: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      options = parsed.data;
    }
    return await loaded.checker.check(history.ops, options as never, { outDir });
  } catch (err) {
    return fail(errorMessage(err));
  }
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
