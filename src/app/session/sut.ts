import type { Remote } from '../../core/control/types.ts';
import { UserError } from '../../core/util/errors.ts';
import { EtcdClient } from '../../lib/clients/etcd.ts';
import type { Client } from '../../lib/clients/types.ts';
import { EtcdDb } from '../../lib/databases/etcd.ts';
import type { DB, DbContext } from '../../lib/databases/types.ts';
import type { Binding } from '../plan/binding.ts';

/**
 * The DB adapter and client factory for a scenario's binding. `dbOptions` carries the read mode the
 * negative controls need: `serializableReads: true` (etcd, reads served by the local member) and
 * `readFrom: replicas` (Redis, reads from replicas).
 */
export interface Sut {
  db: DB;
  makeClient: (clientOptions: Record<string, unknown>) => Client;
  /** Does the client record every attempt itself (no retries hidden in a library)? null = unknown. */
  hiddenRetries: boolean | null;
}

export async function sutFor(binding: Binding, remote: Remote, scenarioId: string): Promise<Sut> {
  const nodes = remote.nodes.map((n) => n.name);
  const ctx: DbContext = { remote, nodes };
  const o = binding.dbOptions;
  if (binding.db === 'etcd') {
    const db = new EtcdDb();
    const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress(ctx, n)]));
    const serializableReads = o.serializableReads === true;
    return {
      db,
      // The etcd client issues one HTTP request per op and never retries.
      hiddenRetries: false,
      makeClient: (opts) => new EtcdClient({ workload: binding.workload, urls, serializableReads, ...opts }),
    };
  }
  const { RedisDb } = await import('../../lib/databases/redis.ts');
  const { RedisClient, REDIS_WORKLOADS } = await import('../../lib/clients/redis.ts');
  if (!REDIS_WORKLOADS.includes(binding.workload))
    throw new UserError(
      `${scenarioId}: workload ${binding.workload} is not supported on redis (one of ${REDIS_WORKLOADS.join(', ')})`,
    );
  const db = new RedisDb();
  const readFromReplicas = o.readFrom === 'replicas';
  return {
    db,
    hiddenRetries: null,
    makeClient: (opts) => new RedisClient({ workload: binding.workload, db, ctx, readFromReplicas, ...opts }),
  };
}
