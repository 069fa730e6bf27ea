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
 * account for them (a drain: any number; a dequeue: one), lost beyond that. A drain cut off whose
 * info completion lists elements (and was not invoked with a list) took those, and perhaps one more: a
 * crashed dequeue. A value taken that no enqueue attempted is unexpected. A crashed drain that lists
 * nothing, or nothing taken while something was acked: unknown.
 */
export function referenceTotalQueue(ops: readonly RefOp[]): Verdict {
  const empties = ops.filter(
    (op) =>
      ok(op) && (op.f === 'drain' || (op.f === 'dequeue' && (op.output === null || op.output === undefined))),
  );
  const taken = new Map<string, number>();
  const bump = (m: Map<string, number>, v: unknown) => m.set(key(v), (m.get(key(v)) ?? 0) + 1);
  const cut = (op: RefOp) =>
    op.f === 'drain' &&
    op.type === 'info' &&
    op.ret !== null &&
    Array.isArray(op.output) &&
    !Array.isArray(op.input);
  for (const op of ops) {
    if (cut(op)) for (const v of op.output as unknown[]) bump(taken, v);
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
  const crashedDrains = ops.filter((op) => op.f === 'drain' && op.type === 'info' && !cut(op)).length;
  const crashedDequeues = ops.filter((op) => (op.f === 'dequeue' && op.type === 'info') || cut(op)).length;
  if (unexpected) return false;
  if (missing > 0) return crashedDrains > 0 || missing <= crashedDequeues ? 'unknown' : false;
  if (crashedDrains > 0) return 'unknown';
  const takenTotal = [...taken.values()].reduce((a, b) => a + b, 0);
  return takenTotal === 0 && acked > 0 ? 'unknown' : true;
}

/**
 * counter: each ok read must lie between what surely happened before it and what may have. An add that
 * completed ok before the read began surely took effect; one not known to have failed that began before
 * the read completed may have. The lowest the counter can read: the sure increments and every possible
 * decrement; the highest: every possible increment and the sure decrements.
 */
export function referenceCounter(ops: readonly RefOp[]): Verdict {
  const adds = ops.filter((op) => op.f === 'add' && op.type !== 'fail');
  const sum = (xs: RefOp[]) => xs.reduce((s, a) => s + (a.input as number), 0);
  for (const r of ops) {
    if (r.f !== 'read' || !ok(r)) continue;
    const sure = adds.filter((a) => ok(a) && precedes(a, r));
    const possible = adds.filter((a) => a.call < (r.ret as number));
    const up = (xs: RefOp[]) => xs.filter((a) => (a.input as number) >= 0);
    const down = (xs: RefOp[]) => xs.filter((a) => (a.input as number) < 0);
    const lo = sum(up(sure)) + sum(down(possible));
    const hi = sum(up(possible)) + sum(down(sure));
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

/**
 * set-full (Jepsen's definitions, element by element over every read): an element's attempts begin at its
 * first add invocation; a read counts for it when the read completed after that. The element is known
 * from its first ok add completion or the first counting read that holds it, whichever came first. With
 * the last counting read holding it (present) and the last lacking it (absent), both by invocation: stable
 * when present came after absent (or nothing lacked it); lost when it was known before absent was
 * invoked and absent came after present (or nothing held it); never read otherwise. Stale: stable, and a
 * read invoked after it was known lacked it. Invalid: anything lost, a read listing an element twice, an
 * element no add attempted, or (linearizable) anything stale. Unknown when nothing is stable.
 */
export function referenceSetFull(ops: readonly RefOp[], linearizable: boolean): Verdict {
  const adds = ops.filter((op) => op.f === 'add');
  const reads = ops.filter((op) => op.f === 'read' && ok(op) && op.ret !== null);
  const elements = [...new Set(adds.map((a) => key(a.input)))];
  const holds = (r: RefOp, e: string) => (r.output as unknown[]).some((v) => key(v) === e);
  let lost = 0;
  let stable = 0;
  let stale = 0;
  for (const e of elements) {
    const mine = adds.filter((a) => key(a.input) === e);
    const begun = Math.min(...mine.map((a) => a.call));
    const counting = reads.filter((r) => (r.ret as number) > begun);
    const known = Math.min(
      ...mine.filter((a) => ok(a) && a.ret !== null).map((a) => a.ret as number),
      ...counting.filter((r) => holds(r, e)).map((r) => r.ret as number),
    );
    const lastBy = (rs: RefOp[]) =>
      rs.reduce<RefOp | null>((m, r) => (m === null || r.call > m.call ? r : m), null);
    const present = lastBy(counting.filter((r) => holds(r, e)));
    const absent = lastBy(counting.filter((r) => !holds(r, e)));
    if (present !== null && (absent === null || absent.call < present.call)) {
      stable++;
      if (absent !== null && absent.call > known) stale++;
    } else if (Number.isFinite(known) && absent !== null && absent.call > known) lost++;
  }
  const listed = reads.flatMap((r) => (r.output as unknown[]).map(key));
  const duplicated = reads.some(
    (r) => new Set((r.output as unknown[]).map(key)).size < (r.output as unknown[]).length,
  );
  const unexpected = listed.some((v) => !elements.includes(v));
  if (lost > 0 || duplicated || unexpected || (linearizable && stale > 0)) return false;
  return stable === 0 ? 'unknown' : true;
}

/**
 * queue (unordered): each ok dequeue of a value must be matched with its own enqueue of that value, not
 * known to have failed and invoked before the dequeue completed. Searched over every assignment, not
 * replayed in order. No ok dequeue of a value: unknown.
 */
export function referenceQueue(ops: readonly RefOp[]): Verdict {
  const enqueues = ops.filter((op) => op.f === 'enqueue' && op.type !== 'fail');
  const dequeues = ops.filter(
    (op) => op.f === 'dequeue' && ok(op) && op.output !== null && op.output !== undefined,
  );
  const used = new Set<RefOp>();
  const assign = (i: number): boolean => {
    const d = dequeues[i];
    if (d === undefined) return true;
    for (const e of enqueues) {
      if (used.has(e) || key(e.input) !== key(d.output) || e.call > (d.ret as number)) continue;
      used.add(e);
      if (assign(i + 1)) return true;
      used.delete(e);
    }
    return false;
  };
  if (!assign(0)) return false;
  return dequeues.length === 0 ? 'unknown' : true;
}

/**
 * long-fork: writes are single `[w k v]` micro-ops, reads read a group of keys. Two ok reads of the same
 * keys fork when each saw (non-nil) a key the other saw as nil, pair by pair. No fork: unknown when a key
 * was written by two ops that did not fail, when nothing was read, or when a read spans more than 30 keys.
 */
export function referenceLongFork(ops: readonly RefOp[]): Verdict {
  const mopsOf = (op: RefOp) => (op.type === 'ok' ? op.output : op.input) as [string, unknown, unknown][];
  const writes = ops.filter((op) => {
    const m = mopsOf(op);
    return op.type !== 'fail' && m.length === 1 && m[0]?.[0] === 'w';
  });
  const reads = ops.filter((op) => ok(op) && mopsOf(op).length > 0 && mopsOf(op).every((m) => m[0] === 'r'));
  const group = (op: RefOp) =>
    JSON.stringify(
      mopsOf(op)
        .map((m) => String(m[1]))
        .sort(),
    );
  const saw = (op: RefOp, k: string) => mopsOf(op).some((m) => String(m[1]) === k && m[2] !== null);
  const keysOf = (op: RefOp) => mopsOf(op).map((m) => String(m[1]));
  for (const a of reads)
    for (const b of reads) {
      if (a === b || group(a) !== group(b) || keysOf(a).length > 30) continue;
      const ks = keysOf(a);
      if (ks.some((k) => saw(a, k) && !saw(b, k)) && ks.some((k) => saw(b, k) && !saw(a, k))) return false;
    }
  const perKey = new Map<string, number>();
  for (const w of writes) {
    const k = String(mopsOf(w)[0]?.[1]);
    perKey.set(k, (perKey.get(k) ?? 0) + 1);
  }
  const twice = [...perKey.values()].some((n) => n > 1);
  return twice || reads.length === 0 || reads.some((r) => keysOf(r).length > 30) ? 'unknown' : true;
}

/**
 * no-lost-ack, over a final read of a map of single values: unknown without an ok final read, or when a
 * write other than a timed-out one completed after it began (not quiescent). An acknowledged write is lost
 * when its key is missing, or holds another value that no write (not failed) of that value to that key
 * could have put there after it: one that had completed before it was invoked could not. A failed write
 * whose value its key holds, and that no other write (not failed) wrote, was not rejected. No
 * acknowledged write: unknown.
 */
export function referenceNoLostAck(ops: readonly RefOp[]): Verdict {
  const final = last(ops, ['final-read']);
  if (final === null) return 'unknown';
  const writes = ops.filter((op) => op.f === 'write');
  if (writes.some((w) => w.type !== 'info' && w.ret !== null && w.ret > final.call)) return 'unknown';
  const state = final.output as Record<string, unknown>;
  const pair = (op: RefOp) => op.input as [string, unknown];
  const lost = writes.some((w) => {
    if (!ok(w)) return false;
    const [k, v] = pair(w);
    if (!(k in state)) return true;
    const cur = state[k];
    if (key(cur) === key(v)) return false;
    const overwrote = writes.some(
      (o) =>
        o.type !== 'fail' &&
        key(pair(o)[0]) === key(k) &&
        key(pair(o)[1]) === key(cur) &&
        (o.type === 'info' || o.ret === null || o.ret > w.call),
    );
    return !overwrote;
  });
  const rejectedPresent = writes.some((w) => {
    if (w.type !== 'fail') return false;
    const [k, v] = pair(w);
    const alsoWritten = writes.some((o) => o.type !== 'fail' && key(o.input) === key(w.input));
    return !alsoWritten && k in state && key(state[k]) === key(v);
  });
  if (lost || rejectedPresent) return false;
  return writes.some(ok) ? true : 'unknown';
}

/**
 * session, with the store's versions: per process (a session), in the order it invoked its ops, no ok read
 * may see a version below one an earlier ok read of that session saw (monotonic reads), or below the
 * version of that session's own earlier ok write (read your writes). No ok read: unknown.
 */
export function referenceSession(ops: readonly RefOp[]): Verdict {
  const version = (op: RefOp) => (op.output as { version: number }).version;
  let reads = 0;
  for (const p of new Set(ops.map((op) => op.process))) {
    const mine = ops.filter((op) => op.process === p && ok(op)).sort((a, b) => a.call - b.call);
    for (const [i, r] of mine.entries()) {
      if (r.f !== 'read') continue;
      reads++;
      const earlier = mine.slice(0, i);
      if (earlier.some((e) => version(e) > version(r))) return false;
    }
  }
  return reads === 0 ? 'unknown' : true;
}
