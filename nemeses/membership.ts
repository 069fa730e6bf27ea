import { shellQuote } from '../src/core/control/quote.ts';
import type { ExecResult, Remote } from '../src/core/control/types.ts';
import { pollFor } from '../src/core/util/retry.ts';
import { landingEvidence, shownAt } from './landing.ts';
import { listMarkersCommand, nodeStateDir, parseMarkers, writeMarkerCommand } from './node-state.ts';
import type {
  Capability,
  CleanReport,
  EvidenceSignal,
  FaultEvidence,
  FaultRecord,
  Nemesis,
} from './types.ts';

/**
 * Membership faults (Jepsen's etcd membership nemesis): remove members from the cluster through the
 * database's own reconfiguration, and at heal add them back one at a time, each joining with empty data,
 * until the database lists every one of them as a running member again.
 *
 * The spec carries everything as shell commands the database adapter built (`params.commands`), so a
 * record in the ledger heals without the adapter: `faultline heal --ledger`. Each removed node also
 * gets a marker holding its add and join commands, so the sweep (`verifyClean`) restores a member a
 * killed run left removed even without a ledger.
 *
 * params: peers (members that stay), observer (the peer whose member list is the victim evidence),
 * commands {list, observe, remove {node}, retire {node}, add {node}, join {node}}, waitMs.
 */
export interface MembershipCommands {
  /** Run on a peer: the member list (one name per line), asking every peer. */
  list: string;
  /** Run on the observer: the member list as the observer itself sees it. */
  observe: string;
  remove: Record<string, string>;
  retire: Record<string, string>;
  add: Record<string, string>;
  join: Record<string, string>;
}

interface MembershipUndo extends Record<string, unknown> {
  peers: string[];
  observer: string;
  commands: MembershipCommands;
  /** The observer's member list before the fault. */
  before: string[];
  /** Per removed node: the peer that ran the removal and what the database answered. */
  removed: Record<string, { peer: string; code: number; output: string }>;
  retired: Record<string, boolean>;
}

const AREA = 'membership';
const DEFAULT_WAIT_MS = 60_000;
/** How long a refused remove or add is retried. */
const REFUSED_RETRY_MS = 20_000;
/** Between reads of the member list (a reconfiguration takes a Raft round or more). */
const POLL_STEP_MS = 500;

function paramsOf(record: { spec: FaultRecord['spec'] }) {
  const p = record.spec.params ?? {};
  const peers = p.peers as string[] | undefined;
  const commands = p.commands as MembershipCommands | undefined;
  if (!peers?.length || !commands)
    throw new Error('membership faults need params.peers and params.commands (from the database)');
  const observer = typeof p.observer === 'string' ? p.observer : (peers[0] as string);
  return { peers, commands, observer, waitMs: Number(p.waitMs ?? DEFAULT_WAIT_MS) };
}

function targetsOf(spec: { targets?: string | string[] }): string[] {
  if (Array.isArray(spec.targets) && spec.targets.length > 0) return spec.targets;
  throw new Error('membership faults need resolved target nodes');
}

const names = (r: ExecResult) =>
  r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();

const output = (r: ExecResult) => (r.stdout.trim() || r.stderr.trim()).split('\n')[0]?.slice(0, 300) ?? '';

/** Run a command on the first peer that succeeds (a peer may be down or cut off). */
async function onPeers(remote: Remote, peers: readonly string[], cmd: string) {
  let last: { peer: string; r: ExecResult } | null = null;
  for (const peer of peers) {
    const r = await remote.exec(peer, cmd, { sudo: true, check: false, timeoutMs: 30_000 });
    last = { peer, r };
    if (r.code === 0) return last;
  }
  return last as { peer: string; r: ExecResult };
}

/** Add one node back and wait until the database lists it as a running member. */
async function restore(
  remote: Remote,
  node: string,
  peers: readonly string[],
  cmd: { list: string; add: string; join: string },
  waitMs: number,
): Promise<string> {
  const listed = async () => names((await onPeers(remote, peers, cmd.list)).r);
  const add = await pollFor(
    () => onPeers(remote, peers, cmd.add),
    (x) => x.r.code === 0,
    { timeoutMs: REFUSED_RETRY_MS, stepMs: POLL_STEP_MS },
  );
  if (add.r.code !== 0) throw new Error(`${node}: member add failed on ${add.peer}: ${output(add.r)}`);
  const join = await remote.exec(node, cmd.join, { sudo: true, check: false, timeoutMs: 30_000 });
  if (join.code !== 0) throw new Error(`${node}: join failed: ${output(join)}`);
  const now = await pollFor(listed, (l) => l.includes(node), { timeoutMs: waitMs, stepMs: POLL_STEP_MS });
  if (!now.includes(node))
    throw new Error(`${node}: not a running member ${waitMs} ms after its join (members: ${now.join(', ')})`);
  return `${output(add.r)}; ${output(join)}`;
}

const markerDir = (remote: Remote, node: string) => nodeStateDir(remote.node(node), AREA);

export const membershipNemesis: Nemesis & { kind: 'membership' } = {
  kind: 'membership',

  async capabilities(): Promise<Capability[]> {
    // What it needs is the database's own reconfiguration (the membership capability), checked when
    // the fault spec is built; the nodes need nothing of their own.
    return [{ name: 'membership', available: true }];
  },

  async inject(remote, spec, id, opts): Promise<FaultRecord> {
    const nodes = targetsOf(spec);
    const { peers, commands, observer } = paramsOf({ spec });
    if (nodes.some((n) => peers.includes(n))) throw new Error('a removed member cannot be its own peer');
    const before = names(await remote.exec(observer, commands.observe, { sudo: true, check: false }));
    const missing = nodes.filter((n) => !before.includes(n));
    if (missing.length > 0)
      throw new Error(
        `${missing.join(', ')}: not a running member as ${observer} sees it (${before.join(', ') || 'no answer'})`,
      );
    const undo: MembershipUndo = { peers, observer, commands, before, removed: {}, retired: {} };
    const record: FaultRecord = { id, spec, nodes, injectedAt: new Date().toISOString(), undo };
    await opts?.beforeApply?.(record);
    // One at a time, as a reconfiguration must be: each removal is committed before the next.
    for (const node of nodes) {
      const marker = JSON.stringify({
        id,
        peers,
        list: commands.list,
        add: commands.add[node],
        join: commands.join[node],
      });
      await remote.exec(node, writeMarkerCommand(markerDir(remote, node), id, marker), { sudo: true });
      // A database may refuse a reconfiguration for a while (etcd's strict check wants every remaining
      // member connected for some seconds first): retried, bounded.
      const rm = await pollFor(
        () => onPeers(remote, peers, commands.remove[node] as string),
        (x) => x.r.code === 0,
        { timeoutMs: REFUSED_RETRY_MS, stepMs: POLL_STEP_MS },
      );
      undo.removed[node] = { peer: rm.peer, code: rm.r.code, output: output(rm.r) };
      if (rm.r.code !== 0) throw new Error(`${node}: member remove failed on ${rm.peer}: ${output(rm.r)}`);
      const retire = await remote.exec(node, commands.retire[node] as string, { sudo: true, check: false });
      undo.retired[node] = retire.code === 0;
    }
    return record;
  },

  async evidence(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as MembershipUndo;
    const { waitMs } = paramsOf(record);
    const observe = async () =>
      names(await remote.exec(undo.observer, undo.commands.observe, { sudo: true, check: false }));
    const during = await pollFor(observe, (l) => record.nodes.every((n) => !l.includes(n)), {
      timeoutMs: Math.min(waitMs, 10_000),
      stepMs: POLL_STEP_MS,
    });
    const signals: EvidenceSignal[] = [];
    for (const node of record.nodes) {
      const rm = undo.removed[node];
      signals.push({
        side: 'injector',
        node: rm?.peer ?? undo.peers[0] ?? '?',
        signal: `member remove ${node}`,
        before: 'member',
        during: rm ? `exit ${rm.code}: ${rm.output}` : 'not run',
        landed: rm?.code === 0,
      });
      signals.push({
        side: 'victim',
        node: undo.observer,
        signal: `member list on ${undo.observer}`,
        before: undo.before.join(' '),
        during: during.join(' '),
        landed: undo.before.includes(node) && !during.includes(node),
        note: `${node} ${undo.retired[node] ? 'stopped and wiped' : 'not stopped'}`,
      });
    }
    return landingEvidence(signals, { noneLands: true, show: shownAt('during') });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<MembershipUndo>;
    if (!undo.commands || !undo.peers) return;
    const { waitMs } = paramsOf(record);
    // Grow back one member at a time: each joins the cluster the others form, then counts for quorum.
    for (const node of record.nodes) {
      await restore(
        remote,
        node,
        undo.peers,
        {
          list: undo.commands.list,
          add: undo.commands.add[node] as string,
          join: undo.commands.join[node] as string,
        },
        waitMs,
      );
      await remote.exec(node, `rm -f ${shellQuote(`${markerDir(remote, node)}/${record.id}`)}`, {
        sudo: true,
        check: false,
      });
    }
  },

  async evidenceAfterHeal(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as MembershipUndo;
    const after = names(
      await remote.exec(undo.observer, undo.commands.observe, { sudo: true, check: false }),
    );
    const signals: EvidenceSignal[] = record.nodes.map((node) => ({
      side: 'victim',
      node: undo.observer,
      signal: `member list on ${undo.observer}`,
      before: undo.before.join(' '),
      after: after.join(' '),
      landed: after.includes(node) && !after.includes('(unstarted)'),
    }));
    return landingEvidence(signals, {
      noneLands: true,
      reason: `membership not restored: ${after.join(' ')}`,
    });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const dir = markerDir(remote, node);
    const markers = parseMarkers(
      (await remote.exec(node, listMarkersCommand(dir), { sudo: true, check: false })).stdout,
    );
    const found: string[] = [];
    const fixed: string[] = [];
    let clean = true;
    for (const m of markers) {
      let cmd: { id: string; peers: string[]; list: string; add: string; join: string };
      try {
        cmd = JSON.parse(m.value);
      } catch {
        found.push(`unreadable membership marker ${m.name}`);
        clean = false;
        continue;
      }
      const listed = names((await onPeers(remote, cmd.peers, cmd.list)).r);
      if (listed.includes(node)) {
        found.push(`membership marker of ${cmd.id}: ${node} is a member`);
      } else {
        found.push(`${node} removed from the cluster by ${cmd.id}`);
        try {
          fixed.push(`${node} added back: ${await restore(remote, node, cmd.peers, cmd, DEFAULT_WAIT_MS)}`);
        } catch (err) {
          found.push((err as Error).message);
          clean = false;
          continue;
        }
      }
      await remote.exec(node, `rm -f ${shellQuote(`${dir}/${m.name}`)}`, { sudo: true, check: false });
    }
    return { clean, fixed, found };
  },
};
