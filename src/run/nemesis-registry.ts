import type { Nemesis } from '../../nemeses/types.ts';
import { UserError } from '../util/errors.ts';

/**
 * Finds the nemesis for a fault kind in the nemeses package: each kind lives in nemeses/<kind>.ts and
 * exports a Nemesis value whose `kind` matches (e.g. `partitionNemesis` in nemeses/partition.ts).
 * Loaded on first use only, so runs without faults never load the nemeses.
 */
const cache = new Map<string, Nemesis>();
const KIND = /^[a-z][a-z0-9-]*$/;

export async function nemesisFor(kind: string): Promise<Nemesis> {
  const hit = cache.get(kind);
  if (hit) return hit;
  if (!KIND.test(kind)) throw new UserError(`invalid fault kind "${kind}"`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(`../../nemeses/${kind}.ts`)) as Record<string, unknown>;
  } catch (err) {
    throw new UserError(`no nemesis for fault kind "${kind}" in this build (${(err as Error).message})`);
  }
  for (const v of Object.values(mod)) {
    const n = v as Partial<Nemesis> | null;
    if (n && typeof n === 'object' && n.kind === kind && typeof n.inject === 'function') {
      cache.set(kind, n as Nemesis);
      return n as Nemesis;
    }
  }
  throw new UserError(`nemeses/${kind}.ts exports no Nemesis of kind "${kind}"`);
}
