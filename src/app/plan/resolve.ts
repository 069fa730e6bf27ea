import { isPathName, pathName } from '../../core/util/paths.ts';
import { armBinding, type Binding, type Tier } from './binding.ts';
import { parseBudget, parseReleaseDisclosure, toTier } from './budget.ts';
import { type Expectation, parseExpectation } from './expectation.ts';
import {
  GATED_CATEGORIES,
  type Plan,
  type PlanData,
  type ResolvedScenario,
  type Scenario,
  type ScenarioTiers,
  SURFACE_CATEGORIES,
} from './schema.ts';

/**
 * Derived facts about each scenario and arm: the claim categories it falsifies (which decide whether
 * §7.M and §7.M.S apply), its budget tiers as numbers, and the binding each arm runs with.
 */

export function categoriesOf(plan: PlanData, s: Scenario): string[] {
  const cats = new Set<string>();
  for (const id of s.falsifies) {
    const c = plan.claims.find((x) => x.id === id);
    if (c) cats.add(normaliseCategory(c.category));
  }
  return [...cats];
}

export function normaliseCategory(c: string): string {
  const t = c.replace(/[`*]/g, '').trim().toLowerCase();
  return t === 'performance-slo' || t === 'performance slo' || t === 'perf' ? 'performance-SLO' : t;
}

/** Older templates put the tiers in `Exit criteria:` ("Smoke: 3 nodes × 60s …; Hardening: …"). */
function fromExitCriteria(exit: string | null, tier: 'smoke' | 'hardening'): string | null {
  if (!exit) return null;
  const m = exit.match(new RegExp(`${tier}\\s*(?:budget)?\\s*[:=—–-]\\s*([^;\\n]+)`, 'i'));
  return m ? m[1]!.trim() : null;
}

export function budgetText(s: Scenario, tier: 'smoke' | 'hardening'): string | null {
  const v = tier === 'smoke' ? s.smokeBudget : s.hardeningBudget;
  return v ?? fromExitCriteria(s.exitCriteria, tier);
}

export function tiersOf(s: Scenario, binding: Binding | null): ScenarioTiers {
  const parsed = (raw: string | null): Tier | null => (raw ? toTier(parseBudget(raw)) : null);
  const disclosure = s.releaseBudget ? parseReleaseDisclosure(s.releaseBudget) : null;
  const hardening = binding?.tiers.hardening ?? parsed(budgetText(s, 'hardening'));
  return {
    smoke: binding?.tiers.smoke ?? parsed(budgetText(s, 'smoke')),
    hardening,
    release:
      binding?.tiers.release ??
      (disclosure === null && s.releaseBudget ? releaseTier(s.releaseBudget, hardening) : null),
    releaseDisclosure: disclosure === 'malformed' ? null : disclosure,
  };
}

/**
 * A release gate is hardening plus more ("24h soak × 30 seeds × 5 nemesis variants"): dimensions it does
 * not restate are inherited from the hardening tier, never weakened below it.
 */
function releaseTier(raw: string, hardening: Tier | null): Tier | null {
  const b = parseBudget(raw);
  if (!hardening) return toTier(b);
  const size = b.nodes ?? b.tenants;
  const t: Tier = {
    durationS: Math.max(b.durationS ?? 0, hardening.durationS),
    faultWindows: Math.max(b.faultWindows ?? 0, hardening.faultWindows),
    seeds: Math.max(b.seeds ?? 0, hardening.seeds),
  };
  if (hardening.nodes !== undefined) t.nodes = Math.max(b.nodes ?? size ?? 0, hardening.nodes);
  else t.tenants = Math.max(b.tenants ?? size ?? 0, hardening.tenants ?? 0);
  return t;
}

export function resolveScenarios(plan: PlanData): ResolvedScenario[] {
  const out: ResolvedScenario[] = [];
  for (const s of plan.scenarios) {
    const categories = categoriesOf(plan, s);
    const tiers = tiersOf(s, s.binding);
    out.push({
      id: s.id,
      name: s.name,
      parentId: null,
      scenario: s,
      arm: null,
      categories,
      serious: categories.some((c) => GATED_CATEGORIES.has(c)),
      surfaceGated: categories.some((c) => SURFACE_CATEGORIES.has(c)),
      oracle: s.oracle,
      expected: expectationOf(s.expectedVerdict ?? impliedExpectation(s.technique)),
      model: typeof s.model === 'object' ? s.model : null,
      tiers,
      binding: s.binding,
    });
    for (const arm of s.arms) {
      const binding = s.binding ? armBinding(s.binding, arm.surface) : null;
      out.push({
        id: arm.id,
        name: `${s.name} (${arm.surface})`,
        parentId: s.id,
        scenario: s,
        arm,
        categories,
        // Every §7.M.S arm carries its own §7.M: arms are judged like serious scenarios.
        serious: true,
        surfaceGated: false,
        oracle: arm.oracle ?? s.oracle,
        expected: expectationOf(arm.expectedVerdict),
        model: arm.model,
        tiers: binding && binding !== s.binding ? tiersOf(s, binding) : tiers,
        binding,
      });
    }
  }
  return out;
}

/**
 * A scenario whose `Technique:` names it a negative control (spec §7: "negative control (a known-unsafe
 * configuration the oracle must catch)") is expected to FAIL even when it declares no `Expected
 * verdict:`: the oracle catching the violation is its success. Its implied expectation is the one the
 * plans spell out for their negative controls, `FAIL-reproducible`.
 */
export const IMPLIED_NEGATIVE_CONTROL = 'FAIL-reproducible (implied: Technique: negative control)';

export function impliedExpectation(technique: string | null): string | null {
  return technique && /^\W*negative[ -]control\b/i.test(technique) ? IMPLIED_NEGATIVE_CONTROL : null;
}

/** A malformed expectation resolves to none; `checkPlan` reports it as an error (the plan must not run). */
function expectationOf(text: string | null): Expectation | null {
  if (!text) return null;
  const r = parseExpectation(text);
  return 'expectation' in r ? r.expectation : null;
}

export function findResolved(plan: Plan, id: string): ResolvedScenario | undefined {
  return plan.resolved.find((r) => r.id === id);
}

/** A scenario's directory under the session (`S1/a` → `S1-a`), refused unless it is a path name. */
export function scenarioDirName(id: string): string {
  return pathName('scenario', id.replace(/\//g, '-'));
}

export function isScenarioDirName(id: string): boolean {
  return isPathName(id.replace(/\//g, '-'));
}
