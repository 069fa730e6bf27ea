import type { Plan } from '../plan/schema.ts';

/**
 * Step 2 of the decision tree, before a run: the gap between the plan's §6b environment requirements
 * and what the capability probe found. A requirement counts for a scenario when §6b lists the scenario
 * (or, for an arm, its parent) under "Used by scenarios"; requirements the SUT brings up itself are
 * the SUT's to provide and never make a scenario INCONCLUSIVE-env.
 */
export interface ProbedCapability {
  requirement: string;
  present: boolean;
  /** How it was detected, or why it is missing (install hint, substitute refused …). */
  source?: string;
}

export function capabilitiesMissingFor(
  plan: Plan,
  scenarioId: string,
  probed: readonly ProbedCapability[],
): { name: string; reason: string }[] {
  const parent = scenarioId.split('/')[0]!;
  const found = new Map(probed.map((p) => [p.requirement.trim().toLowerCase(), p]));
  const out: { name: string; reason: string }[] = [];
  for (const req of plan.environment) {
    if (req.broughtUpBySut) continue;
    if (!req.usedBy.includes(scenarioId) && !req.usedBy.includes(parent)) continue;
    const p = found.get(req.requirement.trim().toLowerCase());
    if (!p)
      out.push({
        name: req.requirement,
        reason: `not probed${req.installHint ? `; install: ${req.installHint}` : ''}`,
      });
    else if (!p.present) {
      out.push({
        name: req.requirement,
        reason: p.source ?? (req.installHint ? `install: ${req.installHint}` : 'missing'),
      });
    }
  }
  return out;
}
