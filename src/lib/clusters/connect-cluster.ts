import { homedir } from 'node:os';
import { join } from 'node:path';
import { formatEndpoint } from '../../../nemeses/proxy/endpoint.ts';
import { hostKeyPolicyFrom, remoteOptionsFor, withCliPasswords } from '../../core/control/connect.ts';
import { type Inventory, loadInventory } from '../../core/control/inventory.ts';
import type { SshCliOptions } from '../../core/control/ssh-cli-options.ts';
import { connectRemote, type RemoteOptions } from '../../core/control/ssh-remote.ts';
import type { NodeSpec, Remote } from '../../core/control/types.ts';
import { UserError } from '../../core/util/errors.ts';
import { type ClientEndpoint, ClientOnlyRemote, clientOnlyInventory } from './client-only.ts';

/**
 * The one way a command reaches its nodes: an inventory file, a local cluster of N network namespaces
 * (brought up when it does not exist yet), or the node list a fault ledger recorded. Host keys follow
 * the inventory's `hostKeyCheck` unless the shared SSH flags say otherwise. `test`, `run`, `heal` and
 * `doctor` all connect through here.
 */
export interface ClusterSource {
  inventory?: string;
  /** A local cluster of this many nodes, named `clusterName`. */
  local?: number;
  clusterName?: string;
  /**
   * Nodes given directly (a fault ledger's record, Jepsen-style `--nodes`), with the known_hosts files
   * that vouch for them and how to describe them.
   */
  nodes?: { specs: NodeSpec[]; knownHostsFiles?: string[]; description?: string };
  /** A client-only run (`--no-ssh --nodes host:port,…`): the database's endpoints by node. */
  endpoints?: Record<string, ClientEndpoint>;
}

export interface ConnectOptions {
  ssh?: SshCliOptions;
  /** Extra connection settings (lazy connects for doctor, a command log directory …). */
  remote?: RemoteOptions;
  /**
   * A local cluster this call brings up: `session` takes it down again at close (unless kept), `keep`
   * leaves it up for later runs.
   */
  localLifetime?: 'session' | 'keep';
  log?: (line: string) => void;
}

export interface ConnectedCluster {
  remote: Remote;
  description: string;
  /** The inventory file used, when there is one (a local cluster writes its own). */
  inventoryPath?: string;
  inventory?: Inventory;
  /** A client-only run (`--no-ssh`, or an inventory with `ssh: false`): the endpoints; no SSH at all. */
  endpoints?: Record<string, ClientEndpoint>;
  /** Closes the connections and takes down a local cluster brought up for this session (idempotent). */
  close(opts?: { keepCluster?: boolean }): Promise<void>;
}

export async function connectCluster(
  source: ClusterSource,
  o: ConnectOptions = {},
): Promise<ConnectedCluster> {
  const log = o.log ?? (() => {});
  const endpoints =
    source.endpoints ?? (source.inventory ? (clientOnlyInventory(source.inventory) ?? undefined) : undefined);
  if (endpoints) {
    if (source.local !== undefined) throw new UserError('a client-only run (--no-ssh) has no local cluster');
    if (source.inventory && source.endpoints)
      throw new UserError(
        '--no-ssh: give the endpoints with --nodes or an inventory with ssh: false, not both',
      );
    const remote = new ClientOnlyRemote(endpoints);
    const description = `client-only: ${Object.entries(endpoints)
      .map(([n, e]) => `${n} ${formatEndpoint(e)}`)
      .join(', ')} (no SSH, nothing installed, only proxy and client-side faults)`;
    log(description);
    return {
      remote,
      description,
      endpoints,
      ...(source.inventory && { inventoryPath: source.inventory }),
      async close() {},
    };
  }
  if (source.inventory && source.local) throw new UserError('--inventory and --local exclude each other');
  if (source.nodes?.description && (source.inventory || source.local))
    throw new UserError('--nodes/--nodes-file, --inventory and --local exclude each other');
  let inventoryPath = source.inventory;
  let createdLocal = false;
  let description = `inventory ${source.inventory}`;
  const name = source.clusterName ?? 'local';
  let releaseLease = () => {};
  if (source.local !== undefined) {
    const { leaseLocalCluster } = await import('./cluster-lease.ts');
    // Refused at once when another process holds it; `run` and `test` take it (waiting, if asked)
    // before their session starts, and this process's hold is counted, not taken twice.
    releaseLease = await leaseLocalCluster(name);
    const { ensureLocalCluster } = await import('./local.ts');
    const { cluster, created } = await ensureLocalCluster(name, source.local).catch((err: unknown) => {
      releaseLease();
      throw err;
    });
    createdLocal = created;
    inventoryPath = cluster.inventoryPath;
    const lifetime = o.localLifetime ?? 'session';
    description = `local cluster ${name} (${source.local} nodes, ${cluster.subnet}${created ? ', brought up for this session' : ', already up'})`;
    log(
      created && lifetime === 'keep'
        ? `local cluster ${name} is up (${cluster.subnet}); it stays up for later runs: faultline cluster down --name ${name}`
        : description,
    );
  }
  const downIfCreated = async () => {
    try {
      if (createdLocal && (o.localLifetime ?? 'session') === 'session') {
        const { localClusterDown } = await import('./local.ts');
        await localClusterDown(name);
        log(`local cluster ${name} is down`);
      }
    } finally {
      releaseLease();
    }
  };

  let inventory: Inventory | undefined;
  let specs: NodeSpec[];
  let options: RemoteOptions;
  let remote: Remote;
  try {
    if (inventoryPath) {
      inventory = loadInventory(inventoryPath);
      specs = inventory.nodes;
      options = remoteOptionsFor(inventory, o.ssh ?? {}, o.remote ?? {});
    } else if (source.nodes && source.nodes.specs.length > 0) {
      specs = source.nodes.specs;
      description = source.nodes.description ?? `${specs.length} node(s) recorded in the fault ledger`;
      // `--known-hosts` files add to the recorded ones (and to ~/.ssh/known_hosts), as for an inventory.
      const cliKnown = o.ssh?.knownHosts ?? [];
      const known = [...(source.nodes.knownHostsFiles ?? []), ...cliKnown];
      options = {
        ...o.remote,
        hostKeyPolicy: hostKeyPolicyFrom(o.ssh ?? {}),
        ...(known.length > 0 && {
          knownHostsFiles: cliKnown.length > 0 ? [join(homedir(), '.ssh', 'known_hosts'), ...known] : known,
        }),
      };
    } else throw new UserError('say where the nodes are: --inventory FILE or --local N');
    // --password-env / --sudo-password-env: over the inventory's, for every node.
    remote = await connectRemote(withCliPasswords(specs, o.ssh), options);
  } catch (err) {
    // A cluster brought up for nothing goes again, and the lease with it.
    await downIfCreated();
    throw err;
  }
  let closed = false;
  return {
    remote,
    description,
    ...(inventoryPath && { inventoryPath }),
    ...(inventory && { inventory }),
    async close(c = {}) {
      if (closed) return;
      closed = true;
      await remote.close().catch(() => undefined);
      if (!c.keepCluster) await downIfCreated();
      else releaseLease();
    },
  };
}
