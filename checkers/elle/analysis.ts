import type { Anomaly } from '../types.ts';
import type { EdgeList } from './graph.ts';
import type { TxnHistory } from './txns.ts';

/** What a workload analysis hands to the cycle search: data-dependency edges and its non-cycle findings. */
export interface WorkloadAnalysis {
  history: TxnHistory;
  /** ww / wr / rw edges between txn vertices (0..n-1). */
  edges: EdgeList;
  /** Non-cycle anomalies by type. */
  anomalies: Map<string, Anomaly[]>;
  /** One sentence justifying a data edge a → b of relation `rel`, or null when it cannot be justified. */
  explain(a: number, b: number, rel: number, names: (t: number) => string): string | null;
  /** The write micro-op's name in this workload ("append" or "w"). */
  writeF: string;
}

/** Thrown when the history breaks the workload's preconditions (the result is then `unknown`). */
export class WorkloadError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export function addAnomaly(map: Map<string, Anomaly[]>, a: Anomaly): void {
  const list = map.get(a.type);
  if (list) list.push(a);
  else map.set(a.type, [a]);
}
