import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult, Validity } from '../../../../checkers/types.ts';
import { sweepLeftovers } from '../../../../nemeses/heal.ts';
import { actsOnNodes, faultClasses } from '../../../../nemeses/registry.ts';
import { loadSchedule, parseFaults, type Schedule } from '../../../../nemeses/schedule.ts';
import type { SshCliOptions } from '../../../core/control/ssh-cli-options.ts';
import type { NodeSpec, Remote } from '../../../core/control/types.ts';
import { checkOutputDir } from '../../../core/util/atomic-write.ts';
import { parseDuration } from '../../../core/util/duration.ts';
import { EXIT, errorMessage, UserError } from '../../../core/util/errors.ts';
import { log, teeLogToFile } from '../../../core/util/log.ts';
import { pathName } from '../../../core/util/paths.ts';
import { clients } from '../../../lib/clients/registry.ts';
import {
  type ClientEndpoint,
  ClientOnlyRemote,
  clientOnlyInventory,
  endpointsFromList,
} from '../../../lib/clusters/client-only.ts';
import { leaseCommandCluster } from '../../../lib/clusters/cluster-lease.ts';
import { connectCluster } from '../../../lib/clusters/connect-cluster.ts';
import { type NodeListFlags, nodesFromFlags } from '../../../lib/clusters/node-list.ts';
import { bindDatabase, resolveDatabaseBinding } from '../../../lib/database-factory.ts';
import { resolveArtifactPaths } from '../../../lib/databases/artifact.ts';
import { databases } from '../../../lib/databases/registry.ts';
import { workloads } from '../../../lib/workloads/index.ts';
import {
  ControlLog,
  createSessionDir,
  DEBUG_LOG,
  DEFAULT_STORE_ROOT,
  SSH_LOG_DIR,
} from '../../report/session-dir.ts';
import { type TestReportInput, writeTestReport } from '../../run/test-report.ts';
import { recordSessionIndex } from '../../store/index-file.ts';
import { loadDispatchLog } from '../../test/dispatch-log.ts';
import { TEST_DEFAULTS } from '../../test/test-defaults.ts';
import { type Progress, runTest, type TestRunResult } from '../../test/test-run.ts';
import { nonNegativeInt, positiveInt } from '../int-flags.ts';
import { sshCliOptionsFrom } from '../ssh-flags.ts';

/**
 * Parses the `faultline test` flags, then runs: each run (of --test-count, seeds seed, seed+1, …) in
 * a session directory of its own, as Jepsen gives each test its own store directory, so `sessions`,
 * `serve` and `latest` see every run. Returns the combined exit code.
 */
export async function testCommand(flags: Record<string, unknown>): Promise<number> {
  const o = parseFlags(flags);
  // Every input file and the output directory are checked before anything touches the cluster.
  if (o.out) checkOutputDir(o.out);
  if (o.replay) await loadDispatchLog(o.replay);
  const faultSchedule = o.faultSchedule ? await loadSchedule(o.faultSchedule) : undefined;
  const baseSeed = o.seed ?? randomInt(1, 2 ** 31 - o.testCount);
  const releaseLease = await leaseCommandCluster(o, (line) => process.stderr.write(`${line}\n`));
  try {
    return await runEach(o, baseSeed, faultSchedule);
  } finally {
    releaseLease();
  }
}

/** Each of the `--test-count` runs in its own session; the combined exit code. */
async function runEach(o: TestFlags, baseSeed: number, faultSchedule: Schedule | undefined): Promise<number> {
  const verdicts: Validity[] = [];
  let say = (line: string): void => void process.stderr.write(`${line}\n`);
  for (let i = 0; i < o.testCount; i++) {
    const result = await inSession(o, (session) => {
      say = session.say;
      return runOnce(o, session, { seed: baseSeed + i, index: i, ...(faultSchedule && { faultSchedule }) });
    });
    verdicts.push(result.valid);
    if (result.interrupted) break;
  }
  if (o.testCount > 1)
    say(
      `faultline test: ${verdicts.length} of ${o.testCount} runs (seeds ${baseSeed}…${baseSeed + verdicts.length - 1}): ` +
        `${verdicts.map((v, i) => `${baseSeed + i} ${VALID_WORD(v)}`).join(', ')}`,
    );
  return combinedExitCode(verdicts);
}

interface TestSession {
  dir: string;
  control: ControlLog;
  say: (line: string) => void;
}

/**
 * One session directory in the same store layout as `faultline run` (<root>/<db>-<workload>/<UTC
 * timestamp>/, a `latest` link), its control and debug logs, and its line in the store's summary index.
 */
async function inSession<T>(o: TestFlags, fn: (session: TestSession) => Promise<T>): Promise<T> {
  const dir = await createSessionDir(o.out ?? DEFAULT_STORE_ROOT, `${o.db}-${o.workload}`, new Date(), [
    'logs',
  ]);
  const control = new ControlLog(dir);
  const say = (line: string) => {
    process.stderr.write(`${line}\n`);
    control.write(line);
  };
  const untee = teeLogToFile(join(dir, DEBUG_LOG));
  try {
    say(`session: ${dir}`);
    return await fn({ dir, control, say });
  } finally {
    untee();
    // The store's summary line, so `sessions` and `serve` need not parse results.json again.
    if (existsSync(join(dir, 'results.json'))) {
      const unindexed = recordSessionIndex(dir);
      if (unindexed) say(unindexed);
    }
  }
}

/** One run of `faultline test` in its session: connect, run, print as it ends. */
async function runOnce(
  o: TestFlags,
  session: TestSession,
  r: { seed: number; index: number; faultSchedule?: Schedule },
): Promise<{ valid: Validity; interrupted: boolean }> {
  if (o.endpoints) {
    session.say(
      `client-only run: ${Object.entries(o.endpoints)
        .map(([n, e]) => `${n} ${e.host}:${e.port}`)
        .join(', ')} (no SSH, nothing installed, only proxy faults)`,
    );
    return runInCluster(o, new ClientOnlyRemote(o.endpoints), session, r);
  }
  const cluster = await connectCluster(
    {
      ...(o.inventory && { inventory: o.inventory }),
      ...(o.local && { local: o.local }),
      ...(o.nodeList && {
        nodes: { specs: o.nodeList, description: `${o.nodeList.length} node(s) from --nodes` },
      }),
      clusterName: o.clusterName,
    },
    {
      ssh: o.ssh,
      remote: { logDir: join(session.dir, SSH_LOG_DIR) },
      localLifetime: 'keep',
      log: session.say,
    },
  );
  try {
    return await runInCluster(o, cluster.remote, session, r);
  } finally {
    await cluster.close();
  }
}

async function runInCluster(
  o: TestFlags,
  remote: Remote,
  session: TestSession,
  r: { seed: number; index: number; faultSchedule?: Schedule },
): Promise<{ valid: Validity; interrupted: boolean }> {
  const nodes = remote.nodes.map((n) => n.name);
  const concurrency = parseConcurrency(o.concurrency, nodes.length);
  if (!(remote instanceof ClientOnlyRemote)) {
    const swept = await sweepLeftovers(remote, nodes);
    for (const u of swept.undone) session.say(`left by an earlier run: ${u}`);
    if (!swept.clean)
      throw new UserError(
        `the nodes are not clean of an earlier run's faults: ${swept.left.join('; ')}; repair them with faultline heal --inventory FILE`,
      );
  }
  const sut = await bindDatabase(
    {
      db: o.db,
      ...(o.client && { client: o.client }),
      workload: o.workload,
      dbOptions: o.dbOptions,
      where: '--db',
      ...(o.endpoints && { endpoints: o.endpoints }),
    },
    remote,
  );
  const many = o.testCount > 1;
  const line =
    `faultline test${many ? ` ${r.index + 1}/${o.testCount}` : ''}: ${o.db} ${o.workload} on ${nodes.length} nodes, concurrency ${concurrency}, rate ${o.rate}/s, ` +
    `${o.timeLimitS}s, nemesis ${o.faults.join(',') || 'none'}, seed ${r.seed}`;
  session.say(line);
  let interrupted = false;
  let stopped: AbortSignal | undefined;
  const startedAt = new Date().toISOString();
  const result = await withInterrupt((signal) => {
    stopped = signal;
    signal.addEventListener('abort', () => {
      interrupted = true;
    });
    return runTest({
      remote,
      db: sut.db,
      makeClient: sut.makeClient,
      clientRoutable: sut.routable,
      workload: o.workload,
      faults: o.faults,
      nemesisIntervalS: o.nemesisIntervalS,
      timeLimitS: o.timeLimitS,
      concurrency,
      rate: o.rate,
      seed: r.seed,
      outDir: session.dir,
      opTimeoutMs: o.opTimeoutMs,
      recoveryS: o.recoveryS,
      leaveDbRunning: o.leaveDbRunning,
      ...(o.replay && { replay: o.replay }),
      ...(r.faultSchedule && { faultSchedule: r.faultSchedule }),
      onProgress: progressPrinter(session.control),
      meta: { dbOptions: o.dbOptions, client: sut.clientName, argv: process.argv.slice(2) },
      signal,
    });
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  const out = o.json ? `${JSON.stringify(result)}\n` : summaryTable(result);
  process.stdout.write(out);
  session.control.write(out);
  await report(session, {
    sessionDir: session.dir,
    startedAt,
    db: sut.db,
    hiddenRetries: sut.hiddenRetries,
    workload: o.workload,
    nodes,
    concurrency,
    faults: o.faults,
    timeLimitS: o.timeLimitS,
    rate: o.rate,
    seed: r.seed,
    sharedClock: remote.nodes.some((n) => n.sharedKernelClock === true),
    command: `faultline ${process.argv.slice(2).join(' ')}`,
    result,
    signal: stopped ?? new AbortController().signal,
  });
  return { valid: result.valid, interrupted };
}

/**
 * The findings report `faultline run` writes, for the one scenario this run was (S1). It never changes
 * the exit code (the checkers' verdict); when it cannot be written, the run says so and goes on.
 */
async function report(session: TestSession, input: TestReportInput): Promise<void> {
  try {
    const r = await writeTestReport(input);
    session.say(`S1: ${r.verdict} — ${r.reason}`);
    session.say(`report: ${join(session.dir, 'findings/report.html')} (also report.md, report.json)`);
  } catch (err) {
    session.say(`the findings report could not be written: ${errorMessage(err)}`);
  }
}

/** Every run counts: any invalid run exits 1, else any unknown one 2, else 0. */
export function combinedExitCode(verdicts: readonly Validity[]): number {
  if (verdicts.some((v) => v === false)) return EXIT.invalid;
  if (verdicts.some((v) => v !== true)) return EXIT.unknown;
  return EXIT.valid;
}

/**
 * Ctrl-C (or SIGTERM) stops the workload; the run then heals every fault, closes the history and checks
 * what ran. A second one exits at once (the fault ledger says what `faultline heal --ledger` must
 * finish). An uncaught error or unhandled rejection anywhere (a client's stray socket error) stops the
 * workload the same way, so the run heals before the error is reported (exit 255).
 */
async function withInterrupt<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const onSignal = () => {
    if (abort.signal.aborted) {
      process.stderr.write(
        '\nsecond interrupt: exiting now; heal with: faultline heal --ledger <run>/ledger.jsonl\n',
      );
      process.exit(130);
    }
    process.stderr.write('\ninterrupt: stopping the workload, healing faults (Ctrl-C again to quit now)\n');
    abort.abort(new Error('interrupted'));
  };
  let uncaught: { err: unknown } | null = null;
  const onError = (err: unknown) => {
    if (uncaught) return;
    uncaught = { err };
    process.stderr.write(`\nuncaught error: ${errorMessage(err)}; stopping the workload, healing faults\n`);
    abort.abort(err);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  try {
    const result = await run(abort.signal);
    if (uncaught) throw (uncaught as { err: unknown }).err;
    return result;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  }
}

export function exitCode(valid: Validity): number {
  return combinedExitCode([valid]);
}

interface TestFlags {
  db: string;
  client?: string;
  dbOptions: Record<string, unknown>;
  workload: string;
  inventory?: string;
  local?: number;
  clusterName: string;
  /** With `local`: how long to wait for another run holding the cluster, s. */
  clusterWaitS?: number;
  faults: string[];
  faultSchedule?: string;
  nemesisIntervalS: number;
  timeLimitS: number;
  concurrency: string;
  rate: number;
  seed?: number;
  out?: string;
  opTimeoutMs: number;
  recoveryS: number;
  serializableReads: boolean;
  replay?: string;
  leaveDbRunning: boolean;
  json: boolean;
  ssh: SshCliOptions;
  /** Jepsen-style `--nodes`/`--nodes-file`. */
  nodeList?: NodeSpec[];
  /** A client-only run (`--no-ssh`): the database's endpoints by node. */
  endpoints?: Record<string, ClientEndpoint>;
  /** Run the test this many times, with seeds seed, seed+1, … */
  testCount: number;
}

/** `--db-version`, `--db-tarball`, `--db-sha256`, `--db-binary` as the database's `dbOptions` keys (paths made absolute). */
function artifactFlags(f: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof f.dbVersion === 'string') out.version = f.dbVersion;
  if (typeof f.dbTarball === 'string') out.tarball = f.dbTarball;
  if (typeof f.dbSha256 === 'string') out.sha256 = f.dbSha256;
  if (typeof f.dbBinary === 'string') out.binary = f.dbBinary;
  return resolveArtifactPaths(out, process.cwd()) as Record<string, string>;
}

/** `10` or Jepsen's `3n` (× node count). */
export function parseConcurrency(text: string, nodeCount: number): number {
  const m = /^\s*(\d+)\s*(n?)\s*$/.exec(text);
  if (!m) throw new UserError(`--concurrency: "${text}" is not a number or a multiple of n (e.g. 10, 3n)`);
  const n = Number(m[1]) * (m[2] ? nodeCount : 1);
  if (n < 1) throw new UserError(`--concurrency: must be at least 1 (got ${text})`);
  return n;
}

/** `--no-ssh`: `--nodes host:port,…` are the database's endpoints; nothing else names nodes. */
function clientOnlyEndpoints(f: Record<string, unknown>): Record<string, ClientEndpoint> {
  for (const flag of ['inventory', 'local', 'nodesFile', 'username', 'sshPrivateKey'] as const)
    if (f[flag] !== undefined)
      throw new UserError(`--no-ssh: --${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs SSH`);
  if (f.nodes === undefined)
    throw new UserError('--no-ssh: name the database endpoints with --nodes host:port,…');
  return endpointsFromList(String(f.nodes), '--nodes');
}

/** A client-only run has no node-side fault: only the proxy's, on the clients' path. */
function refuseNodeFaults(faults: readonly string[]): void {
  const nodeSide = faults.filter((c) => actsOnNodes(faultClasses().find((x) => x.name === c)?.kind ?? c));
  if (nodeSide.length > 0)
    throw new UserError(
      `--no-ssh: ${nodeSide.join(', ')} act on the nodes, which a client-only run cannot reach; use proxy faults (--nemesis proxy-*)`,
    );
}

export function parseFlags(f: Record<string, unknown>): TestFlags {
  const db = String(f.db ?? TEST_DEFAULTS.db);
  const dbDef = databases.require(db, '--db');
  const workload = String(f.workload ?? TEST_DEFAULTS.workload);
  workloads.require(workload, '--workload');
  if (f.client !== undefined) clients.require(String(f.client), '--client');
  // Refused here, before any cluster is brought up for a run that could not start.
  resolveDatabaseBinding({
    db,
    ...(f.client !== undefined && { client: String(f.client) }),
    workload,
    where: '--db',
  });
  const serializableReads = f.serializableReads === true;
  if (serializableReads && !dbDef.staleReads)
    throw new UserError(`--serializable-reads: database ${db} has no possibly-stale read mode`);
  // --no-ssh --nodes host:port,…, or an inventory that says ssh: false.
  const fromInventory = f.ssh !== false && f.inventory ? clientOnlyInventory(String(f.inventory)) : null;
  const endpoints = f.ssh === false ? clientOnlyEndpoints(f) : (fromInventory ?? undefined);
  const nodeList = endpoints ? undefined : nodesFromFlags(f as NodeListFlags);
  if ([f.inventory, f.local, nodeList].filter(Boolean).length > 1)
    throw new UserError('--inventory, --local and --nodes/--nodes-file exclude each other');
  if (!f.inventory && !f.local && !nodeList && !endpoints)
    throw new UserError('say where the nodes are: --inventory FILE, --local N or --nodes n1,n2,…');
  const rate = Number(f.rate ?? TEST_DEFAULTS.rate);
  if (!(rate > 0))
    throw new UserError(`--rate: expected a positive number of ops per second (got ${String(f.rate)})`);
  const out: TestFlags = {
    db,
    ...(f.client !== undefined && { client: String(f.client) }),
    dbOptions: { ...(serializableReads ? dbDef.staleReads : {}), ...artifactFlags(f) },
    workload,
    clusterName: String(f.clusterName ?? TEST_DEFAULTS.clusterName),
    faults: parseFaults(f.nemesis === undefined ? undefined : String(f.nemesis)),
    nemesisIntervalS:
      parseDuration(String(f.nemesisInterval ?? TEST_DEFAULTS.nemesisInterval), '--nemesis-interval') / 1000,
    timeLimitS: parseDuration(String(f.timeLimit ?? TEST_DEFAULTS.timeLimit), '--time-limit') / 1000,
    concurrency: String(f.concurrency ?? TEST_DEFAULTS.concurrency),
    rate,
    opTimeoutMs: parseDuration(String(f.opTimeout ?? TEST_DEFAULTS.opTimeout), '--op-timeout'),
    recoveryS: parseDuration(String(f.recovery ?? TEST_DEFAULTS.recovery), '--recovery') / 1000,
    serializableReads,
    leaveDbRunning: f.leaveDbRunning === true,
    json: f.json === true,
    ssh: sshCliOptionsFrom(f),
    testCount: f.testCount === undefined ? TEST_DEFAULTS.testCount : positiveInt(f.testCount, '--test-count'),
  };
  if (nodeList) out.nodeList = nodeList;
  if (endpoints) {
    out.endpoints = endpoints;
    refuseNodeFaults(out.faults);
  }
  if (f.inventory && !fromInventory) out.inventory = String(f.inventory);
  if (f.local) {
    out.local = positiveInt(f.local, '--local');
    pathName('cluster', out.clusterName);
  }
  if (f.clusterWait !== undefined) out.clusterWaitS = nonNegativeInt(f.clusterWait, '--cluster-wait');
  if (f.seed !== undefined) out.seed = nonNegativeInt(f.seed, '--seed');
  if (f.out) out.out = String(f.out);
  if (f.replay) out.replay = String(f.replay);
  if (f.faultSchedule) out.faultSchedule = String(f.faultSchedule);
  return out;
}

function progressPrinter(control: ControlLog): (p: Progress) => void {
  // --quiet (log level warn or above): no progress lines, only the results.
  if (!log().isLevelEnabled('info')) return () => {};
  const tty = process.stderr.isTTY;
  let last = 0;
  return (p) => {
    const line =
      `  ${p.elapsedS.toFixed(0).padStart(4)}s  ${p.stats.invoked} ops (${p.opsPerSec.toFixed(0)}/s)  ` +
      `ok ${p.stats.ok} fail ${p.stats.fail} info ${p.stats.info}  in flight ${p.stats.inFlight}  ` +
      `faults: ${p.faults.length > 0 ? p.faults.join('; ') : 'none'}`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    if (p.elapsedS - last >= 5) {
      last = p.elapsedS;
      if (!tty) process.stderr.write(`${line}\n`);
      control.write(line);
    }
  };
}

const VALID_WORD = (v: Validity) => (v === true ? 'valid' : v === false ? 'INVALID' : 'unknown');

export function summaryTable(r: TestRunResult): string {
  const rows: [string, string, string][] = r.results.map((c: CheckResult) => [
    c.checker,
    VALID_WORD(c.valid),
    c.evidence,
  ]);
  const w0 = Math.max(7, ...rows.map((x) => x[0].length));
  const w1 = 7;
  const lines = [
    `${'checker'.padEnd(w0)}  ${'result'.padEnd(w1)}  evidence`,
    `${'-'.repeat(w0)}  ${'-'.repeat(w1)}  ${'-'.repeat(40)}`,
    ...rows.map(([a, b, c]) => `${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`),
    '',
    `ops: ${r.stats.invoked} invoked, ${r.stats.ok} ok, ${r.stats.fail} fail, ${r.stats.info} info (${r.stats.timeouts} timeouts); faults: ${r.faults.length}; ${r.elapsedS.toFixed(0)}s`,
    `run directory: ${r.runDir}`,
    `verdict: ${VALID_WORD(r.valid)}`,
    '',
  ];
  return lines.join('\n');
}
