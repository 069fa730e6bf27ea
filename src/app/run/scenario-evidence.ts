import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { hasCapability } from '../../core/database/capabilities.ts';
import { abortReason } from '../../core/util/errors.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import type { Database } from '../../lib/databases/types.ts';
import { metricsPath, type SeedMetrics, writeMetricsFile } from '../report/metrics-file.ts';
import {
  type DbVersion,
  dbVersionSchema,
  type ScenarioEvidenceInput,
  type SeedMeasurementInput,
  type SeedRun,
} from '../verdict/evidence.ts';
import { windowRate } from '../verdict/measure.ts';
import { baselineFrom, type EarlierBaseline, earlierBaselineFacts } from './baseline.ts';
import type { RunMeasurement } from './run-evidence.ts';

/**
 * A scenario's evidence record from its measured runs: what `faultline run` builds for each scenario and
 * `faultline test` for its one run, so both judge and report a run the same way.
 */

/** One run of a scenario: its directory (written by `runTest`) and what it measured. */
export type Run = { runDir: string; m: RunMeasurement };

/** What the evidence says about the scenario besides its runs. */
export interface EvidenceContext {
  scenario: string;
  /** The scenario id as a directory name (metrics/<dirName>.json, logs/<dirName>/). */
  dirName: string;
  sessionDir: string;
  nodes: number;
  db: Database;
  /** Does the client retry behind the history's back (its definition's `hiddenRetries`)? */
  hiddenRetries: boolean | null;
  /** The intended rate (ops/s), when the scenario sets one. */
  rate: number | null;
  harnessVersion: string;
  earlierBaseline?: EarlierBaseline | undefined;
  signal: AbortSignal;
  startedAt: string;
  faultsScheduled: number;
  faultPlaneOk: boolean;
  notes: string[];
  preNotes: string[];
  /**
   * Copy the primary run's node-log directories into logs/<dirName>/: a session's runs live under
   * artifacts/; a `faultline test` run directory is the session itself and keeps its node logs there.
   */
  copyNodeLogs: boolean;
}

/** A seed's outcome from its run: fail on a declared violation, unknown when a declared checker could not decide. */
export function seedOutcome(m: RunMeasurement): SeedRun['outcome'] {
  if (m.violation) return 'fail';
  return m.oracles.some((x) => x.declared && x.valid === 'unknown') ? 'unknown' : 'pass';
}

/**
 * The evidence record of the scenario: its primary run's measurement (what the report shows), every
 * seed's own measurement (what the verdict judges), the seeds, the notes.
 */
export function scenarioEvidence(
  c: EvidenceContext,
  primary: Run | null,
  seeds: SeedRun[],
  runs: { seed: number; run: Run }[],
): ScenarioEvidenceInput {
  const { startedAt, notes } = c;
  const endedAt = new Date().toISOString();
  if (!primary)
    return {
      scenario: c.scenario,
      attempted: !c.signal.aborted || seeds.length > 0,
      notRunReason: c.signal.aborted ? `${abortReason(c.signal)} before the workload ran` : null,
      stoppedEarly: abortReason(c.signal),
      seeds,
      faultsScheduled: c.faultsScheduled,
      notes,
      startedAt,
      endedAt,
    };
  const m = primary.m;
  if (c.copyNodeLogs) copyRunFiles(primary.runDir, c.sessionDir, c.dirName);
  // metrics/<S>.json: the primary run's figures (RF9's baseline), and every seed's counts and figures.
  const primarySeed = runs.find((r) => r.run === primary)?.seed ?? runs[0]?.seed ?? 0;
  const metricsFile = writeMetricsFile(
    metricsPath(c.sessionDir, c.dirName),
    { scenario: c.scenario, baselineHarness: c.harnessVersion, baselineCapturedAt: startedAt },
    seedMetrics(c, primarySeed, primary),
    runs.map(({ seed, run }) => seedMetrics(c, seed, run)),
  );
  const perSeed = runs.map(({ seed, run }) => seedMeasurement(c, seed, run));
  // Partition shapes that landed in any seed (WO10 counts topologies over the whole scenario).
  const landedTopologies = [
    ...new Set(
      runs.flatMap(({ run }) =>
        run.m.faults.filter((f) => f.landed && f.topology).map((f) => f.topology as string),
      ),
    ),
  ];
  if (c.signal.aborted) notes.push(`stopped early: ${abortReason(c.signal)}`);
  return {
    scenario: c.scenario,
    attempted: true,
    stoppedEarly: abortReason(c.signal),
    ran: {
      nodes: c.nodes,
      durationS: m.workloadS,
      topologies: landedTopologies,
      clusterSizes: [c.nodes],
    },
    seeds,
    faultsScheduled: c.faultsScheduled,
    faults: m.faults,
    oracles: m.oracles,
    history: { ...m.history, hiddenRetries: c.hiddenRetries },
    intendedOpsPerSec: c.rate,
    throughput: m.throughput,
    recovery: m.recovery,
    failovers: m.failovers?.count ?? null,
    sutLog: sutLogOf(c, m),
    baseline: baselineOf(c, metricsFile, m),
    declarations: c.faultPlaneOk
      ? {}
      : { RF4: { status: 'checked', evidence: 'fault plane probe failed before the run' } },
    startedAt,
    endedAt,
    artifacts: artifactList(primary.runDir, c.sessionDir),
    runDir: relative(c.sessionDir, primary.runDir),
    perSeed,
    dbVersion: readDbVersion(primary.runDir),
    notes: [...notes, ...c.preNotes.map((n) => `precondition: ${n}`)],
  };
}

/** The run's db-version.json (the database's own report of its version), or null. */
function readDbVersion(runDir: string): DbVersion | null {
  const r = dbVersionSchema.safeParse(readJsonOrNull(join(runDir, 'db-version.json')));
  return r.success ? r.data : null;
}

/**
 * RF9's baseline: an earlier session's (`--baseline`) when given, else the one this run just wrote;
 * with this run's no-fault rate beside it.
 */
function baselineOf(
  c: EvidenceContext,
  metricsPath: string,
  m: RunMeasurement,
): ScenarioEvidenceInput['baseline'] {
  const ctx = {
    currentHarnessVersion: c.harnessVersion,
    currentOpsPerSec: noFaultRate(m),
    runStartedAt: c.startedAt,
  };
  return c.earlierBaseline
    ? earlierBaselineFacts(c.earlierBaseline, ctx)
    : baselineFrom(metricsPath, c.sessionDir, c.harnessVersion, ctx);
}

/** The run's no-fault ops/s, as written to its metrics file. */
function noFaultRate(m: RunMeasurement): number | null {
  return m.recovery?.baselineOpsPerSec ?? baselineNoFault(m);
}

function baselineNoFault(m: RunMeasurement): number | null {
  const rates = m.throughput
    .filter((w) => !w.faultActive)
    .map(windowRate)
    .filter((r): r is number => r !== null);
  if (rates.length === 0) return null;
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)] as number;
}

/** One seed's run as the verdict judges it. */
function seedMeasurement(c: EvidenceContext, seed: number, run: Run): SeedMeasurementInput {
  const m = run.m;
  return {
    seed,
    runDir: relative(c.sessionDir, run.runDir),
    durationS: m.workloadS,
    faults: m.faults,
    oracles: m.oracles,
    history: { ...m.history, hiddenRetries: c.hiddenRetries },
    throughput: m.throughput,
    recovery: m.recovery,
    sutLog: sutLogOf(c, m),
    failovers: m.failovers?.count ?? null,
  };
}

function sutLogOf(c: EvidenceContext, m: RunMeasurement): ScenarioEvidenceInput['sutLog'] {
  return hasCapability(c.db, 'logs')
    ? m.sutLog
    : { ...m.sutLog, unavailable: `database ${c.db.name} declares no log files (the logs capability)` };
}

/** One seed's entry of metrics/<S>.json. */
function seedMetrics(c: EvidenceContext, seed: number, run: Run): SeedMetrics {
  const m = run.m;
  return {
    seed,
    runDir: relative(c.sessionDir, run.runDir),
    summary: m.summary,
    durationS: m.workloadS,
    baselineOpsPerSec: noFaultRate(m),
    afterHealOpsPerSec: m.recovery?.afterHealOpsPerSec ?? null,
    windows: m.metrics,
  };
}

/** Node logs into logs/<scenario>/<node>/, history/ledger/schedule stay in artifacts/<scenario>/<run>/. */
function copyRunFiles(runDir: string, sessionDir: string, dirName: string): void {
  for (const entry of readdirSync(runDir)) {
    const p = join(runDir, entry);
    if (statSync(p).isDirectory()) cpSync(p, join(sessionDir, 'logs', dirName, entry), { recursive: true });
  }
}

function artifactList(runDir: string, sessionDir: string): { label: string; path: string }[] {
  const out: { label: string; path: string }[] = [];
  for (const [label, file] of [
    ['history', 'history.jsonl'],
    ['fault ledger', 'ledger.jsonl'],
    ['faults with landing evidence', 'faults.json'],
    ['schedule', 'schedule.json'],
    ['checker results', 'results.json'],
  ] as const) {
    const p = join(runDir, file);
    if (existsSync(p)) out.push({ label, path: relative(sessionDir, p) });
  }
  for (const f of readdirSync(runDir)) {
    if (/\.(html|svg|txt)$/.test(f)) out.push({ label: f, path: relative(sessionDir, join(runDir, f)) });
  }
  return out;
}
