/** `faultline/report`: what runs and checks return, and the report.json format with its schema. */

export {
  REPORT_JSON_SCHEMA_VERSION,
  type ReportJson,
  type ReportRow,
  reportJsonSchema,
} from '../app/report/report-json.ts';
export type { TestRunResult } from '../app/test/test-run.ts';
export type { CheckOutcome } from './check.ts';
export type { RunPlanResult } from './run-plan.ts';
