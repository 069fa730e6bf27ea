import type { Rng } from '../src/core/generator/rng.ts';
import { Registry } from '../src/core/util/registry.ts';
import { majoritySize, minorityThirdSize, TargetError } from './targets.ts';

/**
 * Partition topologies as pure functions. A grudge maps each node to the nodes it drops packets from
 * (Jepsen's meaning): `{n1: ['n3']}` cuts n3 → n1 only. Symmetric partitions are complete grudges
 * between components.
 */
export type Grudge = Record<string, string[]>;

export interface TopologyOptions {
  rng: Rng;
  /** For `primaries`: the current leaders, as reported live by the DB adapter. */
  primaries?: readonly string[];
  /** For `grudge`: the explicit map. */
  grudge?: Grudge;
  /** For `one`: the node to isolate (random when absent). */
  node?: string;
  /** For `asymmetric`: traffic from `from` to `to` is dropped; the reverse still flows. */
  from?: readonly string[];
  to?: readonly string[];
}

/** Every node drops traffic from every node of every other component. */
export function completeGrudge(components: readonly (readonly string[])[]): Grudge {
  const grudge: Grudge = {};
  for (const comp of components) {
    const others = components.filter((c) => c !== comp).flat();
    for (const node of comp) grudge[node] = [...others];
  }
  return grudge;
}

/** The first ⌊n/2⌋ nodes against the rest. */
export function bisect(nodes: readonly string[]): [string[], string[]] {
  const k = Math.floor(nodes.length / 2);
  return [nodes.slice(0, k), nodes.slice(k)];
}

function needNodes(nodes: readonly string[], min: number, topology: string): void {
  if (nodes.length < min)
    throw new TargetError(
      `partition "${topology}" needs at least ${min} nodes, the cluster has ${nodes.length}`,
    );
}

/**
 * Every node sees a majority (itself and its ring neighbours), and no two nodes see the same majority.
 * Deterministic symmetric windows on a (shuffled) ring: each node keeps the k nearest on each side,
 * with 2k + 1 ≥ majority. Needs ≥ 4 nodes: with 3 every majority window is the whole cluster.
 */
export function majoritiesRing(nodes: readonly string[]): Grudge {
  needNodes(nodes, 4, 'majorities-ring');
  const n = nodes.length;
  const k = Math.ceil((majoritySize(n) - 1) / 2);
  const grudge: Grudge = {};
  nodes.forEach((node, i) => {
    const visible = new Set<string>();
    for (let d = -k; d <= k; d++) visible.add(nodes[(((i + d) % n) + n) % n] as string);
    grudge[node] = nodes.filter((x) => !visible.has(x));
  });
  return grudge;
}

/** Two halves, plus one node in the middle that talks to both (Jepsen's bridge). */
export function bridge(nodes: readonly string[]): Grudge {
  needNodes(nodes, 3, 'bridge');
  const [left, rest] = bisect(nodes);
  const [middle, ...right] = rest as [string, ...string[]];
  const grudge: Grudge = { [middle]: [] };
  for (const a of left) grudge[a] = [...right];
  for (const b of right) grudge[b] = [...left];
  return grudge;
}

/** Drop nodes or targets that a grudge names but the cluster does not have. */
export function validateGrudge(grudge: Grudge, nodes: readonly string[]): Grudge {
  const out: Grudge = {};
  for (const [node, from] of Object.entries(grudge)) {
    if (!nodes.includes(node)) throw new TargetError(`grudge names unknown node ${node}`);
    for (const f of from) {
      if (!nodes.includes(f)) throw new TargetError(`grudge of ${node} names unknown node ${f}`);
      if (f === node) throw new TargetError(`grudge of ${node} names the node itself`);
    }
    out[node] = [...new Set(from)];
  }
  return out;
}

/**
 * The partition topologies, one registry: plans, `faultline test` schedules and the partition nemesis
 * read their names from here, and a plugin can add its own (`definePlugin({ topologies })`). Each
 * computes a grudge for the cluster's nodes; `minNodes` is the smallest cluster where it cuts anything.
 */
export interface TopologyDefinition {
  name: string;
  summary: string;
  minNodes: number;
  grudge(nodes: readonly string[], opts: TopologyOptions): Grudge;
}

export const topologies = new Registry<TopologyDefinition>('partition topology');

function topology(d: TopologyDefinition): void {
  topologies.register(d.name, d);
}

/** Two shuffled components: a majority and a minority (Jepsen's :majority is a shuffled bisection). */
const shuffledHalves = (nodes: readonly string[], o: TopologyOptions, name: string) => {
  needNodes(nodes, 2, name);
  return completeGrudge(bisect(o.rng.shuffle(nodes)));
};

topology({
  name: 'halves',
  summary: 'the first ⌊n/2⌋ nodes against the rest',
  minNodes: 2,
  grudge(nodes) {
    needNodes(nodes, 2, 'halves');
    return completeGrudge(bisect(nodes));
  },
});
topology({
  name: 'random-halves',
  summary: 'a shuffled bisection',
  minNodes: 2,
  grudge: (nodes, o) => shuffledHalves(nodes, o, 'random-halves'),
});
topology({
  name: 'one',
  summary: 'one node isolated from the rest',
  minNodes: 2,
  grudge(nodes, o) {
    needNodes(nodes, 2, 'one');
    const node = o.node ?? (o.rng.shuffle(nodes)[0] as string);
    if (!nodes.includes(node)) throw new TargetError(`cannot isolate unknown node ${node}`);
    return completeGrudge([[node], nodes.filter((x) => x !== node)]);
  },
});
topology({
  name: 'majority',
  summary: 'a majority component and a minority component (shuffled)',
  minNodes: 2,
  grudge: (nodes, o) => shuffledHalves(nodes, o, 'majority'),
});
topology({
  name: 'majorities-ring',
  summary: 'every node sees a majority, no two see the same one',
  minNodes: 4,
  grudge: (nodes, o) => majoritiesRing(o.rng.shuffle(nodes)),
});
topology({
  name: 'bridge',
  summary: 'two halves and one node that talks to both',
  minNodes: 3,
  grudge: (nodes, o) => bridge(o.rng.shuffle(nodes)),
});
topology({
  name: 'minority-third',
  summary: 'fewer than a third of the nodes cut off from the rest',
  minNodes: 4,
  grudge(nodes, o) {
    const k = minorityThirdSize(nodes.length);
    if (k === 0) throw new TargetError(`a cluster of ${nodes.length} node(s) has no minority third`);
    const mixed = o.rng.shuffle(nodes);
    return completeGrudge([mixed.slice(0, k), mixed.slice(k)]);
  },
});
topology({
  name: 'primaries',
  summary: 'each current primary isolated on its own (leaders from the database)',
  minNodes: 2,
  grudge(nodes, o) {
    const prim = o.primaries ?? [];
    if (prim.length === 0)
      throw new TargetError('partition "primaries" needs the current primaries from the DB adapter');
    for (const p of prim) if (!nodes.includes(p)) throw new TargetError(`primary ${p} is not in the cluster`);
    const rest = nodes.filter((x) => !prim.includes(x));
    return completeGrudge([...prim.map((p) => [p]), ...(rest.length > 0 ? [rest] : [])]);
  },
});
topology({
  name: 'asymmetric',
  summary: 'one direction dropped: from → to vanishes, to → from still flows',
  minNodes: 2,
  grudge(nodes, o) {
    needNodes(nodes, 2, 'asymmetric');
    let from = o.from;
    let to = o.to;
    if (!from || !to) [from, to] = bisect(o.rng.shuffle(nodes));
    const grudge: Grudge = {};
    // Receivers drop from senders: packets from → to vanish, to → from still flow.
    for (const t of to) grudge[t] = from.filter((f) => f !== t);
    return validateGrudge(grudge, nodes);
  },
});
topology({
  name: 'grudge',
  summary: 'an explicit map: node → the nodes it drops packets from',
  minNodes: 2,
  grudge(nodes, o) {
    if (!o.grudge) throw new TargetError('partition "grudge" needs an explicit grudge map');
    return validateGrudge(o.grudge, nodes);
  },
});

export function computeGrudge(name: string, nodes: readonly string[], opts: TopologyOptions): Grudge {
  const def = topologies.get(name);
  if (!def)
    throw new TargetError(`unknown partition topology "${name}" (expected ${topologies.names().join(', ')})`);
  return def.grudge(nodes, opts);
}

/** Can `a` send to `b` under this grudge? */
export function canReach(grudge: Grudge, a: string, b: string): boolean {
  return !(grudge[b] ?? []).includes(a);
}

/** Node pairs (receiver, sender) that are cut, for evidence probes. */
export function cutPairs(grudge: Grudge): Array<{ receiver: string; sender: string }> {
  const out: Array<{ receiver: string; sender: string }> = [];
  for (const [receiver, senders] of Object.entries(grudge))
    for (const sender of senders) out.push({ receiver, sender });
  return out;
}
