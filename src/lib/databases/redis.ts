import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import { clusterAddress } from '../../core/control/addresses.ts';
import { shellQuote } from '../../core/control/quote.ts';
import type { NodeSpec } from '../../core/control/types.ts';
import type { DbVersionReport } from '../../core/database/capabilities.ts';
import { UserError } from '../../core/util/errors.ts';
import { clusterSegment, pathName, resolveInside } from '../../core/util/paths.ts';
import { pollFor } from '../../core/util/retry.ts';
import { artifactSource, type DbArtifact, installServer, versionReport } from './artifact.ts';
import { execIdempotent, killDaemon, pidfileProcess, startDaemon } from './daemon.ts';
import { parseRedisPing, peerProbe, redisPingCommand } from './peer-view.ts';
import type { ClockWrapper, Database, DbContext, PeerView, ProcessControl } from './types.ts';

/**
 * Redis from Debian's redis-server package (or the user's own build: a tarball or one binary, see
 * artifact.ts): the first node is the primary, every other node a replica
 * (`--replicaof`). Replication is asynchronous, so reads served by replicas may be stale: the known-unsafe
 * configuration the register workload must catch. `failover` promotes a replica (REPLICAOF NO ONE) and
 * repoints the others, as an operator or Sentinel would. Each node has its own directory (data, pidfile,
 * log); start/kill/pause/resume go by pidfile.
 */
export interface RedisOptions {
  baseDir?: string;
  port?: number;
  /** The user's own build instead of the Debian package, and the version it must report. */
  artifact?: DbArtifact;
  /** Persistence by the append-only file with this fsync policy; absent, none (in memory only). */
  appendfsync?: RedisAppendFsync;
}

export type RedisAppendFsync = 'always' | 'everysec' | 'no';

const DEFAULT_BASE = '/var/lib/faultline/redis';

export class RedisDb implements Database {
  readonly name = 'redis';
  private readonly wrappers = new Map<string, string>();
  readonly process: ProcessControl = pidfileProcess(
    'redis-server',
    (ctx, node) => this.pidFile(ctx, node),
    (ctx, node) => this.start(ctx, node),
  );
  readonly clock: ClockWrapper;
  private readonly base: string;
  readonly port: number;
  /** The node currently acting as primary (changed by failover). */
  primary: string | undefined;
  private binary = 'redis-server';
  private cliBinary = 'redis-cli';
  private artifactSha: string | undefined;

  constructor(private readonly opts: RedisOptions = {}) {
    this.base = opts.baseDir ?? DEFAULT_BASE;
    this.port = opts.port ?? 6379;
    const self = this;
    this.clock = {
      setWrapper: (node, wrapperPath) => {
        if (wrapperPath === null) this.wrappers.delete(node);
        else this.wrappers.set(node, wrapperPath);
      },
      // The binary the run really starts (the user's build once installed): getters, read after install.
      get binary() {
        return self.binary;
      },
      // Redis's own clock, so a clock fault's evidence is the database's time, not a probe's.
      get timeCommand() {
        return `${shellQuote(self.cliBinary)} -h 127.0.0.1 -p ${self.port} TIME`;
      },
    };
  }

  private spec(ctx: DbContext, node: string): NodeSpec {
    return ctx.remote.node(node);
  }

  private dir(ctx: DbContext, node: string): string {
    const spec = this.spec(ctx, node);
    const cluster = clusterSegment(spec);
    return resolveInside(this.base, `${cluster}/${pathName('node', node)}`);
  }

  pidFile(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/redis.pid`;
  }

  dataDir(ctx: DbContext, node: string): string {
    return this.dir(ctx, node);
  }

  private logFile(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/redis.log`;
  }

  clientAddress(ctx: DbContext, node: string): string {
    return `redis://${this.host(ctx, node)}:${this.port}`;
  }

  /** The node's cluster address: replicas and clients use it, never the SSH address. */
  host(ctx: DbContext, node: string): string {
    return clusterAddress(this.spec(ctx, node));
  }

  private currentPrimary(ctx: DbContext): string {
    this.primary ??= ctx.nodes[0];
    if (!this.primary) throw new UserError('redis: no nodes');
    return this.primary;
  }

  async install(ctx: DbContext, node: string): Promise<void> {
    const got = await installServer(ctx.remote, node, this.opts.artifact, {
      db: 'redis',
      baseDir: this.base,
      server: ['redis-server', 'redis-server'],
      tool: ['redis-cli', 'redis-tools'],
    });
    this.binary = got.server;
    this.cliBinary = got.tool;
    this.artifactSha = got.sha256;
  }

  /** redis_version from `INFO server`, as each node's server reports it. */
  async versions(ctx: DbContext): Promise<DbVersionReport> {
    const nodes = await Promise.all(
      ctx.nodes.map(async (node) => {
        const r = this.connect(ctx, node);
        try {
          await r.connect();
          const m = /^redis_version:(\S+)/m.exec(await r.info('server'));
          return m?.[1]
            ? { node, reported: m[1] }
            : { node, reported: null, error: 'no redis_version in INFO server' };
        } catch (err) {
          return { node, reported: null, error: (err as Error).message };
        } finally {
          r.disconnect();
        }
      }),
    );
    const a = this.opts.artifact;
    return versionReport(
      'redis',
      a?.version,
      artifactSource(a, 'Debian redis-server', this.artifactSha),
      nodes,
    );
  }

  private args(ctx: DbContext, node: string): string[] {
    const primary = this.currentPrimary(ctx);
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '0.0.0.0',
      '--protected-mode',
      'no',
      '--daemonize',
      'no',
      '--dir',
      this.dir(ctx, node),
      '--save',
      '',
      '--appendonly',
      this.opts.appendfsync ? 'yes' : 'no',
      ...(this.opts.appendfsync ? ['--appendfsync', this.opts.appendfsync] : []),
      '--logfile',
      '',
    ];
    if (node !== primary) args.push('--replicaof', this.host(ctx, primary), String(this.port));
    return args;
  }

  async setup(ctx: DbContext, node: string): Promise<void> {
    await execIdempotent(ctx.remote, node, `mkdir -p ${shellQuote(this.dir(ctx, node))}`, { sudo: true });
    await this.start(ctx, node);
  }

  private connect(ctx: DbContext, node: string): Redis {
    return new Redis({
      host: this.host(ctx, node),
      port: this.port,
      lazyConnect: true,
      connectTimeout: 2000,
      commandTimeout: 2000,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    }).on('error', () => {
      // surfaced through the command that failed; without a listener ioredis prints every one
    });
  }

  private async info(ctx: DbContext, node: string): Promise<Record<string, string>> {
    const r = this.connect(ctx, node);
    try {
      await r.connect();
      const text = await r.info('replication');
      return Object.fromEntries(
        text
          .split(/\r?\n/)
          .filter((l) => l.includes(':'))
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
      );
    } finally {
      r.disconnect();
    }
  }

  /** Every node answers, and every replica's link to the primary is up. */
  async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
    const notReady = async () => {
      const states = await Promise.all(
        ctx.nodes.map(async (n) => {
          try {
            const i = await this.info(ctx, n);
            if (i.role === 'master') return null;
            return i.master_link_status === 'up' ? null : `${n}: link ${i.master_link_status ?? '?'}`;
          } catch (err) {
            return `${n}: ${(err as Error).message}`;
          }
        }),
      );
      return states.filter((s): s is string => s !== null).join('; ');
    };
    const last = await pollFor(notReady, (why) => why === '', { timeoutMs, stepMs: 250 });
    if (last) throw new UserError(`redis not ready within ${timeoutMs} ms: ${last}`);
  }

  async teardown(ctx: DbContext, node: string): Promise<void> {
    await killDaemon(ctx.remote, node, this.pidFile(ctx, node), 'redis-server');
    await execIdempotent(
      ctx.remote,
      node,
      `rm -rf ${shellQuote(this.dir(ctx, node))} && { rmdir ${shellQuote(dirname(this.dir(ctx, node)))} 2>/dev/null || true; }`,
      { sudo: true },
    );
    if (node === this.primary) this.primary = undefined;
  }

  async start(ctx: DbContext, node: string): Promise<void> {
    await startDaemon(ctx.remote, node, {
      binary: this.wrappers.get(node) ?? this.binary,
      processName: 'redis-server',
      args: this.args(ctx, node),
      pidFile: this.pidFile(ctx, node),
      logFile: this.logFile(ctx, node),
      cwd: this.dir(ctx, node),
    });
  }

  /** PING of the member from a peer node (refused or no answer: the peer sees it down). */
  peerView(ctx: DbContext, observer: string, node: string): Promise<PeerView> {
    const address = clusterAddress(ctx.remote.node(node));
    return peerProbe(ctx, observer, redisPingCommand(address, this.port), parseRedisPing);
  }

  /** Nodes that report role:master (more than one after a failover with the old primary cut off). */
  async primaries(ctx: DbContext): Promise<string[]> {
    const roles = await Promise.all(
      ctx.nodes.map((n) =>
        this.info(ctx, n).then(
          (i) => i.role,
          () => null,
        ),
      ),
    );
    return ctx.nodes.filter((_n, i) => roles[i] === 'master');
  }

  /** Promote `to` (default: the first other node) and repoint every other reachable node at it. */
  async failover(ctx: DbContext, to?: string): Promise<string> {
    const old = this.currentPrimary(ctx);
    const next = to ?? ctx.nodes.find((n) => n !== old);
    if (!next) throw new UserError('redis failover needs at least two nodes');
    const run = async (node: string, args: string[]) => {
      const r = this.connect(ctx, node);
      try {
        await r.connect();
        await r.call('REPLICAOF', ...args);
      } finally {
        r.disconnect();
      }
    };
    await run(next, ['NO', 'ONE']);
    this.primary = next;
    await Promise.allSettled(
      ctx.nodes.filter((n) => n !== next).map((n) => run(n, [this.host(ctx, next), String(this.port)])),
    );
    return next;
  }

  logFiles(ctx: DbContext, node: string): string[] {
    return [this.logFile(ctx, node)];
  }

  async wipe(ctx: DbContext, node: string): Promise<void> {
    await execIdempotent(ctx.remote, node, `rm -f ${shellQuote(`${this.dir(ctx, node)}/dump.rdb`)}`, {
      sudo: true,
    });
  }
}
