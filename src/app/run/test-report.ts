import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyFaultOp } from '../../../nemeses/registry.ts';
import { scheduleSchema } from '../../../nemeses/schedule.ts';
import { logNoiseOf } from '../../core/database/capabilities.ts';
import { makeOutputDir } from '../../core/util/atomic-write.ts';
import type { Database } from '../../lib/databases/types.ts';
import { makeWorkload } from '../../lib/workloads/index.ts';
import { resolveScenarios, scenarioDirName } from '../plan/resolve.ts';
import { type Plan, planSchema, type ResolvedScenario } from '../plan/schema.ts';
import { SessionLogWriter } from '../report/session-log.ts';
import { writeSessionReports } from '../report/write-all.ts';
import type { TestRunResult } from '../test/test-run.ts';
import { parseEvidence } from '../verdict/evidence.ts';
import { decideSession, harnessVersion, newSessionRecord, operator } from './plan-run.ts';
import { measureRun } from './run-evidence.ts';
import { scenarioEvidence, seedOutcome } from './scenario-evidence.ts';
import { logRun } from './scenario-run.ts';

/**
 * The findings report of one `faultline test` run, written by the report code `faultline run` uses
 * (session-log.md, findings/S1.md, findings/report.{md,html,json}, junit.xml, metrics/S1.json): the run
 * is one scenario, S1, of a plan made of the command line. Its smoke budget is what was asked (nodes,
 * time limit, one seed); it declares no hardening budget, so a clean run with faults that landed is
 * PASS-smoke at most (a hardening claim needs a plan), and a FAIL is never re-run, so it is
 * FAIL-nondeterministic. The run directory is the session directory: nothing is copied.
 */
export interface TestReportInput {
  sessionDir: string;
  /** When the run started (ISO-8601 UTC). */
  startedAt: string;
  db: Database;
  hiddenRetries: boolean | null;
  workload: string;
  nodes: readonly string[];
  concurrency: number;
  faults: readonly string[];
  timeLimitS: number;
  rate: number;
  seed: number;
  /** Do the nodes share the control host's kernel clock (a local cluster)? null when unknown. */
  sharedClock: boolean | null;
  /** The command line, as the plan's source. */
  command: string;
  result: TestRunResult;
  signal: AbortSignal;
}

export const TEST_SCENARIO = 'S1';

/** Writes the reports; returns the scenario's verdict with its first reason, and the paths written. */
export async function writeTestReport(
  i: TestReportInput,
): Promise<{ verdict: string; reason: string; paths: string[] }> {
  const scheduled = faultsScheduled(i.result);
  const plan = testPlan(i, scheduled);
  const sc = plan.resolved[0] as ResolvedScenario;
  const record = newSessionRecord(plan, {
    startedAt: i.startedAt,
    sessionDir: i.sessionDir,
    operator: operator('faultline test'),
  });
  record.toolbox = [{ path: '(none scanned)', role: 'faultline test scans no toolbox' }];
  record.preconditions.clusterUp = true;
  // The session directory of `test` has logs/ only; the report adds spec §6's metrics/ and findings/.
  makeOutputDir(join(i.sessionDir, 'metrics'));
  const log = new SessionLogWriter(record);
  await log.event(TEST_SCENARIO, 'start', sc.name);
  const workload = makeWorkload(i.workload, { nodes: [...i.nodes], concurrency: i.concurrency });
  const m = await measureRun(
    i.result.runDir,
    {
      checkers: workload.checkers.map((c) => c.name),
      checkerOptions: Object.fromEntries(workload.checkers.map((c) => [c.name, c.options])),
      rate: i.rate,
    },
    i.timeLimitS,
    logNoiseOf(i.db),
  );
  await logRun({ log, sc }, m);
  const run = { runDir: i.result.runDir, m };
  const seed = i.seed;
  const evidence = scenarioEvidence(
    {
      scenario: TEST_SCENARIO,
      dirName: scenarioDirName(TEST_SCENARIO),
      sessionDir: i.sessionDir,
      nodes: i.nodes.length,
      db: i.db,
      hiddenRetries: i.hiddenRetries,
      rate: i.rate,
      harnessVersion: harnessVersion(),
      signal: i.signal,
      startedAt: i.startedAt,
      faultsScheduled: scheduled,
      faultPlaneOk: true,
      notes: [],
      preNotes: [],
      copyNodeLogs: false,
    },
    run,
    [{ seed, outcome: seedOutcome(m), rerun: 'not-attempted', reproducer: null }],
    [{ seed, run }],
  );
  record.evidence.push(parseEvidence(evidence));
  await decideSession(record, [sc], new Map(), log, {
    env: { sharedClock: i.sharedClock },
    blocked: undefined,
  });
  const paths = await writeSessionReports(record);
  const d = record.verdicts.rows.find((r) => r.scenario === TEST_SCENARIO);
  return { verdict: d?.verdict ?? '?', reason: d?.reasons[0] ?? '', paths };
}

/** The command line as a one-scenario plan: S1, no claims (not a gated scenario), smoke budget as asked. */
function testPlan(i: TestReportInput, faultWindows: number): Plan {
  const faults = i.faults.length > 0 ? i.faults.join(', ') : 'none';
  const data = planSchema.parse({
    slug: `${i.db.name}-${i.workload}`,
    header: {
      date: i.startedAt.slice(0, 10),
      planMode: 'faultline test (one run from the command line, no plan file)',
      sut: i.db.name,
      changeUnderTest: 'N/A',
      planAuthor: null,
      status: null,
    },
    scenarios: [
      {
        id: TEST_SCENARIO,
        name: `${i.db.name} ${i.workload}, nemesis ${faults}`,
        technique: 'faultline test',
        workload: `${i.workload}: ${i.concurrency} client(s) at ${i.rate} ops/s for ${i.timeLimitS}s`,
        faults: faults === 'none' ? 'none' : `${faults}, on a random schedule (seed ${i.seed})`,
        oracle: makeWorkload(i.workload, { nodes: [...i.nodes], concurrency: i.concurrency })
          .checkers.map((c) => c.name)
          .join(', '),
        smokeBudget: `${i.nodes.length} nodes × ${i.timeLimitS}s × ${faultWindows} fault windows × 1 seed`,
      },
    ],
  });
  return { ...data, source: { path: i.command, format: 'json' }, resolved: resolveScenarios(data) };
}

/**
 * Fault windows the run scheduled: the start ops of its fault-schedule.json (random classes, or a
 * replayed fault schedule), else the faults it recorded (a replayed op schedule).
 */
function faultsScheduled(r: TestRunResult): number {
  const path = join(r.runDir, 'fault-schedule.json');
  if (existsSync(path)) {
    try {
      const s = scheduleSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
      return s.ops.filter((op) => op.phase === 'main' && classifyFaultOp(op.f, op.value)?.starts === true)
        .length;
    } catch {
      // Written by this run a moment ago; unreadable, the faults it recorded still count.
    }
  }
  return r.faults.length;
}
