import { z } from 'zod';
import { killPidsCommand, parsePids, signalTreeCommand } from '../src/core/control/process-tree.ts';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';
import {
  databaseWith,
  type FaultTarget,
  STOP_SIGNALS,
  type StopSignal,
} from '../src/core/database/capabilities.ts';
import { pollFor } from '../src/core/util/retry.ts';
import {
  capabilityCommand,
  controlCommand,
  daemonOnDirCommand,
  fsyncProbeCommand,
  installProgramCommand,
  ioErrorLogCommand,
  ioProbeCommand,
  listMountsCommand,
  mountCommand,
  mountedCommand,
  parseIoErrorLog,
  parseProbe,
  pidAliveCommand,
  stopDaemonCommand,
  unmountCommand,
} from './commands/lazyfs-commands.ts';
import { fileGlobRegex } from './file-glob.ts';
import { landingEvidence, shownAt } from './landing.ts';
import { LAZYFS_ACTIONS, type LazyfsAction } from './lazyfs-actions.ts';
import { LAZYFS_PROGRAM } from './lazyfs-program.ts';
import { listMarkersCommand, nodeStateDir, parseMarkers, writeMarkerCommand } from './node-state.ts';
import { observersFor, peerSees, peerText } from './process.ts';
import {
  type Capability,
  CapabilityMissingError,
  type CleanReport,
  type EvidenceSignal,
  type FaultEvidence,
  type FaultRecord,
  type InjectOptions,
  type Nemesis,
} from './types.ts';

/**
 * Filesystem faults that lose data the way a power failure does. Each window puts the targets' data
 * directories on the lazy filesystem (a FUSE passthrough that keeps writes not yet fsynced in its own
 * cache; see lazyfs-program.ts): the database is stopped, its directory moved aside and mounted back
 * through the filesystem, and the fault plane starts the database again on it. With params.move
 * `rolling` and the database's own start at hand, several targets move one at a time, the leader last,
 * each started and seen writing on the mount before the next stops (a rolling restart; the undo records
 * the order). Then, by action:
 *
 * - lose-unfsynced: the window's end is the power failure. Every target's database is stopped (SIGSTOP)
 *   at once with every process it started, every write not fsynced is dropped, those processes are
 *   killed (-9), the filesystem is unmounted and the database restarted on what survived. Evidence: the bytes and files dropped (injector), each dropped file's size as the
 *   database left it and as it survived (victim).
 * - fsync-fail: every fsync fails with EIO during the window. With the database's own start (the fault
 *   plane's), the database is first started on the mount and seen writing through it, and only then do
 *   its fsyncs begin to fail, as a disk failing under a running database would: the evidence is the
 *   database's own fsyncs answering EIO (injector) and what it did about it (victim: exited, I/O errors
 *   in its log, a peer seeing it down); after heal it runs and serves again.
 * - torn-op, torn-seq: the same power failure, torn (LazyFS's faults): each hit file keeps its writes
 *   before the last one and a part of the last (params.keep: a prefix of params.fraction of its bytes,
 *   or some of the pages it spans), or, torn-seq, a seeded subset of its writes since the last fsync,
 *   a later one surviving an earlier one that does not. Evidence: every write's byte ranges kept and
 *   lost, each file's size before and after.
 * - eio-read, eio-write: every read (write) of the files params.files names answers EIO while the
 *   database runs (CORDS's read and write errors); as fsync-fail, the database is started on the mount
 *   and seen writing through it first. Evidence: the errors the database's own calls got, per file,
 *   and what it did about them.
 * - fsync-delay: every fsync waits params.delayMs first.
 * - slow: every read and write waits params.delayMs first.
 *
 * params.files (patterns under the data directory, file-glob.ts) aims the power failures at those
 * files: only they lose anything, every other file's writes reach the disk first. The files matched,
 * with their sizes as the database sees them and on the disk, are in the landing evidence.
 *
 * The other actions end cleanly: the database is stopped, the cache flushed (nothing is lost), the
 * filesystem unmounted, the database restarted. Heal from a ledger alone (`faultline heal`) does the
 * same without the restart; the sweep unmounts any lazy filesystem a killed run left behind.
 *
 * params (filled by the fault plane from the database): dirs {node: data dir}, pidFiles {node: pidfile},
 * processName, stopSignal (when not TERM); delayMs for fsync-delay and slow.
 */

const PROGRAM_AREA = 'lazyfs';
const MARKERS = 'lazyfs-mounts';

const specParams = z.object({
  dirs: z.record(z.string(), z.string().startsWith('/')),
  pidFiles: z.record(z.string(), z.string().startsWith('/')),
  processName: z.string().min(1),
  stopSignal: z.enum(STOP_SIGNALS).optional(),
  delayMs: z.number().int().positive().optional(),
  files: z.array(z.string()).optional(),
  seed: z.number().int().nonnegative().optional(),
  keep: z.enum(['prefix', 'pages']).optional(),
  fraction: z.number().gt(0).lt(1).optional(),
  move: z.enum(['all-at-once', 'rolling']).optional(),
});
type SpecParams = z.infer<typeof specParams>;

/** Actions whose window ends in a power failure, and what the filesystem is told at that moment. */
const POWER_FAILURE: Partial<Record<LazyfsAction, string>> = {
  'lose-unfsynced': 'lose-unfsynced',
  'torn-op': 'torn-op',
  'torn-seq': 'torn-seq',
};
/** Actions whose errors begin under the running database, and the counter of the errors it got. */
const UNDER_RUNNING_DB: Partial<Record<LazyfsAction, 'fsyncsFailed' | 'eioReads' | 'eioWrites'>> = {
  'fsync-fail': 'fsyncsFailed',
  'eio-read': 'eioReads',
  'eio-write': 'eioWrites',
};

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64');

/** The filesystem's `aim` command: the plan's patterns, and which calls on those files answer EIO. */
function aimWords(files: readonly string[] | undefined, eio: 'read' | 'write' | null): string[] | null {
  if (!files || files.length === 0) return null;
  return ['aim', b64({ patterns: files.map(fileGlobRegex), eio })];
}

/** What the filesystem is told when the window ends (torn ones with their seed and kept part). */
function powerWords(action: LazyfsAction, p: Partial<SpecParams>): string[] | null {
  const cmd = POWER_FAILURE[action];
  if (!cmd) return null;
  if (cmd === 'lose-unfsynced') return [cmd];
  return [cmd, b64({ seed: p.seed ?? 0, keep: p.keep ?? 'prefix', fraction: p.fraction ?? 0.5 })];
}

interface NodeUndo {
  dir: string;
  backing: string;
  socket: string;
  program: string;
  pidFile: string;
  processName: string;
  /** How the database is asked to stop before it moves (its ProcessControl.stopSignal). */
  stopSignal: StopSignal;
  /** What the power failure dropped (set by heal of lose-unfsynced, torn-op, torn-seq). */
  dropped?: DropReport | null;
  /** The filesystem's words at the power failure (torn ones carry their seed). */
  power?: string[];
  /** Aimed faults: the `aim` words (patterns, EIO mode). */
  aim?: string[];
  /** Aimed faults: the files matched when the evidence was read. */
  matched?: MatchedFile[];
  /** The daemon's pid the power failure stopped and then killed (or the one a heal stopped). */
  killed?: string;
  /** How many processes the power failure stopped: the daemon and every process descended from it. */
  frozen?: number;
  /** fsync-fail on a running database: what it had done on the mount when its fsyncs began to fail. */
  running?: RunningBefore;
}

interface RunningBefore {
  pid: number;
  writes: number;
  fsyncs: number;
  /** The errors that begin: fsyncs failing, or reads or writes of the aimed files. */
  errors: 'fsyncsFailed' | 'eioReads' | 'eioWrites';
  /** Lines of its log reporting an I/O error, before. */
  ioErrors: number;
  logFiles: string[];
  /** The peer that watches it, and how it saw it before. */
  observer?: string;
  peerBefore?: string;
}

interface LazyfsUndo extends Record<string, unknown> {
  action: LazyfsAction;
  perNode: Record<string, NodeUndo>;
  /**
   * Several members moved onto the lazy filesystem with the database's own start at hand: the order,
   * one at a time, the leaders the database named last (see moveOneAtATime).
   */
  moved?: { order: string[]; leaders: string[] };
}

const piece = z.object({ write: z.number(), at: z.number(), bytes: z.number() });
const dropReport = z.object({
  bytes: z.number(),
  files: z.array(
    z.object({
      path: z.string(),
      bytes: z.number(),
      sizeBefore: z.number(),
      sizeAfter: z.number().nullable(),
      writes: z.number().optional(),
      kept: z.array(piece).optional(),
      lost: z.array(piece).optional(),
    }),
  ),
  /** Aimed: the files not aimed at, whose un-fsynced writes reached the disk first. */
  flushed: z.array(z.object({ path: z.string(), bytes: z.number(), size: z.number() })).optional(),
  torn: z.string().nullable().optional(),
  stats: z.record(z.string(), z.unknown()).optional(),
});
type DropReport = z.infer<typeof dropReport>;

const matchedFile = z.object({
  path: z.string(),
  size: z.number(),
  durable: z.number(),
  unsynced: z.number(),
});
type MatchedFile = z.infer<typeof matchedFile>;
const matchedReport = z.object({ files: z.array(matchedFile) });

const statsReport = z.looseObject({
  writes: z.number(),
  bytesWritten: z.number(),
  fsyncs: z.number(),
  fsyncsFailed: z.number(),
  eioReads: z.number().default(0),
  eioWrites: z.number().default(0),
  eioFiles: z.record(z.string(), z.number()).default({}),
  unsyncedBytes: z.number(),
  unsyncedFiles: z.number(),
});
type Stats = z.infer<typeof statsReport>;

async function run(remote: Remote, node: string, cmd: string, check = true) {
  return remote.exec(node, cmd, { sudo: true, check, timeoutMs: 60_000 });
}

function parseJson<T>(schema: z.ZodType<T>, text: string): T | null {
  const line = text.trim().split('\n').at(-1) ?? '';
  try {
    const r = schema.safeParse(JSON.parse(line));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

async function control(remote: Remote, node: string, u: NodeUndo, words: string[]): Promise<string> {
  return (await run(remote, node, controlCommand(u.program, u.socket, words), false)).stdout;
}

async function stats(remote: Remote, node: string, u: NodeUndo): Promise<Stats | null> {
  return parseJson(statsReport, await control(remote, node, u, ['stats']));
}

function targetsOf(spec: { targets?: string | string[] }): string[] {
  if (Array.isArray(spec.targets)) return spec.targets;
  throw new Error('lazyfs faults need resolved target nodes (a list)');
}

function modeWords(action: LazyfsAction, p: SpecParams): string[] | null {
  const delayMs = p.delayMs;
  if (action === 'eio-read' || action === 'eio-write')
    return aimWords(p.files, action === 'eio-read' ? 'read' : 'write');
  if (POWER_FAILURE[action]) return aimWords(p.files, null);
  if (action === 'fsync-fail') return ['fsync-fail', 'on'];
  if (action === 'fsync-delay') return ['fsync-delay', String(delayMs)];
  if (action === 'slow') return ['io-delay', String(delayMs)];
  return null;
}

function planNode(remote: Remote, node: string, id: string, p: SpecParams): NodeUndo {
  const dir = p.dirs[node];
  const pidFile = p.pidFiles[node];
  if (!dir || !pidFile) throw new Error(`${node}: no data directory or pidfile for the lazy filesystem`);
  const state = nodeStateDir(remote.node(node), PROGRAM_AREA);
  return {
    dir: dir.replace(/\/+$/, ''),
    backing: `${dir.replace(/\/+$/, '')}.lazyfs-backing`,
    socket: `${state}/${id}.sock`,
    program: `${state}/lazyfs.py`,
    pidFile,
    processName: p.processName,
    stopSignal: p.stopSignal ?? 'TERM',
  };
}

/** Stop the database, move its directory under the lazy filesystem, set the fault's mode. */
async function arm(remote: Remote, node: string, u: NodeUndo, mode: string[] | null) {
  await run(
    remote,
    node,
    installProgramCommand(u.program, Buffer.from(LAZYFS_PROGRAM, 'utf8').toString('base64')),
  );
  await run(remote, node, stopDaemonCommand(u.pidFile, u.processName, u.stopSignal));
  await run(
    remote,
    node,
    mountCommand({
      dir: u.dir,
      backing: u.backing,
      socket: u.socket,
      program: u.program,
      log: `${u.socket}.log`,
    }),
  );
  if (mode) await setMode(remote, node, u, mode);
}

/** The targets in node order with the leaders the database names (if it can) moved to the end. */
async function leadersLast(
  nodes: readonly string[],
  sutOrNone: FaultTarget | undefined,
): Promise<{ order: string[]; leaders: string[] }> {
  const sut = databaseWith(sutOrNone, 'primaries');
  const named = sut ? await sut.db.primaries(sut.ctx).catch((): string[] => []) : [];
  const leaders = nodes.filter((n) => named.includes(n));
  return { order: [...nodes.filter((n) => !leaders.includes(n)), ...leaders], leaders };
}

/**
 * Several members onto the lazy filesystem as an operator's rolling restart: one stopped, moved and
 * started again at a time, and the next only once it runs on the mount and writes through it, the
 * leader last. Stopping them all at once stopped a replicated database outright (etcd's leader, on
 * SIGTERM, spent its request timeout trying to hand leadership to members already stopped, refusing
 * writes meanwhile): that outage was the move's, not the fault's. A member that does not show itself
 * on the mount within watchLanding's 20 s does not hold the others back; the landing evidence judges it.
 * Not the default: the move takes longer (a Redis primary and its replicas: 7–8 s, each member down in
 * turn, against about 1 s all at once), which a plan judging the error rate pays for.
 */
async function moveOneAtATime(
  remote: Remote,
  order: readonly string[],
  marked: (node: string) => Promise<NodeUndo>,
  start: (node: string) => Promise<void>,
  words: string[] | null,
) {
  for (const node of order) {
    const u = await marked(node);
    await arm(remote, node, u, words);
    await start(node);
    await watchLanding(remote, node, u);
  }
}

async function setMode(remote: Remote, node: string, u: NodeUndo, mode: string[]) {
  const out = await control(remote, node, u, mode);
  if (!parseJson(statsReport, out)) throw new Error(`${node}: lazyfs ${mode.join(' ')}: ${out.trim()}`);
}

async function ioErrorsLogged(remote: Remote, node: string, files: readonly string[]) {
  return parseIoErrorLog((await run(remote, node, ioErrorLogCommand(files), false)).stdout);
}

/**
 * Errors under a running database (fsync-fail, eio-read, eio-write): start it on the mount, wait until
 * it runs there and writes through it, note what it did and what its log and a peer say, then make
 * its fsyncs (or the aimed files' reads or writes) fail.
 */
async function failUnderRunningDb(
  remote: Remote,
  node: string,
  u: NodeUndo,
  start: (node: string) => Promise<void>,
  sutOrNone: FaultTarget | undefined,
  failing: { words: string[]; errors: RunningBefore['errors'] },
) {
  await start(node);
  const seen = await watchLanding(remote, node, u);
  const pid = Number.parseInt(seen.onDir, 10);
  if (!Number.isFinite(pid) || (seen.stats?.writes ?? 0) === 0)
    throw new Error(
      `${node}: ${u.processName} did not run and write on the lazy filesystem within 20 s (${seen.onDir}, ${seen.stats?.writes ?? 0} writes)`,
    );
  // The contrast "its fsyncs succeeded, then failed" is the landing's best evidence: give the database a
  // moment to make its first fsync (a writer may fsync only every few writes), without requiring one.
  const synced =
    (seen.stats?.fsyncs ?? 0) > 0
      ? seen.stats
      : await pollFor(
          () => stats(remote, node, u),
          (x) => (x?.fsyncs ?? 0) > 0,
          { timeoutMs: FIRST_FSYNC_MS, stepMs: POLL_STEP_MS },
        );
  const logs = databaseWith(sutOrNone, 'logs');
  const logFiles = logs ? logs.db.logFiles(logs.ctx, node) : [];
  const sut = databaseWith(sutOrNone, 'peer-view');
  const observer = sut ? observersFor(remote, [node]) : null;
  u.running = {
    pid,
    writes: synced?.writes ?? seen.stats?.writes ?? 0,
    fsyncs: synced?.fsyncs ?? 0,
    errors: failing.errors,
    ioErrors: (await ioErrorsLogged(remote, node, logFiles)).count,
    logFiles,
    ...(observer &&
      sut && { observer, peerBefore: peerText(await sut.db.peerView(sut.ctx, observer, node)) }),
  };
  await setMode(remote, node, u, failing.words);
}

/** Poll until the database runs on the mount and the filesystem has seen writes from it (up to 20 s). */
async function watchLanding(remote: Remote, node: string, u: NodeUndo) {
  return pollFor(
    async () => ({
      onDir: (await run(remote, node, daemonOnDirCommand(u.pidFile, u.dir), false)).stdout.trim(),
      stats: await stats(remote, node, u),
    }),
    (x) =>
      (x.onDir !== 'none' && (x.stats?.writes ?? 0) > 0) ||
      (x.stats?.fsyncsFailed ?? 0) + (x.stats?.eioReads ?? 0) + (x.stats?.eioWrites ?? 0) > 0,
    { timeoutMs: 20_000, stepMs: POLL_STEP_MS },
  );
}

/**
 * The database on the mount: running there (pid, files open), or, under fsync-fail, gone after one of
 * its fsyncs failed (a database may stop on EIO rather than go on with data it cannot make durable).
 */
function victimSignal(
  node: string,
  u: NodeUndo,
  action: LazyfsAction,
  seen: Awaited<ReturnType<typeof watchLanding>>,
): EvidenceSignal {
  const signal = `${u.processName} running on ${u.dir} (pid, files open there)`;
  if (seen.onDir === 'none' && action === 'fsync-fail' && (seen.stats?.fsyncsFailed ?? 0) > 0)
    return {
      side: 'victim',
      node,
      signal,
      during: `exited after ${seen.stats?.writes} writes through the mount; ${seen.stats?.fsyncsFailed} fsync(s) answered EIO`,
      landed: true,
    };
  return { side: 'victim', node, signal, during: seen.onDir, landed: seen.onDir !== 'none' };
}

/** How long fsync-fail waits for the database's first fsync before it makes fsyncs fail anyway. */
const FIRST_FSYNC_MS = 5_000;
/** How long a database may take to react to its fsyncs failing (it fsyncs on its next write). */
const REACTION_MS = 20_000;
/** Between reads of the filesystem's counters and the database's state. */
const POLL_STEP_MS = 250;

/** What the errors are, in words, for the evidence. */
const ERROR_WORDS: Record<RunningBefore['errors'], { calls: string; failed: string }> = {
  fsyncsFailed: { calls: 'fsyncs', failed: 'fsync(s) answered EIO' },
  eioReads: { calls: 'reads of the aimed files', failed: 'read(s) of the aimed files answered EIO' },
  eioWrites: { calls: 'writes to the aimed files', failed: 'write(s) to the aimed files answered EIO' },
};

/**
 * The database's own calls answering EIO (the filesystem's counter, read before any probe adds its
 * own), and what the database did: exited, logged an I/O error, and how a peer sees it.
 */
async function errorReaction(
  remote: Remote,
  node: string,
  u: NodeUndo,
  r: RunningBefore,
  sutOrNone: FaultTarget | undefined,
): Promise<EvidenceSignal[]> {
  const { s, alive, log } = await pollFor(
    async () => ({
      s: await stats(remote, node, u),
      alive: (await run(remote, node, pidAliveCommand(r.pid), false)).stdout.trim(),
      log: await ioErrorsLogged(remote, node, r.logFiles),
    }),
    (x) => (x.s?.[r.errors] ?? 0) > 0 && (x.alive === 'exited' || x.log.count > r.ioErrors),
    { timeoutMs: REACTION_MS, stepMs: POLL_STEP_MS },
  );
  const failed = s?.[r.errors] ?? 0;
  const words = ERROR_WORDS[r.errors];
  const logged = log.count > r.ioErrors;
  const perFile = Object.entries(s?.eioFiles ?? {}).map(([f, n]) => `${f}: ${n}`);
  const out: EvidenceSignal[] = [
    {
      side: 'injector',
      node,
      signal: `${u.processName}'s own ${words.calls} on the lazy filesystem`,
      before: `${r.fsyncs} fsyncs ok, ${r.writes} writes (pid ${r.pid} running on the mount)`,
      during: s
        ? `${failed} ${words.failed}${r.errors !== 'fsyncsFailed' && perFile.length > 0 ? ` (${perFile.join(', ')})` : ''}`
        : 'no answer from the filesystem',
      landed: failed > 0,
    },
    {
      side: 'victim',
      node,
      signal: `${u.processName} pid ${r.pid} once its ${words.calls} fail (process; I/O errors in its log)`,
      before: `running; ${r.ioErrors} I/O error line(s) logged`,
      during: `${alive}; ${log.count} I/O error line(s) logged${logged && log.last ? `, last: ${log.last}` : ''}`,
      landed: failed > 0 && (alive === 'exited' || logged),
      ...(failed > 0 &&
        alive !== 'exited' &&
        !logged && {
          note: `its ${words.calls} failed and it neither exited nor logged an I/O error within ${REACTION_MS / 1000} s`,
        }),
    },
  ];
  const sut = databaseWith(sutOrNone, 'peer-view');
  if (r.observer && sut) {
    const want = alive === 'exited' ? false : null;
    const view =
      want === false
        ? await peerSees(sut, r.observer, node, false, 10_000)
        : await sut.db.peerView(sut.ctx, r.observer, node);
    out.push({
      side: 'victim',
      node,
      signal: `${sut.db.name} member ${node} as peer ${r.observer} sees it`,
      before: r.peerBefore ?? 'unknown',
      during: peerText(view),
      // Informative when the process stays up (a database may refuse writes yet answer health checks).
      landed: want === null || view.up === false,
    });
  }
  return out;
}

async function modeSignal(remote: Remote, node: string, action: LazyfsAction, u: NodeUndo, delayMs?: number) {
  if (action === 'fsync-fail' || action === 'fsync-delay') {
    const probe = parseProbe((await run(remote, node, fsyncProbeCommand(u.dir), false)).stdout);
    const landed =
      action === 'fsync-fail' ? probe?.ok === false : probe?.ok === true && probe.ms >= (delayMs ?? 0) * 0.9;
    return {
      side: 'injector' as const,
      node,
      signal: `fsync of a probe file on ${u.dir}`,
      during: probe ? `${probe.ok ? 'ok' : probe.error} after ${probe.ms} ms` : 'no answer',
      landed,
    };
  }
  const probe = parseProbe((await run(remote, node, ioProbeCommand(u.dir), false)).stdout);
  return {
    side: 'injector' as const,
    node,
    signal: `write + read of a probe file on ${u.dir}`,
    during: probe ? `${probe.ms} ms` : 'no answer',
    landed: probe !== null && probe.ms >= (delayMs ?? 0) * 0.9,
  };
}

/** After an fsync-fail, eio-read or eio-write window: the database runs again on its own directory, and a peer sees it serving. */
async function backAfterHeal(
  remote: Remote,
  node: string,
  u: NodeUndo,
  r: RunningBefore,
  sutOrNone: FaultTarget | undefined,
): Promise<EvidenceSignal[]> {
  const onDir = await pollFor(
    async () => (await run(remote, node, daemonOnDirCommand(u.pidFile, u.dir), false)).stdout.trim(),
    (d) => d !== 'none',
    { timeoutMs: REACTION_MS, stepMs: POLL_STEP_MS },
  );
  const out: EvidenceSignal[] = [
    {
      side: 'victim',
      node,
      signal: `${u.processName} running on ${u.dir} (pid, files open there)`,
      before: `pid ${r.pid}`,
      after: onDir === 'none' ? 'not running' : `pid ${onDir.replace(' ', ', files open there: ')}`,
      landed: onDir !== 'none',
    },
  ];
  const sut = databaseWith(sutOrNone, 'peer-view');
  if (r.observer && sut) {
    const view = await peerSees(sut, r.observer, node, true, REACTION_MS);
    out.push({
      side: 'victim',
      node,
      signal: `${sut.db.name} member ${node} as peer ${r.observer} sees it`,
      before: r.peerBefore ?? 'unknown',
      after: peerText(view),
      landed: view.up !== false,
    });
  }
  return out;
}

/** The aimed files now, with their size as the database sees it and on the disk. */
async function aimedSignal(
  remote: Remote,
  node: string,
  u: NodeUndo,
  files: string[],
): Promise<EvidenceSignal> {
  const m = parseJson(matchedReport, await control(remote, node, u, ['matched']));
  u.matched = m?.files ?? [];
  return {
    side: 'injector',
    node,
    signal: `files under ${u.dir} matching ${files.join(', ')} (bytes seen by the database / on the disk)`,
    during: m ? m.files.slice(0, 12).map((f) => `${f.path}: ${f.size} / ${f.durable}`) : 'no answer',
    landed: (m?.files.length ?? 0) > 0,
    ...(m && m.files.length > 12 && { note: `${m.files.length - 12} more files` }),
    ...(m &&
      m.files.length === 0 && { note: 'no file matches the patterns: the fault has nothing to aim at' }),
  };
}

/**
 * Exactly which bytes of the writes since the last fsync survived a torn power failure: per file,
 * each write's kept and lost byte ranges ([offset, end) in the file).
 */
function tornSignal(node: string, d: DropReport): EvidenceSignal {
  const range = (x: { write: number; at: number; bytes: number }) =>
    `#${x.write} [${x.at}, ${x.at + x.bytes})`;
  const lines = d.files.map((f) => {
    const kept = f.kept ?? [];
    const lost = f.lost ?? [];
    const cut = (xs: typeof kept) =>
      `${xs.slice(0, 6).map(range).join(' ')}${xs.length > 6 ? ` …${xs.length - 6} more` : ''}`;
    return `${f.path}: ${f.writes ?? 0} writes since the last fsync; kept ${cut(kept) || 'none'}; lost ${cut(lost) || 'none'}`;
  });
  const torn = d.files.some((f) => (f.lost?.length ?? 0) > 0 && (f.kept?.length ?? 0) > 0);
  return {
    side: 'injector',
    node,
    signal: `bytes that survived torn-${d.torn} (write number, byte range in the file)`,
    after: lines.slice(0, 8),
    // The power failure happened either way (as lose-unfsynced dropping 0 bytes lands): the note says
    // when nothing was torn, so a negative control cannot pass by accident unnoticed.
    landed: true,
    ...(!torn && {
      note: 'nothing torn: no file had both a kept and a lost part (no un-fsynced write, or one too small to tear)',
    }),
  };
}

export const lazyfsNemesis: Nemesis & { kind: 'lazyfs' } = {
  kind: 'lazyfs',

  async capabilities(remote, node): Promise<Capability[]> {
    const r = (await run(remote, node, capabilityCommand(), false)).stdout.trim();
    return [
      {
        name: 'lazyfs',
        available: r === 'ok',
        ...(r !== 'ok' && { reason: `${r || 'cannot probe'}: apt-get install -y python3-fusepy fuse3` }),
      },
    ];
  },

  async inject(remote, spec, id, opts?: InjectOptions): Promise<FaultRecord> {
    const action = spec.action as LazyfsAction;
    if (!LAZYFS_ACTIONS.includes(action))
      throw new Error(`lazyfs: unknown action "${spec.action}" (expected ${LAZYFS_ACTIONS.join(', ')})`);
    const p = specParams.parse(spec.params ?? {});
    if ((action === 'fsync-delay' || action === 'slow') && p.delayMs === undefined)
      throw new Error(`lazyfs ${action} needs params.delayMs`);
    if ((action === 'eio-read' || action === 'eio-write') && !p.files?.length)
      throw new Error(`lazyfs ${action} needs params.files (patterns of the files to fail)`);
    for (const g of p.files ?? []) fileGlobRegex(g); // throws on a pattern that could leave the directory
    const nodes = targetsOf(spec);
    for (const node of nodes) {
      const cap = (await run(remote, node, capabilityCommand(), false)).stdout.trim();
      if (cap !== 'ok')
        throw new CapabilityMissingError(node, 'lazyfs', `${cap}: apt-get install -y python3-fusepy fuse3`);
    }
    const perNode = Object.fromEntries(nodes.map((n) => [n, planNode(remote, n, id, p)]));
    const undo: LazyfsUndo = { action, perNode };
    const record: FaultRecord = { id, spec, nodes, injectedAt: new Date().toISOString(), undo };
    const start = opts?.startProcess;
    const errors = UNDER_RUNNING_DB[action];
    const words = modeWords(action, p);
    if (p.move === 'rolling' && start && !errors && nodes.length > 1)
      undo.moved = await leadersLast(nodes, opts?.sut);
    await opts?.beforeApply?.(record);
    const marked = async (node: string) => {
      const u = perNode[node] as NodeUndo;
      const marker = [u.dir, u.backing, u.socket, u.program, u.pidFile, u.processName, u.stopSignal].join(
        '|',
      );
      await run(remote, node, writeMarkerCommand(nodeStateDir(remote.node(node), MARKERS), id, marker));
      return u;
    };
    if (undo.moved && start) await moveOneAtATime(remote, undo.moved.order, marked, start, words);
    else
      await Promise.all(
        nodes.map(async (node) => {
          const u = await marked(node);
          if (errors && words && start) {
            await arm(remote, node, u, null);
            await failUnderRunningDb(remote, node, u, start, opts?.sut, { words, errors });
          } else await arm(remote, node, u, words);
        }),
      );
    return record;
  },

  async evidence(remote, record, ctx): Promise<FaultEvidence> {
    const undo = record.undo as LazyfsUndo;
    const p = specParams.partial().parse(record.spec.params ?? {});
    const delayMs = p.delayMs;
    const perNode = await Promise.all(
      record.nodes.map(async (node): Promise<EvidenceSignal[]> => {
        const u = undo.perNode[node] as NodeUndo;
        const mounted = (await run(remote, node, mountedCommand(u.dir), false)).stdout.trim();
        const mount: EvidenceSignal = {
          side: 'injector',
          node,
          signal: `lazy filesystem mounted on ${u.dir}`,
          before: 'absent',
          during: mounted,
          landed: mounted === 'mounted',
        };
        const aimed = p.files?.length ? [await aimedSignal(remote, node, u, p.files)] : [];
        if (u.running)
          return [
            mount,
            ...aimed,
            ...(await errorReaction(remote, node, u, u.running, ctx?.sut)),
            ...(undo.action === 'fsync-fail'
              ? [await modeSignal(remote, node, undo.action, u, delayMs)]
              : []),
          ];
        const seen = await watchLanding(remote, node, u);
        const out: EvidenceSignal[] = [
          mount,
          {
            side: 'injector',
            node,
            signal: 'writes through the lazy filesystem (un-fsynced bytes held)',
            during: seen.stats
              ? `${seen.stats.writes} writes, ${seen.stats.bytesWritten} bytes, ${seen.stats.fsyncs} fsyncs, ${seen.stats.unsyncedBytes} bytes not fsynced in ${seen.stats.unsyncedFiles} files`
              : 'no answer from the filesystem',
            landed: (seen.stats?.writes ?? 0) > 0,
          },
          victimSignal(node, u, undo.action, seen),
          ...aimed,
        ];
        if (!POWER_FAILURE[undo.action] && !UNDER_RUNNING_DB[undo.action])
          out.push(await modeSignal(remote, node, undo.action, u, delayMs));
        return out;
      }),
    );
    const signals = perNode.flat();
    return landingEvidence(signals, { show: shownAt('during', true) });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<LazyfsUndo>;
    const entries = Object.entries(undo.perNode ?? {});
    const params = specParams.partial().safeParse(record.spec.params ?? {});
    const words = undo.action && powerWords(undo.action, params.success ? params.data : {});
    const power = words !== null && words !== undefined;
    const stop = (params.success && params.data.stopSignal) || 'TERM';
    // A power failure hits every target at once: every database, with all its processes, is stopped
    // where it stands before any cache is dropped, and killed only after (signalTreeCommand says why).
    const frozen = new Map<string, number[]>();
    await Promise.all(
      entries.map(async ([node, u]) => {
        if (power) {
          const pids = parsePids(
            (await run(remote, node, signalTreeCommand(u.pidFile, u.processName, 'STOP'))).stdout,
          );
          u.killed = pids.length > 0 ? String(pids[0]) : 'none';
          u.frozen = pids.length;
          frozen.set(node, pids);
        } else
          u.killed = (
            await run(remote, node, stopDaemonCommand(u.pidFile, u.processName, stop))
          ).stdout.trim();
      }),
    );
    await Promise.all(
      entries.map(async ([node, u]) => {
        const mounted = (await run(remote, node, mountedCommand(u.dir), false)).stdout.trim() === 'mounted';
        try {
          if (mounted && power) u.dropped = parseJson(dropReport, await control(remote, node, u, words));
          else if (mounted) {
            await control(remote, node, u, ['fsync-fail', 'off']);
            await control(remote, node, u, ['aim', b64({ patterns: [], eio: null })]);
            await control(remote, node, u, ['flush']);
          }
        } finally {
          // Whatever the drop did, no process is left stopped.
          if (power) await run(remote, node, killPidsCommand(frozen.get(node) ?? []), false);
        }
        await run(remote, node, unmountCommand(u.dir, u.backing));
        await run(
          remote,
          node,
          `rm -f ${shellQuote(u.socket)} ${shellQuote(`${nodeStateDir(remote.node(node), MARKERS)}/${record.id}`)}`,
          false,
        );
      }),
    );
  },

  async evidenceAfterHeal(remote, record, ctx): Promise<FaultEvidence> {
    const undo = record.undo as LazyfsUndo;
    const signals: EvidenceSignal[] = [];
    for (const [node, u] of Object.entries(undo.perNode)) {
      const mounted = (await run(remote, node, mountedCommand(u.dir), false)).stdout.trim();
      signals.push({
        side: 'injector',
        node,
        signal: `lazy filesystem mounted on ${u.dir}`,
        after: mounted,
        landed: mounted === 'absent',
      });
      if (u.running) signals.push(...(await backAfterHeal(remote, node, u, u.running, ctx?.sut)));
      if (!POWER_FAILURE[undo.action]) continue;
      const d = u.dropped;
      signals.push({
        side: 'injector',
        node,
        signal: `power failure${d?.torn ? ` (torn-${d.torn})` : ''}: un-fsynced writes dropped`,
        after: d
          ? `${d.bytes} bytes in ${d.files.length} files (${u.processName} pid ${u.killed}${u.frozen && u.frozen > 1 ? ` and ${u.frozen - 1} ${u.frozen === 2 ? 'process' : 'processes'} it started` : ''} stopped first)${d.flushed?.length ? `; ${d.flushed.length} files not aimed at reached the disk` : ''}`
          : 'no answer',
        landed: d !== null && d !== undefined,
      });
      if (d?.torn) signals.push(tornSignal(node, d));
      signals.push({
        side: 'victim',
        node,
        signal: 'files the database left vs what survived (bytes)',
        after: d
          ? d.files.slice(0, 8).map((f) => `${f.path}: ${f.sizeBefore} -> ${f.sizeAfter ?? 'gone'}`)
          : [],
        landed: d !== null && d !== undefined,
        ...(d && d.files.length > 8 && { note: `${d.files.length - 8} more files` }),
      });
    }
    return landingEvidence(signals, {
      noneLands: true,
      reason: 'the lazy filesystem was not cleanly removed',
    });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const found: string[] = [];
    const fixed: string[] = [];
    const markers = parseMarkers(
      (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), MARKERS)), false)).stdout,
    );
    for (const m of markers) {
      const [dir, backing, socket, , pidFile, processName, signal] = m.value.split('|');
      // A marker is read back from the node: only a signal of the list reaches the command.
      const stop = STOP_SIGNALS.find((s) => s === signal) ?? 'TERM';
      if (!dir || !backing) continue;
      found.push(`lazy filesystem on ${dir} (fault ${m.name})`);
      if (pidFile && processName) {
        // A run killed between its power failure's stop and kill left the database stopped.
        await run(remote, node, signalTreeCommand(pidFile, processName, 'CONT'), false);
        await run(remote, node, stopDaemonCommand(pidFile, processName, stop), false);
      }
      if (socket)
        await run(
          remote,
          node,
          controlCommand(`${nodeStateDir(remote.node(node), PROGRAM_AREA)}/lazyfs.py`, socket, ['flush']),
          false,
        );
      await run(remote, node, unmountCommand(dir, backing), false);
      await run(
        remote,
        node,
        `rm -f ${shellQuote(`${nodeStateDir(remote.node(node), MARKERS)}/${m.name}`)}`,
        false,
      );
      fixed.push(`unmounted ${dir} and moved ${backing} back`);
    }
    const left = (await run(remote, node, listMountsCommand(), false)).stdout
      .split('\n')
      .filter((l) => l !== '');
    // Mounts of other clusters' nodes share this host's mount table only when nodes share a mount
    // namespace; a local node has its own, so what is left here is this node's.
    for (const l of left) found.push(`lazy filesystem still mounted on ${l} (no marker)`);
    return { clean: left.length === 0, fixed, found };
  },
};
