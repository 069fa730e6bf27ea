import type { Tier } from '../plan/binding.ts';
import { type BudgetDimension, shortfall, TENANTS_UNMEASURED } from '../plan/budget.ts';
import type { ScenarioTiers } from '../plan/schema.ts';
import type { TierMet } from '../plan/verdict-states.ts';
import type { ScenarioEvidence } from './evidence.ts';
import { seedViews } from './seeds.ts';

/**
 * The budget tier a run actually met: config size, duration, landed fault windows and seeds, each
 * compared with the tier's number. A fault that did not land does not count toward the fault budget.
 */

export function tierRan(ev: ScenarioEvidence, like: Tier | null): Tier {
  const seeds = ev.seeds.filter((s) => s.outcome !== 'unknown').length;
  // Every seed must meet the budget: the shortest seed's duration, the fewest landed windows of any seed.
  const views = seedViews(ev);
  const t: Tier = {
    durationS: Math.min(...views.map((v) => v.ev.ran.durationS)),
    faultWindows: Math.min(...views.map((v) => v.ev.faults.filter((f) => f.landed).length)),
    seeds,
  };
  if (like?.tenants !== undefined) t.tenants = ev.ran.tenants ?? 0;
  else t.nodes = ev.ran.nodes ?? 0;
  return t;
}

export interface TierAssessment {
  met: TierMet;
  /** For each declared tier, the dimensions that fell short (empty = met). */
  shortfalls: Partial<Record<'smoke' | 'hardening' | 'release', BudgetDimension[]>>;
  /** The same shortfalls in words, for the verdict's reasons. */
  gaps: Partial<Record<'smoke' | 'hardening' | 'release', string>>;
}

/** A tier's shortfall in words: the dimensions, and for a tier sized in tenants why it cannot be met. */
export function describeGap(gap: readonly BudgetDimension[], required: Tier): string {
  return gap
    .map((d) =>
      d === 'size' && required.tenants !== undefined
        ? `size (${required.tenants} tenants: ${TENANTS_UNMEASURED})`
        : d,
    )
    .join(', ');
}

export function assessTier(ev: ScenarioEvidence, tiers: ScenarioTiers): TierAssessment {
  const shortfalls: TierAssessment['shortfalls'] = {};
  const gaps: TierAssessment['gaps'] = {};
  let met: TierMet = null;
  for (const name of ['smoke', 'hardening', 'release'] as const) {
    const required = tiers[name];
    if (!required) continue;
    // Spec §2: smoke is config, duration and seeds ("No fault" is what PASS-smoke means); hardening and
    // release also require their fault count.
    const gap = shortfall(required, tierRan(ev, required)).filter(
      (d) => name !== 'smoke' || d !== 'faultWindows',
    );
    shortfalls[name] = gap;
    gaps[name] = describeGap(gap, required);
    // Tiers nest: hardening only counts once smoke is met, release once hardening is.
    if (gap.length === 0 && (name === 'smoke' || met !== null)) met = name;
  }
  return { met, shortfalls, gaps };
}
