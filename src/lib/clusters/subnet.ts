import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { OutputExistsError, writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { UserError } from '../../core/util/errors.ts';
import { run } from './host-tools.ts';
import { stateDir, subnetClaimsDir } from './state-dir.ts';

/** Local clusters take /24s from 10.213.0.0/16 unless told otherwise. Nothing routes it off the host. */
export const DEFAULT_POOL_PREFIX = '10.213';

export interface Subnet {
  /** e.g. "10.213.4" */
  prefix: string;
  cidr: string;
}

export function parseSubnet(cidr: string): Subnet {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.0\/24$/.exec(cidr);
  const octets = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [];
  if (!m || octets.some((o) => o > 255))
    throw new UserError(`--subnet ${cidr}: expected a /24 like 10.213.7.0/24`);
  const [a, b] = octets as [number, number, number];
  const isPrivate = a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  if (!isPrivate)
    throw new UserError(`--subnet ${cidr}: must be in a private range (10/8, 172.16/12, 192.168/16)`);
  const prefix = octets.join('.');
  return { prefix, cidr };
}

/** /24 prefixes that already have an address or route on this host (ours or anyone's). */
async function prefixesInUse(): Promise<Set<string>> {
  const used = new Set<string>();
  const text = `${await run('ip', ['-4', '-o', 'addr', 'show'])}\n${await run('ip', ['-4', 'route', 'show'])}`;
  for (const m of text.matchAll(/\b(\d+\.\d+\.\d+)\.\d+(?:\/(\d+))?/g)) {
    const bits = Number(m[2] ?? 32);
    if (bits >= 24) used.add(m[1] as string);
  }
  return used;
}

/** Who holds a claim: the cluster's name and its state directory (names are unique per state directory). */
const claimOwner = (cluster: string) => `${cluster}\t${stateDir()}`;

/**
 * Claim a /24 for a cluster by creating `<claims>/<prefix>` exclusively (the one atomic writer): two
 * `cluster up`s racing each other cannot both win the same file. The file names the owner (cluster and
 * state directory).
 */
export async function claimSubnet(cluster: string, requested?: string): Promise<Subnet> {
  mkdirSync(subnetClaimsDir(), { recursive: true, mode: 0o755 });
  const inUse = await prefixesInUse();
  const candidates = requested
    ? [parseSubnet(requested)]
    : Array.from({ length: 254 }, (_, i) => ({
        prefix: `${DEFAULT_POOL_PREFIX}.${i + 1}`,
        cidr: `${DEFAULT_POOL_PREFIX}.${i + 1}.0/24`,
      }));
  for (const s of candidates) {
    if (inUse.has(s.prefix)) {
      if (requested) throw new UserError(`--subnet ${requested} is already in use on this host`);
      continue;
    }
    try {
      // Published whole and only if absent: a claim file always names its owner.
      writeFileAtomicSync(join(subnetClaimsDir(), s.prefix), `${claimOwner(cluster)}\n`, { exclusive: true });
      return s;
    } catch (err) {
      if (!(err instanceof OutputExistsError)) throw err;
      if (requested) throw new UserError(`--subnet ${requested} is claimed by another faultline cluster`);
    }
  }
  throw new UserError(
    `no free /24 left in ${DEFAULT_POOL_PREFIX}.0.0/16; remove old clusters or pass --subnet`,
  );
}

function releaseSubnet(prefix: string): void {
  try {
    unlinkSync(join(subnetClaimsDir(), prefix));
  } catch {}
}

export function claimedSubnets(): string[] {
  try {
    return readdirSync(subnetClaimsDir());
  } catch {
    return [];
  }
}

/** Release every claim this cluster holds (a crashed `cluster up` may have left one without state). */
export function releaseSubnetsOf(cluster: string): void {
  for (const prefix of claimedSubnets()) {
    try {
      if (readFileSync(join(subnetClaimsDir(), prefix), 'utf8').trim() === claimOwner(cluster))
        releaseSubnet(prefix);
    } catch {}
  }
}
