import type { CompletionType, ProcessId } from './event.ts';
import type { Operation } from './operation.ts';

/**
 * The spec's operation record ("Operation-history schema"): the recorder contract, as a view of a
 * paired operation. Every field is present; nulls are written, never omitted.
 *
 * The 11 fields (invoke_ts/complete_ts count as one slot): op_id, process_id, invoke_ts, complete_ts,
 * op_type (the op's f), key, input, output, error, timeout_marker, node_seen, fault_epoch. Per the spec,
 * `complete_ts` and `output` are null when the outcome is unknown (`timeout_marker: true`), and
 * `output` is null unless the op completed ok (`error` carries the failure instead).
 *
 * Extensions, so the view is lossless (an Operation can be rebuilt from it, see
 * {@link operationFromRecord}): `outcome` (ok|fail|info), `invoke_index` / `complete_index` (event
 * positions), `info_ts` (when the client gave up on an unknown-outcome op) and `info_value` (the value
 * its info completion carried, or null).
 */
export interface OperationRecord {
  op_id: number;
  process_id: ProcessId;
  invoke_ts: number;
  complete_ts: number | null;
  op_type: string;
  key: string | null;
  input: unknown;
  output: unknown;
  error: unknown;
  timeout_marker: boolean;
  node_seen: string | null;
  fault_epoch: string[] | null;
  outcome: CompletionType;
  invoke_index: number;
  complete_index: number | null;
  info_ts: number | null;
  info_value: unknown;
}

export function operationRecord(op: Operation): OperationRecord {
  return {
    op_id: op.id,
    process_id: op.process,
    invoke_ts: op.invokeTime,
    complete_ts: op.completeTime,
    op_type: op.f,
    key: op.key ?? null,
    input: op.input ?? null,
    output: op.output ?? null,
    error: op.error ?? null,
    timeout_marker: op.type === 'info',
    node_seen: op.node,
    fault_epoch: op.faultEpoch,
    outcome: op.type,
    invoke_index: op.invokeIndex,
    complete_index: op.completeIndex,
    info_ts: op.infoTime,
    info_value: op.infoValue ?? null,
  };
}

export function operationFromRecord(r: OperationRecord): Operation {
  return {
    id: r.op_id,
    process: r.process_id,
    f: r.op_type,
    type: r.outcome,
    input: r.input,
    output: r.output,
    invokeIndex: r.invoke_index,
    completeIndex: r.complete_index,
    invokeTime: r.invoke_ts,
    completeTime: r.complete_ts,
    node: r.node_seen,
    key: r.key ?? undefined,
    error: r.error,
    faultEpoch: r.fault_epoch,
    infoTime: r.info_ts,
    ...(r.info_value !== null && r.info_value !== undefined && { infoValue: r.info_value }),
  };
}
