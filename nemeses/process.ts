import { killPidsCommand, parsePids, signalPidTreeCommand } from '../src/core/control/process-tree.ts';
import { shellQuote } from '../src/core/control/quote.ts';
import type { Remote } from '../src/core/control/types.ts';
import {
  type DatabaseWith,
  databaseWith,
  type FaultTarget,
  type PeerView,
} from '../src/core/database/capabilities.ts';
import { waitFor } from '../src/core/util/retry.ts';
import { landingEvidence, shownAt } from './landing.ts';
import { listMarkersCommand, nodeStateDir, parseMarkers, writeMarkerCommand } from './node-state.ts';
import type {
  Capability,
  CleanReport,
  EvidenceSignal,
  FaultEvidence,
  FaultRecord,
  InjectOptions,
  Nemesis,
} from './types.ts';

/**
 * Process faults: kill (-9), terminate (TERM), pause (STOP), resume (CONT), restart. A process is named
 * only by the DB's pidfile or an exact pid, never by process name across nodes. Kill, pause and resume
 * act on that process and every process it started (process-tree.ts), as a crash or a stall of the
 * server would: a PostgreSQL postmaster paused alone leaves its backends serving every client already
 * connected, and one killed alone leaves them running until they notice. Terminate and restart ask the
 * process alone, which ends its own children.
 *
 * params: pidFiles {node: path} | pidFile (same path everywhere) | pids {node: pid} | pid;
 * startCommand (shell, run detached on the node: restart, and heal of kill/terminate); waitMs.
 * Targets are resolved node names (spec.targets as a list).
 */
export const PROCESS_ACTIONS = ['kill', 'terminate', 'pause', 'resume', 'restart'] as const;

interface ProcessUndo extends Record<string, unknown> {
  action: string;
  pids: Record<string, number>;
  pidFiles: Record<string, string>;
  startCommand?: string;
  before: Record<string, string>;
  /** The signal the injector delivered per node (kill exited 0). */
  delivered?: Record<string, string>;
  /** Kill, pause, resume: every pid signalled per node, the named process first. */
  tree?: Record<string, number[]>;
  /** After restart: the new pid per node. */
  newPids?: Record<string, number>;
  /** The peer each target is watched from, and how it saw the target before the fault. */
  peers?: Record<string, { observer: string; before: string }>;
}

/** How a peer should see the victim while the fault holds: down, or (restart, resume) serving. */
const PEER_EXPECT: Record<string, boolean> = {
  kill: false,
  terminate: false,
  pause: false,
  restart: true,
  resume: true,
};
/** How long after heal a peer may take to see the member serving again (an etcd member rejoining). */
const PEER_BACK_MS = 20_000;

export function peerText(v: PeerView): string {
  return `${v.up === null ? 'unknown' : v.up ? 'up' : 'down'}: ${v.detail}`;
}

/**
 * Ask the peer until it sees `want` (bounded): a kill is seen at once, a paused member after the probe's
 * own timeout, a restarted one once it serves again.
 */
export async function peerSees(
  sut: DatabaseWith<'peer-view'>,
  observer: string,
  node: string,
  want: boolean,
  ms: number,
): Promise<PeerView> {
  const ask = (o: string, n: string) => sut.db.peerView(sut.ctx, o, n);
  let view = await ask(observer, node);
  if (ms <= 0) return view;
  await waitFor(
    async () => {
      if (view.up === want) return true;
      view = await ask(observer, node);
      return view.up === want;
    },
    ms,
    250,
  );
  return view;
}

/** A peer for each target: the first node of the cluster that is not itself a target. */
export function observersFor(remote: Remote, targets: readonly string[]): string | null {
  return remote.nodes.map((n) => n.name).find((n) => !targets.includes(n)) ?? null;
}

async function peerSignal(
  sutOrNone: FaultTarget | undefined,
  undo: ProcessUndo,
  node: string,
  phase: 'during' | 'after',
  ms: number,
  othersInForce: readonly string[] = [],
): Promise<EvidenceSignal | null> {
  const peer = undo.peers?.[node];
  const sut = databaseWith(sutOrNone, 'peer-view');
  if (!peer || !sut) return null;
  const want = phase === 'after' ? true : (PEER_EXPECT[undo.action] ?? false);
  // After heal, with other faults still in force (a partition may cut the peer off), the peer's view
  // is read once and not judged: waiting for it would hold up those faults' own heal.
  const unjudged = phase === 'after' && othersInForce.length > 0;
  const view = await peerSees(sut, peer.observer, node, want, unjudged ? 0 : ms);
  return {
    side: 'victim',
    node,
    signal: `${sut.db.name} member ${node} as peer ${peer.observer} sees it`,
    before: peer.before,
    [phase]: peerText(view),
    landed: view.up === want || unjudged,
    ...(view.up === null && { note: 'the peer could not tell (never read as down)' }),
    ...(unjudged && view.up !== want && { note: `not judged: ${othersInForce.join(', ')} still in force` }),
  };
}

const PAUSED = 'paused';

/**
 * How each process a killed, paused or resumed process started must be while the fault holds. One that
 * ended on its own (a backend whose client left) counts as paused or resumed: none may be left running
 * through a pause, or stopped after a resume.
 */
const TREE_EXPECT: Record<string, { word: string; ok: (state: string) => boolean }> = {
  kill: { word: 'gone', ok: (st) => isGone(st) },
  pause: { word: 'stopped (State T) or ended', ok: (st) => st.startsWith('T') || isGone(st) },
  resume: { word: 'not stopped', ok: (st) => !st.startsWith('T') },
};

function targetsOf(spec: { targets?: string | string[] }, remote: Remote): string[] {
  if (Array.isArray(spec.targets)) return spec.targets;
  if (typeof spec.targets === 'string' && remote.nodes.some((n) => n.name === spec.targets))
    return [spec.targets];
  throw new Error('process faults need resolved target nodes (a node name or list)');
}

export function statusStateCommand(pid: number): string {
  return `sed -n 's/^State:[[:space:]]*//p' /proc/${pid}/status 2>/dev/null || true`;
}

async function stateOf(remote: Remote, node: string, pid: number): Promise<string> {
  const r = await remote.exec(node, statusStateCommand(pid), { sudo: true, check: false });
  return r.stdout.trim() || 'gone';
}

/** Each pid's State, in order (`gone` for one that is not there). */
async function statesOf(remote: Remote, node: string, pids: readonly number[]): Promise<string[]> {
  // A record read back may carry anything: only integer pids reach the shell.
  const valid = pids.filter((p) => Number.isInteger(p) && p > 1);
  if (valid.length === 0) return pids.map(() => 'gone');
  const script = valid.map((p) => `s=$(${statusStateCommand(p)}); echo "\${s:-gone}"`).join('; ');
  const r = await remote.exec(node, script, { sudo: true, check: false });
  const lines = r.stdout.split('\n');
  const byPid = new Map(valid.map((p, i) => [p, lines[i]?.trim() || 'gone']));
  return pids.map((p) => byPid.get(p) ?? 'gone');
}

/** Zombies are as good as gone: the process ran its last instruction. */
export function isGone(state: string): boolean {
  return state === 'gone' || state.startsWith('Z') || state.startsWith('X');
}

async function readPid(remote: Remote, node: string, pidFile: string): Promise<number | null> {
  const r = await remote.exec(node, `cat ${shellQuote(pidFile)} 2>/dev/null`, { sudo: true, check: false });
  const pid = Number.parseInt(r.stdout.trim(), 10);
  return Number.isInteger(pid) && pid > 1 ? pid : null;
}

function startDetached(command: string): string {
  return `setsid sh -c ${shellQuote(command)} </dev/null >/dev/null 2>&1 &`;
}

/**
 * Kill, pause or resume `pid` and every process it started: a pause stops the tree (each pid marked, so
 * a sweep can resume it); a kill stops the tree, then kills every pid of it, so that no child acts after
 * its parent is gone; a resume continues the tree and unmarks it. The pids go into `undo.tree`.
 */
async function signalTree(
  remote: Remote,
  node: string,
  pid: number,
  action: 'kill' | 'pause' | 'resume',
  id: string,
  undo: ProcessUndo,
): Promise<{ code: number | null }> {
  const dir = nodeStateDir(remote.node(node), PAUSED);
  const walked = await remote.exec(node, signalPidTreeCommand(pid, action === 'resume' ? 'CONT' : 'STOP'), {
    sudo: true,
  });
  const tree = parsePids(walked.stdout);
  if (tree.length === 0) return { code: 1 };
  undo.tree ??= {};
  undo.tree[node] = tree;
  const then =
    action === 'kill'
      ? killPidsCommand(tree)
      : action === 'pause'
        ? tree.map((p) => writeMarkerCommand(dir, String(p), id)).join(' && ')
        : `rm -f ${tree.map((p) => shellQuote(`${dir}/${p}`)).join(' ')}`;
  return remote.exec(node, then, { sudo: true });
}

export const processNemesis: Nemesis & { kind: 'process' } = {
  kind: 'process',

  async capabilities(remote, node): Promise<Capability[]> {
    const r = await remote.exec(node, 'test -r /proc/self/status && command -v kill && command -v setsid', {
      check: false,
    });
    return [
      {
        name: 'signals',
        available: r.code === 0,
        ...(r.code !== 0 && { reason: 'needs /proc, kill and setsid (util-linux)' }),
      },
    ];
  },

  async inject(remote, spec, id, opts?: InjectOptions): Promise<FaultRecord> {
    const action = spec.action;
    if (!(PROCESS_ACTIONS as readonly string[]).includes(action))
      throw new Error(`process: unknown action "${action}" (expected ${PROCESS_ACTIONS.join(', ')})`);
    const p = spec.params ?? {};
    const nodes = targetsOf(spec, remote);
    const pidFiles: Record<string, string> = {};
    const pids: Record<string, number> = {};
    const before: Record<string, string> = {};
    await Promise.all(
      nodes.map(async (node) => {
        const explicit =
          (p.pids as Record<string, number> | undefined)?.[node] ??
          (typeof p.pid === 'number' ? p.pid : undefined);
        const file =
          (p.pidFiles as Record<string, string> | undefined)?.[node] ?? (p.pidFile as string | undefined);
        if (file) pidFiles[node] = file;
        const pid = explicit ?? (file ? await readPid(remote, node, file) : null);
        if (!pid) throw new Error(`${node}: no pid (pidfile ${file ?? 'not given'} is missing or empty)`);
        pids[node] = pid;
        before[node] = await stateOf(remote, node, pid);
        if (isGone(before[node] as string) && action !== 'restart')
          throw new Error(`${node}: pid ${pid} is not running (nothing to ${action})`);
      }),
    );
    const undo: ProcessUndo = {
      action,
      pids,
      pidFiles,
      before,
      ...(typeof p.startCommand === 'string' && { startCommand: p.startCommand }),
    };
    if (action === 'restart' && !undo.startCommand && !opts?.startProcess)
      throw new Error(
        "restart needs the database's own start (the process capability) or params.startCommand",
      );
    const sut = databaseWith(opts?.sut, 'peer-view');
    const observer = sut ? observersFor(remote, nodes) : null;
    if (observer && sut) {
      const views = await Promise.all(nodes.map((n) => sut.db.peerView(sut.ctx, observer, n)));
      undo.peers = Object.fromEntries(
        nodes.map((n, i) => [n, { observer, before: peerText(views[i] as PeerView) }]),
      );
    }
    const record: FaultRecord = { id, spec, nodes, injectedAt: new Date().toISOString(), undo };
    await opts?.beforeApply?.(record);
    const signal = { kill: 'KILL', terminate: 'TERM', pause: 'STOP', resume: 'CONT', restart: 'TERM' }[
      action as (typeof PROCESS_ACTIONS)[number]
    ];
    await Promise.all(
      nodes.map(async (node) => {
        const pid = pids[node] as number;
        const sent =
          action === 'kill' || action === 'pause' || action === 'resume'
            ? await signalTree(remote, node, pid, action, id, undo)
            : await remote.exec(node, `kill -${signal} ${pid}`, { sudo: true, check: action !== 'restart' });
        if (sent.code === 0) {
          undo.delivered ??= {};
          undo.delivered[node] = `SIG${signal}`;
        }
        if (action === 'restart') {
          const gone = await waitFor(
            async () => isGone(await stateOf(remote, node, pid)),
            Number(p.waitMs ?? 10_000),
          );
          // TERM ignored for the whole wait: KILL, as a supervisor would, so the restart still happens.
          if (!gone) {
            await remote.exec(node, `kill -KILL ${pid}`, { sudo: true, check: false });
            await waitFor(async () => isGone(await stateOf(remote, node, pid)), 5000);
          }
          if (undo.startCommand) await remote.exec(node, startDetached(undo.startCommand), { sudo: true });
          else await opts?.startProcess?.(node);
          const file = pidFiles[node];
          let fresh: number | null = null;
          await waitFor(
            async () => {
              fresh = file ? await readPid(remote, node, file) : null;
              return fresh !== null && fresh !== pid && !isGone(await stateOf(remote, node, fresh));
            },
            Number(p.waitMs ?? 10_000),
          );
          if (fresh) {
            undo.newPids ??= {};
            undo.newPids[node] = fresh;
          }
        }
      }),
    );
    return record;
  },

  async evidence(remote, record, ctx): Promise<FaultEvidence> {
    const undo = record.undo as ProcessUndo;
    const waitMs = Number(record.spec.params?.waitMs ?? 5000);
    const signals: EvidenceSignal[] = await Promise.all(
      record.nodes.map(async (node): Promise<EvidenceSignal> => {
        const pid = undo.pids[node] as number;
        let during = await stateOf(remote, node, pid);
        const expect: Record<string, (s: string) => boolean> = {
          kill: isGone,
          terminate: isGone,
          restart: isGone,
          pause: (s) => s.startsWith('T'),
          resume: (s) => !isGone(s) && !s.startsWith('T'),
        };
        const ok = expect[undo.action] ?? (() => false);
        // TERM may take a moment to finish a graceful shutdown; the state is polled, never slept on.
        if (!ok(during)) {
          await waitFor(async () => {
            during = await stateOf(remote, node, pid);
            return ok(during);
          }, waitMs);
        }
        const sig: EvidenceSignal = {
          side: 'victim',
          node,
          signal: `/proc/${pid}/status State`,
          before: undo.before[node],
          during,
          landed: ok(during),
        };
        if (undo.action === 'restart') {
          const fresh = undo.newPids?.[node];
          const freshState = fresh ? await stateOf(remote, node, fresh) : 'gone';
          sig.signal = `pid ${pid} gone, new pid from ${undo.pidFiles[node] ?? 'pidfile'}`;
          sig.after = fresh ? `pid ${fresh}: ${freshState}` : 'no new pid';
          sig.landed = sig.landed && fresh !== undefined && !isGone(freshState);
        }
        return sig;
      }),
    );
    // The processes it started, each in the state the action puts the tree in.
    for (const node of record.nodes) {
      const started = (undo.tree?.[node] ?? []).slice(1);
      if (started.length === 0) continue;
      const expect = TREE_EXPECT[undo.action];
      if (!expect) continue;
      const states = await statesOf(remote, node, started);
      const done = states.filter(expect.ok).length;
      signals.push({
        side: 'victim',
        node,
        signal: `the ${started.length} processes pid ${undo.pids[node]} started: ${expect.word}`,
        during: `${done} of ${started.length}`,
        landed: done === started.length,
      });
    }
    // The injector's side: the signal was delivered to that pid (the victim's side above proves its effect).
    for (const node of record.nodes)
      signals.push({
        side: 'injector',
        node,
        signal: `kill -${undo.delivered?.[node]?.slice(3) ?? '?'} ${undo.pids[node]}`,
        before: undo.before[node],
        during: undo.delivered?.[node] ? `${undo.delivered[node]} delivered` : 'not delivered',
        landed: undo.delivered?.[node] !== undefined,
      });
    // The database's own members: a peer sees the victim down (or, after a restart, serving again).
    const peers = await Promise.all(record.nodes.map((n) => peerSignal(ctx?.sut, undo, n, 'during', waitMs)));
    signals.push(...peers.filter((x): x is EvidenceSignal => x !== null));
    return landingEvidence(signals, { show: shownAt('during') });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<ProcessUndo>;
    const pids = undo.pids ?? {};
    await Promise.all(
      Object.entries(pids).map(async ([node, pid]) => {
        if (undo.action === 'pause') {
          // Every pid the pause stopped (the named one alone in a record from before trees).
          const tree = (undo.tree?.[node] ?? [pid]).filter((p) => Number.isInteger(p) && p > 1);
          const dir = nodeStateDir(remote.node(node), PAUSED);
          await remote.exec(
            node,
            `kill -CONT ${tree.join(' ')} 2>/dev/null; rm -f ${tree.map((p) => shellQuote(`${dir}/${p}`)).join(' ')}`,
            { sudo: true, check: false },
          );
        } else if ((undo.action === 'kill' || undo.action === 'terminate') && undo.startCommand) {
          // Restart only if the DB is not already back (the runner may have started it itself).
          const file = undo.pidFiles?.[node];
          const cur = file ? await readPid(remote, node, file) : null;
          if (cur === null || cur === pid || isGone(await stateOf(remote, node, cur)))
            await remote.exec(node, startDetached(undo.startCommand), { sudo: true });
        }
      }),
    );
  },

  /**
   * After heal (and after the database's own start for kill and terminate): a paused pid running again,
   * a killed member back under a new pid, and its peer seeing it serve again.
   */
  async evidenceAfterHeal(remote, record, ctx): Promise<FaultEvidence> {
    const undo = record.undo as ProcessUndo;
    const signals: EvidenceSignal[] = [];
    await Promise.all(
      Object.entries(undo.pids).map(async ([node, pid]) => {
        if (undo.action === 'pause' || undo.action === 'resume') {
          const after = await stateOf(remote, node, pid);
          signals.push({
            side: 'victim',
            node,
            signal: `/proc/${pid}/status State`,
            before: undo.before[node],
            after,
            landed: !after.startsWith('T') && !isGone(after),
          });
          const started = (undo.tree?.[node] ?? []).slice(1);
          if (started.length > 0) {
            const states = await statesOf(remote, node, started);
            const resumed = states.filter((st) => !st.startsWith('T')).length;
            signals.push({
              side: 'victim',
              node,
              signal: `the ${started.length} processes pid ${pid} started: not stopped`,
              after: `${resumed} of ${started.length}`,
              landed: resumed === started.length,
            });
          }
        } else {
          // kill / terminate / restart: the pidfile names a live process that is not the one signalled.
          const file = undo.pidFiles[node];
          if (!file) return;
          let fresh: number | null = null;
          let state = 'gone';
          await waitFor(async () => {
            fresh = file ? await readPid(remote, node, file) : null;
            state = fresh ? await stateOf(remote, node, fresh) : 'gone';
            return fresh !== null && fresh !== pid && !isGone(state);
          }, PEER_BACK_MS);
          signals.push({
            side: 'injector',
            node,
            signal: `kill -${undo.delivered?.[node]?.slice(3) ?? '?'} ${pid}`,
            before: undo.before[node],
            after:
              fresh && fresh !== pid ? `new pid ${fresh}: ${state}` : `no new pid in ${file ?? 'pidfile'}`,
            landed: fresh !== null && fresh !== pid && !isGone(state),
          });
        }
        const peer = await peerSignal(ctx?.sut, undo, node, 'after', PEER_BACK_MS, ctx?.othersInForce);
        if (peer) signals.push(peer);
      }),
    );
    return landingEvidence(signals, {
      noneLands: true,
      prefix: 'not back after heal',
      show: shownAt('after'),
    });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const dir = nodeStateDir(remote.node(node), PAUSED);
    const r = await remote.exec(node, listMarkersCommand(dir), { sudo: true, check: false });
    const markers = parseMarkers(r.stdout);
    const found: string[] = [];
    const fixed: string[] = [];
    for (const m of markers) {
      const pid = Number(m.name);
      const state = Number.isInteger(pid) ? await stateOf(remote, node, pid) : 'gone';
      found.push(`paused pid ${m.name} (fault ${m.value}): ${state}`);
      if (state.startsWith('T')) {
        await remote.exec(node, `kill -CONT ${pid}`, { sudo: true, check: false });
        fixed.push(`continued pid ${pid} (paused by ${m.value})`);
      }
      await remote.exec(node, `rm -f ${shellQuote(`${dir}/${m.name}`)}`, { sudo: true, check: false });
    }
    const still = await Promise.all(
      markers.map(async (m) =>
        (await stateOf(remote, node, Number(m.name))).startsWith('T') ? m.name : null,
      ),
    );
    const left = still.filter((x): x is string => x !== null);
    return {
      clean: left.length === 0,
      fixed,
      found: [...found, ...left.map((p) => `still stopped: pid ${p}`)],
    };
  },
};
