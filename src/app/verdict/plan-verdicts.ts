import { type ExpectationEnv, isNegativeControl, judge, judgeParent } from '../plan/expectation.ts';
import type { Plan, ResolvedScenario } from '../plan/schema.ts';
import { aggregateArms, type SessionOutcome, sessionVerdict } from './aggregate.ts';
import type { AuditContext } from './audits.ts';
import { type Decision, decideVerdict } from './decide.ts';
import { parseEvidence, type ScenarioEvidence } from './evidence.ts';

/**
 * Verdicts for a whole plan: one decision per scenario and per arm (in plan order, parent before its
 * arms), the parent rows aggregated from their arms, and the session verdict over the top-level rows.
 * A scenario or arm with no evidence record was not attempted: NOT-RUN. Each row declaring an expected
 * verdict is judged against it on this cluster (`env`); the session verdict counts a met expectation as
 * a success and an unmet one as a failure.
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
  env: ExpectationEnv = { sharedClock: null },
): PlanVerdicts {
  const byId = new Map(evidence.map((e) => [e.scenario, e]));
  const rows: Decision[] = [];
  const topLevel: Decision[] = [];
  const decideRow = (id: string, r: ResolvedScenario, ctx: AuditContext = {}) => {
    const ev = byId.get(id);
    return ev
      ? decideVerdict(ev, r, ctx)
      : decideVerdict(
          parseEvidence({
            scenario: id,
            attempted: false,
            notRunReason: r.binding ? 'no evidence record: not attempted' : 'no executable binding',
          }),
          r,
        );
  };
  // The negative controls first: every other row's WO13 audit reads what they ended as.
  const negativeControls = plan.resolved
    .filter((r) => isNegativeControl(r.expected) && !hasArms(plan, r.id))
    .map((r) => ({ id: r.id, verdict: decideRow(r.id, r).verdict }));
  for (const sc of plan.resolved) {
    if (sc.parentId !== null) continue;
    const armScs = plan.resolved.filter((r) => r.parentId === sc.id);
    const decide = (id: string, r: typeof sc) =>
      withExpectation(decideRow(id, r, { negativeControls }), r.expected, env);
    if (armScs.length === 0) {
      const d = decide(sc.id, sc);
      rows.push(d);
      topLevel.push(d);
      continue;
    }
    const arms = armScs.map((a) => decide(a.id, a));
    const parent = withExpectation(aggregateArms(sc.id, arms), sc.expected, env);
    if (!parent.expectation) {
      const derived = judgeParent(arms);
      if (derived) parent.expectation = derived;
    }
    rows.push(parent, ...arms);
    topLevel.push(parent);
  }
  return { rows, topLevel, session: sessionVerdict(topLevel, blocked) };
}

function hasArms(plan: Plan, id: string): boolean {
  return plan.resolved.some((r) => r.parentId === id);
}

function withExpectation(d: Decision, e: Parameters<typeof judge>[1], env: ExpectationEnv): Decision {
  if (env.unselected?.has(d.scenario)) return d;
  const j = judge(d.verdict, e, env);
  return j ? { ...d, expectation: j } : d;
}
