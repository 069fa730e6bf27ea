import type { OptionsSchema } from '../../core/util/options.ts';
import { BUILT_IN, Registry } from '../../core/util/registry.ts';
import type { Database, DbContext } from '../databases/types.ts';
import type { Client } from './types.ts';

/**
 * Every client faultline can drive a workload with: one registry. A client definition names the
 * workloads whose ops it implements, whether it may retry behind the history's back (`hiddenRetries`,
 * an audit input), and builds the client for one run from the database adapter, the workload and the
 * options (the binding's `dbOptions` and `clientOptions`, and the workload's own, e.g. bank accounts).
 * Plugins add clients with `defineClient`.
 */
export interface ClientContext {
  db: Database;
  ctx: DbContext;
  workload: string;
  /** The binding's `dbOptions`, already validated by the database's schema. */
  dbOptions: Record<string, unknown>;
  /** The binding's `clientOptions` (validated by this client's schema) plus the workload's own. */
  options: Record<string, unknown>;
}

export interface ClientDefinition {
  name: string;
  summary: string;
  /** Workloads whose ops this client implements. */
  workloads: readonly string[];
  /** Does the client ever repeat an op on its own? null = unknown. */
  hiddenRetries: boolean | null;
  /** Schema of the binding's `clientOptions`. */
  options?: OptionsSchema;
  /**
   * Where the client connects. `client-address`: only to the addresses `db.clientAddress(ctx, node)`
   * gives, never to one it discovers (redirects, cluster gossip), so faultline can point it at its proxy
   * (proxy faults, client-only runs). Absent: the client finds its own addresses, and plan check refuses
   * proxy faults for it.
   */
  endpoints?: 'client-address';
  create(c: ClientContext): Client | Promise<Client>;
}

export const clients = new Registry<ClientDefinition>('client');

clients.register(
  'etcd-http',
  {
    name: 'etcd-http',
    summary: 'etcd v3 JSON gateway over fetch: one request per op, never retried',
    workloads: ['register', 'multi-register', 'set', 'list-append', 'counter', 'bank'],
    hiddenRetries: false,
    endpoints: 'client-address',
    async create(c) {
      const { EtcdClient } = await import('./etcd.ts');
      // Resolved when a client opens (a getter per node), so a routed address can depend on the client thread.
      const urls = Object.defineProperties(
        {} as Record<string, string>,
        Object.fromEntries(
          c.ctx.nodes.map((n) => [n, { enumerable: true, get: () => c.db.clientAddress(c.ctx, n) }]),
        ),
      );
      return new EtcdClient({
        workload: c.workload,
        urls,
        serializableReads: c.dbOptions.serializableReads === true,
        ...c.options,
      });
    },
  },
  BUILT_IN,
);

clients.register(
  'redis',
  {
    name: 'redis',
    summary: 'ioredis, no offline queue and no command retries; reads from replicas on request',
    workloads: ['register', 'multi-register', 'set', 'counter', 'list-append', 'queue'],
    hiddenRetries: null,
    endpoints: 'client-address',
    async create(c) {
      const { RedisClient } = await import('./redis.ts');
      const { RedisDb } = await import('../databases/redis.ts');
      if (!(c.db instanceof RedisDb)) throw new Error('the redis client needs the redis database');
      return new RedisClient({
        workload: c.workload,
        db: c.db,
        ctx: c.ctx,
        readFromReplicas: c.dbOptions.readFrom === 'replicas',
        ...c.options,
      });
    },
  },
  BUILT_IN,
);
