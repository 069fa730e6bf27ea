import { mkdir } from 'node:fs/promises';
import { writeReportHtml } from './findings-html.ts';
import { writeReport, writeScenarioFinding } from './findings-markdown.ts';
import { type JunitInconclusiveAs, writeJunit } from './junit.ts';
import { writeReportJson } from './report-json.ts';
import { writeSessionLog } from './session-log.ts';
import type { SessionRecord } from './types.ts';

/** Every report of a session, in the layout of spec §6; returns the paths written. */
export async function writeSessionReports(
  r: SessionRecord,
  o: { junitInconclusiveAs?: JunitInconclusiveAs } = {},
): Promise<string[]> {
  await mkdir(r.sessionDir, { recursive: true });
  const written = [await writeSessionLog(r)];
  for (const d of r.verdicts.topLevel) written.push(await writeScenarioFinding(r, d.scenario));
  written.push(
    await writeReport(r),
    await writeReportHtml(r),
    await writeReportJson(r),
    await writeJunit(r, o.junitInconclusiveAs),
  );
  return written;
}
