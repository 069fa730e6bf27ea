import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  isPlainMap,
  MAX_ANOMALIES,
  parseOptions,
  pushCapped,
  result,
  sample,
  valueKey,
} from './common.ts';
import { finalStateSourceSchema, finalStates } from './final-state.ts';

/**
 * Reconciliation across replicas (oracle pattern 13): at quiescence, dump every replica and diff them
 * pairwise. Map dumps are compared key by key (the divergent keys are named); collection dumps member by
 * member (order ignored). Fewer than two dumps is unknown: there is nothing to reconcile.
 */
export const replicaReconciliationOptionsSchema = z.strictObject({
  ...finalStateSourceSchema,
  /** Keys the plan declares as legitimately per-replica (node-local stats, timestamps). */
  ignoreKeys: z.array(z.string()).default([]),
});
export type ReplicaReconciliationOptions = z.input<typeof replicaReconciliationOptionsSchema>;

const SCOPE =
  'Compares replicas with each other only: a value every replica lost alike, and divergence that healed before the dump, are invisible; dumps taken before convergence give false alarms.';

/**
 * A dump seen as key → comparable value. Map dumps are read in place (no copy: dumps can hold millions
 * of keys); collection dumps become a set of members, each member a key with value `true`.
 */
interface DumpView {
  size: number;
  has(k: string): boolean;
  /**
   * Comparable form ({@link valueKey}): object keys and set members in any order compare equal; lists
   * keep their order (a log diverging in order is divergence).
   */
  canon(k: string): unknown;
  keys(): Iterable<string>;
}

function view(state: unknown, ignore: Set<string>): DumpView {
  const items = collectionItems(state);
  if (items !== null) {
    const members = new Set<string>();
    for (const v of items) {
      const k = valueKey(v);
      members.add(typeof k === 'string' ? k : String(k));
    }
    return { size: members.size, has: (k) => members.has(k), canon: () => true, keys: () => members };
  }
  if (!isPlainMap(state)) {
    throw new Error(
      `replica-reconciliation: dump ${JSON.stringify(state).slice(0, 80)} is neither a map nor a collection`,
    );
  }
  const obj = state;
  // One Object.keys per dump: for-in over a million-key (dictionary-mode) object is far slower.
  const all = Object.keys(obj);
  const keys = ignore.size === 0 ? all : all.filter((k) => !ignore.has(k));
  return {
    size: keys.length,
    has: (k) => !ignore.has(k) && Object.hasOwn(obj, k),
    canon: (k) => valueKey(obj[k]),
    keys: () => keys,
  };
}

/** Keys on which a and b differ: O(|a| + |b|), without copying either. */
function diffViews(a: DumpView, b: DumpView): string[] {
  const diff: string[] = [];
  let shared = 0;
  for (const k of a.keys()) {
    if (!b.has(k)) {
      diff.push(k);
      continue;
    }
    shared++;
    if (a.canon(k) !== b.canon(k)) diff.push(k);
  }
  if (shared < b.size) for (const k of b.keys()) if (!a.has(k)) diff.push(k);
  return diff;
}

function differsAt(a: DumpView, b: DumpView, k: string): boolean {
  const ha = a.has(k);
  if (ha !== b.has(k)) return true;
  return ha && a.canon(k) !== b.canon(k);
}

export const replicaReconciliationChecker: Checker<ReplicaReconciliationOptions> = {
  name: 'replica-reconciliation',
  check(ops: readonly Operation[], rawOptions: ReplicaReconciliationOptions) {
    const o = parseOptions('replica-reconciliation', replicaReconciliationOptionsSchema, rawOptions);
    const fs = finalStates(ops, o);
    if (fs.dumps.length < 2) {
      return result(
        'replica-reconciliation',
        'unknown',
        `replica-reconciliation: ${fs.dumps.length} replica dump${fs.dumps.length === 1 ? '' : 's'} (${fs.source}): need at least 2`,
        SCOPE,
        [],
        { opsConsumed: fs.dumps.length },
      );
    }
    if (fs.notQuiescent.length > 0) {
      return result(
        'replica-reconciliation',
        'unknown',
        `replica-reconciliation: ${fmt(fs.notQuiescent.length)} ops completed after the dumps began: not quiescent`,
        SCOPE,
        [],
        { opsConsumed: fs.dumps.length, notQuiescent: fs.notQuiescent.slice(0, 16) },
      );
    }
    const ignore = new Set(o.ignoreKeys);
    const views = fs.dumps.map((d) => ({ replica: d.replica, op: d.op, v: view(d.state, ignore) }));
    // Every replica is diffed in full against the first; a key on which two other replicas differ must
    // differ from the first on at least one of them, so the remaining pairs only look at those keys.
    const first = views[0] as (typeof views)[number];
    const pairDiffs: { a: (typeof views)[number]; b: (typeof views)[number]; keys: string[] }[] = [];
    const suspects = new Set<string>();
    let keysCompared = 0;
    for (let j = 1; j < views.length; j++) {
      const b = views[j] as (typeof views)[number];
      const keys = diffViews(first.v, b.v);
      keysCompared += first.v.size + b.v.size;
      for (const k of keys) suspects.add(k);
      pairDiffs.push({ a: first, b, keys });
    }
    for (let i = 1; i < views.length; i++) {
      for (let j = i + 1; j < views.length; j++) {
        const a = views[i] as (typeof views)[number];
        const b = views[j] as (typeof views)[number];
        keysCompared += suspects.size;
        pairDiffs.push({ a, b, keys: [...suspects].filter((k) => differsAt(a.v, b.v, k)) });
      }
    }
    const anomalies: Anomaly[] = [];
    const divergentKeys = new Set<string>();
    let divergentPairs = 0;
    for (const { a, b, keys } of pairDiffs) {
      if (keys.length === 0) continue;
      divergentPairs++;
      const shown = keys.map((k) => (k.startsWith('\u0000') ? k.slice(1) : k));
      for (const k of shown) divergentKeys.add(k);
      if (anomalies.length < MAX_ANOMALIES)
        pushCapped(anomalies, {
          type: 'divergent',
          explanation: `${a.replica} and ${b.replica} differ on ${keys.length} key${keys.length === 1 ? '' : 's'}: ${sample(shown, 10).join(', ')}${keys.length > 10 ? ` (and ${keys.length - 10} more)` : ''}`,
          ops: [a.op, b.op].filter((x): x is number => x !== null),
          replicas: [a.replica, b.replica],
          keys: sample(shown, 100),
        });
    }
    const pairsCompared = pairDiffs.length;
    return result(
      'replica-reconciliation',
      divergentPairs === 0,
      `replica-reconciliation: ${fs.dumps.length} replica dumps (${fs.source}), ${pairsCompared} pairs, ${fmt(keysCompared)} key comparisons: ${divergentPairs} divergent pairs, ${fmt(divergentKeys.size)} divergent keys`,
      SCOPE,
      anomalies,
      {
        opsConsumed: fs.dumps.length,
        replicas: fs.dumps.map((d) => d.replica),
        pairsCompared,
        divergentPairs,
        divergentKeys: sample([...divergentKeys], 100),
      },
    );
  },
};
