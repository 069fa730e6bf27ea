import { clusterSshPort } from '../src/core/control/addresses.ts';
import type { Remote } from '../src/core/control/types.ts';
import { Rng } from '../src/core/generator/rng.ts';
import {
  addRulesScript,
  countersScript,
  type DropRule,
  IN_CHAIN,
  listFaultlineStateScript,
  parseCounters,
  removeChainsScript,
  removeFaultRulesScript,
  totalPackets,
} from './commands/iptables.ts';
import { landingEvidence } from './landing.ts';
import { nodeAddresses, probeConnect, reachable } from './probe.ts';
import { completeGrudge, computeGrudge, cutPairs, type Grudge } from './topology.ts';
import type {
  Capability,
  CleanReport,
  EvidenceSignal,
  FaultEvidence,
  FaultRecord,
  FaultSpec,
  InjectOptions,
  Nemesis,
} from './types.ts';

/**
 * Network partitions with iptables DROP rules in faultline's own chain (see commands/iptables.ts).
 *
 * params: topology (halves, random-halves, one, majority, majorities-ring, bridge, minority-third,
 * primaries, asymmetric, grudge), grudge (explicit map), allNodes, primaries, from/to (asymmetric),
 * seed, probePort (default: the peer's SSH port), probeTimeoutMs.
 * When `targets` is an explicit strict subset and the topology is one that isolates a side (one,
 * majority, minority-third, halves, random-halves), the targets are that isolated side; for primaries
 * each target is its own singleton component; for asymmetric they are the side that stops hearing.
 */

interface PartitionUndo extends Record<string, unknown> {
  grudge: Grudge;
  addresses: Record<string, string>;
  /** Per receiving node, the sources it drops. */
  rules: Record<string, string[]>;
  probes: Array<{ receiver: string; sender: string; port: number; before?: string }>;
}

const SIDE_TOPOLOGIES = new Set(['one', 'majority', 'minority-third', 'halves', 'random-halves']);

function idSeed(id: string): number {
  let h = 2166136261;
  for (const c of id) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

export function grudgeForSpec(spec: FaultSpec, clusterNodes: readonly string[], id: string): Grudge {
  const p = spec.params ?? {};
  const all = Array.isArray(p.allNodes) ? (p.allNodes as string[]) : [...clusterNodes];
  const topology = typeof p.topology === 'string' ? p.topology : p.grudge ? 'grudge' : 'halves';
  const targets = Array.isArray(spec.targets) ? spec.targets : undefined;
  const strictSubset = targets && targets.length > 0 && targets.length < all.length;
  if (strictSubset && SIDE_TOPOLOGIES.has(topology))
    return completeGrudge([targets, all.filter((n) => !targets.includes(n))]);
  if (strictSubset && topology === 'primaries') {
    const rest = all.filter((n) => !targets.includes(n));
    return completeGrudge([...targets.map((t) => [t]), ...(rest.length ? [rest] : [])]);
  }
  const seed = typeof p.seed === 'number' ? p.seed : idSeed(id);
  return computeGrudge(topology, all, {
    rng: new Rng(seed),
    ...(Array.isArray(p.primaries) && { primaries: p.primaries as string[] }),
    ...(p.grudge !== undefined && { grudge: p.grudge as Grudge }),
    ...(typeof p.node === 'string' && { node: p.node }),
    ...(Array.isArray(p.from) && { from: p.from as string[] }),
    ...(Array.isArray(p.to) && { to: p.to as string[] }),
    ...(topology === 'asymmetric' &&
      strictSubset && { to: targets, from: all.filter((n) => !targets.includes(n)) }),
  });
}

/** One probe per receiving node (at most `max`): sender → receiver across the cut. */
function chooseProbes(grudge: Grudge, max: number): Array<{ receiver: string; sender: string }> {
  const seen = new Set<string>();
  const out: Array<{ receiver: string; sender: string }> = [];
  for (const pair of cutPairs(grudge)) {
    if (seen.has(pair.receiver)) continue;
    seen.add(pair.receiver);
    out.push(pair);
    if (out.length >= max) break;
  }
  return out;
}

async function exec(remote: Remote, node: string, script: string) {
  return remote.exec(node, script, { sudo: true, timeoutMs: 20_000 });
}

export const partitionNemesis: Nemesis & { kind: 'partition' } = {
  kind: 'partition',

  async capabilities(remote, node): Promise<Capability[]> {
    const r = await remote.exec(
      node,
      'command -v iptables >/dev/null && iptables -w -L INPUT -n >/dev/null 2>&1 && echo ok-ipt; iptables -w -m comment -h >/dev/null 2>&1 && echo ok-comment',
      { sudo: true, check: false },
    );
    const ipt = r.stdout.includes('ok-ipt');
    return [
      {
        name: 'iptables',
        available: ipt,
        ...(!ipt && {
          reason: 'iptables missing or not permitted (apt-get install -y iptables; needs root)',
        }),
      },
    ];
  },

  async inject(remote, spec, id, opts?: InjectOptions): Promise<FaultRecord> {
    const clusterNodes = remote.nodes.map((n) => n.name);
    const grudge = grudgeForSpec(spec, clusterNodes, id);
    const involved = [...new Set([...Object.keys(grudge), ...Object.values(grudge).flat()])];
    const addresses = await nodeAddresses(remote, involved);
    const rules: Record<string, string[]> = {};
    for (const [receiver, senders] of Object.entries(grudge))
      if (senders.length > 0) rules[receiver] = senders.map((s) => addresses[s] as string);
    const p = spec.params ?? {};
    const probePort = (n: string) =>
      typeof p.probePort === 'number' ? p.probePort : clusterSshPort(remote.node(n));
    const probes: PartitionUndo['probes'] = chooseProbes(grudge, 3).map((x) => ({
      ...x,
      port: probePort(x.receiver),
    }));
    // Before: every probed link must be reachable, or a later timeout proves nothing.
    await Promise.all(
      probes.map(async (pr) => {
        const r = await probeConnect(
          remote,
          pr.sender,
          pr.receiver,
          addresses[pr.receiver] as string,
          pr.port,
          2000,
        );
        pr.before = r.outcome;
      }),
    );
    const undo: PartitionUndo = { grudge, addresses, rules, probes };
    const record: FaultRecord = {
      id,
      spec,
      nodes: Object.keys(rules),
      injectedAt: new Date().toISOString(),
      undo,
    };
    await opts?.beforeApply?.(record);
    await Promise.all(
      Object.entries(rules).map(([node, sources]) =>
        exec(
          remote,
          node,
          addRulesScript(
            sources.map((s): DropRule => ({ source: s })),
            id,
          ),
        ),
      ),
    );
    return record;
  },

  async evidence(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as PartitionUndo;
    // A local SYN is answered in well under a millisecond; a timeout only counts together with DROP
    // counters > 0 on the receiver, so a slow scheduler cannot fake a landing.
    const timeout = Number(record.spec.params?.probeTimeoutMs ?? 80);
    const signals: EvidenceSignal[] = [];
    const probeResults = await Promise.all(
      (undo.probes ?? []).map((pr) =>
        probeConnect(remote, pr.sender, pr.receiver, undo.addresses[pr.receiver] as string, pr.port, timeout),
      ),
    );
    const counters = await Promise.all(
      Object.keys(undo.rules ?? {}).map(async (node) => {
        const v6 = Object.values(undo.addresses ?? {}).some((a) => a.includes(':'));
        const bins = v6 ? ['iptables', 'ip6tables'] : ['iptables'];
        const r = await remote.exec(node, countersScript(record.id, bins, [IN_CHAIN]), {
          sudo: true,
          check: false,
        });
        return {
          node,
          packets: totalPackets(parseCounters(r.stdout)),
          rules: parseCounters(r.stdout).length,
        };
      }),
    );
    for (const c of counters)
      signals.push({
        side: 'injector',
        node: c.node,
        signal: `FAULTLINE DROP packets (${c.rules} rule(s) for ${record.id})`,
        before: 0,
        during: c.packets,
        landed: c.rules > 0 && c.packets > 0,
        ...(c.rules === 0 && { note: 'rules missing: something removed them' }),
      });
    undo.probes.forEach((pr, i) => {
      const r = probeResults[i];
      if (!r) return;
      signals.push({
        side: 'victim',
        node: pr.sender,
        signal: `tcp connect ${pr.sender}→${pr.receiver}:${pr.port}`,
        before: pr.before,
        during: r.outcome,
        landed: r.outcome === 'timeout' && reachable((pr.before ?? 'error') as never),
      });
    });
    if (undo.probes.length === 0) return { landed: false, reason: 'the grudge cuts no link', signals };
    // The victims' probes, and the injector's rules on the nodes probed: the rest are informative.
    const probedReceivers = new Set(undo.probes.map((p) => p.receiver));
    return landingEvidence(signals, {
      judged: signals.filter((s) => s.side === 'victim' || probedReceivers.has(s.node)),
      noneLands: true,
      holds: counters.some((c) => c.rules > 0),
      show: (s) => `${s.signal} during=${String(s.during)} before=${String(s.before)}`,
    });
  },

  async heal(remote, record): Promise<void> {
    const undo = record.undo as Partial<PartitionUndo>;
    // With only the intent in the ledger the rule list is unknown: heal by the fault's comment on every node.
    const nodes = undo.rules ? Object.keys(undo.rules) : remote.nodes.map((n) => n.name);
    await Promise.all(nodes.map((n) => exec(remote, n, removeFaultRulesScript(record.id))));
  },

  async evidenceAfterHeal(remote, record): Promise<FaultEvidence> {
    const undo = record.undo as PartitionUndo;
    const signals: EvidenceSignal[] = await Promise.all(
      (undo.probes ?? []).map(async (pr) => {
        const r = await probeConnect(
          remote,
          pr.sender,
          pr.receiver,
          undo.addresses[pr.receiver] as string,
          pr.port,
          2000,
        );
        return {
          side: 'victim' as const,
          node: pr.sender,
          signal: `tcp connect ${pr.sender}→${pr.receiver}:${pr.port}`,
          before: pr.before,
          after: r.outcome,
          landed: reachable(r.outcome),
          note: 'after heal: reachable again',
        };
      }),
    );
    return landingEvidence(signals, { noneLands: true, reason: 'a probed link is still cut after heal' });
  },

  async verifyClean(remote, node): Promise<CleanReport> {
    const list = async () =>
      (await remote.exec(node, listFaultlineStateScript(), { sudo: true, check: false })).stdout
        .split('\n')
        .filter((l) => l.trim() !== '');
    const found = await list();
    const fixed: string[] = [];
    if (found.length > 0) {
      await exec(remote, node, removeChainsScript());
      fixed.push(`iptables: emptied, unlinked and deleted FAULTLINE chains (${found.length} line(s))`);
    }
    const left = found.length > 0 ? await list() : [];
    return { clean: left.length === 0, fixed, found: [...found, ...left.map((l) => `still present: ${l}`)] };
  },
};
