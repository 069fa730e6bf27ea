import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathName } from '../../core/util/paths.ts';

/**
 * Where faultline keeps what it built, so `cluster down` can undo it after a crash: FAULTLINE_STATE_DIR,
 * else /var/lib/faultline for root, else ~/.faultline.
 */
export function stateDir(): string {
  if (process.env.FAULTLINE_STATE_DIR) return process.env.FAULTLINE_STATE_DIR;
  return process.getuid?.() === 0 ? '/var/lib/faultline' : join(homedir(), '.faultline');
}

export function clustersDir(): string {
  return join(stateDir(), 'clusters');
}

/** Every path built from a cluster name goes through here, so a name can never leave clustersDir(). */
export function clusterDir(name: string): string {
  return join(clustersDir(), pathName('cluster', name));
}

/**
 * Subnet claims are host-wide, whatever FAULTLINE_STATE_DIR says: the /24s are addresses on this host's
 * network stack, so two faultlines with different state directories (a test suite's private one and the
 * default) must see each other's claims, or both can take the same /24 between one's claim and its bridge
 * address. Under /run (tmpfs) because the bridges they stand for do not survive a reboot either; a dot name
 * because per-cluster directories live beside it and no cluster name may start with a dot.
 */
export function subnetClaimsDir(): string {
  return process.getuid?.() === 0 ? '/run/faultline/.subnets' : join(stateDir(), 'subnets');
}

/**
 * Local cluster leases: host-wide like the subnet claims, because a cluster's namespaces and bridge are
 * named after the cluster on this host's network stack whatever the state directory; under /run, so a
 * reboot (which ends every run holding one) clears them too.
 */
export function clusterLeasePath(name: string): string {
  const dir = process.getuid?.() === 0 ? '/run/faultline/.leases' : join(stateDir(), 'leases');
  return join(dir, pathName('cluster', name));
}
