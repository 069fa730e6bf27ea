import { readFileSync } from 'node:fs';
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
 * A state file's JSON, or null when it is not JSON (a truncated or foreign file): the caller's schema then
 * reports it as corrupt state in one line, instead of a parser's stack trace.
 */
export function readJsonOrNull(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

export function subnetClaimsDir(): string {
  return join(stateDir(), 'subnets');
}
