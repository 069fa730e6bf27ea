import { formatEndpoint, pointAt } from '../../../nemeses/proxy/endpoint.ts';
import { DATABASE_CAPABILITIES, type DatabaseCapability } from '../../core/database/capabilities.ts';
import { pollFor } from '../../core/util/retry.ts';
import { type ClientEndpoint, reachEndpoint } from '../clusters/client-only.ts';
import type { Database, DbContext } from './types.ts';

/**
 * A database someone else runs (a client-only run): the adapter's client addresses, pointed at the
 * endpoints given, and nothing else of it. Set-up and teardown do nothing (the data and the daemon are
 * not faultline's), ready means every endpoint accepts a TCP connection, and no optional capability is
 * declared that acts on the nodes (process, clock, disk, membership, logs, primaries …): faults and audits
 * that need one are refused by name.
 */
export function externalDatabase(
  inner: Database,
  endpoints: Readonly<Record<string, ClientEndpoint>>,
): Database {
  const endpoint = (node: string): ClientEndpoint => {
    const e = endpoints[node];
    if (!e) throw new Error(`no endpoint for ${node}`);
    return e;
  };
  // The adapter's own prototype (clients may check what database they were given), every optional
  // capability shadowed: none of them can act without the nodes.
  const db = Object.create(inner) as Database;
  for (const cap of NODE_SIDE) Object.defineProperty(db, cap, { value: undefined });
  return Object.assign(db, {
    name: inner.name,
    async setup() {},
    async teardown() {},
    clientAddress(ctx: DbContext, node: string): string {
      // The adapter's own form (scheme, path), with the host and port given.
      return pointAt(inner.clientAddress(ctx, node), endpoint(node));
    },
    async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
      // The nodes in order, one time limit for all: the first node not reached yet, and why.
      let reached = 0;
      const firstUnreached = async () => {
        for (; reached < ctx.nodes.length; reached++) {
          const node = ctx.nodes[reached] as string;
          const why = await reachEndpoint(endpoint(node));
          if (why !== null) return { node, why };
        }
        return null;
      };
      const left = await pollFor(firstUnreached, (l) => l === null, { timeoutMs, stepMs: 500 });
      if (left)
        throw new Error(`${left.node} (${formatEndpoint(endpoint(left.node))}) unreachable: ${left.why}`);
    },
  });
}

/**
 * The capabilities shadowed: every one that acts on the nodes. The peer address stays (a peer-link proxy
 * fault is refused by the run itself, naming the client-only run), and so do the reported versions.
 */
const NODE_SIDE = (Object.keys(DATABASE_CAPABILITIES) as DatabaseCapability[])
  .filter((c) => c !== 'peer-address' && c !== 'versions')
  .map((c) => DATABASE_CAPABILITIES[c].member);
