import { dirname } from 'node:path';
import { clusterAddress } from '../../core/control/addresses.ts';
import { killTreeCommand } from '../../core/control/process-tree.ts';
import { shellQuote } from '../../core/control/quote.ts';
import type { NodeSpec } from '../../core/control/types.ts';
import type { DbVersionReport } from '../../core/database/capabilities.ts';
import { UserError } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import { clusterSegment, pathName, resolveInside } from '../../core/util/paths.ts';
import { waitFor } from '../../core/util/retry.ts';
import { artifactSource, type DbArtifact, installServer, versionReport } from './artifact.ts';
import {
  type DaemonSpec,
  daemonRunning,
  execIdempotent,
  killDaemon,
  pidfileProcess,
  startDaemon,
  startDaemonCommand,
} from './daemon.ts';
import { EtcdHttp } from './etcd-http.ts';
import { curlProbeCommand, parseEtcdHealth, peerProbe } from './peer-view.ts';
import type {
  ClockWrapper,
  Database,
  DbContext,
  MembershipControl,
  PeerView,
  ProcessControl,
} from './types.ts';

/**
 * etcd, one member per node (reference §7). The binary comes from Debian's etcd-server package, or from the
 * user's own build (a release tarball or one binary, see artifact.ts) whose sha256 is verified on the node. Each member has its own directory with data dir,
 * pidfile and log; it listens on 2379 (clients) and 2380 (peers) and advertises the node's address (its peer
 * URL is the run's proxy instead when a proxy fault acts on peer links: `ctx.peerRoute`).
 * The first boot uses --initial-cluster-state new; restarts after a kill reuse the data dir, where etcd
 * ignores the initial-cluster flags.
 */
export interface EtcdOptions {
  /** Where member directories live on the nodes (one sub-directory per cluster and node). */
  baseDir?: string;
  /** The user's own build instead of the Debian package, and the version it must report. */
  artifact?: DbArtifact;
  /** Low, as Jepsen does, to exercise snapshots. */
  snapshotCount?: number;
  clientPort?: number;
  peerPort?: number;
}

const DEFAULT_BASE = '/var/lib/faultline/etcd';

export class EtcdDb implements Database {
  readonly name = 'etcd';
  /**
   * etcd's own wall clock: the Date header its HTTP gateway stamps on a response (Go's time.Now()), as
   * epoch seconds. Whole seconds only; bash's /dev/tcp, so nothing beyond coreutils is needed on the node.
   */
  private etcdTimeCommand(): string {
    const get = `exec 3<>/dev/tcp/127.0.0.1/${this.clientPort}; printf 'GET /version HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3; sed -n 's/^Date: \\(.*\\)\\r$/\\1/p' <&3`;
    return `date -d "$(bash -c ${shellQuote(get)})" +%s`;
  }
  private readonly wrappers = new Map<string, string>();
  readonly process: ProcessControl = pidfileProcess(
    'etcd',
    (ctx, node) => this.pidFile(ctx, node),
    (ctx, node) => this.start(ctx, node),
  );
  readonly clock: ClockWrapper;
  /**
   * Membership through etcdctl (v3 API) on a peer, as Jepsen's etcd nemesis does it: `member remove`,
   * then the removed node is stopped and wiped (a removed member can never rejoin with its old identity);
   * `member add`, then the node starts with empty data and `--initial-cluster-state existing`.
   */
  readonly membership: MembershipControl = {
    listCommand: (ctx, peers) =>
      `${this.etcdctl(ctx, peers)} member list | awk -F', ' '{ print ($3 == "" ? "(unstarted)" : $3) }'`,
    removeCommand: (ctx, node, peers) => {
      const id = `${this.etcdctl(ctx, peers)} member list | awk -F', ' -v n=${shellQuote(node)} '$3 == n { print $1 }'`;
      return `id=$(${id}); test -n "$id" || { echo ${shellQuote(`${node} is not a started member`)} >&2; exit 3; }; ${this.etcdctl(ctx, peers)} member remove "$id"`;
    },
    retireCommand: (ctx, node) =>
      [
        `printf removed > ${shellQuote(this.removedMarker(ctx, node))}`,
        killTreeCommand(this.pidFile(ctx, node), 'etcd'),
        `rm -rf ${shellQuote(this.dataDir(ctx, node))}`,
      ].join(' && '),
    addCommand: (ctx, node, peers) => {
      const url = this.peerUrl(ctx, node);
      // A member with this peer URL (started or not) is already there: nothing to add.
      return `if ${this.etcdctl(ctx, peers)} member list | awk -F', ' -v u=${shellQuote(url)} '$4 == u { f = 1 } END { exit !f }'; then echo ${shellQuote(`${node} is a member already`)}; else ${this.etcdctl(ctx, peers)} member add ${shellQuote(node)} --peer-urls=${shellQuote(url)}; fi`;
    },
    joinCommand: (ctx, node, peers) => this.joinCommand(ctx, node, peers),
  };
  private readonly base: string;
  private readonly clientPort: number;
  private readonly peerPort: number;
  private binary = 'etcd';
  private etcdctlBinary = 'etcdctl';
  private artifactSha: string | undefined;

  constructor(private readonly opts: EtcdOptions = {}) {
    this.base = opts.baseDir ?? DEFAULT_BASE;
    this.clientPort = opts.clientPort ?? 2379;
    this.peerPort = opts.peerPort ?? 2380;
    const self = this;
    this.clock = {
      setWrapper: (node, wrapperPath) => {
        if (wrapperPath === null) this.wrappers.delete(node);
        else this.wrappers.set(node, wrapperPath);
      },
      // The binary the run really starts (the user's build once installed): a getter, read after install.
      get binary() {
        return self.binary;
      },
      // After the ports: the command names the client port.
      timeCommand: this.etcdTimeCommand(),
    };
  }

  private spec(ctx: DbContext, node: string): NodeSpec {
    return ctx.remote.node(node);
  }

  /** Per cluster and node, so several local clusters (same node names) never share a directory. */
  dir(ctx: DbContext, node: string): string {
    const spec = this.spec(ctx, node);
    const cluster = clusterSegment(spec);
    return resolveInside(this.base, `${cluster}/${pathName('node', node)}`);
  }

  pidFile(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/etcd.pid`;
  }

  dataDir(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/data`;
  }

  /** Present while the node is removed from the cluster: its own start must not bring it back. */
  private removedMarker(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/removed`;
  }

  /** etcdctl (v3) against the peers' client URLs, bounded. */
  private etcdctl(ctx: DbContext, peers: readonly string[]): string {
    const endpoints = peers.map((p) => this.clientAddress(ctx, p)).join(',');
    return `ETCDCTL_API=3 ${shellQuote(this.etcdctlBinary)} --endpoints=${shellQuote(endpoints)} --dial-timeout=3s --command-timeout=10s`;
  }

  /**
   * Start `node` as a joining member: unless it is a started member already, stop whatever runs there,
   * wipe its data and start it with the cluster the peers list now (the unstarted entry is this node).
   */
  private joinCommand(ctx: DbContext, node: string, peers: readonly string[]): string {
    const list = `${this.etcdctl(ctx, peers)} member list`;
    const url = this.peerUrl(ctx, node);
    const args = this.args(ctx, node);
    const keep = args.filter(
      (_, i) => !['--initial-cluster', '--initial-cluster-state'].includes(args[i - (i % 2)] as string),
    );
    const d: DaemonSpec = {
      binary: this.wrappers.get(node) ?? this.binary,
      processName: 'etcd',
      args: keep,
      pidFile: this.pidFile(ctx, node),
      logFile: this.logFile(ctx, node),
      cwd: this.dir(ctx, node),
    };
    return [
      `m=$(${list})`,
      `if printf '%s\\n' "$m" | awk -F', ' -v n=${shellQuote(node)} '$2 == "started" && $3 == n { f = 1 } END { exit !f }'; then echo ${shellQuote(`${node} is a started member`)}; exit 0; fi`,
      `printf '%s\\n' "$m" | awk -F', ' -v u=${shellQuote(url)} '$4 == u { f = 1 } END { exit !f }' || { echo ${shellQuote(`${node} is not a member: add it first`)} >&2; exit 3; }`,
      `ic=$(printf '%s\\n' "$m" | awk -F', ' -v me=${shellQuote(node)} '{ n = ($3 == "" ? me : $3); printf "%s%s=%s", (NR > 1 ? "," : ""), n, $4 }')`,
      killTreeCommand(this.pidFile(ctx, node), 'etcd'),
      `rm -rf ${shellQuote(this.dataDir(ctx, node))} ${shellQuote(this.removedMarker(ctx, node))}`,
      startDaemonCommand(d, '--initial-cluster "$ic" --initial-cluster-state existing'),
      `echo ${shellQuote(`${node} joining as`)} "$ic"`,
    ].join('\n');
  }

  private logFile(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/etcd.log`;
  }

  clientAddress(ctx: DbContext, node: string): string {
    return `http://${clusterAddress(this.spec(ctx, node))}:${this.clientPort}`;
  }

  peerAddress(ctx: DbContext, node: string): string {
    return `http://${clusterAddress(this.spec(ctx, node))}:${this.peerPort}`;
  }

  /** The peer URL the members know `node` by: the run's proxy when it stands between them. */
  private peerUrl(ctx: DbContext, node: string): string {
    const real = this.peerAddress(ctx, node);
    return ctx.peerRoute ? ctx.peerRoute(real, node) : real;
  }

  async install(ctx: DbContext, node: string): Promise<void> {
    // etcdctl: membership faults remove and add members with it (from the user's tarball when it has one).
    const got = await installServer(ctx.remote, node, this.opts.artifact, {
      db: 'etcd',
      baseDir: this.base,
      server: ['etcd', 'etcd-server'],
      tool: ['etcdctl', 'etcd-client'],
    });
    this.binary = got.server;
    this.etcdctlBinary = got.tool;
    this.artifactSha = got.sha256;
  }

  /** `etcd --version` of the binary each node runs (its first line: `etcd Version: 3.5.17`). */
  async versions(ctx: DbContext): Promise<DbVersionReport> {
    const nodes = await Promise.all(
      ctx.nodes.map(async (node) => {
        const r = await ctx.remote.exec(node, `${shellQuote(this.binary)} --version`, { check: false });
        const m = /etcd Version:\s*(\S+)/i.exec(r.stdout);
        return m?.[1]
          ? { node, reported: m[1] }
          : { node, reported: null, error: (r.stderr || r.stdout).trim().slice(0, 200) || `exit ${r.code}` };
      }),
    );
    const a = this.opts.artifact;
    return versionReport(
      'etcd',
      a?.version,
      artifactSource(a, 'Debian etcd-server', this.artifactSha),
      nodes,
    );
  }

  private args(ctx: DbContext, node: string): string[] {
    const dir = this.dir(ctx, node);
    const cluster = ctx.nodes.map((n) => `${n}=${this.peerUrl(ctx, n)}`).join(',');
    return [
      '--name',
      node,
      '--data-dir',
      `${dir}/data`,
      '--listen-client-urls',
      `http://0.0.0.0:${this.clientPort}`,
      '--advertise-client-urls',
      this.clientAddress(ctx, node),
      '--listen-peer-urls',
      `http://0.0.0.0:${this.peerPort}`,
      '--initial-advertise-peer-urls',
      this.peerUrl(ctx, node),
      '--initial-cluster',
      cluster,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      `faultline-${ctx.nodes.join('-')}`,
      '--snapshot-count',
      String(this.opts.snapshotCount ?? 100),
      '--logger',
      'zap',
      '--log-outputs',
      'stderr',
    ];
  }

  async setup(ctx: DbContext, node: string): Promise<void> {
    await execIdempotent(ctx.remote, node, `mkdir -p ${shellQuote(this.dir(ctx, node))}`, { sudo: true });
    await this.start(ctx, node);
  }

  async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
    const pending = new Set(ctx.nodes);
    let lastErr = '';
    const allHealthy = async () => {
      for (const node of [...pending]) {
        try {
          const res = await fetch(`${this.clientAddress(ctx, node)}/health`, {
            signal: AbortSignal.timeout(2000),
          });
          const body = (await res.json()) as { health?: unknown };
          if (res.ok && String(body.health) === 'true') pending.delete(node);
          else lastErr = `${node}: ${JSON.stringify(body)}`;
        } catch (err) {
          lastErr = `${node}: ${(err as Error).message}`;
        }
      }
      return pending.size === 0;
    };
    if (!(await waitFor(allHealthy, timeoutMs, 250)))
      throw new UserError(
        `etcd did not become healthy on ${[...pending].join(', ')} within ${timeoutMs} ms (${lastErr}); see ${this.logFile(ctx, [...pending][0] as string)} on the node`,
      );
    log().debug({ nodes: ctx.nodes }, 'etcd healthy on every node');
  }

  async teardown(ctx: DbContext, node: string): Promise<void> {
    await killDaemon(ctx.remote, node, this.pidFile(ctx, node), 'etcd');
    await execIdempotent(
      ctx.remote,
      node,
      `rm -rf ${shellQuote(this.dir(ctx, node))} && { rmdir ${shellQuote(dirname(this.dir(ctx, node)))} 2>/dev/null || true; }`,
      { sudo: true },
    );
  }

  async start(ctx: DbContext, node: string): Promise<void> {
    const dir = this.dir(ctx, node);
    if (await daemonRunning(ctx.remote, node, this.pidFile(ctx, node), 'etcd')) return;
    // A member removed by a membership fault comes back only through its join (the fault's heal).
    const removed = await ctx.remote.exec(node, `test -e ${shellQuote(this.removedMarker(ctx, node))}`, {
      sudo: true,
      check: false,
    });
    if (removed.code === 0) {
      log().debug({ node }, 'etcd: not starting a member removed from the cluster');
      return;
    }
    await startDaemon(ctx.remote, node, {
      binary: this.wrappers.get(node) ?? this.binary,
      processName: 'etcd',
      args: this.args(ctx, node),
      pidFile: this.pidFile(ctx, node),
      logFile: this.logFile(ctx, node),
      cwd: dir,
    });
  }

  /** The leader reported by the member with the highest raft term (Jepsen's rule). */
  async primaries(ctx: DbContext): Promise<string[]> {
    const views = await Promise.all(
      ctx.nodes.map(async (node) => {
        const http = new EtcdHttp(this.clientAddress(ctx, node));
        try {
          // 5 s: an emulated (TCG) member on a busy host can take seconds to answer.
          const s = await http.status(AbortSignal.timeout(5000));
          return { node, http, ...s };
        } catch {
          return null;
        }
      }),
    );
    let best: { leader: string; raftTerm: number; http: EtcdHttp } | null = null;
    for (const v of views)
      if (v?.leader && v.leader !== '0' && (!best || v.raftTerm > best.raftTerm)) best = v;
    if (!best) return [];
    try {
      const members = await best.http.members(AbortSignal.timeout(5000));
      const m = members.find((x) => x.id === best.leader);
      return m?.name ? [m.name] : [];
    } catch {
      return [];
    }
  }

  /** The member's /health asked from a peer node (no answer: the peer sees it down). */
  peerView(ctx: DbContext, observer: string, node: string): Promise<PeerView> {
    return peerProbe(
      ctx,
      observer,
      curlProbeCommand(`${this.clientAddress(ctx, node)}/health`),
      parseEtcdHealth,
    );
  }

  logFiles(ctx: DbContext, node: string): string[] {
    return [this.logFile(ctx, node)];
  }

  async wipe(ctx: DbContext, node: string): Promise<void> {
    await execIdempotent(ctx.remote, node, `rm -rf ${shellQuote(`${this.dir(ctx, node)}/data`)}`, {
      sudo: true,
    });
  }
}
