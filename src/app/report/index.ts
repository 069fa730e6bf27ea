/** The report writers' public surface (spec §6 session layout). */
export { renderReport, renderScenarioFinding, writeReport, writeScenarioFinding } from './findings.ts';
export { renderReportHtml, writeReportHtml } from './html.ts';
export {
  JUNIT_INCONCLUSIVE_AS,
  type JunitInconclusiveAs,
  junitOutcome,
  renderJunit,
  writeJunit,
} from './junit.ts';
export { buildReportJson, reportJsonSchema, writeReportJson } from './report-json.ts';
export { createSessionDir, SESSION_SUBDIRS, sessionTimestamp } from './session-dir.ts';
export { renderSessionLog, SessionLogWriter, writeSessionLog } from './session-log.ts';
export { type Finding, findingSchema, type SessionRecord, type TimelineEntry } from './types.ts';
export { writeSessionReports } from './write-all.ts';
