import { homedir } from 'node:os';
import { join } from 'node:path';

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

export function clusterDir(name: string): string {
  return join(clustersDir(), name);
}

export function subnetClaimsDir(): string {
  return join(stateDir(), 'subnets');
}
