import { type Operation, wasNotApplied } from '../../src/core/history/operation.ts';
import { type AnyModel, ModelInputError } from './model.ts';

/** One op as the search sees it: model input/output plus its interval in event positions. */
export interface EncodedOp {
  /** The faultline op id (index in the paired history). */
  id: number;
  process: number | 'nemesis';
  /** Position of the invocation event. */
  call: number;
  /** Position of the completion event; Infinity when the outcome is unknown (info or never completed). */
  ret: number;
  input: unknown;
  output: unknown;
}

export interface Partition {
  /** The partition key, or null when the model does not partition. */
  key: string | null;
  ops: EncodedOp[];
}

export interface PreparedHistory {
  partitions: Partition[];
  /** Client ops handed to the model (nemesis ops are never counted). */
  opsConsumed: number;
  /** Ops that cannot affect the verdict (failed writes, reads with unknown result, not-applied failures). */
  opsIgnored: number;
}

/** Thrown for an op the model cannot interpret; carries the op so the error names it. */
export class OperationInputError extends Error {
  override readonly name = 'OperationInputError';
  constructor(
    readonly op: Operation,
    reason: string,
  ) {
    super(`op ${op.invokeIndex} (process ${op.process}, f ${JSON.stringify(op.f)}): ${reason}`);
  }
}

const keyOrder = new Intl.Collator('en', { numeric: true });

/**
 * Encode client ops with the model and split them by the model's partition key (P-compositionality:
 * the history is linearizable iff every partition is). Partitions come out in key order so reports are
 * deterministic.
 */
export function prepareHistory(model: AnyModel, ops: readonly Operation[]): PreparedHistory {
  const byKey = new Map<string | null, EncodedOp[]>();
  let consumed = 0;
  let ignored = 0;
  for (const op of ops) {
    if (op.process === 'nemesis') continue;
    consumed++;
    // Never applied, observed nothing (e.g. connection refused): constrains nothing, for every model.
    if (wasNotApplied(op)) {
      ignored++;
      continue;
    }
    let io: ReturnType<AnyModel['encode']>;
    try {
      io = model.encode(op);
    } catch (err) {
      if (err instanceof ModelInputError) throw new OperationInputError(op, err.message);
      throw err;
    }
    if (io === null) {
      ignored++;
      continue;
    }
    const open = op.type === 'info' || op.completeIndex === null;
    const key = model.partitionKey ? model.partitionKey(io.input) : null;
    let list = byKey.get(key);
    if (!list) {
      list = [];
      byKey.set(key, list);
    }
    list.push({
      id: op.id,
      process: op.process,
      call: op.invokeIndex,
      ret: open ? Number.POSITIVE_INFINITY : (op.completeIndex as number),
      input: io.input,
      output: io.output,
    });
  }
  const keys = [...byKey.keys()].sort((a, b) => keyOrder.compare(a ?? '', b ?? ''));
  return {
    partitions: keys.map((key) => ({ key, ops: byKey.get(key) as EncodedOp[] })),
    opsConsumed: consumed,
    opsIgnored: ignored,
  };
}
