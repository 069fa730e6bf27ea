import { z } from 'zod';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';
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
} from './commands/lazyfs.ts';
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
  type SutHooks,
} from './types.ts';

/**
 * Filesystem faults that lose data the way a power failure does. Each window puts the targets' data
 * directories on the lazy filesystem (a FUSE passthrough that keeps writes not yet fsynced in its own
 * cache; see lazyfs-program.ts): the database is stopped, its directory moved aside and mounted back
 * through the filesystem, and the fault plane starts the database again on it. Then, by action:
 *
 * - lose-unfsynced: the window's end is the power failure. Every target's database is killed (-9) at
 *   once, every write not fsynced is dropped, the filesystem is unmounted and the database restarted
 *   on what survived. Evidence: the bytes and files dropped (injector), each dropped file's size as the
 *   database left it and as it survived (victim).
 * - fsync-fail: every fsync fails with EIO during the window. With the database's own start (the fault
 *   plane's), the database is first started on the mount and seen writing through it, and only then do
 *   its fsyncs begin to fail, as a disk failing under a running database would: the evidence is the
 *   database's own fsyncs answering EIO (injector) and what it did about it (victim: exited, I/O errors
 *   in its log, a peer seeing it down); after heal it runs and serves again.
 * - fsync-delay: every fsync waits params.delayMs first.
 * - slow: every read and write waits params.delayMs first.
 *
 * The other actions end cleanly: the database is stopped, the cache flushed (nothing is lost), the
 * filesystem unmounted, the database restarted. Heal from a ledger alone (`faultline heal`) does the
 * same without the restart; the sweep unmounts any lazy filesystem a killed run left behind.
 *
 * params (filled by the fault plane from the database): dirs {node: data dir}, pidFiles {node: pidfile},
 * processName; delayMs for fsync-delay and slow.
 */
export const LAZYFS_ACTIONS = ['lose-unfsynced', 'fsync-fail', 'fsync-delay', 'slow'] as const;
export type LazyfsAction = (typeof LAZYFS_ACTIONS)[number];

const PROGRAM_AREA = 'lazyfs';
const MARKERS = 'lazyfs-mounts';

const specParams = z.object({
  dirs: z.record(z.string(), z.string().startsWith('/')),
  pidFiles: z.record(z.string(), z.string().startsWith('/')),
  processName: z.string().min(1),
  delayMs: z.number().int().positive().optional(),
});

interface NodeUndo {
  dir: string;
  backing: string;
  socket: string;
  program: string;
  pidFile: string;
  processName: string;
  /** What the power failure dropped (set by heal of lose-unfsynced). */
  dropped?: DropReport | null;
  /** The pid the power failure killed. */
  killed?: string;
  /** fsync-fail on a running database: what it had done on the mount when its fsyncs began to fail. */
  running?: RunningBefore;
}

interface RunningBefore {
  pid: number;
  writes: number;
  fsyncs: number;
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
}

const dropReport = z.object({
  bytes: z.number(),
  files: z.array(
    z.object({
      path: z.string(),
      bytes: z.number(),
      sizeBefore: z.number(),
      sizeAfter: z.number().nullable(),
    }),
  ),
  stats: z.record(z.string(), z.unknown()).optional(),
});
type DropReport = z.infer<typeof dropReport>;

const statsReport = z.looseObject({
  writes: z.number(),
  bytesWritten: z.number(),
  fsyncs: z.number(),
  fsyncsFailed: z.number(),
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

function modeWords(action: LazyfsAction, delayMs: number | undefined): string[] | null {
  if (action === 'fsync-fail') return ['fsync-fail', 'on'];
  if (action === 'fsync-delay') return ['fsync-delay', String(delayMs)];
  if (action === 'slow') return ['io-delay', String(delayMs)];
  return null;
}

function planNode(remote: Remote, node: string, id: string, p: z.infer<typeof specParams>): NodeUndo {
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
  };
}

/** Stop the database, move its directory under the lazy filesystem, set the fault's mode. */
async function arm(remote: Remote, node: string, u: NodeUndo, mode: string[] | null) {
  await run(
    remote,
    node,
    installProgramCommand(u.program, Buffer.from(LAZYFS_PROGRAM, 'utf8').toString('base64')),
  );
  await run(remote, node, stopDaemonCommand(u.pidFile, u.processName, 'TERM'));
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

async function setMode(remote: Remote, node: string, u: NodeUndo, mode: string[]) {
  const out = await control(remote, node, u, mode);
  if (!parseJson(statsReport, out)) throw new Error(`${node}: lazyfs ${mode.join(' ')}: ${out.trim()}`);
}

async function ioErrorsLogged(remote: Remote, node: string, files: readonly string[]) {
  return parseIoErrorLog((await run(remote, node, ioErrorLogCommand(files), false)).stdout);
}

/**
 * fsync-fail under a running database: start it on the mount, wait until it runs there and writes
 * through it, note what it did and what its log and a peer say, then make every fsync fail.
 */
async function failUnderRunningDb(
  remote: Remote,
  node: string,
  u: NodeUndo,
  start: (node: string) => Promise<void>,
  sut: SutHooks | undefined,
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
  const logFiles = sut?.logFiles?.(node) ?? [];
  const observer = sut?.peerView ? observersFor(remote, [node]) : null;
  u.running = {
    pid,
    writes: synced?.writes ?? seen.stats?.writes ?? 0,
    fsyncs: synced?.fsyncs ?? 0,
    ioErrors: (await ioErrorsLogged(remote, node, logFiles)).count,
    logFiles,
    ...(observer && sut?.peerView && { observer, peerBefore: peerText(await sut.peerView(observer, node)) }),
  };
  await setMode(remote, node, u, ['fsync-fail', 'on']);
}

/** Poll until the database runs on the mount and the filesystem has seen writes from it (up to 20 s). */
async function watchLanding(remote: Remote, node: string, u: NodeUndo) {
  return pollFor(
    async () => ({
      onDir: (await run(remote, node, daemonOnDirCommand(u.pidFile, u.dir), false)).stdout.trim(),
      stats: await stats(remote, node, u),
    }),
    (x) => (x.onDir !== 'none' && (x.stats?.writes ?? 0) > 0) || (x.stats?.fsyncsFailed ?? 0) > 0,
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

/**
 * The database's fsyncs answering EIO (the filesystem's counter, read before the probe adds its own),
 * and what the database did: exited, logged an I/O error, and how a peer sees it.
 */
async function fsyncFailReaction(
  remote: Remote,
  node: string,
  u: NodeUndo,
  r: RunningBefore,
  sut: SutHooks | undefined,
): Promise<EvidenceSignal[]> {
  const { s, alive, log } = await pollFor(
    async () => ({
      s: await stats(remote, node, u),
      alive: (await run(remote, node, pidAliveCommand(r.pid), false)).stdout.trim(),
      log: await ioErrorsLogged(remote, node, r.logFiles),
    }),
    (x) => (x.s?.fsyncsFailed ?? 0) > 0 && (x.alive === 'exited' || x.log.count > r.ioErrors),
    { timeoutMs: REACTION_MS, stepMs: POLL_STEP_MS },
  );
  const failed = s?.fsyncsFailed ?? 0;
  const logged = log.count > r.ioErrors;
  const out: EvidenceSignal[] = [
    {
      side: 'injector',
      node,
      signal: `${u.processName}'s own fsyncs on the lazy filesystem`,
      before: `${r.fsyncs} fsyncs ok, ${r.writes} writes (pid ${r.pid} running on the mount)`,
      during: s ? `${failed} fsync(s) answered EIO` : 'no answer from the filesystem',
      landed: failed > 0,
    },
    {
      side: 'victim',
      node,
      signal: `${u.processName} pid ${r.pid} once its fsyncs fail (process; I/O errors in its log)`,
      before: `running; ${r.ioErrors} I/O error line(s) logged`,
      during: `${alive}; ${log.count} I/O error line(s) logged${logged && log.last ? `, last: ${log.last}` : ''}`,
      landed: failed > 0 && (alive === 'exited' || logged),
      ...(failed > 0 &&
        alive !== 'exited' &&
        !logged && {
          note: `its fsyncs failed and it neither exited nor logged an I/O error within ${REACTION_MS / 1000} s`,
        }),
    },
  ];
  if (r.observer && sut?.peerView) {
    const want = alive === 'exited' ? false : null;
    const view =
      want === false
        ? await peerSees(sut, r.observer, node, false, 10_000)
        : await sut.peerView(r.observer, node);
    out.push({
      side: 'victim',
      node,
      signal: `${sut.name ?? 'database'} member ${node} as peer ${r.observer} sees it`,
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

/** After an fsync-fail window: the database runs again on its own directory, and a peer sees it serving. */
async function backAfterHeal(
  remote: Remote,
  node: string,
  u: NodeUndo,
  r: RunningBefore,
  sut: SutHooks | undefined,
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
  if (r.observer && sut?.peerView) {
    const view = await peerSees(sut, r.observer, node, true, REACTION_MS);
    out.push({
      side: 'victim',
      node,
      signal: `${sut.name ?? 'database'} member ${node} as peer ${r.observer} sees it`,
      before: r.peerBefore ?? 'unknown',
      after: peerText(view),
      landed: view.up !== false,
    });
  }
  return out;
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
    const nodes = targetsOf(spec);
    for (const node of nodes) {
      const cap = (await run(remote, node, capabilityCommand(), false)).stdout.trim();
      if (cap !== 'ok')
        throw new CapabilityMissingError(node, 'lazyfs', `${cap}: apt-get install -y python3-fusepy fuse3`);
    }
    const perNode = Object.fromEntries(nodes.map((n) => [n, planNode(remote, n, id, p)]));
    const undo: LazyfsUndo = { action, perNode };
    const record: FaultRecord = { id, spec, nodes, injectedAt: new Date().toISOString(), undo };
    await opts?.beforeApply?.(record);
    await Promise.all(
      nodes.map(async (node) => {
        const u = perNode[node] as NodeUndo;
        const marker = [u.dir, u.backing, u.socket, u.program, u.pidFile, u.processName].join('|');
        await run(remote, node, writeMarkerCommand(nodeStateDir(remote.node(node), MARKERS), id, marker));
        const start = opts?.startProcess;
        if (action === 'fsync-fail' && start) {
          await arm(remote, node, u, null);
          await failUnderRunningDb(remote, node, u, start, opts?.sut);
        } else await arm(remote, node, u, modeWords(action, p.delayMs));
      }),
    );
    return record;
  },

  async evidence(remote, record, ctx): Promise<FaultEvidence> {
    const undo = record.undo as LazyfsUndo;
    const delayMs = (record.spec.params as { delayMs?: number } | undefined)?.delayMs;
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
        if (u.running)
          return [
            mount,
            ...(await fsyncFailReaction(remote, node, u, u.running, ctx?.sut)),
            await modeSignal(remote, node, undo.action, u, delayMs),
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
        ];
        if (undo.action !== 'lose-unfsynced')
          out.push(await modeSignal(remote, node, undo.action, u, delayMs));
        return out;
      }),
    );
    const signals = perNode.flat();
    const landed = signals.length > 0 && signals.every((s) => s.landed);
    return {
      landed,
      ...(!landed && {
        reason: `not landed: ${signals
          .filter((s) => !s.landed)
          .map((s) => `${s.node} ${s.signal}=${JSON.stringify(s.during)}`)
          .join('; ')}`,
      }),
      signals,
    };
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<LazyfsUndo>;
    const entries = Object.entries(undo.perNode ?? {});
    const power = undo.action === 'lose-unfsynced';
    // A power failure hits every target at once: every database dies before any cache is dropped.
    await Promise.all(
      entries.map(async ([node, u]) => {
        const r = await run(
          remote,
          node,
          stopDaemonCommand(u.pidFile, u.processName, power ? 'KILL' : 'TERM'),
        );
        u.killed = r.stdout.trim();
      }),
    );
    await Promise.all(
      entries.map(async ([node, u]) => {
        if ((await run(remote, node, mountedCommand(u.dir), false)).stdout.trim() === 'mounted') {
          if (power) u.dropped = parseJson(dropReport, await control(remote, node, u, ['lose-unfsynced']));
          else {
            await control(remote, node, u, ['fsync-fail', 'off']);
            await control(remote, node, u, ['flush']);
          }
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
      if (undo.action !== 'lose-unfsynced') continue;
      const d = u.dropped;
      signals.push({
        side: 'injector',
        node,
        signal: 'power failure: un-fsynced writes dropped',
        after: d
          ? `${d.bytes} bytes in ${d.files.length} files (${u.processName} pid ${u.killed} killed first)`
          : 'no answer',
        landed: d !== null && d !== undefined,
      });
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
    const ok = signals.every((s) => s.landed);
    return { landed: ok, ...(!ok && { reason: 'the lazy filesystem was not cleanly removed' }), signals };
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const found: string[] = [];
    const fixed: string[] = [];
    const markers = parseMarkers(
      (await run(remote, node, listMarkersCommand(nodeStateDir(remote.node(node), MARKERS)), false)).stdout,
    );
    for (const m of markers) {
      const [dir, backing, socket, , pidFile, processName] = m.value.split('|');
      if (!dir || !backing) continue;
      found.push(`lazy filesystem on ${dir} (fault ${m.name})`);
      if (pidFile && processName)
        await run(remote, node, stopDaemonCommand(pidFile, processName, 'TERM'), false);
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
