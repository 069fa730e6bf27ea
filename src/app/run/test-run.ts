import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CheckResult, Validity } from '../../../checkers/types.ts';
import { RemoteChannelError } from '../../core/control/errors.ts';
import type { Remote } from '../../core/control/types.ts';
import {
  any,
  clients,
  logOp,
  nemesis,
  phases,
  Rng,
  rate,
  SECOND,
  sleep,
  timeLimit,
} from '../../core/generator/index.ts';
import type { Generator, GenLike } from '../../core/generator/types.ts';
import { writeRunEdn } from '../../core/history/convert.ts';
import { pairEvents } from '../../core/history/pair.ts';
import { loadHistory } from '../../core/history/read.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import type { Client } from '../../lib/clients/types.ts';
import type { DB, DbContext } from '../../lib/databases/types.ts';
import { makeWorkload } from '../../lib/workloads/index.ts';
import { runChecks } from './checks.ts';
import { type FaultName, faultGenerator, finalFaultGenerator } from './faults.ts';
import { openHistorySink } from './history-sink.ts';
import { Interpreter, type InterpreterStats } from './interpreter.ts';
import { FaultDriver, type NemesisLookup } from './nemesis-driver.ts';
import { loadSchedule, replaySchedule, ScheduleWriter } from './schedule.ts';

/**
 * One `faultline test` run, in Jepsen's order (reference §1.4): DB cycle (teardown, install, setup, ready)
 * → client setup → the generator (workload under rate + time limit, faults on their own schedule) →
 * heal every fault → recovery sleep → final reads → collect node logs → DB teardown → checkers.
 * Faults are healed and the DB torn down in `finally`, whatever happened before.
 *
 * The run directory holds: test.json (the options), history.jsonl, schedule.json, ledger.jsonl (faults),
 * faults.json (records with landing evidence), <node>/… (DB logs), results.json and checker artifacts,
 * and Jepsen's history.edn and results.edn.
 */
export interface TestRunOptions {
  remote: Remote;
  db: DB;
  /** Builds the workload's client for this DB (given the workload's client options). */
  makeClient: (clientOptions: Record<string, unknown>) => Client;
  workload: string;
  faults: readonly FaultName[];
  nemesisIntervalS: number;
  /**
   * A fault schedule of the caller's own (nemesis ops, see faults.ts for their names) instead of the one
   * built from `faults`; `final` must heal everything `main` can start.
   */
  faultSchedule?: { main: GenLike; final: GenLike };
  /** Restrict the target selectors drawn per fault class (e.g. partition: ['primaries']). */
  faultTargets?: Partial<Record<FaultName, readonly string[]>>;
  /** How long the workload runs (the nemesis starts after `nemesisDelayS`). */
  timeLimitS: number;
  nemesisDelayS?: number;
  concurrency: number;
  rate: number;
  seed: number;
  outDir: string;
  opTimeoutMs: number;
  /** Sleep between healing and the final reads. */
  recoveryS: number;
  leaveDbRunning?: boolean;
  /** Replay this schedule.json instead of generating ops. */
  replay?: string;
  lookupNemesis?: NemesisLookup;
  /** Called about once a second with the live figures. */
  onProgress?: (p: Progress) => void;
  /** Extra fields for test.json (the argv, the DB options …). */
  meta?: Record<string, unknown>;
  /** Stops generating new ops (Ctrl-C, a deadline); faults are still healed and the history closed. */
  signal?: AbortSignal;
}

export interface Progress {
  elapsedS: number;
  stats: InterpreterStats;
  opsPerSec: number;
  faults: string[];
}

export interface TestRunResult {
  valid: Validity;
  runDir: string;
  results: CheckResult[];
  stats: InterpreterStats;
  faults: unknown[];
  elapsedS: number;
}

export async function runTest(o: TestRunOptions): Promise<TestRunResult> {
  const started = Date.now();
  const runDir = resolve(o.outDir);
  mkdirSync(runDir, { recursive: true });
  const nodes = o.remote.nodes.map((n) => n.name);
  const dbCtx: DbContext = { remote: o.remote, nodes };
  const workload = makeWorkload(o.workload, { nodes, concurrency: o.concurrency });
  const rng = new Rng(o.seed);
  const historyPath = join(runDir, 'history.jsonl');
  writeFileSync(
    join(runDir, 'test.json'),
    `${JSON.stringify(
      {
        db: o.db.name,
        workload: o.workload,
        nodes,
        faults: o.faults,
        nemesisIntervalS: o.nemesisIntervalS,
        timeLimitS: o.timeLimitS,
        concurrency: o.concurrency,
        rate: o.rate,
        seed: o.seed,
        opTimeoutMs: o.opTimeoutMs,
        recoveryS: o.recoveryS,
        ...(o.replay && { replay: o.replay }),
        startedAt: new Date(started).toISOString(),
        ...o.meta,
      },
      null,
      2,
    )}\n`,
  );

  const driver =
    o.faults.length > 0 || o.replay || o.faultSchedule
      ? new FaultDriver({
          remote: o.remote,
          db: o.db,
          dbCtx,
          lookup: o.lookupNemesis ?? defaultNemesisLookup,
          rng,
          ledgerPath: join(runDir, 'ledger.jsonl'),
          // Clock faults act on the DB's own clock through the faketime wrapper when one is installed.
          clockParams: () =>
            clockWrappers
              ? {
                  mode: 'faketime',
                  name: o.db.name,
                  ...(o.db.timeCommand && { timeCommand: o.db.timeCommand }),
                }
              : {},
        })
      : undefined;

  let stats: InterpreterStats | undefined;
  let runError: unknown;
  let clockWrappers: Record<string, unknown> | undefined;
  try {
    log().info({ db: o.db.name, nodes }, 'setting up the DB');
    await onAll(nodes, (n) => retryLostChannel(() => o.db.teardown(dbCtx, n)));
    await onAll(nodes, (n) => retryLostChannel(() => o.db.install(dbCtx, n)));
    if (o.faults.includes('clock')) clockWrappers = await installClockWrappers(o.db, dbCtx);
    await onAll(nodes, (n) => o.db.setup(dbCtx, n));
    await o.db.awaitReady(dbCtx, 90_000);

    const client = o.makeClient(workload.clientOptions);
    await onAll(nodes, async (n) => {
      const c = await client.open(n);
      try {
        await c.setup();
      } finally {
        await c.close();
      }
    });

    const generator: Generator = o.replay
      ? replaySchedule(await loadSchedule(o.replay))
      : buildGenerator(o, workload.generator(), workload.finalGenerator());
    const sink = await openHistorySink(historyPath);
    const schedule = new ScheduleWriter(join(runDir, 'schedule.json'), {
      seed: o.seed,
      concurrency: o.concurrency,
      nodes,
      workload: o.workload,
      faults: [...o.faults],
    });
    const interp = new Interpreter({
      generator,
      concurrency: o.concurrency,
      nodes,
      client,
      ...(driver && { nemesis: driver }),
      sink,
      rng,
      opTimeoutMs: o.opTimeoutMs,
      schedule,
      ...(o.signal && { signal: o.signal }),
    });
    const progress = o.onProgress
      ? setInterval(() => {
          const elapsedS = interp.clock.now() / 1e9;
          o.onProgress?.({
            elapsedS,
            stats: interp.stats,
            opsPerSec: elapsedS > 0 ? interp.stats.invoked / elapsedS : 0,
            faults: driver?.activeFaults() ?? [],
          });
        }, 1000)
      : undefined;
    try {
      stats = await interp.run();
    } finally {
      if (progress) clearInterval(progress);
      await sink.close();
      await schedule.close();
    }
  } catch (err) {
    runError = err;
  } finally {
    if (driver) {
      const failed = await driver.healAll();
      if (failed.length > 0)
        log().error({ failed }, 'some faults could not be healed; run faultline heal --ledger');
      driver.close();
      writeFileSync(join(runDir, 'faults.json'), `${JSON.stringify(driver.records, null, 2)}\n`);
    }
    await collectLogs(o.db, dbCtx, runDir);
    if (!o.leaveDbRunning)
      await onAll(nodes, (n) => o.db.teardown(dbCtx, n)).catch((e) =>
        log().warn({ err: errorMessage(e) }, 'teardown'),
      );
  }
  if (runError) throw runError;

  log().info('checking the history');
  const history = pairEvents(await loadHistory(historyPath, { format: 'jsonl' }));
  const { valid, results } = await runChecks(
    history,
    workload.checkers,
    driver ? driver.records : null,
    runDir,
  );
  // What every run draws besides its verdict: latency and rate plots, and the timeline of every op.
  const drawn = await runChecks(
    history,
    [
      { name: 'perf', options: {} },
      { name: 'timeline', options: {} },
    ],
    null,
    runDir,
  );
  const perfResult = drawn.results[0];
  const elapsedS = (Date.now() - started) / 1000;
  const out: TestRunResult = {
    valid,
    runDir,
    results,
    stats: stats as InterpreterStats,
    faults: driver?.records ?? [],
    elapsedS,
  };
  const resultsDoc = { valid, elapsedS, stats, results, perf: perfResult ?? null };
  writeFileSync(join(runDir, 'results.json'), `${JSON.stringify(resultsDoc, null, 2)}\n`);
  // Jepsen's history.edn and results.edn beside the JSON files.
  await writeRunEdn(runDir, resultsDoc).catch((err) =>
    log().warn({ err: errorMessage(err) }, 'could not write history.edn / results.edn'),
  );
  return out;
}

/**
 * Jepsen's etcd shape: the workload at `rate` under a time limit with the nemesis starting after a delay,
 * then heal everything, wait for recovery, and the workload's final reads.
 */
export function buildGenerator(
  o: Pick<
    TestRunOptions,
    | 'timeLimitS'
    | 'faults'
    | 'nemesisIntervalS'
    | 'rate'
    | 'nemesisDelayS'
    | 'recoveryS'
    | 'faultTargets'
    | 'faultSchedule'
  >,
  main: GenLike,
  final: GenLike | null,
): Generator {
  const T = o.timeLimitS * SECOND;
  const faults =
    o.faultSchedule?.main ?? faultGenerator(o.faults, o.nemesisIntervalS * SECOND, o.faultTargets);
  const heal = o.faultSchedule
    ? o.faultSchedule.final
    : o.faults.length > 0
      ? finalFaultGenerator(o.faults)
      : null;
  const clientPhase = clients(timeLimit(T, rate(o.rate, main)));
  const mainPhase = faults
    ? any(clientPhase, nemesis(timeLimit(T, [sleep((o.nemesisDelayS ?? 5) * SECOND), faults])))
    : clientPhase;
  const steps: GenLike[] = [mainPhase];
  if (heal) steps.push(clients(logOp('healing cluster')), nemesis(heal));
  if (o.recoveryS > 0)
    steps.push(clients(logOp('waiting for recovery')), clients(sleep(o.recoveryS * SECOND)));
  if (final) steps.push(clients(timeLimit(60 * SECOND, final)));
  return phases(...steps);
}

/**
 * Clock faults on nodes that share the control host's kernel clock (the local cluster) can only act on
 * the DB's own clock: each node gets the clock nemesis's libfaketime wrapper and the DB is started
 * through it. A binary libfaketime cannot affect (Go's etcd) is reported here and, by the nemesis's
 * evidence, as not landed.
 */
async function installClockWrappers(db: DB, ctx: DbContext): Promise<Record<string, unknown>> {
  const { installFaketimeWrapper } = await import('../../../nemeses/clock.ts');
  const out: Record<string, unknown> = {};
  await onAll(ctx.nodes, async (node) => {
    const which = await ctx.remote.exec(node, `command -v ${db.processName}`);
    const binary = which.stdout.trim();
    const w = await installFaketimeWrapper(ctx.remote, node, { binary, name: db.name });
    db.setWrapper(node, w.wrapperPath);
    out[node] = { wrapper: w.wrapperPath, rcFile: w.rcFile, affectability: w.affectability };
    if (!w.affectability.affectable)
      log().warn(
        { node, binary, reason: w.affectability.reason },
        'libfaketime cannot move this binary’s clock',
      );
  });
  return out;
}

/**
 * Retries an idempotent step (teardown, install) when the SSH channel was lost mid-command: the command
 * may or may not have run, and running it again is harmless. Bounded: 3 attempts.
 */
async function retryLostChannel(step: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof RemoteChannelError) || attempt >= 3) throw err;
      log().warn({ err: errorMessage(err), attempt }, 'SSH channel lost during an idempotent step; retrying');
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function onAll(nodes: readonly string[], fn: (node: string) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(nodes.map(fn));
  const failed = results
    .map((r, i) => (r.status === 'rejected' ? `${nodes[i]}: ${errorMessage(r.reason)}` : null))
    .filter((x): x is string => x !== null);
  if (failed.length > 0) throw new Error(failed.join('; '));
}

/** Downloads each node's DB logs into <runDir>/<node>/ (Jepsen's log snarfing); failures are logged, not fatal. */
async function collectLogs(db: DB, ctx: DbContext, runDir: string): Promise<void> {
  await Promise.all(
    ctx.nodes.map(async (node) => {
      const dir = join(runDir, node);
      mkdirSync(dir, { recursive: true });
      for (const remotePath of db.logFiles(ctx, node)) {
        const name = remotePath.split('/').pop() as string;
        await ctx.remote
          .download(node, remotePath, join(dir, name))
          .catch((err) => log().warn({ node, remotePath, err: errorMessage(err) }, 'could not collect log'));
      }
    }),
  );
}

/** The nemeses package's lookup, loaded lazily so runs without faults never load it. */
const defaultNemesisLookup: NemesisLookup = async (kind) => {
  const { nemesisOfKind } = await import('../../../nemeses/registry.ts');
  return nemesisOfKind(kind);
};
