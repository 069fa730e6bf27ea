/**
 * The verdict engine's public surface, for `faultline run`: build one ScenarioEvidence per scenario or
 * arm (helpers in ./measure.ts), then decide per row and for the session.
 */
export { aggregateArms, type SessionOutcome, sessionVerdict } from './aggregate.ts';
export {
  type AuditItem,
  type AuditStatus,
  type Audits,
  RED_FLAGS,
  runAudits,
  WEAK_ORACLE_ITEMS,
} from './audits.ts';
export { type Decision, decideVerdict } from './decide.ts';
export { capabilitiesMissingFor, type ProbedCapability } from './env.ts';
export {
  HISTORY_FIELDS,
  parseEvidence,
  type ScenarioEvidence,
  type ScenarioEvidenceInput,
  scenarioEvidenceSchema,
} from './evidence.ts';
export {
  faultEvidenceFromRecord,
  historyFacts,
  markRecovering,
  recoveryAfterHeal,
  type SutLogMatch,
  scanSutLog,
  throughputWindows,
  windowRate,
  withExposure,
} from './measure.ts';
export { decidePlan, type PlanVerdicts } from './plan-verdicts.ts';
export { SESSION_VERDICTS, type SessionVerdict, VERDICTS, type Verdict } from './states.ts';
