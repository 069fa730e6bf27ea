import type { Nemesis } from '../../nemeses/types.ts';
import { UserError } from '../util/errors.ts';

/**
 * Finds the nemesis for a fault kind in the nemeses package. Each kind lives in nemeses/<kind>.ts and
 * exports a Nemesis (any export whose `kind` matches). Loaded on first use only.
 */
const cache = new Map<string, Nemesis>();

export async function nemesisFor(kind: string): Promise<Nemesis> {
  const hit = cache.get(kind);
  if (hit) return hit;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(`../../nemeses/${kind}.ts`)) as Record<string, unknown>;
  } catch (err) {
    throw new UserError(`no nemesis for fault kind "${kind}" in this build (${(err as Error).message})`);
  }
  for (const v of Object.values(mod)) {
    const n = (
      typeof v === 'function' && v.length === 0 ? safeCall(v as () => unknown) : v
    ) as Partial<Nemesis> | null;
    if (n && typeof n === 'object' && n.kind === kind && typeof n.inject === 'function') {
      cache.set(kind, n as Nemesis);
      return n as Nemesis;
    }
  }
  throw new UserError(`nemeses/${kind}.ts exports no Nemesis of kind "${kind}"`);
}

function safeCall(fn: () => unknown): unknown {
  try {
    return fn();
  } catch {
    return null;
  }
}
