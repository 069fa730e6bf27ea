import { z } from 'zod';
import { bindingSchema, normaliseBindingInput, type Tier, type TierName } from './binding.ts';
import type { ReleaseDisclosure } from './budget.ts';

/**
 * The plan as faultline holds it, whichever file it came from. Markdown plans are parsed into this shape
 * (./markdown.ts); native YAML/JSON plans are validated against it directly (camelCase field names, same
 * meaning as the spec's Markdown labels). Derived facts (claim categories per scenario, tiers as numbers,
 * whether §7.M is mandatory) are added by ./resolve.ts into `ResolvedScenario`.
 */

export const CLAIM_CATEGORIES = [
  'safety',
  'liveness',
  'durability',
  'performance-SLO',
  'operational',
  'idempotency',
  'isolation',
  'ordering',
  'membership',
  'boundary',
  'fairness',
] as const;
export type ClaimCategory = (typeof CLAIM_CATEGORIES)[number];

/** Categories that make a scenario "serious": §7.M is mandatory. */
export const GATED_CATEGORIES: ReadonlySet<string> = new Set([
  'safety',
  'durability',
  'idempotency',
  'isolation',
  'ordering',
  'membership',
]);
/** Categories that make §7.M.S (surface decomposition) mandatory. */
export const SURFACE_CATEGORIES: ReadonlySet<string> = new Set(['boundary', 'fairness']);

export const MODEL_NOT_APPLICABLE = '§7.M: not applicable (no gated claim category falsified)';
export const SURFACE_NOT_APPLICABLE = '§7.M.S: not applicable (no boundary or fairness claim falsified)';

const line = z.number().int().positive().nullable().default(null);
const text = z.string().nullable().default(null);

export const claimSchema = z.strictObject({
  id: z.string(),
  claim: z.string(),
  category: z.string(),
  source: z.string().default(''),
  inferred: z.string().default(''),
  line,
});
export type Claim = z.infer<typeof claimSchema>;

export const hypothesisSchema = z.strictObject({
  id: z.string(),
  title: z.string(),
  statement: z.string().default(''),
  couldFalsify: z.array(z.string()).default([]),
  suspectedBecause: z.string().default(''),
  subsystem: z.string().default(''),
  line,
});
export type Hypothesis = z.infer<typeof hypothesisSchema>;

export const environmentRequirementSchema = z.strictObject({
  requirement: z.string(),
  versionFloor: z.string().default(''),
  usedBy: z.array(z.string()).default([]),
  installHint: z.string().default(''),
  broughtUpBySut: z.boolean().default(false),
  line,
});
export type EnvironmentRequirement = z.infer<typeof environmentRequirementSchema>;

/** §7.M — the six fields; a field left out is null (a partially filled block). */
export const modelBlockSchema = z.strictObject({
  modelUnderTest: text,
  operationHistory: text,
  checker: text,
  nemesisLandingEvidence: text,
  ambiguousOutcomes: text,
  reductionPlan: text,
  line,
});
export type ModelBlock = z.infer<typeof modelBlockSchema>;
export const MODEL_FIELDS = {
  modelUnderTest: 'Model under test',
  operationHistory: 'Operation history',
  checker: 'Checker',
  nemesisLandingEvidence: 'Nemesis + landing evidence',
  ambiguousOutcomes: 'Ambiguous outcomes',
  reductionPlan: 'Reduction plan',
} as const;

/** §7.M.S — the eight fields. */
export const surfaceBlockSchema = z.strictObject({
  surfaces: text,
  operations: text,
  adversarialInputs: text,
  positiveControls: text,
  negativeControls: text,
  delayedAsyncPaths: text,
  observabilityPaths: text,
  scenarioArms: text,
  line,
});
export type SurfaceBlock = z.infer<typeof surfaceBlockSchema>;
export const SURFACE_FIELDS = {
  surfaces: 'Surfaces',
  operations: 'Operations',
  adversarialInputs: 'Adversarial inputs',
  positiveControls: 'Positive controls',
  negativeControls: 'Negative controls',
  delayedAsyncPaths: 'Delayed / async paths',
  observabilityPaths: 'Observability paths',
  scenarioArms: 'Scenario arms',
} as const;

/** A §7.M / §7.M.S slot: the block, the literal "not applicable" line, or nothing at all. */
export const modelSlotSchema = z
  .union([modelBlockSchema, z.literal('not applicable'), z.null()])
  .default(null);
export const surfaceSlotSchema = z
  .union([surfaceBlockSchema, z.literal('not applicable'), z.null()])
  .default(null);

export const armSchema = z.strictObject({
  /** `S5/api` */
  id: z.string(),
  surface: z.string(),
  oracle: text,
  /** `Expected verdict:` under the arm's heading (see src/app/plan/expectation.ts). */
  expectedVerdict: text,
  model: z.union([modelBlockSchema, z.null()]).default(null),
  line,
});
export type Arm = z.infer<typeof armSchema>;

export const scenarioSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  line,
  falsifies: z.array(z.string()).default([]),
  closes: z.array(z.string()).default([]),
  technique: text,
  workload: text,
  faults: text,
  oracle: text,
  /** `Expected verdict:` — what a run of this scenario should end as (a negative control: a FAIL). */
  expectedVerdict: text,
  observabilityRequired: text,
  smokeBudget: text,
  hardeningBudget: text,
  releaseBudget: text,
  exitCriteria: text,
  targetTestFile: text,
  skeletonLanguage: text,
  /** The fenced skeleton text, or `as S01` (drift) resolved by reference. */
  skeleton: text,
  skeletonAs: text,
  model: modelSlotSchema,
  surface: surfaceSlotSchema,
  arms: z.array(armSchema).default([]),
  binding: z.preprocess(normaliseBindingInput, bindingSchema).nullable().default(null),
  /** Line of each field as found (Markdown only), for problems that point at a line. */
  fieldLines: z.record(z.string(), z.number()).default({}),
});
export type Scenario = z.infer<typeof scenarioSchema>;

export const planSchema = z.strictObject({
  slug: z.string().min(1),
  header: z
    .object({
      date: text,
      planMode: text,
      sut: text,
      changeUnderTest: text,
      planAuthor: text,
      status: text,
    })
    .default({
      date: null,
      planMode: null,
      sut: null,
      changeUnderTest: null,
      planAuthor: null,
      status: null,
    }),
  /** Section bodies keyed by number ("0", "1b", "7d"), verbatim, for sections kept as prose. */
  sections: z.record(z.string(), z.strictObject({ title: z.string(), body: z.string(), line })).default({}),
  claims: z.array(claimSchema).default([]),
  missingClaims: z.array(z.record(z.string(), z.string())).default([]),
  hypotheses: z.array(hypothesisSchema).default([]),
  /** §3 rows: Test / harness | Subsystem | Invariant pinned | Failure modes it catches. */
  testInventory: z.array(z.record(z.string(), z.string())).default([]),
  /** §5 rows: Claim | Hypothesis | Existing tests | Verdict | Gap kind | Recommended scenario. */
  coverageMatrix: z
    .array(
      z.strictObject({
        claim: z.string(),
        hypothesis: z.string().default(''),
        existingTests: z.string().default(''),
        verdict: z.string().default(''),
        gapKind: z.string().default(''),
        recommendedScenario: z.string().default(''),
        line,
      }),
    )
    .default([]),
  environment: z.array(environmentRequirementSchema).default([]),
  scenarios: z.array(scenarioSchema).default([]),
  adequacy: z
    .array(
      z.strictObject({
        claim: z.string(),
        threatModel: z.string().default(''),
        scenarios: z.string().default(''),
        whySufficient: z.string().default(''),
      }),
    )
    .default([]),
  residualUncertainty: z.array(z.record(z.string(), z.string())).default([]),
  confidence: z
    .object({
      statement: z.string().default(''),
      aspects: z
        .array(
          z.strictObject({
            claim: z.string(),
            aspect: z.string(),
            confidence: z.string(),
            reason: z.string(),
          }),
        )
        .default([]),
      allHigh: z.boolean().default(false),
    })
    .default({ statement: '', aspects: [], allHigh: false }),
  notCovered: z.string().default(''),
  openQuestions: z.array(z.string()).default([]),
});
export type PlanData = z.infer<typeof planSchema>;
export type PlanInput = z.input<typeof planSchema>;

export interface ScenarioTiers {
  smoke: Tier | null;
  hardening: Tier | null;
  release: Tier | null;
  /** `Release budget: not provided — reason. Revisit when: condition.` */
  releaseDisclosure: ReleaseDisclosure | null;
}

/** A scenario or an arm, with what the verdict engine needs already worked out. */
export interface ResolvedScenario {
  /** `S3`, or `S5/api` for an arm. */
  id: string;
  name: string;
  /** The parent scenario id for an arm. */
  parentId: string | null;
  scenario: Scenario;
  arm: Arm | null;
  categories: string[];
  /** A gated category is falsified (or this is an arm): §7.M applies, steps 5–7 run. */
  serious: boolean;
  /** A boundary/fairness category is falsified: §7.M.S applies. */
  surfaceGated: boolean;
  oracle: string | null;
  /** The declared expected verdict (an arm's own; a scenario's own), parsed; null when none. */
  expected: import('./expectation.ts').Expectation | null;
  model: ModelBlock | null;
  tiers: ScenarioTiers;
  binding: import('./binding.ts').Binding | null;
}

export interface Plan extends PlanData {
  source: { path: string; format: 'markdown' | 'yaml' | 'json' };
  /** Scenarios and arms, resolved, in plan order (parent before its arms). */
  resolved: ResolvedScenario[];
}

export type { Tier, TierName };
