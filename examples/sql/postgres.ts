import { type Database, type DbContext, defineDatabase, shellQuote } from 'faultline';
import {
  ensurePackages,
  nodeAddress,
  nodeDir,
  processControl,
  running,
  type ServerProcess,
  startServer,
  waitUntil,
} from './node-process.ts';

/**
 * PostgreSQL 15 from Debian (`postgresql-15`). The first node of the test is the primary; every other
 * node is an asynchronous streaming replica of it (pg_basebackup -R, hot standby), so one node is a
 * single primary and three nodes are a primary with two replicas. Authentication is `trust` from the
 * test network only (the local cluster's namespaces); the server runs as the `postgres` user.
 */
const BIN = '/usr/lib/postgresql/15/bin';
export const PG_PORT = 5432;

const server = (name: string): ServerProcess => ({
  processName: 'postgres',
  pidFile: (ctx, node) => `${nodeDir(ctx, name, node)}/postgres.pid`,
  command(ctx, node) {
    const dir = nodeDir(ctx, name, node);
    return {
      cwd: dir,
      log: `${dir}/postgres.log`,
      argv: [
        'setpriv',
        '--reuid=postgres',
        '--regid=postgres',
        '--init-groups',
        `${BIN}/postgres`,
        '-D',
        `${dir}/data`,
        '-c',
        `listen_addresses=${nodeAddress(ctx, node)}`,
        '-c',
        `port=${PG_PORT}`,
        '-c',
        `unix_socket_directories=${dir}`,
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=32MB',
        '-c',
        'hot_standby=on',
        '-c',
        'lock_timeout=1s',
        '-c',
        'deadlock_timeout=200ms',
        // Keep WAL for standbys that fall behind (and for a base backup's stream) instead of recycling it.
        '-c',
        'wal_keep_size=256MB',
      ],
    };
  },
});

export class Postgres implements Database {
  readonly process;
  /**
   * PostgreSQL logs a refused or ended *connection* at level FATAL: a client arriving while the server
   * starts, recovers after a kill or shuts down; a backend that outlives its killed postmaster (each
   * backend checks for postmaster death and ends its session); a replica losing its WAL stream to a
   * partition. These are its documented reaction to the faults, not a crash (a crash is PANIC, or
   * "server process … was terminated by signal", which stay matches).
   */
  readonly logNoise = [
    /FATAL: {2}the database system is (?:starting up|in recovery mode|shutting down|not yet accepting connections)/,
    /FATAL: {2}terminating connection due to unexpected postmaster exit/,
    /FATAL: {2}terminating connection due to administrator command/,
    /FATAL: {2}could not (?:connect to the primary server|receive data from WAL stream)/,
    /FATAL: {2}terminating walreceiver (?:process due to administrator command|due to timeout)/,
    /FATAL: {2}connection to client lost/,
  ];
  private readonly srv: ServerProcess;
  constructor(readonly name: string) {
    this.srv = server(name);
    this.process = processControl(this.srv);
  }

  primaryOf(ctx: DbContext): string {
    return ctx.nodes[0] as string;
  }

  clientAddress(ctx: DbContext, node: string): string {
    return `${nodeAddress(ctx, node)}:${PG_PORT}`;
  }

  async install(ctx: DbContext, node: string): Promise<void> {
    await ensurePackages(ctx.remote, node, ['postgresql-15']);
  }

  async setup(ctx: DbContext, node: string): Promise<void> {
    const dir = nodeDir(ctx, this.name, node);
    const data = shellQuote(`${dir}/data`);
    const sh = (cmd: string, timeoutMs = 120_000) => ctx.remote.exec(node, cmd, { sudo: true, timeoutMs });
    await sh(`mkdir -p ${shellQuote(dir)} && chown postgres:postgres ${shellQuote(dir)}`);
    const asPg = `runuser -u postgres --`;
    if (node === this.primaryOf(ctx)) {
      await sh(`${asPg} ${BIN}/initdb -D ${data} -U postgres --auth=trust -E UTF8 --no-sync >/dev/null`);
      // Clients and replicas come from the test network; trust is enough for a throwaway test server.
      await sh(
        `printf '%s\\n' 'local all all trust' 'host all all 0.0.0.0/0 trust' 'host replication all 0.0.0.0/0 trust' > ${data}/pg_hba.conf`,
      );
    } else {
      // A replica copies the primary once it serves, and follows it (standby.signal + primary_conninfo).
      const primaryNode = this.primaryOf(ctx);
      const primary = nodeAddress(ctx, primaryNode);
      await waitUntil(`postgres primary ${primaryNode}`, 120_000, () => this.notServing(ctx, primaryNode));
      // Two standbys copying at once each force a checkpoint; a copy cut short is retried from scratch.
      const copy = `${asPg} ${BIN}/pg_basebackup -h ${shellQuote(primary)} -p ${PG_PORT} -U postgres -D ${data} -R -X stream --no-sync --checkpoint=fast`;
      for (let attempt = 1; ; attempt++) {
        const r = await ctx.remote.exec(node, `rm -rf ${data} && ${copy}`, {
          sudo: true,
          timeoutMs: 300_000,
          check: attempt === 3,
        });
        if (r.code === 0) break;
      }
    }
    await startServer(ctx, node, this.srv);
  }

  /**
   * null once the server says it accepts connections (line 8 of postmaster.pid: `ready`, or `standby`
   * on a hot standby), else why not. Read from the file rather than by connecting: a connection attempt
   * during startup makes PostgreSQL log a FATAL line, which would read as a swallowed error in its log.
   */
  private async notServing(ctx: DbContext, node: string): Promise<string | null> {
    if (!(await running(ctx.remote, node, this.srv, this.srv.pidFile(ctx, node)))) return 'not running';
    const pm = shellQuote(`${this.dataDir(ctx, node)}/postmaster.pid`);
    const r = await ctx.remote.exec(node, `sed -n 8p ${pm} 2>/dev/null`, { check: false, timeoutMs: 10_000 });
    const status = r.stdout.trim();
    return status === 'ready' || status === 'standby' ? null : `postmaster status "${status || 'none'}"`;
  }

  async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
    for (const node of ctx.nodes)
      await waitUntil(`postgres on ${node}`, timeoutMs, () => this.notServing(ctx, node));
  }

  async primaries(ctx: DbContext): Promise<string[]> {
    return [this.primaryOf(ctx)];
  }

  async teardown(ctx: DbContext, node: string): Promise<void> {
    await this.process.kill(ctx, node);
    const dir = nodeDir(ctx, this.name, node);
    // The cluster's directory goes with its last node.
    const parent = shellQuote(dir.slice(0, dir.lastIndexOf('/')));
    await ctx.remote.exec(node, `rm -rf ${shellQuote(dir)} && { rmdir ${parent} 2>/dev/null || true; }`, {
      sudo: true,
      timeoutMs: 60_000,
    });
  }

  logFiles(ctx: DbContext, node: string): string[] {
    return [`${nodeDir(ctx, this.name, node)}/postgres.log`];
  }

  dataDir(ctx: DbContext, node: string): string {
    return `${nodeDir(ctx, this.name, node)}/data`;
  }
}

export const postgresDatabase = defineDatabase({
  name: 'postgres',
  summary:
    'PostgreSQL 15 from Debian: the first node is the primary, every other node an asynchronous streaming replica',
  defaultClient: 'postgres-txn',
  binary: 'postgres',
  create: () => new Postgres('postgres'),
});
