import { createHash } from 'node:crypto';

/**
 * Names of everything a local cluster creates, derived from the cluster name alone, so `cluster down`
 * can find leftovers even if the state file never got written. Interface names are limited to 15
 * characters, hence a short hash instead of the cluster name. The name itself is checked by the one
 * path-name validator (`pathName('cluster', …)` in core/util/paths.ts) wherever it enters.
 */

export function clusterId(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 7);
}

export function bridgeName(name: string): string {
  return `flb${clusterId(name)}`;
}

export function vethHostName(name: string, index: number): string {
  return `flv${clusterId(name)}${index}`;
}

export function vethPeerName(name: string, index: number): string {
  return `flp${clusterId(name)}${index}`;
}

export function netnsName(name: string, node: string): string {
  return `${name}-${node}`;
}

/** netns names that belong to this cluster: `<name>-n<digits>` exactly. */
export function isClusterNetns(name: string, netns: string): boolean {
  return netns.startsWith(`${name}-n`) && /^\d+$/.test(netns.slice(name.length + 2));
}
