import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import type { Anomaly, Checker } from '../types.ts';
import {
  CheckerOptionsError,
  collectionItems,
  fmt,
  isClient,
  isPlainMap,
  mapValues,
  parseOptions,
  result,
  valueKey,
} from './common.ts';

/**
 * Final-state dumps, shared by no-lost-ack, exactly-once, the invariant checker and replica
 * reconciliation. A dump comes either from options (`finalState` for one, `replicas` for one per node)
 * or from the history: the last ok op per node whose f is `finalReadF` (default "final-read").
 *
 * Quiescence is checked where the history can show it: no client op other than the final reads may
 * complete (ok or fail) after the first final read was invoked. Ops that timed out (info) cannot be
 * placed and are reported, not counted; background work and convergence are the plan's job to verify.
 */
export const finalStateSourceSchema = {
  finalState: z.unknown().optional(),
  replicas: z.record(z.string(), z.unknown()).optional(),
  finalReadF: z.string().default('final-read'),
};

export interface FinalDump {
  replica: string;
  state: unknown;
  /** The op that produced it, when it came from the history. */
  op: number | null;
}

export interface FinalStates {
  dumps: FinalDump[];
  /** Where the dumps came from, for evidence lines. */
  source: string;
  /** Client ops (not final reads) that completed after the first final read began. */
  notQuiescent: number[];
  /** Ops still open or timed out when the dumps were taken. */
  inDoubt: number;
  /** Final-read ops in the history (every outcome: each was looked at), 0 when the dumps came from options. */
  finalReads: number;
}

export function finalStates(
  ops: readonly Operation[],
  o: { finalState?: unknown; replicas?: Record<string, unknown> | undefined; finalReadF: string },
): FinalStates {
  if (o.replicas !== undefined) {
    return {
      dumps: Object.entries(o.replicas).map(([replica, state]) => ({ replica, state, op: null })),
      source: 'replica dumps given in options',
      notQuiescent: [],
      inDoubt: 0,
      finalReads: 0,
    };
  }
  if (o.finalState !== undefined) {
    return {
      dumps: [{ replica: 'final-state', state: o.finalState, op: null }],
      source: 'final state given in options',
      notQuiescent: [],
      inDoubt: 0,
      finalReads: 0,
    };
  }
  const latest = new Map<string, Operation>();
  let firstFinalInvoke = Number.POSITIVE_INFINITY;
  let finalReads = 0;
  for (const op of ops) {
    if (!isClient(op) || op.f !== o.finalReadF) continue;
    finalReads++;
    if (op.invokeIndex < firstFinalInvoke) firstFinalInvoke = op.invokeIndex;
    if (op.type !== 'ok') continue;
    const replica = op.node ?? `process ${String(op.process)}`;
    const prev = latest.get(replica);
    if (prev === undefined || (op.completeIndex ?? 0) > (prev.completeIndex ?? 0)) latest.set(replica, op);
  }
  const notQuiescent: number[] = [];
  let inDoubt = 0;
  if (latest.size > 0) {
    for (const op of ops) {
      if (!isClient(op) || op.f === o.finalReadF) continue;
      if (op.type === 'info') {
        inDoubt++;
        continue;
      }
      if (op.completeIndex !== null && op.completeIndex > firstFinalInvoke) notQuiescent.push(op.invokeIndex);
    }
  }
  return {
    dumps: [...latest.values()].map((op) => ({
      replica: op.node ?? `process ${String(op.process)}`,
      state: op.output,
      op: op.invokeIndex,
    })),
    source: `${latest.size} ok "${o.finalReadF}" op${latest.size === 1 ? '' : 's'}`,
    notQuiescent,
    inDoubt,
    finalReads,
  };
}

/** A dump as a collection of values, if it is one. */
export function dumpItems(state: unknown): Set<unknown> | null {
  const items = collectionItems(state);
  if (items === null) return null;
  const s = new Set<unknown>();
  for (const v of items) s.add(valueKey(v));
  return s;
}

// ---------------------------------------------------------------------------------------------------
// final-state-invariant

/**
 * Built-in invariants usable from a JSON options file; the API also takes a predicate function.
 * `sum` sums numbers in a collection or the values of a map; `unique` wants no repeated member;
 * `non-negative` no negative number; `count` the number of members/keys; `expression` is a JavaScript
 * expression over `state` from the user's own options file.
 */
const invariantSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('sum'), equals: z.number() }),
  z.strictObject({ type: z.literal('unique') }),
  z.strictObject({ type: z.literal('non-negative') }),
  z.strictObject({ type: z.literal('count'), equals: z.number().int() }),
  z.strictObject({ type: z.literal('expression'), expr: z.string().min(1) }),
]);

export type InvariantPredicate = (state: unknown) => boolean | string;

export const finalStateInvariantOptionsSchema = z.strictObject({
  ...finalStateSourceSchema,
  invariant: invariantSchema.optional(),
  predicate: z.custom<InvariantPredicate>((v) => typeof v === 'function').optional(),
  /** A name for the invariant in evidence lines ("supply conserved"). */
  description: z.string().optional(),
});
export type FinalStateInvariantOptions = z.input<typeof finalStateInvariantOptionsSchema>;

function numbersOf(state: unknown): number[] {
  const items = collectionItems(state) ?? (isPlainMap(state) ? mapValues(state) : null);
  if (items === null)
    throw new Error(`final state ${JSON.stringify(state).slice(0, 80)} is neither a collection nor a map`);
  return items.filter((v): v is number => typeof v === 'number');
}

function builtIn(inv: z.infer<typeof invariantSchema>): InvariantPredicate {
  switch (inv.type) {
    case 'sum':
      return (s) => {
        let sum = 0;
        const items = collectionItems(s) ?? (isPlainMap(s) ? mapValues(s) : null);
        if (items === null) throw new Error('final state is neither a collection nor a map');
        for (const v of items) if (typeof v === 'number') sum += v;
        return sum === inv.equals || `sum is ${sum}, expected ${inv.equals}`;
      };
    case 'non-negative':
      return (s) => {
        const neg = numbersOf(s).filter((n) => n < 0);
        return neg.length === 0 || `${neg.length} negative values, e.g. ${neg[0]}`;
      };
    case 'count':
      return (s) => {
        const n = collectionItems(s)?.length ?? (isPlainMap(s) ? Object.keys(s).length : Number.NaN);
        return n === inv.equals || `count is ${n}, expected ${inv.equals}`;
      };
    case 'unique':
      return (s) => {
        const items = collectionItems(s) ?? (isPlainMap(s) ? mapValues(s) : []);
        const seen = new Set<unknown>();
        const dups: unknown[] = [];
        for (const v of items) {
          const k = valueKey(v);
          if (seen.has(k)) dups.push(v);
          seen.add(k);
        }
        return dups.length === 0 || `${dups.length} repeated members, e.g. ${JSON.stringify(dups[0])}`;
      };
    case 'expression': {
      // The expression comes from the user's own options file, like a predicate in a Jepsen test.
      const fn = new Function('state', `return (${inv.expr});`) as (s: unknown) => unknown;
      return (s) => {
        const r = fn(s);
        return typeof r === 'string' ? r : Boolean(r) || `expression ${inv.expr} is false`;
      };
    }
  }
}

export const finalStateInvariantChecker: Checker<FinalStateInvariantOptions> = {
  name: 'final-state-invariant',
  check(ops: readonly Operation[], rawOptions: FinalStateInvariantOptions) {
    const o = parseOptions('final-state-invariant', finalStateInvariantOptionsSchema, rawOptions);
    const predicate = o.predicate ?? (o.invariant ? builtIn(o.invariant) : null);
    if (predicate === null)
      throw new CheckerOptionsError('final-state-invariant: give an invariant (or a predicate)');
    const name = o.description ?? (o.invariant ? JSON.stringify(o.invariant) : 'predicate');
    const fs = finalStates(ops, o);
    const scope =
      'Judges the final dump only: violations that were repaired before the end, and anything the invariant does not mention, are invisible.';
    if (fs.dumps.length === 0) {
      return result(
        'final-state-invariant',
        'unknown',
        `final-state-invariant: no final-state dump (${fs.source})`,
        scope,
        [],
        {
          opsConsumed: 0,
        },
      );
    }
    if (fs.notQuiescent.length > 0) {
      return result(
        'final-state-invariant',
        'unknown',
        `final-state-invariant: ${fmt(fs.notQuiescent.length)} ops completed after the final read began: not quiescent`,
        scope,
        [],
        { opsConsumed: fs.dumps.length, notQuiescent: fs.notQuiescent.slice(0, 16) },
      );
    }
    const anomalies: Anomaly[] = [];
    for (const d of fs.dumps) {
      const r = predicate(d.state);
      if (r !== true) {
        anomalies.push({
          type: 'invariant-violated',
          explanation: `${d.replica}: ${typeof r === 'string' ? r : `${name} does not hold`}`,
          ...(d.op === null ? {} : { ops: [d.op] }),
          replica: d.replica,
        });
      }
    }
    return result(
      'final-state-invariant',
      anomalies.length === 0,
      `final-state-invariant: ${name} over ${fs.dumps.length} final dump${fs.dumps.length === 1 ? '' : 's'} (${fs.source}): fired ${anomalies.length} / passed ${fs.dumps.length - anomalies.length}`,
      scope,
      anomalies,
      {
        opsConsumed: fs.dumps.length,
        dumps: fs.dumps.length,
        violations: anomalies.length,
        inDoubt: fs.inDoubt,
      },
    );
  },
};
