import type { ResolvedScenario } from '../plan/schema.ts';
import type { FindingInput } from '../report/types.ts';
import { REDUCTION_CLASSES } from '../report/types.ts';
import type { Decision } from '../verdict/decide.ts';
import type { ScenarioEvidence } from '../verdict/evidence.ts';

/**
 * A finding (spec §6 template item 4) for each FAIL row: what the oracle saw, the reproducer and the
 * reduction, the blame class (only when the plan's own reduction plan names exactly one; otherwise
 * "Unknown — pending re-run", since no generator swap was tried) and the TaxDC type from the fault
 * kinds the reduced schedule still needs.
 */
export function findingFor(
  n: number,
  d: Decision,
  sc: ResolvedScenario,
  ev: ScenarioEvidence,
  reduction: { line: string; path: string; events: string[] } | null,
): FindingInput {
  const failed = ev.oracles.filter((o) => o.ran && o.valid === false);
  const seed = ev.seeds.find((s) => s.outcome === 'fail');
  const kinds = new Set(ev.faults.filter((f) => f.landed).map((f) => f.kind));
  const classification = kinds.has('partition')
    ? 'Partition'
    : kinds.has('process')
      ? 'Crash-recovery'
      : kinds.has('clock')
        ? 'Timing'
        : 'Ordering';
  const plannedBlame = blameFromPlan(sc.model?.reductionPlan ?? null);
  const reproducible = d.verdict === 'FAIL-reproducible';
  return {
    id: `F${n}`,
    title: `${sc.id} ${sc.name}: ${failed.map((o) => `${o.checker} found ${o.anomalies} anomal${o.anomalies === 1 ? 'y' : 'ies'}`).join(', ') || d.reasons[0] || 'violation'}`,
    scenario: sc.id,
    hypothesis: sc.scenario.closes.join(', ') || 'none cited',
    whatHappened: `${d.verdict}: ${d.reasons.join('; ')}`,
    reproducer:
      seed?.reproducer ??
      (reproducible ? 'see the reduced schedule' : 'none: an identical re-run did not reproduce it'),
    reduction: reduction?.line ?? null,
    reductionClassification: plannedBlame ?? 'Unknown — pending re-run on alternative harness/host',
    classification,
    tags: sc.categories.includes('safety') ? ['Safety'] : [],
    severity: sc.categories.some((c) => ['safety', 'durability', 'isolation'].includes(c)) ? 'P0' : 'P2',
    evidence: [
      ...failed.map((o) => `${o.evidence} (${o.anomalyTypes.join(', ') || 'anomaly'})`),
      ...ev.artifacts.filter((a) => a.label === 'history').map((a) => `history: ${a.path}`),
      ...(reduction
        ? [`reduced schedule: ${reduction.path} (events ${reduction.events.join(', ') || 'none'})`]
        : []),
    ].join('; '),
    rootCause: plannedBlame
      ? `as the plan's reduction plan states: ${sc.model?.reductionPlan ?? ''}`
      : 'unknown: not yet classified',
    nextAction: reproducible
      ? 'file it with the reduced schedule; confirm the blame class with a generator swap'
      : 'hand to DST or a longer statistical run; do not file as reproducible',
  };
}

/** The blame class a §7.M reduction plan names, when it names exactly one ("blame class SUT"). */
function blameFromPlan(text: string | null): FindingInput['reductionClassification'] | null {
  if (!text) return null;
  const m = /blame class\s+(SUT|harness|checker|environment)\b(?!\s*\/)/i.exec(text);
  if (!m) return null;
  const want = (m[1] as string).toLowerCase();
  return REDUCTION_CLASSES.find((c) => c.toLowerCase() === want) ?? null;
}
