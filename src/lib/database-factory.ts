import type { Remote } from '../core/control/types.ts';
import { DATABASE_CAPABILITIES, hasCapability } from '../core/database/capabilities.ts';
import { UserError } from '../core/util/errors.ts';
import { parseOptions } from '../core/util/options.ts';
import { clients } from './clients/registry.ts';
import type { Client } from './clients/types.ts';
import type { ClientEndpoint } from './clusters/client-only.ts';
import { externalDatabase } from './databases/external.ts';
import { databases } from './databases/registry.ts';
import type { Database, DbContext } from './databases/types.ts';

/**
 * The one system-under-test factory: a database adapter and the client factory for a workload, built
 * from the registries (`databases`, `clients`) for every command (`test`, `run`) and every binding.
 * Options are validated by the definitions' own schemas; a client that does not implement the workload
 * is refused before anything touches a node.
 */
export interface DatabaseBindingSpec {
  db: string;
  /** Client name; the database's default client when absent. */
  client?: string;
  workload: string;
  dbOptions?: Record<string, unknown>;
  clientOptions?: Record<string, unknown>;
  /** Prefix for errors: a flag (`--db`) or a scenario (`S3: binding`). */
  where: string;
  /** A client-only run: the database is these endpoints, run by someone else (see databases/external.ts). */
  endpoints?: Readonly<Record<string, ClientEndpoint>>;
}

export interface DatabaseBinding {
  db: Database;
  dbName: string;
  clientName: string;
  dbOptions: Record<string, unknown>;
  /**
   * The workload's client, given the workload's own client options (bank accounts …); `route` points
   * every client address somewhere else (the proxy) for the client only, never for the database's own
   * set-up and health checks.
   */
  makeClient: (workloadOptions: Record<string, unknown>, route?: AddressRoute) => Promise<Client>;
  /** Does the client connect only where `db.clientAddress` says (so it can be routed)? */
  routable: boolean;
  /** Does the client record every attempt itself (no retries hidden in a library)? null = unknown. */
  hiddenRetries: boolean | null;
}

/** Where a client should connect instead of `address` (the client address of `node`). */
export type AddressRoute = (address: string, node: string) => string;

/**
 * The database as the client sees it: the same object (its prototype, so `instanceof` still holds) with
 * `clientAddress` routed.
 */
function routedDb(db: Database, route: AddressRoute): Database {
  const routed = Object.create(db) as Database;
  Object.defineProperty(routed, 'clientAddress', {
    value: (ctx: DbContext, node: string) => route(db.clientAddress(ctx, node), node),
  });
  return routed;
}

/**
 * The database, client and workload names resolved and checked against each other, with no node
 * touched: callers check flags with it before bringing a cluster up, and `bindDatabase` starts with it.
 */
export function resolveDatabaseBinding(
  spec: Pick<DatabaseBindingSpec, 'db' | 'client' | 'workload' | 'where'>,
) {
  const dbDef = databases.require(spec.db, `${spec.where}: db`);
  const clientName = spec.client ?? dbDef.defaultClient;
  if (!clientName)
    throw new UserError(`${spec.where}: database ${spec.db} has no default client; name one (client: …)`);
  const clientDef = clients.require(clientName, `${spec.where}: client`);
  if (!clientDef.workloads.includes(spec.workload))
    throw new UserError(
      `${spec.where}: workload ${spec.workload} is not supported by the ${clientName} client on ${spec.db} (one of ${clientDef.workloads.join(', ')})`,
    );
  return { dbDef, clientName, clientDef };
}

export async function bindDatabase(spec: DatabaseBindingSpec, remote: Remote): Promise<DatabaseBinding> {
  const { dbDef, clientName, clientDef } = resolveDatabaseBinding(spec);
  const dbOptions = parseOptions(dbDef.options, spec.dbOptions, `${spec.where}: dbOptions`);
  const clientOptions = parseOptions(clientDef.options, spec.clientOptions, `${spec.where}: clientOptions`);
  const created = await dbDef.create(dbOptions);
  const lacking = (dbDef.capabilities ?? []).filter((c) => !hasCapability(created, c));
  if (lacking.length > 0)
    throw new UserError(
      `database ${dbDef.name}: its definition declares ${lacking.join(', ')} but its adapter has no ${lacking.map((c) => DATABASE_CAPABILITIES[c].member).join(', ')}`,
    );
  if (spec.endpoints && clientDef.endpoints !== 'client-address')
    throw new UserError(
      `${spec.where}: a client-only run needs a client that connects where it is told (endpoints: client-address); ${clientName} finds its own addresses`,
    );
  const db = spec.endpoints ? externalDatabase(created, spec.endpoints) : created;
  const ctx: DbContext = { remote, nodes: remote.nodes.map((n) => n.name) };
  return {
    db,
    dbName: dbDef.name,
    clientName,
    dbOptions,
    hiddenRetries: clientDef.hiddenRetries,
    routable: clientDef.endpoints === 'client-address',
    makeClient: async (workloadOptions, route) =>
      clientDef.create({
        db: route ? routedDb(db, route) : db,
        ctx,
        workload: spec.workload,
        dbOptions,
        options: { ...workloadOptions, ...clientOptions },
      }),
  };
}
