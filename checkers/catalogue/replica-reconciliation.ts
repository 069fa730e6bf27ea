import { z } from 'zod';
import type { Operation } from '../../src/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  collectionItems,
  fmt,
  isPlainMap,
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

/** Normalise a dump to key → value-identity. Collections become member → true. */
function normalise(state: unknown, ignore: Set<string>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const items = collectionItems(state);
  if (items !== null) {
    for (const v of items) {
      const k = valueKey(v);
      out.set(typeof k === 'string' ? k : String(k), true);
    }
    return out;
  }
  if (!isPlainMap(state))
    throw new Error(
      `replica-reconciliation: dump ${JSON.stringify(state).slice(0, 80)} is neither a map nor a collection`,
    );
  for (const [k, v] of Object.entries(state)) {
    if (ignore.has(k)) continue;
    const items2 = collectionItems(v);
    // Sets compare regardless of order; lists keep their order (a log diverging in order is divergence).
    out.set(
      k,
      valueKey(items2 !== null && !Array.isArray(v) ? [...items2.map((x) => JSON.stringify(x))].sort() : v),
    );
  }
  return out;
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
    const norm = fs.dumps.map((d) => ({ replica: d.replica, op: d.op, m: normalise(d.state, ignore) }));
    const anomalies: Anomaly[] = [];
    const divergentKeys = new Set<string>();
    let pairsCompared = 0;
    let divergentPairs = 0;
    let keysCompared = 0;
    for (let i = 0; i < norm.length; i++) {
      for (let j = i + 1; j < norm.length; j++) {
        const a = norm[i] as (typeof norm)[number];
        const b = norm[j] as (typeof norm)[number];
        pairsCompared++;
        const diff: string[] = [];
        for (const [k, v] of a.m) {
          keysCompared++;
          if (!b.m.has(k) || b.m.get(k) !== v) diff.push(k);
        }
        for (const k of b.m.keys()) if (!a.m.has(k)) diff.push(k);
        if (diff.length === 0) continue;
        divergentPairs++;
        const shown = diff.map((k) => (k.startsWith('\u0000') ? k.slice(1) : k));
        for (const k of shown) divergentKeys.add(k);
        pushCapped(anomalies, {
          type: 'divergent',
          explanation: `${a.replica} and ${b.replica} differ on ${diff.length} key${diff.length === 1 ? '' : 's'}: ${sample(shown, 10).join(', ')}${diff.length > 10 ? ' …' : ''}`,
          ops: [a.op, b.op].filter((x): x is number => x !== null),
          replicas: [a.replica, b.replica],
          keys: sample(shown, 100),
        });
      }
    }
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
