import { i32 } from './arena.ts';
import { type EdgeList, PROCESS, type RealtimeOrder } from './graph.ts';
import { FAIL, OK, type TxnHistory } from './txns.ts';

/**
 * Session order: each `ok` txn of a process precedes that process's next `ok` txn.
 */
export function addProcessEdges(h: TxnHistory, edges: EdgeList): void {
  const last = new Map<number, number>();
  for (let t = 0; t < h.n; t++) {
    if (h.status[t] !== OK || h.process[t]! < 0) continue;
    const p = h.process[t]!;
    const prev = last.get(p);
    if (prev !== undefined) edges.add(prev, t, PROCESS);
    last.set(p, t);
  }
}

/**
 * Realtime order ("a completed before b was invoked") in O(n) edges. Instead of Elle's transitive
 * reduction, which costs O(n·concurrency) edges, the `ok` completions since the last invocation share
 * a time vertex; time vertices form a chain in history order; a txn points at its completion's time
 * vertex and the latest time vertex before an invocation points at the invoked txn. Reachability
 * between txns is exactly the realtime order, so SCCs are unchanged; a path through time vertices is
 * reported as one realtime step.
 *
 * A failed txn is left out: it is not part of the serialization graph (it gets no data or process
 * edge, and its completion is not ok), so an edge into it could only make it a sink no cycle passes
 * through. A third of a loaded history's txns fail; they were a sixth of its realtime edges.
 *
 * The edges are regular enough to be described instead of listed, and {@link buildCsr} writes them
 * straight into the graph (a list of three edges per txn cost as much memory as the data edges):
 * time vertex `n + x` points at the txns `invoked[firstInvoked[x]]` .. `invoked[firstInvoked[x + 1] - 1]`
 * (invoked while it was the latest), then at the next time vertex; txn `t` points at its completion's
 * time vertex `completion[t]` (-1: none). Each vertex's realtime edges come after its data edges, in
 * that order.
 */
export function realtimeOrder(h: TxnHistory): RealtimeOrder {
  const completed = completionsInOrder(h);
  const completion = i32(h.n).fill(-1);
  const invoked = i32(h.n);
  const firstInvoked = i32(completed.length + 1);
  let x = 0;
  let c = 0;
  let i = 0;
  // Txns are in invocation order; merge them with completions by event index. The completions since
  // the last invocation share one time vertex: a vertex of its own for each but the last would point at
  // no txn, only at the next time vertex, so sharing reaches exactly the same txns (a third of the ok
  // completions of a 10-client history follow another with no invocation between). A failed txn's
  // invocation is not one: nothing points at it.
  for (let t = 0; t < h.n; t++) {
    if (h.status[t] === FAIL) continue;
    const invokedAt = h.invokeIndex[t]!;
    if (c < completed.length && h.completeIndex[completed[c]!]! < invokedAt) {
      do completion[completed[c++]!] = h.n + x;
      while (c < completed.length && h.completeIndex[completed[c]!]! < invokedAt);
      firstInvoked[x++] = i;
    }
    invoked[i++] = t;
  }
  // Completions after the last invocation precede nothing: they get no time vertex.
  firstInvoked[x] = i;
  return {
    count: x,
    completion,
    invoked: invoked.subarray(0, i),
    firstInvoked: firstInvoked.subarray(0, x + 1),
  };
}

/**
 * The ok txns ordered by completion event index. Listed in invocation order first, they are nearly in
 * completion order already: a txn completes soon after it is invoked, so each is out of place by about
 * the number of txns running beside it. An insertion sort then costs one pass plus that displacement,
 * where a bucket per event index wrote and scanned an array of twice the txns; a history whose
 * completions stray further (past a budget of 64 moves per txn) is sorted instead.
 */
function completionsInOrder(h: TxnHistory): Int32Array {
  const { n, status, completeIndex } = h;
  let count = 0;
  for (let t = 0; t < n; t++) if (status[t] === OK && !Number.isNaN(completeIndex[t]!)) count++;
  // From the check's arena: given-back pages already mapped, where fresh ones would each fault.
  const out = i32(count);
  let i = 0;
  for (let t = 0; t < n; t++) if (status[t] === OK && !Number.isNaN(completeIndex[t]!)) out[i++] = t;
  if (!insertionSorted(out, completeIndex, 64 * count + 1024))
    out.sort((a, b) => completeIndex[a]! - completeIndex[b]!);
  return out;
}

/** Sort `a` by `key[a[i]]` in place by insertion, unless that takes more than `budget` moves: whether it did. */
export function insertionSorted(a: Int32Array, key: ArrayLike<number>, budget: number): boolean {
  for (let i = 1; i < a.length; i++) {
    const x = a[i]!;
    const kx = key[x]!;
    let j = i - 1;
    if (key[a[j]!]! <= kx) continue;
    do {
      // Out of budget: x fills the gap the moves left, so `a` holds the same txns for the fallback.
      if (--budget < 0) {
        a[j + 1] = x;
        return false;
      }
      a[j + 1] = a[j]!;
      j--;
    } while (j >= 0 && key[a[j]!]! > kx);
    a[j + 1] = x;
  }
  return true;
}
