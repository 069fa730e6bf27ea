import net from 'node:net';
import { type Endpoint, formatEndpoint, parseEndpoint, pointAt } from './endpoint.ts';

/**
 * The TCP proxy on the control node: one listener per node, each forwarding client connections to the
 * node's real client address, inside the control process (Node's `net`, no daemon). Faults apply per
 * link (clients → one node) and leave counters behind (the injector side of their landing evidence);
 * the proxy also watches the clients themselves (the victim side): the round trip each request takes as
 * the client sees it, requests left unanswered, connections cut under a client.
 *
 * A fault may name a client group (client threads): it then acts only on connections made through those
 * threads' own listeners, so a group of clients is cut from a node set while the others go on.
 *
 * Peer links, when the database lets faultline choose the address its members advertise to each other
 * (etcd's peer URLs): one listener per member on the control host's cluster-facing address, forwarding to
 * the member's real peer port, so the members talk to each other only through the proxy. A connection's
 * source address names the member that dialled it; a fault on member n's peer links acts on the
 * connections into n and on those n dialled to the others (a partition: only those crossing between the
 * target set and the rest). Without that configuration the proxy sits on the client path only and
 * cannot cut members off from each other; it never touches processes, clocks or disks.
 */

export const PROXY_ACTIONS = [
  'latency',
  'bandwidth',
  'blackhole',
  'reset',
  'half-open',
  'slice',
  'timeout',
  'partition',
] as const;
export type ProxyAction = (typeof PROXY_ACTIONS)[number];

export interface ProxyFaultParams {
  /** latency: added to every chunk, each way. */
  delayMs?: number;
  /** latency: ± uniformly around delayMs. */
  jitterMs?: number;
  /** bandwidth: each direction of each connection paced to this many bytes per second. */
  bytesPerSecond?: number;
  /** half-open: the direction that stops (upstream: client → node; downstream: node → client). */
  direction?: 'upstream' | 'downstream';
  /** slice: chunk size and the pause between chunks. */
  sliceBytes?: number;
  sliceDelayMs?: number;
  /** timeout: connections are closed this long after they opened (or after the fault began). */
  afterMs?: number;
  /**
   * partition: the links it cuts: `clients` (clients → the target nodes, the default) or `peers` (the
   * target members from the other members, both ways; needs the members' peer traffic through the proxy).
   */
  links?: 'clients' | 'peers';
  /**
   * The client group the fault acts on (client threads, 0-based, as the history's process modulo the
   * concurrency); absent: every client. Only connections made through a thread's own listener belong to
   * a thread, so a grouped fault needs a client that resolves its address when it opens.
   */
  clients?: number[];
}

/** What one fault did on one link: the injector side of its evidence. */
export interface FaultCounters {
  connectionsReset: number;
  /** New connections accepted and held (never dialled through) while a blackhole or partition stood. */
  connectionsHeld: number;
  bytesHeld: number;
  bytesDropped: number;
  chunksDelayed: number;
  /** Sum of the delay each delayed chunk was given (latency) or waited (bandwidth), in ms. */
  delayAddedMs: number;
  bytesPaced: number;
  /** Writes split in pieces, and the pieces. */
  writesSliced: number;
  slices: number;
  connectionsTimedOut: number;
}

/** A request as the client saw it: from its first byte into the proxy to the last byte of its reply out (`at`). */
interface RoundTrip {
  at: number;
  ms: number;
}

/** The clients as the proxy sees them on one link: the victim side. */
export interface VictimView {
  roundTrips: RoundTrip[];
  /** Client connections cut (reset, timed out, broken) while a request was waiting for its reply. */
  cutWithRequest: number;
  /** Client connections cut in all. */
  cut: number;
  /** New client connections reset on arrival. */
  attemptsReset: number;
  /** Requests waiting for a reply now, with the time they were sent. */
  waitingSince: number[];
}

/** On a peer link: which dialling members a fault acts on (only these, or all but these). */
type Sources = { only: readonly string[] } | { except: readonly string[] };

interface ActiveFault {
  id: string;
  action: ProxyAction;
  params: ProxyFaultParams;
  since: number;
  sources?: Sources;
}

const zeroCounters = (): FaultCounters => ({
  connectionsReset: 0,
  connectionsHeld: 0,
  bytesHeld: 0,
  bytesDropped: 0,
  chunksDelayed: 0,
  delayAddedMs: 0,
  bytesPaced: 0,
  writesSliced: 0,
  slices: 0,
  connectionsTimedOut: 0,
});

const now = () => performance.now();
const MAX_ROUND_TRIPS = 4096;

/** One direction of one connection: an ordered queue of timed writes, and what a hold kept back. */
class Lane {
  readonly queue: { at: number; buf: Buffer }[] = [];
  held: Buffer[] = [];
  lastAt = 0;
  nextFree = 0;
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly write: (buf: Buffer) => void) {}

  /** Write at `at` (performance.now ms), never before anything queued earlier. */
  push(buf: Buffer, at: number): void {
    const t = Math.max(at, this.lastAt);
    this.lastAt = t;
    if (this.queue.length === 0 && t <= now() + 0.5) {
      this.write(buf);
      return;
    }
    this.queue.push({ at: t, buf });
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.queue.length === 0) return;
    const head = this.queue[0] as { at: number };
    this.timer = setTimeout(
      () => {
        this.timer = null;
        const t = now() + 0.5;
        while (this.queue.length > 0 && (this.queue[0] as { at: number }).at <= t)
          this.write((this.queue.shift() as { buf: Buffer }).buf);
        this.arm();
      },
      Math.max(0, head.at - now()),
    );
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
    this.held = [];
  }
}

/** One client connection and its upstream. */
class Pair {
  upstream: net.Socket | null = null;
  readonly up: Lane;
  readonly down: Lane;
  waitingSince: number | null = null;
  /**
   * The request being timed: from its first byte in to the last byte of its reply out (taken when the
   * next request starts or the connection ends), so a reply held back in pieces counts whole.
   */
  requestAt: number | null = null;
  replyAt: number | null = null;
  /** Bytes were lost (half-open, partition): the stream cannot go on after the heal. */
  broken = false;
  closed = false;
  readonly timers = new Map<string, NodeJS.Timeout>();
  constructor(
    readonly client: net.Socket,
    private readonly link: ProxyLink,
    /** The client thread whose listener it came through; null: the shared listener. */
    readonly thread: number | null,
    /** On a peer link: the member that dialled it (by its source address); null: not a member. */
    readonly from: string | null = null,
  ) {
    this.up = new Lane((b) => this.upstream?.write(b));
    this.down = new Lane((b) => {
      this.waitingSince = null;
      this.replyAt = now();
      client.write(b);
    });
  }

  /** A new request starts at `t` (null: none): the one before it, answered, is a round trip. */
  timeRequest(t: number | null): void {
    if (this.requestAt !== null && this.replyAt !== null && this.replyAt >= this.requestAt)
      this.link.roundTrip(this.replyAt - this.requestAt, this.replyAt);
    this.requestAt = t;
    this.replyAt = null;
  }

  dial(): void {
    if (this.upstream || this.closed) return;
    const up = net.connect({ host: this.link.upstream.host, port: this.link.upstream.port });
    up.setNoDelay(true);
    this.upstream = up;
    up.on('data', (b: Buffer) => this.link.forward(this, 'down', b));
    up.on('error', () => this.cut(false));
    up.on('close', () => this.cut(false));
  }

  /** Close both sides; `reset` sends an RST to the client instead of a FIN. */
  cut(reset: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.link.cutPair(this);
    this.timeRequest(null);
    for (const t of this.timers.values()) clearTimeout(t);
    this.up.clear();
    this.down.clear();
    if (reset) {
      this.client.resetAndDestroy();
      this.upstream?.resetAndDestroy();
    } else {
      this.client.destroy();
      this.upstream?.destroy();
    }
  }
}

export class ProxyLink {
  readonly pairs = new Set<Pair>();
  readonly faults: ActiveFault[] = [];
  readonly counters = new Map<string, FaultCounters>();
  readonly victim: VictimView = {
    roundTrips: [],
    cutWithRequest: 0,
    cut: 0,
    attemptsReset: 0,
    waitingSince: [],
  };
  /** Every connection accepted (the bench reads it). */
  accepted = 0;
  /** Bytes let through, both ways, by the member that dialled the connection ('?': not a member). */
  readonly throughFrom = new Map<string, number>();
  readonly servers: net.Server[] = [];
  /** The shared listener (every client), and one per client thread when groups can be faulted. */
  listen!: Endpoint;
  readonly threadListen = new Map<number, Endpoint>();
  /** Client threads that were handed their own listener (and so can be faulted as a group). */
  readonly routedThreads = new Set<number>();

  constructor(
    readonly node: string,
    readonly address: string,
    readonly upstream: Endpoint,
    /** Peer links only: the member a source address belongs to (the dialling side of a connection). */
    private readonly memberAt?: (ip: string) => string | null,
  ) {}

  /** Listen on `host`: the shared listener, and one per client thread 0 … threads-1. */
  async start(host: string, threads = 0): Promise<void> {
    this.listen = await this.serve(host, null);
    for (let t = 0; t < threads; t++) this.threadListen.set(t, await this.serve(host, t));
  }

  private async serve(host: string, thread: number | null): Promise<Endpoint> {
    const server = net.createServer((c) => this.accept(c, thread));
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port: 0 }, () => resolve());
    });
    const a = server.address() as net.AddressInfo;
    return { host: a.address, port: a.port };
  }

  /** Does fault `f` act on this connection (its client group, or its dialling members, when it names them)? */
  private hits(f: ActiveFault, pair: Pair): boolean {
    if (f.params.clients && (pair.thread === null || !f.params.clients.includes(pair.thread))) return false;
    const src = f.sources;
    if (!src) return true;
    if ('only' in src) return pair.from !== null && src.only.includes(pair.from);
    return pair.from === null || !src.except.includes(pair.from);
  }

  /** The faults in force on one connection. */
  private on(pair: Pair): ActiveFault[] {
    return this.faults.filter((f) => this.hits(f, pair));
  }

  private count(f: ActiveFault): FaultCounters {
    const c = this.counters.get(f.id) ?? zeroCounters();
    this.counters.set(f.id, c);
    return c;
  }

  private holding(pair: Pair): ActiveFault[] {
    return this.on(pair).filter((f) => f.action === 'blackhole' || f.action === 'partition');
  }

  private accept(client: net.Socket, thread: number | null): void {
    this.accepted++;
    client.setNoDelay(true);
    const ip = (client.remoteAddress ?? '').replace(/^::ffff:/, '');
    const pair = new Pair(client, this, thread, this.memberAt ? this.memberAt(ip) : null);
    this.pairs.add(pair);
    client.on('data', (b: Buffer) => this.forward(pair, 'up', b));
    client.on('error', () => pair.cut(false));
    client.on('close', () => pair.cut(false));
    const faults = this.on(pair);
    const resets = faults.filter((f) => f.action === 'reset');
    if (resets.length > 0) {
      for (const f of resets) this.count(f).connectionsReset++;
      this.victim.attemptsReset++;
      pair.cut(true);
      return;
    }
    for (const f of faults) if (f.action === 'timeout') this.armTimeout(pair, f);
    const holds = this.holding(pair);
    if (holds.length > 0) {
      for (const f of holds) this.count(f).connectionsHeld++;
      return;
    }
    pair.dial();
  }

  roundTrip(ms: number, at: number): void {
    const r = this.victim.roundTrips;
    r.push({ at, ms });
    if (r.length > MAX_ROUND_TRIPS) r.splice(0, r.length - MAX_ROUND_TRIPS);
  }

  cutPair(pair: Pair): void {
    this.pairs.delete(pair);
    this.victim.cut++;
    if (pair.waitingSince !== null) this.victim.cutWithRequest++;
  }

  /** A chunk from the client (up) or the node (down), through every fault in force on the link. */
  forward(pair: Pair, dir: 'up' | 'down', chunk: Buffer): void {
    const t = now();
    if (dir === 'up' && pair.waitingSince === null) pair.waitingSince = t;
    if (dir === 'up' && (pair.requestAt === null || pair.replyAt !== null)) pair.timeRequest(t);
    const lane = dir === 'up' ? pair.up : pair.down;
    const faults = this.on(pair);
    const partitions = faults.filter((f) => f.action === 'partition');
    if (partitions.length > 0) {
      // A cut link loses what is in flight; the stream is reset once the cut heals.
      for (const f of partitions) this.count(f).bytesDropped += chunk.length;
      pair.broken = true;
      return;
    }
    const holds = faults.filter((f) => f.action === 'blackhole');
    if (holds.length > 0 || (dir === 'up' && !pair.upstream)) {
      for (const f of holds) this.count(f).bytesHeld += chunk.length;
      lane.held.push(chunk);
      return;
    }
    const direction = dir === 'up' ? 'upstream' : 'downstream';
    const stopped = faults.filter((f) => f.action === 'half-open' && f.params.direction === direction);
    if (stopped.length > 0) {
      for (const f of stopped) this.count(f).bytesDropped += chunk.length;
      pair.broken = true;
      return;
    }
    const from = pair.from ?? '?';
    this.throughFrom.set(from, (this.throughFrom.get(from) ?? 0) + chunk.length);
    let at = t;
    for (const f of faults) {
      if (f.action === 'latency') {
        const jitter = f.params.jitterMs ?? 0;
        const d = Math.max(0, (f.params.delayMs ?? 0) + (Math.random() * 2 - 1) * jitter);
        const c = this.count(f);
        c.chunksDelayed++;
        c.delayAddedMs += d;
        at += d;
      } else if (f.action === 'bandwidth') {
        const start = Math.max(at, lane.nextFree);
        const end = start + (chunk.length / (f.params.bytesPerSecond ?? 1)) * 1000;
        lane.nextFree = end;
        const c = this.count(f);
        c.chunksDelayed++;
        c.bytesPaced += chunk.length;
        c.delayAddedMs += end - at;
        at = end;
      }
    }
    const slicer = faults.find((f) => f.action === 'slice');
    const size = slicer?.params.sliceBytes ?? 0;
    if (slicer && size > 0 && chunk.length > size) {
      const c = this.count(slicer);
      c.writesSliced++;
      for (let off = 0, i = 0; off < chunk.length; off += size, i++) {
        c.slices++;
        lane.push(chunk.subarray(off, off + size), at + i * (slicer.params.sliceDelayMs ?? 0));
      }
      return;
    }
    lane.push(chunk, at);
  }

  private armTimeout(pair: Pair, f: ActiveFault): void {
    pair.timers.set(
      f.id,
      setTimeout(() => {
        this.count(f).connectionsTimedOut++;
        pair.cut(false);
      }, f.params.afterMs ?? 0),
    );
  }

  apply(id: string, action: ProxyAction, params: ProxyFaultParams, sources?: Sources): void {
    const f: ActiveFault = { id, action, params, since: now(), ...(sources && { sources }) };
    this.faults.push(f);
    this.count(f);
    const hit = [...this.pairs].filter((p) => this.hits(f, p));
    if (action === 'reset')
      for (const p of hit) {
        this.count(f).connectionsReset++;
        p.cut(true);
      }
    if (action === 'timeout') for (const p of hit) this.armTimeout(p, f);
  }

  /** Undo one fault: held connections are dialled and held bytes delivered; broken streams are reset. */
  remove(id: string): boolean {
    const i = this.faults.findIndex((f) => f.id === id);
    if (i < 0) return false;
    this.faults.splice(i, 1);
    for (const p of [...this.pairs]) {
      const t = p.timers.get(id);
      if (t) clearTimeout(t);
      p.timers.delete(id);
    }
    this.reflow();
    return true;
  }

  private reflow(): void {
    for (const p of [...this.pairs]) {
      const lossy = this.on(p).some((f) => f.action === 'partition' || f.action === 'half-open');
      if (p.broken && !lossy) {
        p.cut(true);
        continue;
      }
      if (this.holding(p).length > 0) continue;
      p.dial();
      for (const lane of ['up', 'down'] as const) {
        const held = (lane === 'up' ? p.up : p.down).held;
        (lane === 'up' ? p.up : p.down).held = [];
        for (const b of held) this.forward(p, lane, b);
      }
    }
  }

  /** Requests waiting for their reply now (the time each was sent), of the client group when given. */
  waiting(clients?: readonly number[]): number[] {
    return [...this.pairs].flatMap((p) =>
      p.waitingSince === null || (clients && (p.thread === null || !clients.includes(p.thread)))
        ? []
        : [p.waitingSince],
    );
  }

  /** Requests answered since `t` on connections outside the client group (the clients a grouped fault spares). */
  answeredOutside(clients: readonly number[], t: number): number {
    let n = 0;
    for (const p of this.pairs)
      if (p.thread !== null && !clients.includes(p.thread) && p.replyAt !== null && p.replyAt >= t) n++;
    return n;
  }

  async close(): Promise<void> {
    for (const p of [...this.pairs]) p.cut(false);
    this.faults.length = 0;
    await Promise.all(this.servers.map((sv) => new Promise<void>((resolve) => sv.close(() => resolve()))));
  }
}

/** The proxy of one run: a client link per node, and a peer link per member when the members talk through it. */
export class ProxyHub {
  readonly links = new Map<string, ProxyLink>();
  readonly peerLinks = new Map<string, ProxyLink>();
  private constructor(readonly listenHost: string) {}

  /**
   * Listen for every node (node → its client address) on `listenHost` (loopback by default); with
   * `threads`, also one listener per client thread and node, so faults can pick a group of clients.
   */
  static async start(
    addresses: Record<string, string>,
    listenHost = '127.0.0.1',
    threads = 0,
  ): Promise<ProxyHub> {
    const hub = new ProxyHub(listenHost);
    await hub.addClients(addresses, threads);
    return hub;
  }

  /** A hub with no link yet (peer links are added before the database starts, client links after). */
  static create(listenHost = '127.0.0.1'): ProxyHub {
    return new ProxyHub(listenHost);
  }

  /** A client link per node (node → its client address). */
  async addClients(addresses: Record<string, string>, threads = 0): Promise<void> {
    await this.addLinks(this.links, addresses, 'client address', (link) =>
      link.start(this.listenHost, threads),
    );
  }

  /**
   * A peer link per member (node → the address its peers reach it at) listening on `listenHost`, an
   * address every member reaches the control host at; `members` maps a member's own address to its node,
   * so a connection's source tells which member dialled it.
   */
  async addPeers(
    addresses: Record<string, string>,
    listenHost: string,
    members: Record<string, string>,
  ): Promise<void> {
    const memberAt = (ip: string) => members[ip] ?? null;
    await this.addLinks(
      this.peerLinks,
      addresses,
      'peer address',
      (link) => link.start(listenHost),
      memberAt,
    );
  }

  private async addLinks(
    into: Map<string, ProxyLink>,
    addresses: Record<string, string>,
    what: string,
    start: (link: ProxyLink) => Promise<void>,
    memberAt?: (ip: string) => string | null,
  ): Promise<void> {
    try {
      for (const [node, address] of Object.entries(addresses)) {
        const upstream = parseEndpoint(address);
        if (!upstream)
          throw new Error(`${node}: the ${what} ${address} names no host:port the proxy can forward to`);
        const link = new ProxyLink(node, address, upstream, memberAt);
        into.set(node, link);
        await start(link);
      }
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  link(node: string): ProxyLink {
    const l = this.links.get(node);
    if (!l) throw new Error(`the proxy has no link to ${node}`);
    return l;
  }

  /**
   * The address a client should use for `node`: the proxy's listener when `address` is the node's (the
   * client thread's own listener when the thread is known and has one).
   */
  route(address: string, node: string, thread?: number): string {
    const l = this.links.get(node);
    if (!l || l.address !== address) return address;
    const own = thread === undefined ? undefined : l.threadListen.get(thread);
    if (!own) return pointAt(address, l.listen);
    l.routedThreads.add(thread as number);
    return pointAt(address, own);
  }

  /**
   * Why a fault on client group `clients` cannot land on `nodes`, or null: a thread the proxy has no
   * listener for, or a client that never opened a connection through its thread's own listener (it
   * resolves its addresses once for all its threads, so the proxy cannot tell the groups apart).
   */
  groupProblem(nodes: readonly string[], clients: readonly number[]): string | null {
    for (const n of nodes) {
      const l = this.link(n);
      const missing = clients.filter((t) => !l.threadListen.has(t));
      if (missing.length > 0)
        return `no client thread ${missing.join(', ')} (the run has ${l.threadListen.size} client thread(s))`;
    }
    if ([...this.links.values()].every((l) => l.routedThreads.size === 0))
      return 'the client did not open a connection per thread through the proxy (it resolves its addresses once), so a client group cannot be told apart';
    const reach = nodes.some((n) => clients.some((t) => this.link(n).routedThreads.has(t)));
    if (!reach) return `client group [${clients.join(', ')}] has no connection to ${nodes.join(', ')} to cut`;
    return null;
  }

  /**
   * Peer bytes let through between `node` and the other members so far: into it (its own peer link) and
   * out of it (connections it dialled into the others' links).
   */
  peerBytes(node: string): { into: number; out: number } {
    let into = 0;
    let out = 0;
    for (const l of this.peerLinks.values())
      if (l.node === node) for (const n of l.throughFrom.values()) into += n;
      else out += l.throughFrom.get(node) ?? 0;
    return { into, out };
  }

  /** The peer link of a member (its peers' connections into it), when the members talk through the proxy. */
  peerLink(node: string): ProxyLink {
    const l = this.peerLinks.get(node);
    if (!l)
      throw new Error(`the members' peer traffic does not go through the proxy (no peer link to ${node})`);
    return l;
  }

  /** The address a member advertises to its peers: its peer listener (the address itself when none). */
  peerRoute(address: string, node: string): string {
    const l = this.peerLinks.get(node);
    return l && l.address === address ? pointAt(address, l.listen) : address;
  }

  /** node → listener, node → upstream (and the same for peer links): what the fault ledger keeps. */
  describe(): {
    listeners: Record<string, string>;
    upstreams: Record<string, string>;
    peerListeners?: Record<string, string>;
    peerUpstreams?: Record<string, string>;
  } {
    const of = (m: Map<string, ProxyLink>, f: (l: ProxyLink) => Endpoint) =>
      Object.fromEntries([...m.values()].map((l) => [l.node, formatEndpoint(f(l))]));
    return {
      listeners: of(this.links, (l) => l.listen),
      upstreams: of(this.links, (l) => l.upstream),
      ...(this.peerLinks.size > 0 && {
        peerListeners: of(this.peerLinks, (l) => l.listen),
        peerUpstreams: of(this.peerLinks, (l) => l.upstream),
      }),
    };
  }

  apply(id: string, nodes: readonly string[], action: ProxyAction, params: ProxyFaultParams): void {
    if (params.links === 'peers') {
      // Into a target, from whoever is on the other side; out of a target, into every other member.
      // A partition spares the links inside the target set; every other fault acts on them too.
      const inside = action === 'partition';
      for (const l of this.peerLinks.values())
        l.apply(
          id,
          action,
          params,
          nodes.includes(l.node) ? (inside ? { except: nodes } : undefined) : { only: nodes },
        );
      return;
    }
    for (const n of nodes) this.link(n).apply(id, action, params);
  }

  private allLinks(): ProxyLink[] {
    return [...this.links.values(), ...this.peerLinks.values()];
  }

  /** Undo a fault on every link; returns the nodes it was in force on. */
  remove(id: string): string[] {
    return [
      ...new Set(
        this.allLinks()
          .filter((l) => l.remove(id))
          .map((l) => l.node),
      ),
    ];
  }

  /** Nodes a fault is in force on. */
  inForce(id: string): string[] {
    return [
      ...new Set(
        this.allLinks()
          .filter((l) => l.faults.some((f) => f.id === id))
          .map((l) => l.node),
      ),
    ];
  }

  async close(): Promise<void> {
    await Promise.all(this.allLinks().map((l) => l.close()));
    this.links.clear();
    this.peerLinks.clear();
    if (active === this) active = null;
  }
}

let active: ProxyHub | null = null;

/** The proxy of the run in this process (the proxy nemesis acts on it), or null. */
export function activeProxyHub(): ProxyHub | null {
  return active;
}

export function setActiveProxyHub(hub: ProxyHub | null): void {
  active = hub;
}
