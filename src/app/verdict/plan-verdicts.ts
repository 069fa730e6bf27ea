import type { Plan } from '../plan/schema.ts';
import { aggregateArms, type SessionOutcome, sessionVerdict } from './aggregate.ts';
import { type Decision, decideVerdict } from './decide.ts';
import { parseEvidence, type ScenarioEvidence } from './evidence.ts';

/**
 * Verdicts for a whole plan: one decision per scenario and per arm (in plan order, parent before its
 * arms), the parent rows aggregated from their arms, and the session verdict over the top-level rows.
 * A scenario or arm with no evidence record was not attempted: NOT-RUN.
 */
export interface PlanVerdicts {
  /** Every row: `S1`, `S5`, `S5/api`, … */
  rows: Decision[];
  /** Rows without a parent: what the session verdict is decided on. */
  topLevel: Decision[];
  session: SessionOutcome;
}

export function decidePlan(
  plan: Plan,
  evidence: readonly ScenarioEvidence[],
  blocked?: string,
): PlanVerdicts {
  const byId = new Map(evidence.map((e) => [e.scenario, e]));
  const rows: Decision[] = [];
  const topLevel: Decision[] = [];
  for (const sc of plan.resolved) {
    if (sc.parentId !== null) continue;
    const armScs = plan.resolved.filter((r) => r.parentId === sc.id);
    const decide = (id: string, r: typeof sc) => {
      const ev = byId.get(id);
      return ev
        ? decideVerdict(ev, r)
        : decideVerdict(
            parseEvidence({
              scenario: id,
              attempted: false,
              notRunReason: r.binding ? 'no evidence record: not attempted' : 'no executable binding',
            }),
            r,
          );
    };
    if (armScs.length === 0) {
      const d = decide(sc.id, sc);
      rows.push(d);
      topLevel.push(d);
      continue;
    }
    const arms = armScs.map((a) => decide(a.id, a));
    const parent = aggregateArms(sc.id, arms);
    rows.push(parent, ...arms);
    topLevel.push(parent);
  }
  return { rows, topLevel, session: sessionVerdict(topLevel, blocked) };
}
