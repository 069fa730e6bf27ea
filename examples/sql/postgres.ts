import { type Database, type DbContext, defineDatabase } from 'faultline';
import { shellQuote } from 'faultline/control';
import type { ClusterFormation } from 'faultline/database';
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
import { type PostgresOptions, postgresOptionsSchema } from './postgres-options.ts';

/**
 * PostgreSQL 15 from Debian (`postgresql-15`). The first node of the test is the primary; every other
 * node is an asynchronous streaming replica of it (pg_basebackup -R, hot standby), so one node is a
 * single primary and three nodes are a primary with two replicas, each copied from the primary in
 * faultline's `form` step, one after the other. Authentication is `trust` from the
 * test network only (the local cluster's namespaces); the server runs as the `postgres` user.
 */
const BIN = '/usr/lib/postgresql/15/bin';
const AS_PG = 'runuser -u postgres --';
export const PG_PORT = 5432;

const server = (name: string, o: PostgresOptions): ServerProcess => ({
  processName: 'postgres',
  // SIGTERM is a smart shutdown, which waits for every client session to end; SIGINT is the fast one.
  stopSignal: 'INT',
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
        `synchronous_commit=${o.synchronousCommit}`,
        '-c',
        `wal_writer_delay=${o.walWriterDelayMs}ms`,
        '-c',
        'lock_timeout=1s',
        '-c',
        'deadlock_timeout=200ms',
        // Keep WAL for standbys that fall behind (and for a base backup's stream) instead of recycling it.
        '-c',
        'wal_keep_size=256MB',
        // Every log line names its backend pid and its transaction's xid (0 before one is assigned): with
        // the client's trace (extras.txn: pid, xid, snapshot) a reported cycle's transactions are found
        // in the server's own log.
        '-c',
        'log_line_prefix=%m [%p] xid=%x ',
        // FAULTLINE_PG_LOG_STATEMENTS=1 logs every statement at its completion, with its parameters
        // (log_min_duration_statement=0): the server's own trace of what each connection ran, in the
        // order it finished. Off by default: at 400 txns/s it writes ~150 MB a minute.
        ...(process.env.FAULTLINE_PG_LOG_STATEMENTS === '1' ? ['-c', 'log_min_duration_statement=0'] : []),
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
  constructor(
    readonly name: string,
    options: PostgresOptions = { synchronousCommit: 'on', walWriterDelayMs: 200 },
  ) {
    this.srv = server(name, options);
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
    const sh = (cmd: string) => ctx.remote.exec(node, cmd, { sudo: true, timeoutMs: 120_000 });
    await sh(`mkdir -p ${shellQuote(dir)} && chown postgres:postgres ${shellQuote(dir)}`);
    // A replica is copied from the primary in the form step, once the primary serves.
    if (node !== this.primaryOf(ctx)) return;
    await sh(`${AS_PG} ${BIN}/initdb -D ${data} -U postgres --auth=trust -E UTF8 --no-sync >/dev/null`);
    // Clients and replicas come from the test network; trust is enough for a throwaway test server.
    await sh(
      `printf '%s\\n' 'local all all trust' 'host all all 0.0.0.0/0 trust' 'host replication all 0.0.0.0/0 trust' > ${data}/pg_hba.conf`,
    );
    await startServer(ctx, node, this.srv);
  }

  /** A replica copies the primary and follows it (standby.signal + primary_conninfo), then serves. */
  readonly form: ClusterFormation = {
    on: 'joining',
    run: async (ctx, node) => {
      const data = shellQuote(this.dataDir(ctx, node));
      const primary = shellQuote(nodeAddress(ctx, this.primaryOf(ctx)));
      await ctx.remote.exec(
        node,
        `rm -rf ${data} && ${AS_PG} ${BIN}/pg_basebackup -h ${primary} -p ${PG_PORT} -U postgres -D ${data} -R -X stream --no-sync --checkpoint=fast`,
        { sudo: true, timeoutMs: 240_000 },
      );
      await startServer(ctx, node, this.srv);
      await waitUntil(`postgres replica ${node}`, 60_000, () => this.notServing(ctx, node));
    },
  };

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

  /** The primary; each replica waits for itself in `form`. */
  async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
    const primary = this.primaryOf(ctx);
    await waitUntil(`postgres on ${primary}`, timeoutMs, () => this.notServing(ctx, primary));
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
  options: postgresOptionsSchema,
  create: (o) => new Postgres('postgres', o as unknown as PostgresOptions),
});
