import { remoteOptionsFor, type SshCliOptions } from '../../core/control/connect.ts';
import { loadInventory } from '../../core/control/inventory.ts';
import { connectRemote } from '../../core/control/ssh-remote.ts';
import type { Remote } from '../../core/control/types.ts';
import { UserError } from '../../core/util/errors.ts';

/**
 * The nodes a session runs on: an inventory file, or a local cluster of N network namespaces that the
 * session brings up when it does not exist yet (and then takes down again at the end, unless kept).
 */
export interface SessionCluster {
  remote: Remote;
  description: string;
  inventoryPath: string;
  /** Closes the connections and removes a local cluster this session created (idempotent). */
  close(opts?: { keepCluster?: boolean }): Promise<void>;
}

export async function openSessionCluster(o: {
  inventory?: string;
  local?: number;
  clusterName: string;
  log: (line: string) => void;
  ssh?: SshCliOptions;
}): Promise<SessionCluster> {
  let inventoryPath = o.inventory;
  let created = false;
  let description = `inventory ${o.inventory}`;
  if (o.local !== undefined) {
    const { ensureLocalCluster } = await import('../../lib/clusters/local.ts');
    const ensured = await ensureLocalCluster(o.clusterName, o.local);
    const cluster = ensured.cluster;
    created = ensured.created;
    inventoryPath = cluster.inventoryPath;
    description = `local cluster ${o.clusterName} (${o.local} nodes, ${cluster.subnet}${created ? ', brought up for this session' : ', already up'})`;
    o.log(description);
  }
  if (!inventoryPath) throw new UserError('say where the nodes are: --inventory FILE or --local N');
  const inv = loadInventory(inventoryPath);
  let remote: Remote;
  try {
    // The inventory's hostKeyCheck, overridden by the shared host-key flags when given.
    remote = await connectRemote(inv.nodes, remoteOptionsFor(inv, o.ssh ?? {}));
  } catch (err) {
    if (created) await downLocal(o.clusterName);
    throw err;
  }
  let closed = false;
  return {
    remote,
    description,
    inventoryPath,
    async close(c = {}) {
      if (closed) return;
      closed = true;
      await remote.close().catch(() => undefined);
      if (created && !c.keepCluster) {
        await downLocal(o.clusterName);
        o.log(`local cluster ${o.clusterName} is down`);
      }
    },
  };
}

async function downLocal(name: string): Promise<void> {
  const local = await import('../../lib/clusters/local.ts');
  await local.localClusterDown(name);
}
