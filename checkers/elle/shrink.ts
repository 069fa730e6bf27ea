import type { Operation } from '../../src/core/history/operation.ts';
import { valueKey } from '../../src/core/history/values.ts';
import { ddmin } from '../sub-history.ts';

/**
 * An Elle FAIL shrunk to the fewest transactions that still fail the same way (Zeller's ddmin over
 * ops, complements only). A candidate sub-history is the chosen ops alone, with their recorded
 * outcomes: it "still fails" when checking it finds the target anomaly type and no type the whole
 * history did not have. The second condition keeps the core honest: dropping the transaction that
 * appended an element another one read makes that read a garbage read, a failure of another kind, so
 * such a writer stays in the core. What is written out is exactly a sub-history that was checked, so
 * it fails on its own with `faultline check`.
 *
 * Before ddmin, two cheap cuts: the transactions touching the keys of the target's first case (a cycle
 * involves only dependencies on its own keys), then the earliest time prefix that still fails.
 */
export interface ShrunkElle {
  /** The anomaly type the core still shows. */
  type: string;
  ops: Operation[];
  /** Ops considered (client transactions of the history). */
  of: number;
  /** True when no single op of the core can be dropped; false when the check budget ran out first. */
  minimal: boolean;
  checks: number;
}

type Check = (ops: readonly Operation[]) => { anomalyTypes: readonly string[] };

/**
 * `check` runs Elle (with the run's options) on a sub-history; `firstCase` is the op ids of the target
 * type's first case (a cycle's transactions), when it names any. The budget is counted in checks, so the
 * same history shrinks to the same core on any machine; so is the work (ops checked in all), which keeps
 * a large history from spending minutes (each check of n ops costs about n).
 */
export function shrinkElleFailure(
  all: readonly Operation[],
  original: readonly string[],
  type: string,
  firstCase: readonly number[],
  check: Check,
  budgetChecks = 4000,
  budgetWork = 2_000_000,
): ShrunkElle {
  const spent = () => checks >= budgetChecks || work >= budgetWork;
  const allowed = new Set(original);
  let checks = 0;
  let work = 0;
  const fails = (ops: readonly Operation[]): boolean => {
    checks++;
    work += ops.length;
    const types = check(ops).anomalyTypes;
    return types.includes(type) && types.every((t) => allowed.has(t));
  };
  const client = all.filter((op) => op.process !== 'nemesis');
  let set: Operation[] = client;
  // The keys of the first case: every op touching one of them.
  const byId = new Map(client.map((op) => [op.id, op]));
  const keys = new Set<unknown>();
  for (const id of firstCase) for (const k of txnKeys(byId.get(id))) keys.add(k);
  if (keys.size > 0) {
    const onKeys = withWriters(
      client,
      client.filter((op) => txnKeys(op).some((k) => keys.has(k))),
    );
    if (onKeys.length < client.length && fails(onKeys)) set = onKeys;
  }
  // The earliest prefix in completion order that still fails (ops not complete by then dropped).
  const ends = [...new Set(set.map(end))].sort((a, b) => a - b);
  let lo = 0;
  let hi = ends.length - 1;
  const prefix = (i: number) => set.filter((op) => end(op) <= (ends[i] as number));
  while (lo < hi && !spent()) {
    const mid = (lo + hi) >> 1;
    if (fails(prefix(mid))) hi = mid;
    else lo = mid + 1;
  }
  if (lo < ends.length - 1) {
    const p = prefix(lo);
    if (fails(p)) set = p;
  }
  const shrunk = ddmin(set, fails, spent);
  return { type, ops: shrunk.set, of: client.length, minimal: shrunk.minimal, checks };
}

/**
 * `chosen` plus, transitively, every op of `all` that wrote a value a chosen op read: without its writer
 * a read is a garbage read, so a cut by keys that dropped writers could never fail the same way.
 */
function withWriters(all: readonly Operation[], chosen: readonly Operation[]): Operation[] {
  // Keyed as the checker keys values (valueKey): a value read back with its fields in another order still
  // finds its writer.
  const writer = new Map<unknown, Operation>();
  for (const op of all)
    for (const [f, k, v] of mops(op)) if (f === 'append' || f === 'w') writer.set(valueKey([k, v]), op);
  const kept = new Set(chosen);
  const queue = [...chosen];
  while (queue.length > 0) {
    const op = queue.pop() as Operation;
    for (const [f, k, v] of mops(op)) {
      if (f !== 'r' || v === null || v === undefined) continue;
      for (const e of Array.isArray(v) ? v : [v]) {
        const w = writer.get(valueKey([k, e]));
        if (w && !kept.has(w)) {
          kept.add(w);
          queue.push(w);
        }
      }
    }
  }
  return all.filter((op) => kept.has(op));
}

/** A transaction's micro-ops as recorded (the completion's, else the invocation's). */
function mops(op: Operation): unknown[][] {
  const value = Array.isArray(op.output) ? op.output : op.input;
  return Array.isArray(value) ? value.filter((m): m is unknown[] => Array.isArray(m)) : [];
}

/** Where an op ends in the history (its completion, or its invocation when it never completed). */
function end(op: Operation): number {
  return op.completeIndex ?? op.invokeIndex;
}

/** The keys a transaction's micro-ops name. */
function txnKeys(op: Operation | undefined): unknown[] {
  if (!op) return [];
  const value = Array.isArray(op.output) ? op.output : op.input;
  if (!Array.isArray(value)) return [];
  return value.filter((m): m is unknown[] => Array.isArray(m)).map((m) => m[1]);
}
