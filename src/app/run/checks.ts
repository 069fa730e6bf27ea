import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { faultBands } from '../../../checkers/fault-bands.ts';
import { findChecker, type LoadedChecker } from '../../../checkers/registry.ts';
import type { CheckContext, Checker, CheckResult, Validity } from '../../../checkers/types.ts';
import { mergeValidity } from '../../../checkers/types.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import type { Operation, PairedHistory } from '../../core/history/operation.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { CheckerSpec } from '../../lib/workloads/types.ts';

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
  // The fault windows once, from the whole history: per-key checkers never see the nemesis ops.
  const ctx: CheckContext = { outDir, faults: faultBands(history.ops, history.events) };
  for (const spec of specs)
    results.push(
      spec.independent ? await runPerKey(history, spec, ctx) : await runOne(history.ops, spec, ctx),
    );
  results.push(activityCheck(history));
  if (faults) results.push(faultCheck(faults));
  return { valid: mergeValidity(results.map((r) => r.valid)), results };
}

/** Checkers the runner needs that may not be listed in the registry yet: loaded from their own module. */
const DIRECT: Record<string, () => Promise<LoadedChecker>> = {
  linearizable: async () => {
    const m = await import('../../../checkers/linearizability/index.ts');
    return { checker: m.linearizabilityChecker as Checker<never>, schema: m.linearizabilityOptionsSchema };
  },
};

async function runOne(ops: readonly Operation[], spec: CheckerSpec, ctx: CheckContext): Promise<CheckResult> {
  const direct = DIRECT[spec.name];
  const entry =
    findChecker(spec.name) ?? (direct ? { name: spec.name, summary: '', load: direct } : undefined);
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
    return await loaded.checker.check(ops, options as never, ctx);
  } catch (err) {
    return fail(errorMessage(err));
  }
}

/**
 * Jepsen's independent checker: the client ops of each key checked on their own (renumbered densely, as
 * checkers expect), results merged: false beats unknown beats true. Anomalies carry their key; their ops
 * are event indices, the same in the key's ops as in the whole history. Artifacts go to
 * <outDir>/independent/<key>/.
 */
async function runPerKey(history: PairedHistory, spec: CheckerSpec, ctx: CheckContext): Promise<CheckResult> {
  const byKey = new Map<string, Operation[]>();
  for (const op of history.ops) {
    if (op.process === 'nemesis') continue;
    const k = op.key ?? '';
    let list = byKey.get(k);
    if (!list) {
      list = [];
      byKey.set(k, list);
    }
    list.push(op);
  }
  const perKey: { key: string; r: CheckResult }[] = [];
  for (const [key, ops] of byKey) {
    const renumbered = ops.map((o, i) => ({ ...o, id: i }));
    const dir = join(ctx.outDir as string, 'independent', key.replace(/[^A-Za-z0-9_.-]/g, '_') || '_');
    mkdirSync(dir, { recursive: true });
    perKey.push({ key, r: await runOne(renumbered, spec, { ...ctx, outDir: dir, key }) });
  }
  const valid = mergeValidity(perKey.map((p) => p.r.valid));
  const bad = perKey.filter((p) => p.r.valid === false);
  const unknown = perKey.filter((p) => p.r.valid === 'unknown');
  const first = bad[0] ?? unknown[0];
  return {
    checker: spec.name,
    valid,
    evidence:
      `${spec.name} per key: ${perKey.length} keys, ${history.ops.length} ops, ${bad.length} invalid, ${unknown.length} unknown` +
      (first ? `; key ${first.key}: ${first.r.evidence}` : ''),
    scope:
      `${perKey[0]?.r.scope ?? ''} Keys are checked independently: anomalies that span keys are invisible.`.trim(),
    anomalies: perKey.flatMap((p) => p.r.anomalies.map((a) => ({ ...a, key: p.key }))),
    stats: {
      opsConsumed: perKey.reduce((n, p) => n + p.r.stats.opsConsumed, 0),
      keys: perKey.length,
      invalidKeys: bad.map((p) => p.key),
      unknownKeys: unknown.map((p) => p.key),
    },
    ...(first?.r.error && { error: `key ${first.key}: ${first.r.error}` }),
    artifacts: perKey.flatMap((p) => p.r.artifacts ?? []),
  };
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
