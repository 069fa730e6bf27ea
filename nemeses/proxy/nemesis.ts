import { log } from '../../src/core/util/log.ts';
import { processExists } from '../../src/core/util/pid.ts';
import { pollFor } from '../../src/core/util/retry.ts';
import { landingEvidence, notLandedReason } from '../landing.ts';
import {
  type Capability,
  CapabilityMissingError,
  type CleanReport,
  type EvidenceSignal,
  type FaultEvidence,
  type FaultRecord,
  type Nemesis,
} from '../types.ts';
import {
  activeProxyHub,
  type FaultCounters,
  PROXY_ACTIONS,
  type ProxyAction,
  type ProxyFaultParams,
  type ProxyHub,
  type ProxyLink,
} from './hub.ts';

/**
 * The proxy nemesis: faults on the links of the run's proxy (clients → one node), in this process. Its
 * fault record keeps the process that held the proxy, the listeners and the upstreams: nothing is ever
 * changed on a node, so a run killed with -9 leaves nothing in force (its listeners died with it), and
 * `faultline heal` only has to confirm that process is gone.
 *
 * Landing evidence per node: the injector side from the link's counters for this fault (bytes held or
 * dropped, connections reset or timed out, chunks delayed), the victim side from the clients themselves
 * as the proxy sees them (their round trip per request before and during, requests left waiting,
 * connections cut under them). With no client traffic on a link there is no victim, and the fault is
 * not proven there.
 */

interface ProxyUndo extends Record<string, unknown> {
  pid: number;
  action: ProxyAction;
  params: ProxyFaultParams;
  listeners: Record<string, string>;
  upstreams: Record<string, string>;
  /** links: peers: every member's peer listener and its real peer address (the fault acts on all of them). */
  peerListeners?: Record<string, string>;
  peerUpstreams?: Record<string, string>;
  /** Per node: the clients' median round trip before the fault (ms), and victim counts at inject. */
  before: Record<
    string,
    { roundTripMs: number | null; cut: number; cutWithRequest: number; attemptsReset: number }
  >;
  /** performance.now() at inject, in the proxy's process. */
  since: number;
}

/** How long evidence waits for client traffic to feel the fault. */
const EVIDENCE_WAIT_MS = 4000;
/** A request unanswered this long under a hold, a cut or a stopped direction counts as felt. */
const WAITING_MS = 300;

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

const r1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);

function ownHub(record: FaultRecord) {
  const undo = record.undo as Partial<ProxyUndo>;
  const hub = activeProxyHub();
  return hub && undo.pid === process.pid ? hub : null;
}

interface Judged {
  injector: { signal: string; during: unknown; landed: boolean };
  victim: { signal: string; before?: unknown; during: unknown; landed: boolean };
  /** A grouped fault: the clients outside the group, still answered on the link (reported, not required). */
  spared?: { signal: string; during: number; landed: boolean; note: string };
}

/**
 * A partition of the target members from the others on their peer links: the bytes dropped and
 * connections held into each target (its own peer listener) and out of the targets (the others'
 * listeners, connections the targets dialled); the victims are the member's clients, whose requests
 * that need the quorum go unanswered, and the database's own health of the member seen from a peer.
 */
function judgePeers(hub: ProxyHub, node: string, id: string, record: FaultRecord): Judged {
  const cut = (c: FaultCounters | undefined) => (c ? c.bytesDropped + c.connectionsHeld : 0);
  const into = hub.peerLink(node).counters.get(id);
  const out = [...hub.peerLinks.values()]
    .filter((l) => !record.nodes.includes(l.node))
    .map((l) => l.counters.get(id));
  const outBytes = out.reduce((a, c) => a + (c?.bytesDropped ?? 0), 0);
  const outHeld = out.reduce((a, c) => a + (c?.connectionsHeld ?? 0), 0);
  const t = performance.now();
  // The member's clients, when they go through the proxy too (a run always sends them there).
  const link = hub.links.get(node);
  const waiting = link ? link.waiting().filter((w) => t - w >= WAITING_MS).length : 0;
  return {
    injector: {
      signal: `proxy peer bytes dropped / connections held into ${node}; out of ${record.nodes.join(', ')} to the other members`,
      during: `${into?.bytesDropped ?? 0} / ${into?.connectionsHeld ?? 0}; ${outBytes} / ${outHeld}`,
      landed: cut(into) > 0 && out.some((c) => cut(c) > 0),
    },
    victim: {
      signal: link
        ? `client requests to ${node} unanswered for ≥${WAITING_MS} ms (the member lost its quorum)`
        : `no client of ${node} goes through the proxy: the member's side is not seen`,
      before: 0,
      during: waiting,
      landed: waiting > 0,
    },
  };
}

/** Both sides of the evidence on one link, as they stand now. */
function judge(link: ProxyLink, undo: ProxyUndo, id: string): Judged {
  const c: FaultCounters = link.counters.get(id) ?? ({} as FaultCounters);
  const before = undo.before[link.node] ?? { roundTripMs: null, cut: 0, cutWithRequest: 0, attemptsReset: 0 };
  const trips = link.victim.roundTrips.filter((r) => r.at - r.ms >= undo.since).map((r) => r.ms);
  const during = median(trips);
  const base = before.roundTripMs ?? 0;
  const t = performance.now();
  const group = undo.params.clients;
  const waiting = link.waiting(group).filter((w) => t - w >= WAITING_MS).length;
  const rtt = (rise: number) => ({
    signal: `client round trip via the proxy to ${link.node}, p50 ms (${trips.length} request(s) during)`,
    before: r1(before.roundTripMs),
    during: r1(during),
    landed: during !== null && during >= base + rise,
  });
  const waitingVictim = {
    signal: `${group ? `client group [${group.join(', ')}]: ` : ''}client requests to ${link.node} unanswered for ≥${WAITING_MS} ms`,
    before: 0,
    during: waiting,
    landed: waiting > 0,
  };
  const p = undo.params;
  switch (undo.action) {
    case 'latency': {
      const avg = c.chunksDelayed > 0 ? c.delayAddedMs / c.chunksDelayed : 0;
      return {
        injector: {
          signal: `proxy chunks delayed (mean added ms) on ${link.node}`,
          during: `${c.chunksDelayed} (${avg.toFixed(1)} ms)`,
          landed: c.chunksDelayed > 0 && avg >= 0.9 * Math.max(0, (p.delayMs ?? 0) - (p.jitterMs ?? 0)),
        },
        victim: rtt(0.5 * (p.delayMs ?? 0)),
      };
    }
    case 'bandwidth':
      return {
        injector: {
          signal: `proxy bytes paced to ${p.bytesPerSecond} B/s on ${link.node}`,
          during: c.bytesPaced,
          landed: c.bytesPaced > 0,
        },
        victim: { ...rtt(0), landed: during !== null && during > base * 1.5 + 1 },
      };
    case 'blackhole':
    case 'partition':
    case 'half-open': {
      // Bytes kept back (blackhole) or lost (partition, half-open), and connections never dialled through.
      const bytes = undo.action === 'blackhole' ? c.bytesHeld : c.bytesDropped;
      const what =
        undo.action === 'blackhole'
          ? 'held'
          : `dropped${undo.action === 'half-open' ? ` ${p.direction ?? 'upstream'}` : ''}`;
      return {
        injector: {
          signal: `proxy bytes ${what} / connections held on ${link.node}`,
          during: `${bytes} / ${c.connectionsHeld}`,
          landed: bytes > 0 || c.connectionsHeld > 0,
        },
        victim: waitingVictim,
      };
    }
    case 'reset': {
      const felt =
        link.victim.attemptsReset -
        before.attemptsReset +
        (link.victim.cutWithRequest - before.cutWithRequest);
      return {
        injector: {
          signal: `proxy connections reset (RST) on ${link.node}`,
          during: c.connectionsReset,
          landed: c.connectionsReset > 0,
        },
        victim: {
          signal: `client connections to ${link.node} reset mid-request or on connect`,
          before: 0,
          during: felt,
          landed: felt > 0,
        },
      };
    }
    case 'slice':
      return {
        injector: {
          signal: `proxy writes sliced (pieces) on ${link.node}`,
          during: `${c.writesSliced} (${c.slices})`,
          landed: c.writesSliced > 0,
        },
        victim: rtt(0.5 * (p.sliceDelayMs ?? 0)),
      };
    case 'timeout': {
      const cut = link.victim.cut - before.cut;
      return {
        injector: {
          signal: `proxy connections closed after ${p.afterMs} ms on ${link.node}`,
          during: c.connectionsTimedOut,
          landed: c.connectionsTimedOut > 0,
        },
        victim: {
          signal: `client connections to ${link.node} closed under the client`,
          before: 0,
          during: cut,
          landed: cut > 0,
        },
      };
    }
  }
}

function signalsOf(j: Judged, node: string): EvidenceSignal[] {
  return [
    { side: 'injector', node, ...j.injector, before: 0 },
    { side: 'victim', node, ...j.victim },
    ...(j.spared ? [{ side: 'victim' as const, node, before: 0, ...j.spared }] : []),
  ];
}

/** The clients a grouped fault leaves alone on a link: requests answered outside the group since inject. */
function spared(link: ProxyLink, undo: ProxyUndo): Judged['spared'] {
  const group = undo.params.clients;
  if (!group) return undefined;
  const others = [...link.pairs].filter((p) => p.thread !== null && !group.includes(p.thread)).length;
  const answered = link.answeredOutside(group, undo.since);
  return {
    signal: `client connections outside group [${group.join(', ')}] answered by ${link.node} during the fault`,
    during: answered,
    landed: others === 0 || answered > 0,
    note:
      others === 0
        ? 'no client outside the group connects to this node'
        : 'the group is cut, the other clients are not',
  };
}

export const proxyNemesis: Nemesis & { kind: 'proxy' } = {
  kind: 'proxy',

  async capabilities(): Promise<Capability[]> {
    const hub = activeProxyHub();
    return [
      {
        name: 'proxy (control node)',
        available: hub !== null,
        ...(!hub && {
          reason: 'no proxy runs in this process: the run starts one when a proxy fault is scheduled',
        }),
      },
    ];
  },

  async inject(_remote, spec, id, opts): Promise<FaultRecord> {
    const hub = activeProxyHub();
    const nodes = Array.isArray(spec.targets) ? spec.targets : [];
    if (!hub)
      throw new CapabilityMissingError(
        'control node',
        'proxy',
        'no proxy in this run (the clients were not pointed at it)',
      );
    const action = spec.action as ProxyAction;
    if (!PROXY_ACTIONS.includes(action)) throw new Error(`unknown proxy action ${spec.action}`);
    const params = (spec.params ?? {}) as ProxyFaultParams;
    const problem = params.clients ? hub.groupProblem(nodes, params.clients) : null;
    if (problem) throw new CapabilityMissingError('control node', 'proxy client group', problem);
    if (params.links === 'peers' && nodes.some((n) => !hub.peerLinks.has(n)))
      throw new CapabilityMissingError(
        'control node',
        'proxy peer links',
        "the members' peer traffic does not go through the proxy (the run routes it only when the database declares its peer address and a plan step asks for links: peers)",
      );
    const d = hub.describe();
    const undo: ProxyUndo = {
      pid: process.pid,
      action,
      params,
      listeners: Object.fromEntries(nodes.map((n) => [n, d.listeners[n] as string])),
      upstreams: Object.fromEntries(nodes.map((n) => [n, d.upstreams[n] as string])),
      ...(params.links === 'peers' && { peerListeners: d.peerListeners, peerUpstreams: d.peerUpstreams }),
      before: Object.fromEntries(
        nodes.map((n) => {
          // A fault on peer links may run with no client link (the victim side is then unproven).
          const l = params.links === 'peers' ? hub.links.get(n) : hub.link(n);
          if (!l) return [n, { roundTripMs: null, cut: 0, cutWithRequest: 0, attemptsReset: 0 }];
          return [
            n,
            {
              roundTripMs: median(l.victim.roundTrips.slice(-200).map((r) => r.ms)),
              cut: l.victim.cut,
              cutWithRequest: l.victim.cutWithRequest,
              attemptsReset: l.victim.attemptsReset,
            },
          ];
        }),
      ),
      since: performance.now(),
    };
    const record: FaultRecord = { id, spec, nodes, injectedAt: new Date().toISOString(), undo };
    await opts?.beforeApply?.(record);
    hub.apply(id, nodes, action, params);
    return record;
  },

  async evidence(_remote, record): Promise<FaultEvidence> {
    const hub = ownHub(record);
    if (!hub) return { landed: false, reason: 'the proxy of this fault is not in this process', signals: [] };
    const undo = record.undo as ProxyUndo;
    const judgeAll = async () =>
      record.nodes.map((n) => {
        if (undo.params.links === 'peers') return { n, j: judgePeers(hub, n, record.id, record) };
        const link = hub.link(n);
        const j = judge(link, undo, record.id);
        const s = spared(link, undo);
        return { n, j: s ? { ...j, spared: s } : j };
      });
    // Both sides of every link, not the clients outside a group: those are shown, never waited for.
    const felt = (judged: Awaited<ReturnType<typeof judgeAll>>) =>
      judged.length > 0 && judged.every(({ j }) => j.injector.landed && j.victim.landed);
    // Gate on the clients feeling it, never a fixed sleep: poll until every link shows both sides.
    const judged = await pollFor(judgeAll, felt, { timeoutMs: EVIDENCE_WAIT_MS, stepMs: 50 });
    const signals = judged.flatMap(({ n, j }) => signalsOf(j, n));
    if (felt(judged)) return { landed: true, signals };
    return {
      landed: false,
      reason:
        judged.length === 0
          ? 'the fault names no node'
          : notLandedReason(
              signals,
              (s) => `${s.signal} = ${String(s.during)}`,
              `not landed in ${EVIDENCE_WAIT_MS} ms`,
            ),
      signals,
    };
  },

  async heal(_remote, record): Promise<void> {
    const undo = record.undo as Partial<ProxyUndo>;
    const hub = ownHub(record);
    if (hub) {
      hub.remove(record.id);
      return;
    }
    // Another process held the proxy: its faults lived and died with it; nothing is on any node.
    if (typeof undo.pid === 'number' && undo.pid !== process.pid && processExists(undo.pid))
      throw new Error(
        `the proxy of ${record.id} lives in process ${undo.pid}, which is still running: stop it (its exit heal undoes the fault)`,
      );
    // The members advertised the dead proxy as each other's address: nothing to undo, but they cannot
    // talk until the database is set up again (the next run's teardown and setup do it).
    if (undo.peerListeners)
      log().warn(
        { fault: record.id, peerListeners: undo.peerListeners },
        "the members' peer traffic went through the proxy of a run that is gone: the database cannot form a quorum until it is set up again",
      );
  },

  async evidenceAfterHeal(_remote, record): Promise<FaultEvidence> {
    const hub = ownHub(record);
    const undo = record.undo as Partial<ProxyUndo>;
    if (!hub)
      return { landed: true, reason: 'the proxy of this fault has gone with its process', signals: [] };
    const healedAt = performance.now();
    const peers = undo.params?.links === 'peers';
    const peerAt = new Map(record.nodes.map((n) => [n, hub.peerLinks.has(n) ? hub.peerBytes(n) : null]));
    const signals = (): EvidenceSignal[] =>
      record.nodes.flatMap((n) => {
        const injector: EvidenceSignal = {
          side: 'injector',
          node: n,
          signal: `proxy faults in force on ${n}${peers ? "'s peer links" : ''} for ${record.id}`,
          after: hub.inForce(record.id).includes(n) ? 1 : 0,
          landed: !hub.inForce(record.id).includes(n),
        };
        if (peers) {
          // What the fault cut is flowing again: the member's raft traffic, both ways. (Its clients are
          // served once it has caught up and any election it forced is over: the recovery budget's job.)
          const at = peerAt.get(n) ?? { into: 0, out: 0 };
          const now = hub.peerBytes(n);
          const into = now.into - at.into;
          const out = now.out - at.out;
          return [
            injector,
            {
              side: 'victim',
              node: n,
              signal: `peer bytes between ${n} and the other members after heal (into / out of ${n})`,
              after: `${into} / ${out}`,
              landed: into > 0 && out > 0,
              note: 'after heal: the member talks to its peers again',
            },
          ];
        }
        const l = hub.link(n);
        const trips = l.victim.roundTrips.filter((r) => r.at - r.ms >= healedAt).map((r) => r.ms);
        return [
          injector,
          {
            side: 'victim',
            node: n,
            signal: `client requests to ${n} answered after heal (p50 ms)`,
            after: trips.length > 0 ? `${trips.length} (${r1(median(trips))} ms)` : 0,
            landed: trips.length > 0,
            note: 'after heal: the clients are served again',
          },
        ];
      });
    const last = await pollFor(
      async () => signals(),
      (s) => s.every((x) => x.landed),
      {
        timeoutMs: EVIDENCE_WAIT_MS,
        stepMs: 50,
      },
    );
    return landingEvidence(last, {
      noneLands: true,
      reason: peers
        ? 'no peer traffic crossed the healed links in time'
        : 'no client request crossed a healed link in time',
    });
  },

  async verifyClean(): Promise<CleanReport> {
    // The proxy never changes a node: there is nothing there to find.
    return { clean: true, fixed: [], found: [] };
  },
};
