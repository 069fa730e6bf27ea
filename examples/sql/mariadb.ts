import { type Database, type DbContext, defineDatabase } from 'faultline';
import { shellQuote } from 'faultline/control';
import type { ClusterFormation } from 'faultline/database';
import { settingsSchema } from './db-options.ts';
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
 * MariaDB 10.11 from Debian (`mariadb-server`, InnoDB), as one server (`mariadb`: on the first node; other
 * nodes of the test stay idle) or as a Galera cluster (`galera`: every node a member, `galera-4`, rsync
 * state transfer; the first node bootstraps the cluster in its setup, the others join it one at a time
 * in faultline's `form` step, as Galera's documentation asks). The server runs with
 * --no-defaults, so nothing from /etc/mysql applies; an init file creates the `faultline` database and
 * user at every start.
 */
export const MARIADB_PORT = 3306;
export const USER = { user: 'faultline', password: 'faultline', database: 'faultline' };
const GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so';

type Mode = 'single' | 'galera';

/**
 * dbOptions: `flushLogAtTrxCommit` (InnoDB's innodb_flush_log_at_trx_commit; 1, the default: each
 * COMMIT writes and fsyncs the redo log before it returns; 2: it writes the log to the operating system,
 * which InnoDB fsyncs about once a second, so a power failure may lose a second of acknowledged
 * commits but a crash of the server alone loses none; 0: the log is written and fsynced about once a
 * second, so even a crash of the server may lose a second of them).
 */
export interface MariaDbOptions {
  flushLogAtTrxCommit: 0 | 1 | 2;
}

export const mariadbOptionsSchema = settingsSchema({
  flushLogAtTrxCommit: { allowed: [0, 1, 2], fallback: 1 },
});

export class MariaDb implements Database {
  readonly process;
  /**
   * Galera members join one at a time, each once every earlier node serves (faultline runs the joining
   * nodes in node order): joiners transferring state at the same time from one donor have failed here
   * ("IST didn't contain all write sets", the joiner then leaves).
   */
  readonly form?: ClusterFormation;
  private readonly srv: ServerProcess;
  /** Set while the first node bootstraps a new Galera cluster (cleared once it serves). */
  private readonly bootstrapping = new Set<string>();
  /** A Galera member's last committed position (uuid:seqno), recovered before a restart after a crash. */
  private readonly startPosition = new Map<string, string>();

  constructor(
    readonly name: string,
    private readonly mode: Mode,
    private readonly options: MariaDbOptions = { flushLogAtTrxCommit: 1 },
  ) {
    this.srv = {
      processName: 'mariadbd',
      pidFile: (ctx, node) => `${nodeDir(ctx, name, node)}/mariadbd.pid`,
      command: (ctx, node) => this.command(ctx, node),
    };
    this.process = {
      ...processControl(this.srv),
      start: (ctx: DbContext, node: string) => this.start(ctx, node),
    };
    if (mode === 'galera')
      this.form = {
        on: 'joining',
        run: async (ctx, node) => {
          await startServer(ctx, node, this.srv);
          await waitUntil(`galera member ${node}`, 180_000, () => this.notServing(ctx, node));
        },
      };
  }

  private async start(ctx: DbContext, node: string): Promise<void> {
    if (this.mode === 'galera' && !(await running(ctx.remote, node, this.srv, this.srv.pidFile(ctx, node)))) {
      const position = await this.recoverPosition(ctx, node);
      if (position) this.startPosition.set(node, position);
      else this.startPosition.delete(node);
    }
    await startServer(ctx, node, this.srv);
  }

  /**
   * A Galera member killed while running leaves `seqno: -1` in grastate.dat: started as it is, it no longer
   * knows how far it got and asks for a full state transfer (SST). Debian's systemd unit runs
   * galera_recovery first: `mariadbd --wsrep-recover` reads the last committed position from InnoDB and
   * the server starts with `--wsrep-start-position`, so it rejoins by incremental state transfer (IST)
   * from a donor's write-set cache. Done the same way here; null when there is nothing to recover (a new
   * node, a clean shutdown) or InnoDB reports no position.
   */
  private async recoverPosition(ctx: DbContext, node: string): Promise<string | null> {
    const dir = nodeDir(ctx, this.name, node);
    const q = shellQuote;
    const log = `${dir}/wsrep-recover.log`;
    // The server's own options (the provider refuses to load without its cluster address, ROW binlog …),
    // without a start position, plus the recovery switch; it exits once InnoDB has recovered.
    this.startPosition.delete(node);
    const recover = [...this.command(ctx, node).argv, '--wsrep-recover', `--log-error=${log}`];
    const cmd =
      `g=${q(`${dir}/data/grastate.dat`)}; test -f "$g" && grep -Eq '^seqno:[[:space:]]*-1' "$g" || exit 0; ` +
      `rm -f ${q(log)}; ${recover.map(q).join(' ')} >/dev/null 2>&1; ` +
      `sed -n 's/.*WSREP: Recovered position: *//p' ${q(log)} | tail -n 1`;
    const r = await ctx.remote.exec(node, cmd, { sudo: true, check: false, timeoutMs: 120_000 });
    const position = r.stdout.trim();
    return /^[0-9a-f-]{36}:\d+$/.test(position) && !position.endsWith(':-1') ? position : null;
  }

  private command(ctx: DbContext, node: string): { argv: string[]; log: string; cwd: string } {
    const dir = nodeDir(ctx, this.name, node);
    const address = nodeAddress(ctx, node);
    const argv = [
      '/usr/sbin/mariadbd',
      '--no-defaults',
      `--datadir=${dir}/data`,
      `--socket=${dir}/mariadbd.sock`,
      `--pid-file=${dir}/data/mariadbd.pid`,
      `--port=${MARIADB_PORT}`,
      `--bind-address=${address}`,
      '--user=mysql',
      '--skip-name-resolve',
      '--max-connections=300',
      '--innodb-buffer-pool-size=64M',
      // A lock wait longer than this fails the statement (1205), then the client rolls back: a definite
      // failure before the op's own timeout.
      '--innodb-lock-wait-timeout=1',
      `--innodb-flush-log-at-trx-commit=${this.options.flushLogAtTrxCommit}`,
    ];
    // The init file creates the user on a new server; a Galera joiner receives it by state transfer.
    if (this.mode === 'single' || this.bootstrapping.has(node)) argv.push(`--init-file=${dir}/init.sql`);
    if (this.mode === 'galera') {
      const members = ctx.nodes.map((n) => nodeAddress(ctx, n)).join(',');
      argv.push(
        '--wsrep-on=ON',
        `--wsrep-provider=${GALERA_PROVIDER}`,
        `--wsrep-cluster-address=gcomm://${members}`,
        '--wsrep-cluster-name=faultline',
        `--wsrep-node-address=${address}`,
        `--wsrep-node-name=${node}`,
        '--wsrep-sst-method=rsync',
        '--binlog-format=ROW',
        '--default-storage-engine=InnoDB',
        '--innodb-autoinc-lock-mode=2',
      );
      if (this.bootstrapping.has(node)) argv.push('--wsrep-new-cluster');
      const position = this.startPosition.get(node);
      if (position) argv.push(`--wsrep-start-position=${position}`);
    }
    return { argv, log: `${dir}/mariadbd.log`, cwd: dir };
  }

  clientAddress(ctx: DbContext, node: string): string {
    return `${nodeAddress(ctx, node)}:${MARIADB_PORT}`;
  }

  async install(ctx: DbContext, node: string): Promise<void> {
    const pkgs = this.mode === 'galera' ? ['mariadb-server', 'galera-4', 'rsync'] : ['mariadb-server'];
    await ensurePackages(ctx.remote, node, pkgs);
  }

  async setup(ctx: DbContext, node: string): Promise<void> {
    // One server: it runs on the first node; other nodes of the test stay idle (use galera for a cluster).
    if (!this.members(ctx).includes(node)) return;
    const dir = nodeDir(ctx, this.name, node);
    const q = shellQuote;
    const init = [
      'CREATE DATABASE IF NOT EXISTS faultline;',
      `CREATE USER IF NOT EXISTS '${USER.user}'@'%' IDENTIFIED BY '${USER.password}';`,
      `GRANT ALL ON *.* TO '${USER.user}'@'%';`,
    ].join('\n');
    await ctx.remote.exec(
      node,
      `mkdir -p ${q(`${dir}/data`)} && printf '%s\\n' ${q(init)} > ${q(`${dir}/init.sql`)} && chown -R mysql:mysql ${q(dir)} && ` +
        `mariadb-install-db --no-defaults --datadir=${q(`${dir}/data`)} --user=mysql --auth-root-authentication-method=normal --skip-test-db >/dev/null`,
      { sudo: true, timeoutMs: 180_000 },
    );
    // A Galera joiner starts in the form step, once the first node has bootstrapped the cluster.
    if (node !== ctx.nodes[0]) return;
    if (this.mode === 'galera') this.bootstrapping.add(node);
    try {
      await startServer(ctx, node, this.srv);
      if (this.mode === 'galera')
        await waitUntil(`galera bootstrap on ${node}`, 120_000, () => this.notServing(ctx, node));
    } finally {
      // Restarts after a kill rejoin the existing cluster instead of founding a new one.
      this.bootstrapping.delete(node);
    }
  }

  /** null when `node` runs and answers a query (asked on the node) as the faultline user, else why not. */
  private async notServing(ctx: DbContext, node: string): Promise<string | null> {
    if (!(await running(ctx.remote, node, this.srv, this.srv.pidFile(ctx, node)))) return 'not running';
    const sql = this.mode === 'galera' ? "SHOW STATUS LIKE 'wsrep_ready'" : 'SELECT 1';
    const r = await ctx.remote.exec(
      node,
      `mariadb -N -B -h ${shellQuote(nodeAddress(ctx, node))} -P ${MARIADB_PORT} -u ${USER.user} -p${USER.password} -e ${shellQuote(sql)}`,
      { check: false, timeoutMs: 10_000 },
    );
    if (r.code !== 0) return `query exited ${r.code}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
    if (this.mode === 'galera' && !/\bON\b/.test(r.stdout)) return `wsrep_ready: ${r.stdout.trim()}`;
    return null;
  }

  /** The nodes running a server: the first (one server), or all (Galera). */
  private members(ctx: DbContext): string[] {
    return this.mode === 'single' ? [ctx.nodes[0] as string] : [...ctx.nodes];
  }

  /** The first node (the one server, or the Galera cluster it bootstrapped); joiners wait in `form`. */
  async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
    const first = ctx.nodes[0] as string;
    await waitUntil(`${this.name} on ${first}`, timeoutMs, () => this.notServing(ctx, first));
  }

  async primaries(ctx: DbContext): Promise<string[]> {
    return this.members(ctx);
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
    return [`${nodeDir(ctx, this.name, node)}/mariadbd.log`];
  }

  dataDir(ctx: DbContext, node: string): string {
    return `${nodeDir(ctx, this.name, node)}/data`;
  }
}

export const mariadbDatabase = defineDatabase({
  name: 'mariadb',
  summary: 'MariaDB 10.11 from Debian (InnoDB), one server on the first node (other nodes stay idle)',
  defaultClient: 'mariadb-txn',
  binary: 'mariadbd',
  options: mariadbOptionsSchema,
  create: (o) => new MariaDb('mariadb', 'single', o as unknown as MariaDbOptions),
});

export const galeraDatabase = defineDatabase({
  name: 'galera',
  summary: 'MariaDB 10.11 Galera cluster (galera-4, rsync SST): every node a member, the first bootstraps',
  defaultClient: 'mariadb-txn',
  binary: 'mariadbd',
  options: mariadbOptionsSchema,
  create: (o) => new MariaDb('galera', 'galera', o as unknown as MariaDbOptions),
});
