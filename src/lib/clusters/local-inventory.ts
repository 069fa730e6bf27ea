import { stringify } from 'yaml';
import type { NodeSpec } from '../../core/control/types.ts';

/** A local cluster as `cluster up` leaves it. */
export interface LocalCluster {
  name: string;
  inventoryPath: string;
  knownHostsPath: string;
  identityFile: string;
  subnet: string;
  nodes: NodeSpec[];
  /** VM nodes run their own kernels (own clock, qdiscs, device-mapper); default: namespaces. */
  kind?: 'netns' | 'vm';
}

/** The inventory file `cluster up` writes: readable by `loadInventory` and by people. */
export function renderLocalInventory(cluster: LocalCluster): string {
  const doc = {
    knownHosts: cluster.knownHostsPath,
    defaults: {
      user: cluster.nodes[0]?.user ?? 'root',
      ...(cluster.nodes[0]?.sudoPasswordEnv && { sudoPasswordEnv: cluster.nodes[0].sudoPasswordEnv }),
      port: 22,
      identityFile: cluster.identityFile,
      // Namespace nodes run on this host's kernel: one clock for all, so clock-setting faults must refuse.
      sharedKernelClock: cluster.kind !== 'vm',
    },
    nodes: Object.fromEntries(
      cluster.nodes.map((n) => [
        n.name,
        {
          host: n.host,
          ...(n.port !== 22 && { port: n.port }),
          // SSH through a forward: the namespace address is what peers, clients and faults use.
          ...(n.address !== undefined && { address: n.address, clusterSshPort: n.clusterSshPort ?? 22 }),
          labels: n.labels ?? {},
        },
      ]),
    ),
  };
  const what = cluster.kind === 'vm' ? 'VM cluster' : 'local cluster';
  return `# faultline ${what} "${cluster.name}" (${cluster.subnet}), written by \`faultline cluster up\`.\n# Remove it with: faultline cluster down --name ${cluster.name}\n${stringify(doc)}`;
}
