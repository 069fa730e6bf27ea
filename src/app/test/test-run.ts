import { join, resolve } from 'node:path';
import type { CheckResult, Validity } from '../../../checkers/types.ts';
import type { DeclaredSignal } from '../../../nemeses/declared-signal.ts';
import type { HealReport } from '../../../nemeses/heal.ts';
import { FaultPlane } from '../../../nemeses/plane.ts';
import { ProxyHub, setActiveProxyHub } from '../../../nemeses/proxy/hub.ts';
import { controlHostAddress } from '../../../nemeses/proxy/peers.ts';
import { classifyFaultOp } from '../../../nemeses/registry.ts';
import { buildSchedule, type Schedule, scheduleOps, scheduleToJson } from '../../../nemeses/schedule.ts';
import type { FaultRecord, Nemesis } from '../../../nemeses/types.ts';
import { clusterAddress } from '../../core/control/addresses.ts';
import type { Remote } from '../../core/control/types.ts';
import type { DbVersionReport } from '../../core/database/capabilities.ts';
import { hasCapability } from '../../core/database/capabilities.ts';
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
import { makeOutputDir, writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { bounded, boundedQuietly } from '../../core/util/bounded.ts';
import { currentClientThread } from '../../core/util/client-thread.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import type { Client } from '../../lib/clients/types.ts';
import { ClientOnlyRemote } from '../../lib/clusters/client-only.ts';
import type { AddressRoute } from '../../lib/database-factory.ts';
import { describeVersions } from '../../lib/databases/artifact.ts';
import type { Database, DbContext } from '../../lib/databases/types.ts';
import { makeWorkload, type Workload } from '../../lib/workloads/index.ts';
import type { CheckerSpec } from '../../lib/workloads/types.ts';
import { runChecks } from './checks.ts';
import { type ClockWrappers, faultTargetOf, installClockWrappers } from './clock-wrappers.ts';
import { onAll, setUpDatabase, tearDownDatabase } from './database-lifecycle.ts';
import { DispatchLogWriter, loadDispatchLog, replayDispatchLog } from './dispatch-log.ts';
import { openHistorySink } from './history-sink.ts';
import { inHook } from './hook-error.ts';
import { Interpreter, type InterpreterStats } from './interpreter.ts';
import { startPrimariesSampler } from './primaries-sampler.ts';

/**
 * One `faultline test` run, in Jepsen's order (reference §1.4): DB cycle (teardown, install, setup, ready)
 * → client setup → the generator (workload under rate + time limit, faults on their own schedule) →
 * heal every fault → recovery sleep → final reads → collect node logs → DB teardown → checkers.
 * Faults are healed and the DB torn down in `finally`, whatever happened before.
 *
 * The run directory holds: test.json (the options), history.jsonl, schedule.json (the dispatch log: every op),
 * fault-schedule.json (the nemesis ops, replayable), ledger.jsonl (faults), faults.json (records with
 * landing evidence), heal.json (the final heal and sweep), <node>/… (DB logs), results.json and checker
 * artifacts, and Jepsen's history.edn and results.edn.
 */
export interface TestRunOptions {
  remote: Remote;
  db: Database;
  /**
   * Builds the workload's client for this DB (given the workload's client options); `route` points its
   * addresses at the run's proxy when proxy faults are scheduled.
   */
  makeClient: (clientOptions: Record<string, unknown>, route?: AddressRoute) => Client | Promise<Client>;
  /**
   * Does the client connect only where `db.clientAddress` says (its definition's `endpoints`)? false:
   * proxy faults are refused before anything runs, since the clients would go around the proxy.
   */
  clientRoutable?: boolean;
  workload: string;
  /** The checkers to run (with their options), given the workload; the workload's own when absent. */
  checkers?: readonly CheckerSpec[] | ((workload: Workload) => readonly CheckerSpec[]);
  /** Random fault classes (`--nemesis`), scheduled Jepsen-style every `nemesisIntervalS` on average. */
  faults: readonly string[];
  nemesisIntervalS: number;
  /** A fault schedule of the caller's own (a plan's windows, a replayed fault-schedule.json). */
  faultSchedule?: Schedule;
  /**
   * How clock faults move time: 'faketime' (the DB runs under the libfaketime wrapper) or 'settime' (the
   * node's kernel clock). Default: faketime when a node shares the control host's kernel clock (a
   * namespace cluster), else settime — the only way to move a Go binary such as etcd.
   */
  clockMode?: 'faketime' | 'settime';
  /** Restrict the target selectors drawn per fault class (e.g. partition: ['primaries']). */
  faultTargets?: Readonly<Record<string, readonly string[]>>;
  /** How long the workload runs (random faults start after `nemesisDelayS`). */
  timeLimitS: number;
  nemesisDelayS?: number;
  concurrency: number;
  rate: number;
  seed: number;
  outDir: string;
  opTimeoutMs: number;
  /**
   * How long a client's open, setup, teardown and close may each take before they are abandoned (logged;
   * the run goes on). Default 30 s.
   */
  clientCallTimeoutMs?: number;
  /** Sleep between healing and the final reads. */
  recoveryS: number;
  leaveDbRunning?: boolean;
  /** Replay this schedule.json instead of generating ops. */
  replay?: string;
  /** Nemesis by kind (tests pass fakes); the registry's by default. */
  lookupNemesis?: (kind: string) => Promise<Nemesis>;
  /** The landing signals the plan declares (§7.M), read before, during and after each fault. */
  declaredSignals?: readonly DeclaredSignal[];
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
  faults: FaultRecord[];
  /** The final heal and the sweep of every node (null when the run had no faults). */
  heal: HealReport | null;
  elapsedS: number;
}

/** What the passes of one run share. */
interface RunState {
  o: TestRunOptions;
  started: number;
  runDir: string;
  nodes: string[];
  dbCtx: DbContext;
  workload: Workload;
  rng: Rng;
  schedule: Schedule | null;
  plane: FaultPlane | undefined;
  clock: ClockWrappers | undefined;
  /** The client factory once the workload has opened it: torn down per node after the heal. */
  client?: Client;
  /** The version the database reported on each node (when it can tell). */
  dbVersions?: DbVersionReport | undefined;
  /** The proxy on the clients' path, when proxy faults are scheduled: closed after the heal. */
  proxy?: ProxyHub;
}

export async function runTest(o: TestRunOptions): Promise<TestRunResult> {
  const s = prepareRun(o);
  let stats: InterpreterStats | undefined;
  let heal: HealReport | null = null;
  let runError: unknown;
  try {
    await startPeerProxy(s);
    await setUpDb(s);
    stats = await runWorkload(s);
  } catch (err) {
    runError = err;
  } finally {
    heal = await healAndTearDown(s);
  }
  if (runError) throw runError;
  return checkRun(s, stats as InterpreterStats, heal);
}

/** The run directory, test.json, the workload, the fault schedule and the fault plane. */
function prepareRun(o: TestRunOptions): RunState {
  const started = Date.now();
  const runDir = resolve(o.outDir);
  makeOutputDir(runDir);
  const nodes = o.remote.nodes.map((n) => n.name);
  const dbCtx: DbContext = { remote: o.remote, nodes };
  const workload = makeWorkload(o.workload, { nodes, concurrency: o.concurrency });
  const rng = new Rng(o.seed);
  const schedule = faultScheduleOf(o, nodes.length);
  writeJson(join(runDir, 'test.json'), {
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
  });
  if (schedule) writeFileAtomicSync(join(runDir, 'fault-schedule.json'), scheduleToJson(schedule));
  const state: RunState = {
    o,
    started,
    runDir,
    nodes,
    dbCtx,
    workload,
    rng,
    schedule,
    plane: undefined,
    clock: undefined,
  };
  if (schedule || o.replay)
    state.plane = new FaultPlane({
      remote: o.remote,
      ledgerPath: join(runDir, 'ledger.jsonl'),
      ...(o.remote instanceof ClientOnlyRemote && { reach: { clientOnly: true } }),
      // Read at injection time: the clock wrappers are installed during set-up.
      sut: faultTargetOf(o.db, dbCtx, () => state.clock),
      rng,
      ...(o.lookupNemesis && { lookup: o.lookupNemesis }),
      ...(o.declaredSignals && { declaredSignals: o.declaredSignals }),
    });
  return state;
}

/** The caller's schedule, or Jepsen's combined schedule of the chosen classes; null without faults. */
function faultScheduleOf(
  o: Pick<
    TestRunOptions,
    'faultSchedule' | 'faults' | 'nemesisIntervalS' | 'timeLimitS' | 'nemesisDelayS' | 'seed' | 'faultTargets'
  > & { db?: Database },
  nodeCount?: number,
): Schedule | null {
  if (o.faultSchedule) return o.faultSchedule;
  if (o.faults.length === 0) return null;
  return buildSchedule({
    faults: o.faults,
    intervalMs: o.nemesisIntervalS * 1000,
    durationMs: o.timeLimitS * 1000,
    delayMs: (o.nemesisDelayS ?? 5) * 1000,
    seed: o.seed,
    ...(nodeCount !== undefined && { nodeCount }),
    ...(o.faultTargets && { targets: o.faultTargets }),
    ...(o.db && { hasPrimaries: hasCapability(o.db, 'primaries') }),
  });
}

/** The database's lifecycle (database-lifecycle.ts), with the clock wrappers installed before setup. */
async function setUpDb(s: RunState): Promise<void> {
  const { o, dbCtx } = s;
  const clockMode = o.clockMode ?? (o.remote.nodes.some((n) => n.sharedKernelClock) ? 'faketime' : 'settime');
  const wantsClock =
    clockMode === 'faketime' &&
    s.schedule?.ops.some((op) => classifyFaultOp(op.f, op.value)?.kind === 'clock') === true;
  await setUpDatabase(o.db, dbCtx, async (all) => {
    if (wantsClock) s.clock = await installClockWrappers(o.db, dbCtx, all);
  });
  const db = o.db;
  if (hasCapability(db, 'versions'))
    s.dbVersions = await recordDbVersions(db.versions.bind(db), dbCtx, s.runDir);
}

/**
 * The version the database itself reports on every node, in db-version.json and results.json; a
 * mismatch with the expected version is a warning on the console, not a failed run (the history is
 * still the database's).
 */
async function recordDbVersions(
  versions: (ctx: DbContext) => Promise<DbVersionReport>,
  ctx: DbContext,
  runDir: string,
): Promise<DbVersionReport | undefined> {
  try {
    const r = await bounded('database versions()', 60_000, () => versions(ctx));
    writeJson(join(runDir, 'db-version.json'), r);
    if (r.mismatched.length > 0) {
      process.stderr.write(`faultline: warning: ${describeVersions(r)}\n`);
      log().warn({ versions: r }, 'database version mismatch');
    } else log().info(describeVersions(r));
    return r;
  } catch (err) {
    log().warn({ err: errorMessage(err) }, 'could not ask the database for its version');
    return undefined;
  }
}

/** Client setup, then the generator through the interpreter, streaming history and schedule to disk. */
async function runWorkload(s: RunState): Promise<InterpreterStats> {
  const { o, nodes, runDir, workload } = s;
  const proxy = await startProxy(s);
  const client = await inHook(o.db.name, 'client create', null, o.remote, async () =>
    o.makeClient(
      workload.clientOptions,
      ...(proxy
        ? [(address: string, node: string) => proxy.route(address, node, currentClientThread())]
        : []),
    ),
  );
  s.client = client;
  const limit = o.clientCallTimeoutMs ?? CLIENT_CALL_MS;
  await onAll(nodes, (n) =>
    inHook(o.db.name, 'client setup', n, o.remote, async () => {
      const c = await bounded(`client open(${n})`, limit, () => client.open(n));
      try {
        await bounded(`client setup() on ${n}`, limit, () => c.setup());
      } finally {
        await boundedQuietly(`client close() on ${n}`, closeLimit(o), () => c.close());
      }
    }),
  );
  const generator: Generator = o.replay
    ? replayDispatchLog(await loadDispatchLog(o.replay))
    : buildGenerator(
        { ...o, ...(s.schedule && { faultSchedule: s.schedule }) },
        workload.generator(),
        workload.finalGenerator(),
      );
  const sink = await openHistorySink(join(runDir, 'history.jsonl'));
  const dispatchLog = new DispatchLogWriter(join(runDir, 'schedule.json'), {
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
    ...(s.plane && { nemesis: s.plane }),
    sink,
    rng: s.rng,
    opTimeoutMs: o.opTimeoutMs,
    closeTimeoutMs: closeLimit(o),
    dispatchLog,
    ...(o.signal && { signal: o.signal }),
  });
  // The database's own view of its primaries, sampled while faults run: what failovers are counted from.
  const db = o.db;
  const primaries = hasCapability(db, 'primaries') ? db.primaries.bind(db) : undefined;
  const stopSampler =
    primaries && s.plane
      ? startPrimariesSampler(join(runDir, 'primaries.jsonl'), interp.clock, () => primaries(s.dbCtx))
      : null;
  const progress = o.onProgress
    ? setInterval(() => {
        const elapsedS = interp.clock.now() / 1e9;
        o.onProgress?.({
          elapsedS,
          stats: interp.stats,
          opsPerSec: elapsedS > 0 ? interp.stats.invoked / elapsedS : 0,
          faults: s.plane?.describeActive() ?? [],
        });
      }, 1000)
    : undefined;
  // Requests on the wire are counted over the workload only (set-up and teardown send their own).
  const wireBefore = client.wire?.().requests ?? 0;
  try {
    return await interp.run();
  } finally {
    writeJson(join(runDir, 'clock.json'), interp.clock.readings());
    const wire = client.wire?.();
    if (wire) writeJson(join(runDir, 'wire.json'), { ...wire, requests: wire.requests - wireBefore });
    await stopSampler?.();
    if (progress) clearInterval(progress);
    await sink.close();
    await dispatchLog.close();
  }
}

/**
 * The proxy, when the schedule has proxy faults: a listener on loopback per node forwarding to the node's
 * client address, made the process's proxy (the proxy nemesis acts on it). The clients are pointed at it.
 */
async function startProxy(s: RunState): Promise<ProxyHub | undefined> {
  const { o, nodes, dbCtx } = s;
  if (!s.schedule?.ops.some((op) => classifyFaultOp(op.f, op.value)?.kind === 'proxy')) return undefined;
  if (o.clientRoutable === false)
    throw new UserError(
      'proxy faults need a client that connects only where the database says (endpoints: client-address); this client finds its own addresses',
    );
  // A fault on a client group needs a listener per client thread, so the proxy can tell the groups apart.
  const grouped = s.schedule.ops.some(
    (op) =>
      op.f === 'start-proxy' &&
      Array.isArray((op.value as { params?: { clients?: unknown } })?.params?.clients),
  );
  const hub = s.proxy ?? ProxyHub.create();
  s.proxy = hub;
  setActiveProxyHub(hub);
  await hub.addClients(
    Object.fromEntries(nodes.map((n) => [n, o.db.clientAddress(dbCtx, n)])),
    grouped ? o.concurrency : 0,
  );
  log().info(hub.describe(), 'clients go through the proxy');
  return hub;
}

/** Does the schedule have a proxy fault on the members' peer links? */
function peerProxyOps(s: RunState): boolean {
  return (
    s.schedule?.ops.some(
      (op) =>
        op.f === 'start-proxy' && (op.value as { params?: { links?: unknown } })?.params?.links === 'peers',
    ) === true
  );
}

/**
 * Before the database is set up, when a proxy fault acts on peer links: a peer listener per member on
 * the address the members reach the control host at, forwarding to the member's real peer address, and
 * the database told to advertise those listeners (ctx.peerRoute), so members talk only through the proxy.
 */
async function startPeerProxy(s: RunState): Promise<void> {
  const { o, nodes, dbCtx } = s;
  if (!peerProxyOps(s)) return;
  if (o.remote instanceof ClientOnlyRemote)
    throw new UserError(
      'a proxy fault on peer links needs faultline to configure the database on the nodes; a client-only run (--no-ssh) cannot',
    );
  const db = o.db;
  const peerAddress = hasCapability(db, 'peer-address') ? db.peerAddress.bind(db) : undefined;
  if (!peerAddress)
    throw new UserError(
      `a proxy fault on peer links needs a database that lets faultline choose its members' peer addresses; ${o.db.name} declares no peer address`,
    );
  const addresses = Object.fromEntries(o.remote.nodes.map((n) => [n.name, clusterAddress(n)]));
  const listenHost = await controlHostAddress(addresses).catch((err: Error) => {
    throw new UserError(`proxy on peer links: ${err.message}`);
  });
  const hub = ProxyHub.create();
  s.proxy = hub;
  setActiveProxyHub(hub);
  await hub.addPeers(
    Object.fromEntries(nodes.map((n) => [n, peerAddress(dbCtx, n)])),
    listenHost,
    Object.fromEntries(Object.entries(addresses).map(([n, a]) => [a, n])),
  );
  dbCtx.peerRoute = (address, node) => hub.peerRoute(address, node);
  log().info(hub.describe(), "the members' peer traffic goes through the proxy");
}

/** Heal every fault and sweep the nodes, collect the DB logs, tear the DB down. Never throws. */
async function healAndTearDown(s: RunState): Promise<HealReport | null> {
  const { o, nodes, dbCtx, runDir } = s;
  let heal: HealReport | null = null;
  if (s.plane) {
    heal = await s.plane.healAll('used');
    if (!heal.clean)
      log().error(
        { faults: heal.faults.filter((f) => !f.healed), sweep: heal.sweep.filter((x) => !x.clean) },
        'not everything healed cleanly; run faultline heal --ledger',
      );
    s.plane.close();
    writeJson(join(runDir, 'faults.json'), s.plane.records);
    writeJson(join(runDir, 'heal.json'), heal);
  }
  // A stopped run (Ctrl-C, the deadline) gives the client's teardown only what a close gets: it must end soon.
  const stopped = o.signal?.aborted === true;
  const teardownMs = stopped ? closeLimit(o) / 2 : (o.clientCallTimeoutMs ?? CLIENT_CALL_MS);
  if (s.client) await tearDownClients(s.client, nodes, teardownMs, stopped ? teardownMs : closeLimit(o));
  await collectLogs(o.db, dbCtx, runDir);
  if (!o.leaveDbRunning) await tearDownDatabase(o.db, dbCtx);
  else if (s.proxy?.peerLinks.size)
    log().warn(
      "the database is left running, but its members reached each other through this run's proxy, which stops now",
    );
  // After the teardown: members whose peer traffic goes through the proxy lose each other when it stops.
  if (s.proxy) {
    await s.proxy.close();
    setActiveProxyHub(null);
  }
  return heal;
}

/** The declared checkers, the run's own checks (workload, faults), perf and timeline; results.json. */
async function checkRun(
  s: RunState,
  stats: InterpreterStats,
  heal: HealReport | null,
): Promise<TestRunResult> {
  const { o, runDir } = s;
  log().info('checking the history');
  const history = pairEvents(await loadHistory(join(runDir, 'history.jsonl'), { format: 'jsonl' }));
  const records = s.plane?.records ?? null;
  const specs =
    typeof o.checkers === 'function' ? o.checkers(s.workload) : (o.checkers ?? s.workload.checkers);
  const { valid, results } = await runChecks(history, specs, records, runDir);
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
  const elapsedS = (Date.now() - s.started) / 1000;
  const resultsDoc = {
    valid,
    elapsedS,
    stats,
    results,
    perf: drawn.results[0] ?? null,
    ...(s.dbVersions && { dbVersion: s.dbVersions }),
  };
  writeJson(join(runDir, 'results.json'), resultsDoc);
  // Jepsen's history.edn and results.edn beside the JSON files.
  await writeRunEdn(runDir, resultsDoc).catch((err) =>
    log().warn({ err: errorMessage(err) }, 'could not write history.edn / results.edn'),
  );
  return { valid, runDir, results, stats, faults: records ?? [], heal, elapsedS };
}

/**
 * Jepsen's etcd shape: the workload at `rate` under a time limit with the faults on their schedule
 * (timed nemesis ops), then heal everything, wait for recovery, and the workload's final reads.
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
    | 'seed'
  >,
  main: GenLike,
  final: GenLike | null,
): Generator {
  const T = o.timeLimitS * SECOND;
  const schedule = faultScheduleOf(o);
  const faults = schedule ? scheduleOps(schedule) : null;
  const clientPhase = clients(timeLimit(T, rate(o.rate, main)));
  const mainPhase = faults ? any(clientPhase, nemesis(timeLimit(T, faults.main))) : clientPhase;
  const steps: GenLike[] = [mainPhase];
  if (faults && faults.final.length > 0) steps.push(clients(logOp('healing cluster')), nemesis(faults.final));
  if (o.recoveryS > 0)
    steps.push(clients(logOp('waiting for recovery')), clients(sleep(o.recoveryS * SECOND)));
  if (final) steps.push(clients(timeLimit(60 * SECOND, final)));
  return phases(...steps);
}

/**
 * The client protocol's teardown, once per node after the workload and the heal (Jepsen's teardown!):
 * a client opened for it, torn down, closed. Bounded, and a failure is logged, never fatal: the
 * history is already on disk.
 */
async function tearDownClients(
  client: Client,
  nodes: readonly string[],
  limit: number,
  closeMs: number,
): Promise<void> {
  await Promise.all(
    nodes.map((n) =>
      boundedQuietly(`client teardown on ${n}`, limit + closeMs, async () => {
        const c = await bounded(`client open(${n})`, limit, () => client.open(n));
        try {
          await bounded(`client teardown() on ${n}`, limit, () => c.teardown());
        } finally {
          await boundedQuietly(`client close() on ${n}`, closeMs, () => c.close());
        }
      }),
    ),
  );
}

/** How long a client's open, setup or teardown may take before it is abandoned. */
const CLIENT_CALL_MS = 30_000;
/** A close has nothing to wait for: it gets less, so an aborted run still ends soon after its deadline. */
const CLIENT_CLOSE_MS = 10_000;
const closeLimit = (o: TestRunOptions) => Math.min(o.clientCallTimeoutMs ?? CLIENT_CALL_MS, CLIENT_CLOSE_MS);

/**
 * Downloads each node's DB logs into <runDir>/<node>/ (Jepsen's log snarfing); failures are logged, not
 * fatal. A database without the log-files capability has nothing to collect (the SUT log audit says so).
 */
async function collectLogs(db: Database, ctx: DbContext, runDir: string): Promise<void> {
  if (!hasCapability(db, 'logs')) return;
  const logFiles = db.logFiles.bind(db);
  await Promise.all(
    ctx.nodes.map(async (node) => {
      const dir = join(runDir, node);
      makeOutputDir(dir);
      for (const remotePath of logFiles(ctx, node)) {
        const name = remotePath.split('/').pop() as string;
        await ctx.remote
          .download(node, remotePath, join(dir, name))
          .catch((err) => log().warn({ node, remotePath, err: errorMessage(err) }, 'could not collect log'));
      }
    }),
  );
}

function writeJson(path: string, value: unknown): void {
  writeFileAtomicSync(path, `${JSON.stringify(value, null, 2)}\n`);
}
