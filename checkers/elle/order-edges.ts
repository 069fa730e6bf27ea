import { i32 } from './arena.ts';
import { type EdgeList, PROCESS, type RealtimeOrder } from './graph.ts';
import { OK, type TxnHistory } from './txns.ts';

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
 * The edges are regular enough to be described instead of listed, and {@link buildCsr} writes them
 * straight into the graph (a list of three edges per txn cost as much memory as the data edges):
 * time vertex `n + x` points at the txns `firstInvoked[x]` .. `firstInvoked[x + 1] - 1` (invoked while it
 * was the latest), then at the next time vertex; txn `t` points at its completion's time vertex
 * `completion[t]` (-1: none). Each vertex's realtime edges come after its data edges, in that order.
 */
export function realtimeOrder(h: TxnHistory): RealtimeOrder {
  const completed = completionsInOrder(h);
  const completion = i32(h.n).fill(-1);
  const firstInvoked = i32(completed.length + 1);
  let x = 0;
  let c = 0;
  // Txns are in invocation order; merge them with completions by event index. The completions since
  // the last invocation share one time vertex: a vertex of its own for each but the last would point at
  // no txn, only at the next time vertex, so sharing reaches exactly the same txns (a third of the ok
  // completions of a 10-client history follow another with no invocation between).
  for (let t = 0; t < h.n; t++) {
    const invokedAt = h.invokeIndex[t]!;
    if (c < completed.length && h.completeIndex[completed[c]!]! < invokedAt) {
      do completion[completed[c++]!] = h.n + x;
      while (c < completed.length && h.completeIndex[completed[c]!]! < invokedAt);
      firstInvoked[x++] = t;
    }
  }
  // Completions after the last invocation precede nothing: they get no time vertex.
  firstInvoked[x] = h.n;
  return { count: x, completion, firstInvoked };
}

/** The ok txns ordered by completion event index: a bucket pass when indices are dense, else a sort. */
function completionsInOrder(h: TxnHistory): Int32Array {
  const done = (t: number) => h.status[t] === OK && !Number.isNaN(h.completeIndex[t]!);
  let count = 0;
  let maxIndex = 0;
  // Whether every completion index (NaN: none) is a non-negative integer, in the same pass.
  let integral = true;
  for (let t = 0; t < h.n; t++) {
    const c = h.completeIndex[t]!;
    if (!Number.isNaN(c) && !(c >= 0 && Number.isInteger(c))) integral = false;
    if (done(t)) {
      count++;
      if (c > maxIndex) maxIndex = c;
    }
  }
  // From the check's arena: given-back pages already mapped, where fresh ones would each fault.
  const out = i32(count);
  if (maxIndex <= 4 * h.n + 1024 && integral) {
    const byIndex = i32(maxIndex + 1).fill(-1);
    for (let t = 0; t < h.n; t++) if (done(t)) byIndex[h.completeIndex[t]!] = t;
    let i = 0;
    for (let c = 0; c <= maxIndex; c++) if (byIndex[c]! >= 0) out[i++] = byIndex[c]!;
    return out;
  }
  let i = 0;
  for (let t = 0; t < h.n; t++) if (done(t)) out[i++] = t;
  return out.sort((a, b) => h.completeIndex[a]! - h.completeIndex[b]!);
}
