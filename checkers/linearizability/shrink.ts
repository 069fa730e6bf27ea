import { ddmin } from '../sub-history.ts';
import type { AnyModel } from './model.ts';
import { EncodedOps } from './op-columns.ts';
import { simplifyPartition } from './prepare.ts';
import { PartitionSearch, SLICE_ITERATIONS } from './search.ts';

/**
 * A failing partition shrunk to its core by delta debugging over its ops (Zeller's ddmin, complements
 * only). Dropping an op outright would let the rest fail for another reason (a read whose write was
 * dropped fails on its own), so an op is "dropped" by making its outcome unknown instead: it may take
 * effect at any point after its invocation, or never. The core is a set of ops that cannot be
 * linearized whatever every other op did; no single op can leave it (1-minimal) unless the budget ran
 * out first. The core alone fails too (it has fewer possibilities still), so it is what gets written out.
 * A sub-search that does not finish inside the budget counts as "linearizable", so the core is proven.
 */
export interface ShrunkPartition {
  /** Ids (faultline op ids) of the ops that still fail together. */
  ids: number[];
  /** Their invocations' event indices (the numbering reports use). */
  invokeIndices: number[];
  /** True when no single op of them can be dropped; false when the budget ran out first. */
  minimal: boolean;
  /** Sub-histories checked. */
  checks: number;
}

/**
 * The budget is counted in search iterations, not milliseconds, so the same history shrinks to the same
 * core on any machine and through either checking path (array or stream).
 */
export function shrinkFailingPartition(
  model: AnyModel,
  ops: EncodedOps,
  budgetIterations = 1 << 24,
): ShrunkPartition {
  let left = budgetIterations;
  const spent = () => left <= 0;
  let checks = 0;
  // Ops considered: those invoked before `cut` (the rest deleted; see below).
  let cut = Number.POSITIVE_INFINITY;
  // An op the model bounded (Model.simplify) is taken as recorded, outcome unknown: its bound came from
  // other ops, which a sub-history may not have. Each sub-history is simplified again on its own.
  const recorded = (i: number): number =>
    ops.bounded?.[i] === 1 ? Number.POSITIVE_INFINITY : (ops.ret[i] as number);
  const fails = (idx: readonly number[], before = cut): boolean => {
    checks++;
    const definite = new Set(idx);
    const all = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops.at(i) as NonNullable<ReturnType<EncodedOps['at']>>;
      if (op.call >= before) continue;
      all.push(definite.has(i) && recorded(i) < before ? op : { ...op, ret: Number.POSITIVE_INFINITY });
    }
    const built = EncodedOps.from(all);
    const sub = simplifyPartition(model, built) ?? built;
    const search = new PartitionSearch(model, sub, { greedyReads: true });
    try {
      while (search.status === 'running') {
        if (spent()) return false;
        search.run(SLICE_ITERATIONS);
        left -= SLICE_ITERATIONS;
      }
      return search.status === 'illegal';
    } finally {
      search.release();
    }
  };
  // First a prefix in time: the earliest cut such that the ops invoked before it fail on their own, those
  // still pending at the cut made unknown. Deleting every op invoked after the cut is safe: the definite
  // ops all completed before it, so no later op could have taken effect before them.
  const every = Array.from({ length: ops.length }, (_, i) => i);
  const cuts = [...new Set(every.map(recorded).filter(Number.isFinite))].sort((a, b) => a - b);
  let lo = 0;
  let hi = cuts.length - 1;
  while (lo < hi && !spent()) {
    const mid = (lo + hi) >> 1;
    if (fails(every, (cuts[mid] as number) + 0.5)) hi = mid;
    else lo = mid + 1;
  }
  if (lo < cuts.length && fails(every, (cuts[lo] as number) + 0.5)) cut = (cuts[lo] as number) + 0.5;
  // Ops whose outcome is unknown (already, or pending at the cut) are never part of the core.
  const { set, minimal } = ddmin(
    every.filter((i) => recorded(i) < cut),
    (rest) => fails(rest),
    spent,
  );
  return {
    ids: set.map((i) => ops.id[i] as number),
    invokeIndices: set.map((i) => ops.call[i] as number),
    minimal,
    checks,
  };
}
