import type { Grudge } from './topology.ts';
import type { FaultRecord } from './types.ts';

/**
 * What a fault did, in words a person reads in a headline, on a chart band or in a progress line:
 * `n2 isolated from n1 n3 n4 n5`, `etcd killed on n3`, `n2's clock +300 s`. One description per fault,
 * used by the progress line, the nemesis op in the history, the verdict's headline and every page.
 */
export interface FaultDescription {
  /** One clause: `n2 isolated from n1 n3 n4 n5`. */
  what: string;
  /** For a progress line: `n2 | n1 n3 n4 n5`, `kill n3`. */
  short: string;
}

/** What the describer needs of a fault: a FaultRecord has it all (the grudge is in its undo). */
export interface FaultFacts {
  kind: string;
  action: string;
  /** The nodes the fault acts on (for a partition: every node involved). */
  nodes: readonly string[];
  params?: Record<string, unknown>;
  /** A partition's grudge (receiver → senders it drops), when known. */
  grudge?: Grudge;
  /** Every node of the cluster, to name "the others" of a partition known only by its targets. */
  allNodes?: readonly string[];
  /** The nodes the plan aimed at, when fewer than `nodes` (a packet fault on n1 shapes every node's link to it). */
  targets?: readonly string[];
}

export function factsOfRecord(r: FaultRecord): FaultFacts {
  const grudge = (r.undo as { grudge?: unknown }).grudge;
  const allNodes = r.spec.params?.allNodes;
  return {
    kind: r.spec.kind,
    action: r.spec.action,
    nodes: r.nodes,
    ...(r.spec.params && { params: r.spec.params }),
    ...(isGrudge(grudge) && { grudge }),
    ...(Array.isArray(allNodes) && { allNodes: allNodes.map(String) }),
    ...(Array.isArray(r.spec.targets) && { targets: r.spec.targets.map(String) }),
  };
}

export function describeFaultRecord(r: FaultRecord): FaultDescription {
  return describeFault(factsOfRecord(r));
}

export function describeFault(f: FaultFacts): FaultDescription {
  switch (f.kind) {
    case 'partition':
      return describePartition(f);
    case 'process':
      return describeProcess(f);
    case 'clock':
      return describeClock(f);
    case 'packet':
      return describePacket(f);
    case 'disk':
      return describeDisk(f);
    default: {
      const on = f.nodes.length ? ` on ${f.nodes.join(' ')}` : '';
      return { what: `${f.kind} ${f.action}${on}`, short: `${f.kind} ${f.action}${on}` };
    }
  }
}

function isGrudge(v: unknown): v is Grudge {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => Array.isArray(x) && x.every((n) => typeof n === 'string'))
  );
}

const nodeOrder = new Intl.Collator('en', { numeric: true });
const sorted = (xs: Iterable<string>) => [...xs].sort(nodeOrder.compare);
const list = (xs: Iterable<string>) => sorted(xs).join(' ');

/**
 * The components of a grudge when it is a complete partition (every node drops exactly the nodes of
 * the other components), else null (asymmetric, ring and bridge grudges are not).
 */
export function grudgeComponents(grudge: Grudge, allNodes: readonly string[] = []): string[][] | null {
  const nodes = sorted(new Set([...allNodes, ...Object.keys(grudge), ...Object.values(grudge).flat()]));
  const drops = (n: string) => new Set(grudge[n] ?? []);
  const components: string[][] = [];
  const placed = new Set<string>();
  for (const n of nodes) {
    if (placed.has(n)) continue;
    const cut = drops(n);
    const comp = nodes.filter((m) => !cut.has(m));
    for (const m of comp) placed.add(m);
    components.push(comp);
  }
  // Complete: each node drops exactly the nodes outside its own component, and components are disjoint.
  const owner = new Map<string, number>();
  components.forEach((c, i) => {
    for (const n of c) owner.set(n, owner.has(n) ? -1 : i);
  });
  for (const n of nodes) {
    const i = owner.get(n);
    if (i === undefined || i < 0) return null;
    const outside = nodes.filter((m) => owner.get(m) !== i);
    const cut = drops(n);
    if (cut.size !== outside.length || outside.some((m) => !cut.has(m))) return null;
  }
  return components.length >= 2 ? components : null;
}

function describePartition(f: FaultFacts): FaultDescription {
  const grudge = f.grudge ?? grudgeFromTargets(f);
  if (!grudge) {
    const on = f.nodes.length ? ` ${list(f.nodes)}` : '';
    return { what: `partition${on}`, short: `partition${on}` };
  }
  const comps = grudgeComponents(grudge, f.allNodes);
  if (comps) {
    const bySize = [...comps].sort(
      (a, b) => a.length - b.length || nodeOrder.compare(a[0] ?? '', b[0] ?? ''),
    );
    const short = bySize.map(list).join(' | ');
    if (bySize.length === 2) {
      const [small, big] = bySize as [string[], string[]];
      const verb = small.length === 1 ? 'isolated' : 'cut off';
      return { what: `${list(small)} ${verb} from ${list(big)}`, short };
    }
    return { what: `nodes partitioned into ${short}`, short };
  }
  // One-way or partial cuts: say who drops whom.
  const cuts = sorted(Object.keys(grudge))
    .filter((n) => (grudge[n] ?? []).length > 0)
    .map((n) => `${n} drops ${list(grudge[n] ?? [])}`);
  const topology = typeof f.params?.topology === 'string' ? `${f.params.topology} partition: ` : '';
  return { what: `${topology}${cuts.join('; ')}`, short: cuts.join(', ') };
}

/** A partition known only by its isolated targets (an older history): targets | everyone else. */
function grudgeFromTargets(f: FaultFacts): Grudge | null {
  const all = f.allNodes ?? [];
  const targets = f.nodes.filter((n) => all.includes(n));
  const rest = all.filter((n) => !targets.includes(n));
  if (targets.length === 0 || rest.length === 0) return null;
  const g: Grudge = {};
  for (const t of targets) g[t] = [...rest];
  for (const r of rest) g[r] = [...targets];
  return g;
}

const PROCESS_VERBS: Record<string, string> = {
  kill: 'killed (SIGKILL)',
  terminate: 'terminated (SIGTERM)',
  pause: 'paused (SIGSTOP)',
  restart: 'restarted',
  resume: 'resumed',
};

function describeProcess(f: FaultFacts): FaultDescription {
  const proc = typeof f.params?.process === 'string' ? f.params.process : 'the DB';
  const verb = PROCESS_VERBS[f.action] ?? f.action;
  return { what: `${proc} ${verb} on ${list(f.nodes)}`, short: `${f.action} ${list(f.nodes)}` };
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s > 0 ? '+' : ''}${Number.isInteger(s) ? s : s.toFixed(3)} s`;
}

function describeClock(f: FaultFacts): FaultDescription {
  const delta = Number(f.params?.deltaMs ?? 0);
  const whose = f.nodes.length === 1 ? `${f.nodes[0]}'s clock` : `clocks of ${list(f.nodes)}`;
  if (f.action === 'strobe')
    return { what: `${whose} strobing by ${seconds(delta)}`, short: `clock strobe ${list(f.nodes)}` };
  if (f.action === 'reset') return { what: `${whose} reset`, short: `clock reset ${list(f.nodes)}` };
  return { what: `${whose} ${seconds(delta)}`, short: `clock ${list(f.nodes)} ${seconds(delta)}` };
}

function describePacket(f: FaultFacts): FaultDescription {
  const b = (f.params?.behaviors ?? {}) as Record<string, Record<string, unknown> | string | undefined>;
  const parts: string[] = [];
  const pct = (x: unknown) =>
    typeof x === 'object' && x !== null ? (x as { percent?: unknown }).percent : undefined;
  if (b.delay && typeof b.delay === 'object') parts.push(`delayed ${String(b.delay.timeMs ?? '?')} ms`);
  for (const k of ['loss', 'corrupt', 'duplicate', 'reorder'] as const)
    if (b[k]) parts.push(`${k} ${String(pct(b[k]) ?? '?')}%`);
  if (typeof b.rate === 'string') parts.push(`rate ${b.rate}`);
  const what = parts.join(', ') || 'packets disturbed';
  // Every node shapes its link to a target, and a target its links to every node: with fewer targets
  // than shaping nodes, name the targets ("to and from n1"), not all the nodes involved.
  const aimed = f.targets && f.targets.length > 0 && f.targets.length < f.nodes.length ? f.targets : null;
  const whose = aimed ? `packets to and from ${list(aimed)}` : `packets of ${list(f.nodes)}`;
  return { what: `${whose}: ${what}`, short: `packet ${list(aimed ?? f.nodes)} ${what}` };
}

function describeDisk(f: FaultFacts): FaultDescription {
  const what = f.action === 'disk-full' ? 'disk full' : f.action === 'corrupt' ? 'file corrupted' : f.action;
  return { what: `${what} on ${list(f.nodes)}`, short: `${f.action} ${list(f.nodes)}` };
}
