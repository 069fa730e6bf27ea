/** The plan layer's public surface: load, check, and the resolved scenarios `faultline run` executes. */
export { type Binding, bindingSchema, type NemesisStep, scheduledWindows, type Tier } from './binding.ts';
export { formatTier, parseBudget } from './budget.ts';
export { blocking, checkPlan } from './check.ts';
export { type LoadedPlan, loadPlan, parsePlanText } from './load.ts';
export { formatProblem, type Problem } from './problem.ts';
export type { Plan, ResolvedScenario, Scenario } from './schema.ts';
