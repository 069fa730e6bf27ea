import { defineClient, definePlugin } from 'faultline';
import { galeraDatabase, mariadbDatabase } from './mariadb.ts';
import { mariadbDriver } from './mariadb-driver.ts';
import { pgDriver } from './pg-driver.ts';
import { postgresDatabase } from './postgres.ts';
import { rwRegister } from './rw-register.ts';
import { TxnClient, txnOptionsSchema } from './txn-client.ts';

/**
 * SQL databases under faultline, through its public API only: PostgreSQL 15 (a primary, optionally
 * with asynchronous streaming replicas) and MariaDB 10.11 (one server, or a Galera cluster), clients on
 * the `pg` and `mariadb` npm drivers running Elle's list-append and rw-register transactions at the
 * isolation level a plan asks for, checked by faultline's Elle-class checker, and the set workload
 * (one transaction per add or read) for durability plans, checked by set-full.
 *
 * dbOptions: postgres `synchronousCommit` (on, off) and `walWriterDelayMs` (1–10000); mariadb and galera `flushLogAtTrxCommit` (0, 1, 2).
 *
 * clientOptions: `isolation` (serializable, repeatable-read, read-committed; MariaDB also
 * read-uncommitted), `readFrom` (primary, or replicas: read-only transactions go to the worker's own
 * node), `connectTo` (first-node, or own-node: Galera's every node takes transactions),
 * `snapshotIsolation` (MariaDB: the session's innodb_snapshot_isolation).
 */
export default definePlugin({
  name: 'sql',
  databases: [postgresDatabase, mariadbDatabase, galeraDatabase],
  clients: [
    defineClient({
      name: 'postgres-txn',
      summary: 'node-postgres (pg): one transaction per op at the plan isolation level, never retried',
      workloads: ['list-append', 'rw-register', 'set'],
      hiddenRetries: false,
      endpoints: 'client-address',
      options: txnOptionsSchema({
        isolation: ['serializable', 'repeatable-read', 'read-committed'],
        readFrom: ['primary', 'replicas'],
        connectTo: ['first-node'],
        snapshotIsolation: false,
      }),
      create: (c) => new TxnClient(c, pgDriver),
    }),
    defineClient({
      name: 'mariadb-txn',
      summary: 'MariaDB Connector/Node.js: one transaction per op at the plan isolation level, never retried',
      workloads: ['list-append', 'rw-register', 'set'],
      hiddenRetries: false,
      endpoints: 'client-address',
      options: txnOptionsSchema({
        isolation: ['serializable', 'repeatable-read', 'read-committed', 'read-uncommitted'],
        readFrom: ['primary'],
        connectTo: ['first-node', 'own-node'],
        snapshotIsolation: true,
      }),
      create: (c) => new TxnClient(c, mariadbDriver),
    }),
  ],
  workloads: [rwRegister],
});
