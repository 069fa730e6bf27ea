import type { Operation } from '../../src/core/history/operation.ts';
import { tagOf } from '../../src/core/history/values.ts';
import { i32, reserveArena, u8 } from './arena.ts';

/**
 * Client transactions flattened into parallel arrays, so the analyses index integers instead of walking
 * objects: txn t has micro-ops mopStart[t] .. mopStart[t+1]-1; keys are interned to dense ids.
 *
 * Which value a txn carries: an `ok` op's completion value (what was observed); a `fail` or `info` op's
 * invocation value (what was attempted; an indeterminate op's reads are unknown, a failed op's writes
 * were aborted).
 */
/** Arena estimate: what the analysis, graph and SCC arrays take per micro-op and per transaction. */
const ARENA_BYTES_PER_MOP = 60;
const ARENA_BYTES_PER_TXN = 160;

export const OK = 0;
export const INFO = 1;
export const FAIL = 2;

export const READ = 0;
export const WRITE = 1;

export interface TxnHistory {
  n: number;
  ops: readonly Operation[];
  status: Uint8Array;
  process: Int32Array;
  mopStart: Int32Array;
  mopKind: Uint8Array;
  mopKey: Int32Array;
  /** Written value for writes/appends; the observed value for reads (array, scalar, or null = unknown/initial). */
  mopValue: unknown[];
  keys: unknown[];
  /** Client ops that were not transactions (value not a micro-op list): counted, not analysed. */
  skipped: number;
}

export class MicroOpError extends Error {}

/** Map keys: primitives as themselves; anything else by its JSON text, so equal values intern together. */
export function valueKey(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? `\u0000${JSON.stringify(v)}` : v;
}

export function extractTxns(ops: readonly Operation[], writeF: 'append' | 'w'): TxnHistory {
  const clientOps: Operation[] = [];
  let skipped = 0;
  for (const op of ops) {
    if (op.process === 'nemesis') continue;
    const value = op.type === 'ok' ? op.output : op.input;
    if (!Array.isArray(value) && !(op.type !== 'ok' && Array.isArray(op.output))) {
      skipped++;
      continue;
    }
    clientOps.push(op);
  }
  // Elle's identity order is the completion position; keep invocation order (faultline's op ids).
  const n = clientOps.length;
  const values: unknown[][] = new Array(n);
  let total = 0;
  for (let t = 0; t < n; t++) {
    const op = clientOps[t]!;
    let value = op.type === 'ok' ? op.output : op.input;
    if (!Array.isArray(value)) value = op.output;
    values[t] = value as unknown[];
    total += (value as unknown[]).length;
  }
  reserveArena(ARENA_BYTES_PER_MOP * total + ARENA_BYTES_PER_TXN * n + (1 << 20));
  const status = u8(n);
  const process = i32(n);
  const mopStart = i32(n + 1);
  const mopKind = u8(total);
  const mopKey = i32(total);
  const mopValue: unknown[] = new Array(total);
  const keyIds = new Map<unknown, number>();
  const keys: unknown[] = [];
  let m = 0;
  for (let t = 0; t < n; t++) {
    const op = clientOps[t]!;
    status[t] = op.type === 'ok' ? OK : op.type === 'fail' ? FAIL : INFO;
    process[t] = typeof op.process === 'number' ? op.process : -1;
    mopStart[t] = m;
    for (const mop of values[t]!) {
      if (!Array.isArray(mop) || mop.length < 2 || mop.length > 3) {
        throw new MicroOpError(`op ${op.invokeIndex}: micro-op ${JSON.stringify(mop)} is not [f key value]`);
      }
      const f = mop[0];
      let kind: number;
      if (f === 'r') kind = READ;
      else if (f === writeF) kind = WRITE;
      else {
        throw new MicroOpError(
          `op ${op.invokeIndex}: unexpected micro-op type ${JSON.stringify(f)} (this workload allows "r" and "${writeF}")`,
        );
      }
      const k = valueKey(mop[1]);
      let id = keyIds.get(k);
      if (id === undefined) {
        id = keys.length;
        keyIds.set(k, id);
        keys.push(mop[1]);
      }
      mopKind[m] = kind;
      mopKey[m] = id;
      // A failed or indeterminate op's reads were never observed.
      mopValue[m] = kind === READ && op.type !== 'ok' ? null : (mop[2] ?? null);
      m++;
    }
  }
  mopStart[n] = m;
  return {
    n,
    ops: clientOps,
    status,
    process,
    mopStart,
    mopKind,
    mopKey,
    mopValue,
    keys,
    skipped,
  };
}

/** Render a micro-op for explanations: `[append 253 1]`, `[r 253 [1 3 4]]`. */
export function renderMop(h: TxnHistory, m: number, writeF: string): string {
  const f = h.mopKind[m] === READ ? 'r' : writeF;
  return `[${f} ${renderValue(h.keys[h.mopKey[m]!])} ${renderValue(h.mopValue[m])}]`;
}

export function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return `[${v.map(renderValue).join(' ')}]`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (tagOf(v) === '#bigint') return String((v as { '#bigint': unknown })['#bigint']);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
