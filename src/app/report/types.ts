import { z } from 'zod';
import type { Plan } from '../plan/schema.ts';
import type { ScenarioEvidence } from '../verdict/evidence.ts';
import type { PlanVerdicts } from '../verdict/plan-verdicts.ts';

/**
 * What the report writers consume: the plan, the session facts gathered before and during the run
 * (toolbox, capability matrix, preconditions, timeline), the evidence per scenario/arm, the verdicts,
 * and the findings filed for FAILs. `faultline run` builds one `SessionRecord` and calls the writers.
 */

export const REDUCTION_CLASSES = [
  'SUT',
  'harness',
  'checker',
  'environment',
  'Unknown — pending re-run on alternative harness/host',
] as const;
export const TAXDC_TYPES = [
  'Timing',
  'Ordering',
  'Partition',
  'Crash-recovery',
  'Upgrade',
  'Config',
  'Fault-handling',
  'Performance',
] as const;
export const FINDING_TAGS = [
  'Replication',
  'Leadership',
  'Idempotency',
  'Durability',
  'Liveness',
  'Safety',
] as const;
export const SEVERITIES = ['P0', 'P1', 'P2', 'P3'] as const;

export const findingSchema = z.object({
  /** F1, F2 … */
  id: z.string().regex(/^F\d+$/),
  title: z.string().min(1),
  scenario: z.string(),
  hypothesis: z.string().default('none cited'),
  whatHappened: z.string(),
  /** Minimal reproducer, or why there is none. */
  reproducer: z.string(),
  /** "N→k events over M re-runs", when reduced. */
  reduction: z.string().nullable().default(null),
  reductionClassification: z.enum(REDUCTION_CLASSES),
  classification: z.enum(TAXDC_TYPES),
  tags: z.array(z.enum(FINDING_TAGS)).default([]),
  severity: z.enum(SEVERITIES),
  evidence: z.string(),
  rootCause: z.string().default('unknown'),
  nextAction: z.string(),
});
export type Finding = z.infer<typeof findingSchema>;
export type FindingInput = z.input<typeof findingSchema>;

export interface TimelineEntry {
  /** ISO-8601 UTC. */
  time: string;
  scenario: string;
  /** `start`, `fault injected: <type>`, `oracle: <result>`, … */
  event: string;
  notes: string;
}

export interface CapabilityRow {
  requirement: string;
  present: boolean;
  version: string;
  /** How it was detected or installed; a substitution is named here. */
  source: string;
}

export interface SessionRecord {
  plan: Plan;
  /** Session start, ISO-8601 UTC. */
  startedAt: string;
  sessionDir: string;
  commit: string;
  operator: string;
  toolbox: { path: string; role: string }[];
  capabilities: CapabilityRow[];
  preconditions: {
    clusterUp: boolean | null;
    observabilityLive: boolean | null;
    baselineCaptured: boolean | null;
    faultPlaneResponsive: boolean | null;
  };
  timeline: TimelineEntry[];
  evidence: ScenarioEvidence[];
  verdicts: PlanVerdicts;
  findings: Finding[];
  artifacts: { label: string; path: string }[];
}
