import type { NemesisStep } from '../../../nemeses/types.ts';
import { UserError } from '../../core/util/errors.ts';
import { type Binding, TIER_NAMES, type TierName } from './binding.ts';
import type { LoadedPlan } from './load.ts';
import type { ResolvedScenario, Tier } from './schema.ts';

/** `--time-scale` bounds: a cluster faster than the plan assumes gains nothing from shrinking it. */
export const MIN_TIME_SCALE = 1;
export const MAX_TIME_SCALE = 20;

/**
 * The op timeout a binding without `opTimeout` runs with (ms). Short enough that clients cut off by a
 * partition keep issuing ops (their reads are what a stale-read negative control needs to see), long
 * enough for etcd and Redis on a healthy cluster.
 */
export const DEFAULT_OP_TIMEOUT_MS = 1500;

/**
 * A plan run on a cluster `k` times slower than the plan was sized for (emulated guests, a loaded CI
 * host): every duration in the plan's schedule stretched by `k` (each tier's run length, every fault
 * window's start, length and period, the op timeout, the recovery budget) and the request rate divided by
 * `k`. The schedule keeps its shape — the same faults in the same order, over the same share of the run,
 * against the same number of ops per window — where at the plan's own sizes a fault that takes longer to
 * inject than its window is long never lands in it, and ops slower than the op timeout all end
 * indeterminate. Counts (nodes, seeds, fault windows, concurrency) and magnitudes that are not time
 * (a clock bump's delta, a rate limit) stay as planned. The run's record and report say which scale was
 * used, since its load is not the plan's.
 */
export function scalePlanTime(plan: LoadedPlan, k: number): LoadedPlan {
  if (k === 1) return plan;
  return { ...plan, resolved: plan.resolved.map((row) => scaleRow(row, k)) };
}

function scaleRow(row: ResolvedScenario, k: number): ResolvedScenario {
  return { ...row, tiers: scaleTiers(row.tiers, k), binding: row.binding && scaleBinding(row.binding, k) };
}

/** Each tier's run length ×k, in any record of tiers by name (a scenario's, or a binding's own). */
function scaleTiers<T extends Partial<Record<TierName, Tier | null>>>(tiers: T, k: number): T {
  const out: T = { ...tiers };
  for (const name of TIER_NAMES) {
    const tier = tiers[name];
    if (tier) out[name] = { ...tier, durationS: tier.durationS * k } as T[TierName];
  }
  return out;
}

function scaleStep(step: NemesisStep, k: number): NemesisStep {
  return {
    ...step,
    startS: step.startS * k,
    durationS: step.durationS * k,
    ...(step.intervalS !== undefined && { intervalS: step.intervalS * k }),
  };
}

/** The time fields a binding or an arm's override may set, scaled where set. */
function scaleTimeFields<T extends Partial<Binding>>(b: T, k: number): T {
  const out: T = { ...b };
  if (b.nemesis) out.nemesis = b.nemesis.map((s) => scaleStep(s, k));
  if (b.rate !== undefined) out.rate = b.rate / k;
  if (b.opTimeout !== undefined) out.opTimeout = Math.round(b.opTimeout * k);
  if (b.recoveryBudgetS !== undefined) out.recoveryBudgetS = b.recoveryBudgetS * k;
  if (b.tiers) out.tiers = scaleTiers(b.tiers, k);
  return out;
}

function scaleBinding(b: Binding, k: number): Binding {
  const scaled = scaleTimeFields(b, k);
  // The op timeout is stretched even where the plan leaves it to the default.
  scaled.opTimeout = Math.round((b.opTimeout ?? DEFAULT_OP_TIMEOUT_MS) * k);
  scaled.arms = Object.fromEntries(Object.entries(b.arms).map(([s, over]) => [s, scaleTimeFields(over, k)]));
  return scaled;
}

/** How a line names the scale: nothing at 1, else `, time scale 4×`. */
export function timeScaleText(k: number | undefined): string {
  return k === undefined || k === 1 ? '' : `, time scale ${k}×`;
}

/** `--time-scale` as given on the command line: a number within the bounds, or a one-line error. */
export function parseTimeScale(raw: string): number {
  const k = Number(raw);
  if (!Number.isFinite(k) || k < MIN_TIME_SCALE || k > MAX_TIME_SCALE)
    throw new UserError(`--time-scale ${raw}: expected a number from ${MIN_TIME_SCALE} to ${MAX_TIME_SCALE}`);
  return k;
}
