import type { RefOp } from './reference-linearizability.ts';

/**
 * The catalogue checkers' verdicts restated from their definitions, with plain loops over the ops and no
 * shared code, for small histories. Real time is event order: op A precedes op B when A completed
 * before B was invoked. An op whose outcome is unknown (info) may have happened or not.
 */
export type Verdict = true | false | 'unknown';

const key = (v: unknown) => JSON.stringify(v ?? null);
const ok = (op: RefOp) => op.type === 'ok';
const precedes = (a: RefOp, b: RefOp) => a.ret !== null && a.type !== 'info' && a.ret < b.call;

/** The ok op of the given functions that completed last: the "final" read. */
function last(ops: readonly RefOp[], fs: readonly string[]): RefOp | null {
  let out: RefOp | null = null;
  for (const op of ops)
    if (fs.includes(op.f) && ok(op) && (out === null || (op.ret as number) > (out.ret as number))) out = op;
  return out;
}

/**
 * set: an element whose add was acknowledged before the final read began must be in it (lost otherwise);
 * an element in it that no add attempted is unexpected. No ok read: unknown.
 */
export function referenceSet(ops: readonly RefOp[]): Verdict {
  const final = last(ops, ['read']);
  if (final === null) return 'unknown';
  const read = new Set(((final.output as unknown[]) ?? []).map(key));
  const adds = ops.filter((op) => op.f === 'add');
  const lost = adds.some((a) => ok(a) && precedes(a, final) && !read.has(key(a.input)));
  const unexpected = [...read].some((v) => !adds.some((a) => key(a.input) === v));
  return !(lost || unexpected);
}

/**
 * total-queue: every enqueue acknowledged before the queue was last seen empty (an ok drain, or an ok
 * dequeue of nothing, was invoked after it completed) must have been taken
 * by an ok dequeue or drain, as a multiset. Missing messages are unknown while crashed consumers can
 * account for them (a drain: any number; a dequeue: one), lost beyond that. A value taken that no
 * enqueue attempted is unexpected. A crashed drain, or nothing taken while something was acked: unknown.
 */
export function referenceTotalQueue(ops: readonly RefOp[]): Verdict {
  const empties = ops.filter(
    (op) =>
      ok(op) && (op.f === 'drain' || (op.f === 'dequeue' && (op.output === null || op.output === undefined))),
  );
  const taken = new Map<string, number>();
  const bump = (m: Map<string, number>, v: unknown) => m.set(key(v), (m.get(key(v)) ?? 0) + 1);
  for (const op of ops) {
    if (!ok(op)) continue;
    if (op.f === 'dequeue' && op.output !== null && op.output !== undefined) bump(taken, op.output);
    if (op.f === 'drain') for (const v of op.output as unknown[]) bump(taken, v);
  }
  const mustTake = new Map<string, number>();
  const attempted = new Set<string>();
  let acked = 0;
  for (const op of ops) {
    if (op.f !== 'enqueue') continue;
    attempted.add(key(op.input));
    if (!ok(op)) continue;
    acked++;
    if (empties.some((e) => precedes(op, e))) bump(mustTake, op.input);
  }
  let missing = 0;
  for (const [v, n] of mustTake) missing += Math.max(0, n - (taken.get(v) ?? 0));
  const unexpected = [...taken.keys()].some((v) => !attempted.has(v));
  const crashedDrains = ops.filter((op) => op.f === 'drain' && op.type === 'info').length;
  const crashedDequeues = ops.filter((op) => op.f === 'dequeue' && op.type === 'info').length;
  if (unexpected) return false;
  if (missing > 0) return crashedDrains > 0 || missing <= crashedDequeues ? 'unknown' : false;
  if (crashedDrains > 0) return 'unknown';
  const takenTotal = [...taken.values()].reduce((a, b) => a + b, 0);
  return takenTotal === 0 && acked > 0 ? 'unknown' : true;
}

/**
 * counter (positive deltas): each ok read must lie between the sum of ok adds that completed before it
 * began and the sum of adds not known to have failed that began before it completed.
 */
export function referenceCounter(ops: readonly RefOp[]): Verdict {
  const adds = ops.filter((op) => op.f === 'add' && op.type !== 'fail');
  for (const r of ops) {
    if (r.f !== 'read' || !ok(r)) continue;
    const lo = adds.filter((a) => precedes(a, r)).reduce((s, a) => s + (a.input as number), 0);
    const hi = adds.filter((a) => a.call < (r.ret as number)).reduce((s, a) => s + (a.input as number), 0);
    if ((r.output as number) < lo || (r.output as number) > hi) return false;
  }
  return true;
}

/** unique-ids: no id acknowledged twice; unknown when none was acknowledged. */
export function referenceUniqueIds(ops: readonly RefOp[]): Verdict {
  const ids = ops.filter((op) => op.f === 'generate' && ok(op)).map((op) => key(op.output));
  if (ids.length === 0) return 'unknown';
  return new Set(ids).size === ids.length;
}
