import type { AnyModel } from '../../checkers/linearizability/model.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';

/** A compact event: [process, type, f, value] (value: invocation input or completion output). */
export type Ev = [number, 'invoke' | 'ok' | 'fail' | 'info', string, unknown, string?];

/** Build events (position = index = time) and pair them into ops. A 5th element sets `key`. */
export function history(evs: readonly Ev[]): Operation[] {
  const events: HistoryEvent[] = evs.map(([process, type, f, value, key], index) => ({
    index,
    type,
    f,
    value,
    process,
    time: index,
    node: null,
    faultEpoch: null,
    ...(key === undefined ? {} : { key }),
  }));
  return pairEvents(events).ops;
}

/** An op with explicit interval, for generated histories: ret null = never completed. */
export interface TimedOp {
  process: number;
  f: string;
  input: unknown;
  output: unknown;
  call: number;
  ret: number | null;
  type?: 'ok' | 'fail' | 'info';
}

/** Lay timed ops out as events in time order (calls before returns at equal times) and pair them. */
export function historyFromTimed(ops: readonly TimedOp[]): Operation[] {
  const points: { t: number; ret: boolean; op: TimedOp }[] = [];
  for (const op of ops) {
    points.push({ t: op.call, ret: false, op });
    if (op.ret !== null) points.push({ t: op.ret, ret: true, op });
  }
  points.sort((a, b) => a.t - b.t || Number(a.ret) - Number(b.ret));
  const evs: Ev[] = points.map((p) =>
    p.ret
      ? [p.op.process, p.op.type ?? 'ok', p.op.f, p.op.output]
      : [p.op.process, 'invoke', p.op.f, p.op.input],
  );
  return history(evs);
}

/**
 * The model as it is but for `simplify`: every op the preparer encodes goes to the search as it is. For
 * tests whose subject is the search itself (its cache, its buffers) on histories that simplifying would
 * make trivial, and for comparing verdicts with and without the simplification.
 */
export function searchingEveryOp(model: AnyModel): AnyModel {
  const view = Object.create(model) as AnyModel;
  Object.defineProperty(view, 'simplify', { value: undefined });
  return view;
}
