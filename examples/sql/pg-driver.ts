import pg from 'pg';
import { ISOLATION_SQL, parseList, type SqlDriver, type SqlSession, type TxnOptions } from './txn-client.ts';

/**
 * The `pg` driver (node-postgres) for TxnClient: one pg.Client per session, never pooled, never retried.
 * A server error carries a five-character SQLSTATE (40001 serialization failure, 40P01 deadlock, 55P03
 * lock timeout …): PostgreSQL then aborts the transaction, so it did not apply.
 */
class PgSession implements SqlSession {
  constructor(
    readonly client: pg.Client,
    private readonly o: TxnOptions,
  ) {}

  async begin(): Promise<void> {
    await this.client.query(`BEGIN ISOLATION LEVEL ${ISOLATION_SQL[this.o.isolation]}`);
  }

  async readList(k: number): Promise<number[]> {
    const r = await this.client.query('SELECT v FROM lists WHERE k = $1', [k]);
    return parseList(r.rows[0]?.v);
  }

  async append(k: number, v: number): Promise<void> {
    await this.client.query(
      "INSERT INTO lists (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = lists.v || ',' || excluded.v",
      [k, String(v)],
    );
  }

  async readRegister(k: number): Promise<number | null> {
    const r = await this.client.query('SELECT v FROM registers WHERE k = $1', [k]);
    return r.rows[0] ? Number(r.rows[0].v) : null;
  }

  async write(k: number, v: number): Promise<void> {
    await this.client.query(
      'INSERT INTO registers (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v',
      [k, v],
    );
  }

  async addToSet(v: number): Promise<void> {
    await this.client.query('INSERT INTO sets (v) VALUES ($1)', [v]);
  }

  async readSet(): Promise<number[]> {
    const r = await this.client.query('SELECT v FROM sets ORDER BY v');
    return r.rows.map((row: { v: number }) => Number(row.v));
  }

  /**
   * No table access, so no predicate lock: it does not change what SSI sees. The isolation level is
   * the server's own view of this transaction, so a cycle can be checked against the level that really
   * ran, not the one the client asked for.
   */
  async trace(): Promise<Record<string, unknown>> {
    const r = await this.client.query(
      "SELECT pg_backend_pid() AS pid, pg_current_xact_id_if_assigned()::text AS xid, pg_current_snapshot()::text AS snapshot, current_setting('transaction_isolation') AS isolation",
    );
    const row = r.rows[0] as { pid: number; xid: string | null; snapshot: string; isolation: string };
    return { pid: row.pid, xid: row.xid, snapshot: row.snapshot, isolation: row.isolation };
  }

  async commit(): Promise<void> {
    // COMMIT of a transaction PostgreSQL already aborted answers ROLLBACK, not an error.
    const r = await this.client.query('COMMIT');
    if (r.command === 'ROLLBACK')
      throw Object.assign(new Error('COMMIT answered ROLLBACK'), { code: '25P02' });
  }

  async rollback(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => {});
  }

  destroy(): void {
    const stream = (this.client as unknown as { connection?: { stream?: { destroy(): void } } }).connection
      ?.stream;
    stream?.destroy();
    this.client.end().catch(() => {});
  }
}

export const pgDriver: SqlDriver = {
  async connect(address, o, signal) {
    const [host, port] = address.split(':') as [string, string];
    const client = new pg.Client({
      host,
      port: Number(port),
      user: 'postgres',
      database: 'postgres',
      connectionTimeoutMillis: 3000,
      application_name: 'faultline',
    });
    // An error event on an idle client would otherwise crash the process; the next query sees it.
    client.on('error', () => {});
    const onAbort = () => client.end().catch(() => {});
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await client.connect();
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return new PgSession(client, o);
  },

  async createTables(session) {
    const client = (session as PgSession).client;
    for (const ddl of [
      'CREATE TABLE IF NOT EXISTS lists (k integer PRIMARY KEY, v text NOT NULL)',
      'CREATE TABLE IF NOT EXISTS registers (k integer PRIMARY KEY, v integer NOT NULL)',
      'CREATE TABLE IF NOT EXISTS sets (v bigint PRIMARY KEY)',
    ]) {
      // Two clients racing on CREATE TABLE IF NOT EXISTS can both miss the table; the loser sees 23505.
      for (let attempt = 0; ; attempt++) {
        try {
          await client.query(ddl);
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== '23505' || attempt >= 3) throw err;
        }
      }
    }
  },

  classify(err) {
    const code = (err as { code?: unknown }).code;
    // 08xxx (connection exceptions) and 57P0x (the server is shutting down or crashed) end the connection.
    const refusedByServer = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P)/.test(code);
    return { refusedByServer, connectionLost: !refusedByServer };
  },
};
