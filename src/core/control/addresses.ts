import type { NodeSpec } from './types.ts';

/**
 * A node has two addresses by role. The SSH address (`host`/`port`) is how the control host reaches its
 * sshd, which may go through a port forward (Vagrant's 127.0.0.1:2222, a bastion). The cluster address
 * (`address`) is what peers and clients use, what partitions cut and what probes target. They are the same
 * on a flat network, so `address` falls back to `host`.
 */
export function clusterAddress(spec: Pick<NodeSpec, 'host' | 'address'>): string {
  return spec.address ?? spec.host;
}

/**
 * The port sshd answers on at the cluster address (what a partition's reachability probe dials by
 * default): the inventory's `clusterSshPort`, else 22 when the cluster address differs from the SSH host
 * (the SSH port then belongs to a forward on the control host), else the SSH port.
 */
export function clusterSshPort(spec: Pick<NodeSpec, 'host' | 'port' | 'address' | 'clusterSshPort'>): number {
  if (spec.clusterSshPort !== undefined) return spec.clusterSshPort;
  return spec.address !== undefined && spec.address !== spec.host ? 22 : spec.port;
}
