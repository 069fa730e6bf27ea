import type { Rng } from '../src/core/generator/rng.ts';

/**
 * Target selection, the one selector every fault goes through, with Jepsen's node-spec names: one,
 * minority, majority, minority-third, all, primaries, one node's name, an explicit node list, or nothing
 * (a random non-empty subset). Unknown node names are refused, never dropped; a selector a cluster is too
 * small for (a minority of 2, a minority third of 3) is an error, never an empty target list.
 */
export type TargetSelector =
  | 'one'
  | 'minority'
  | 'majority'
  | 'minority-third'
  | 'all'
  | 'primaries'
  | 'random-subset'
  | readonly string[];

export const TARGET_SELECTORS = [
  'one',
  'minority',
  'majority',
  'minority-third',
  'all',
  'primaries',
  'random-subset',
] as const;

/** The largest number strictly below half: the size of a minority. */
export function minoritySize(n: number): number {
  return Math.floor((n - 1) / 2);
}

/** The smallest number strictly above half. */
export function majoritySize(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** Jepsen's minority-third: the largest number strictly below a third ((n - 1) / 3, rounded down). */
export function minorityThirdSize(n: number): number {
  return Math.floor((n - 1) / 3);
}

export class TargetError extends Error {
  override readonly name = 'TargetError';
}

/** Whether `selector` names a selector or nodes this cluster has (for validating a plan up front). */
export function checkSelector(selector: unknown, nodes: readonly string[]): string | null {
  if (selector === undefined) return null;
  if (Array.isArray(selector)) {
    const unknown = selector.filter((s) => !nodes.includes(String(s)));
    return unknown.length > 0
      ? `unknown target node(s): ${unknown.join(', ')} (the cluster has ${nodes.join(', ')})`
      : null;
  }
  if (typeof selector !== 'string') return `a target is a selector or a list of node names`;
  if (nodes.includes(selector) || (TARGET_SELECTORS as readonly string[]).includes(selector)) {
    if (selector === 'minority' && minoritySize(nodes.length) === 0)
      return `a cluster of ${nodes.length} node(s) has no minority`;
    if (selector === 'minority-third' && minorityThirdSize(nodes.length) === 0)
      return `a cluster of ${nodes.length} node(s) has no minority third`;
    return null;
  }
  return `unknown target "${selector}" (a selector: ${TARGET_SELECTORS.join(', ')}; or a node: ${nodes.join(', ')})`;
}

/**
 * Resolve a selector against the cluster's node names. `primaries` must be supplied by the caller (the DB
 * adapter reports the current leader live): a stale or guessed leader would make "leader isolation" a lie.
 */
export function selectTargets(
  selector: TargetSelector | string | undefined,
  nodes: readonly string[],
  rng: Rng,
  primaries?: readonly string[],
): string[] {
  if (nodes.length === 0) throw new TargetError('no nodes to target');
  if (Array.isArray(selector)) {
    const unknown = selector.filter((s) => !nodes.includes(s));
    if (unknown.length > 0) throw new TargetError(`unknown target node(s): ${unknown.join(', ')}`);
    if (selector.length === 0) throw new TargetError('explicit target list is empty');
    return [...new Set(selector as readonly string[])];
  }
  if (typeof selector === 'string' && nodes.includes(selector)) return [selector];
  const mixed = rng.shuffle(nodes);
  switch (selector ?? 'random-subset') {
    case 'one':
      return mixed.slice(0, 1);
    case 'minority': {
      const k = minoritySize(nodes.length);
      if (k === 0) throw new TargetError(`a cluster of ${nodes.length} node(s) has no minority`);
      return mixed.slice(0, k);
    }
    case 'majority':
      return mixed.slice(0, majoritySize(nodes.length));
    case 'minority-third': {
      const k = minorityThirdSize(nodes.length);
      if (k === 0) throw new TargetError(`a cluster of ${nodes.length} node(s) has no minority third`);
      return mixed.slice(0, k);
    }
    case 'all':
      return [...nodes];
    case 'primaries': {
      if (!primaries || primaries.length === 0)
        throw new TargetError('target "primaries" needs the current primaries from the DB adapter');
      const unknown = primaries.filter((p) => !nodes.includes(p));
      if (unknown.length > 0) throw new TargetError(`primary not in the cluster: ${unknown.join(', ')}`);
      return [...new Set(primaries)];
    }
    case 'random-subset':
      return mixed.slice(0, 1 + rng.int(nodes.length));
    default:
      throw new TargetError(
        `unknown target selector "${String(selector)}" (expected ${TARGET_SELECTORS.join(', ')} or a node list)`,
      );
  }
}
