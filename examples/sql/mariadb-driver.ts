import * as mariadb from 'mariadb';
import { USER } from './mariadb.ts';
import { ISOLATION_SQL, parseList, type SqlDriver, type SqlSession, type TxnOptions } from './txn-client.ts';

/**
 * The `mariadb` driver (MariaDB Connector/Node.js) for TxnClient: one connection per session, never
 * pooled, never retried. The session's isolation level (and innodb_snapshot_isolation when the plan sets
 * it) is set once per connection; every transaction is START TRANSACTION … COMMIT. A server error the
 * connection survives (1213 deadlock or Galera certification failure, 1205 lock wait timeout, 1020
 * record changed under snapshot isolation …) leaves the transaction to be rolled back: not applied.
 * A fatal error means the connection is gone.
 */
class MariaSession implements SqlSession {
  constructor(readonly conn: mariadb.Connection) {}

  async begin(): Promise<void> {
    await this.conn.query('START TRANSACTION');
  }

  async readList(k: number): Promise<number[]> {
    const rows = (await this.conn.query('SELECT v FROM lists WHERE k = ?', [k])) as { v: string }[];
    return parseList(rows[0]?.v);
  }

  async append(k: number, v: number): Promise<void> {
    await this.conn.query(
      "INSERT INTO lists (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))",
      [k, String(v)],
    );
  }

  async readRegister(k: number): Promise<number | null> {
    const rows = (await this.conn.query('SELECT v FROM registers WHERE k = ?', [k])) as { v: number }[];
    return rows[0] ? Number(rows[0].v) : null;
  }

  async write(k: number, v: number): Promise<void> {
    await this.conn.query(
      'INSERT INTO registers (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)',
      [k, v],
    );
  }

  async addToSet(v: number): Promise<void> {
    await this.conn.query('INSERT INTO sets (v) VALUES (?)', [v]);
  }

  async readSet(): Promise<number[]> {
    const rows = (await this.conn.query('SELECT v FROM sets ORDER BY v')) as { v: number | bigint }[];
    return rows.map((r) => Number(r.v));
  }

  async commit(): Promise<void> {
    await this.conn.query('COMMIT');
  }

  async rollback(): Promise<void> {
    await this.conn.query('ROLLBACK').catch(() => {});
  }

  /**
   * Give the connection up without killing its query: the driver's destroy() kills an in-flight query
   * from a second connection and leaves that KILL's failure (e.g. 1047 on a Galera node outside the
   * primary component) as an unhandled rejection. end() sends QUIT once the query settles.
   */
  destroy(): void {
    this.conn.end().catch(() => {});
  }
}

export const mariadbDriver: SqlDriver = {
  async connect(address, o: TxnOptions, signal) {
    const [host, port] = address.split(':') as [string, string];
    const ready = (async () => {
      const conn = await mariadb.createConnection({
        host,
        port: Number(port),
        ...USER,
        connectTimeout: 3000,
      });
      // An error on an idle connection is an event; unheard, it would end the process. The next query sees it.
      conn.on('error', () => {});
      try {
        await conn.query(`SET SESSION TRANSACTION ISOLATION LEVEL ${ISOLATION_SQL[o.isolation]}`);
        if (o.snapshotIsolation !== null)
          await conn.query(`SET SESSION innodb_snapshot_isolation = ${o.snapshotIsolation ? 'ON' : 'OFF'}`);
      } catch (err) {
        conn.end().catch(() => {});
        throw err;
      }
      return conn;
    })();
    // The op may give up while connecting or while the session is set up (a paused node, a Galera node
    // still receiving its state transfer). The connection is then closed with end() once it settles, never
    // destroy(): that KILLs an in-flight statement from a second connection and leaves the KILL's own
    // failure (1047 on a node not yet synced) unhandled.
    let onAbort = () => {};
    const aborted = new Promise<never>((_r, reject) => {
      onAbort = () => {
        ready.then((c) => c.end()).catch(() => {});
        reject(new Error('connect aborted'));
      };
    });
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return new MariaSession(await Promise.race([ready, aborted]));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  },

  async createTables(session) {
    const conn = (session as MariaSession).conn;
    await conn.query('CREATE TABLE IF NOT EXISTS lists (k INT PRIMARY KEY, v TEXT NOT NULL) ENGINE=InnoDB');
    await conn.query(
      'CREATE TABLE IF NOT EXISTS registers (k INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB',
    );
    await conn.query('CREATE TABLE IF NOT EXISTS sets (v BIGINT PRIMARY KEY) ENGINE=InnoDB');
  },

  classify(err) {
    const e = err as { fatal?: boolean; errno?: number; sqlState?: string | null };
    const connectionLost = e.fatal === true || e.errno === undefined;
    return { refusedByServer: !connectionLost, connectionLost };
  },
};
