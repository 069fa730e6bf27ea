import { createHash } from 'node:crypto';
import { UserError } from '../../core/util/errors.ts';

/**
 * Names of everything a local cluster creates, derived from the cluster name alone, so `cluster down`
 * can find leftovers even if the state file never got written. Interface names are limited to 15
 * characters, hence a short hash instead of the cluster name.
 */
export const CLUSTER_NAME = /^[a-z0-9][a-z0-9-]{0,30}$/;

export function validateClusterName(name: string): void {
  if (!CLUSTER_NAME.test(name)) {
    throw new UserError(
      `invalid cluster name ${JSON.stringify(name)}: use 1-31 of a-z 0-9 -, starting with a letter or digit`,
    );
  }
}

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
