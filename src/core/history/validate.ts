import type { HistoryEvent } from './event.ts';

/**
 * A hand-rolled check equivalent to `historyEventSchema` (./event-schema.ts), for the hot read path: zod's
 * per-object parse costs several microseconds, which would cap reading well below a million events per
 * second. It accepts exactly what the schema accepts (a property test keeps the two in step) and names
 * the first offending field. It does not copy the object: a valid input is returned as the event.
 */
export interface EventProblem {
  field: string;
  reason: string;
}

const TYPES: ReadonlySet<unknown> = new Set(['invoke', 'ok', 'fail', 'info']);

export function checkEvent(o: unknown): EventProblem | null {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    return { field: 'event', reason: `expected a JSON object, got ${describe(o)}` };
  }
  const e = o as Record<string, unknown>;
  const index = e.index;
  if (!Number.isSafeInteger(index) || (index as number) < 0) {
    return problem('index', 'a non-negative integer below 2^53', index);
  }
  if (!TYPES.has(e.type)) return problem('type', 'one of invoke, ok, fail, info', e.type);
  if (typeof e.f !== 'string') return problem('f', 'a string', e.f);
  const p = e.process;
  if (p !== 'nemesis' && (!Number.isSafeInteger(p) || (p as number) < 0)) {
    return problem('process', 'a non-negative integer below 2^53 or "nemesis"', p);
  }
  const t = e.time;
  if (typeof t !== 'number' || !(t >= 0) || t === Number.POSITIVE_INFINITY) {
    return problem('time', 'a non-negative number of nanoseconds', t);
  }
  if (e.node !== null && typeof e.node !== 'string') return problem('node', 'a string or null', e.node);
  if (e.key !== undefined && typeof e.key !== 'string') return problem('key', 'a string when present', e.key);
  const fe = e.faultEpoch;
  if (fe !== null) {
    if (!Array.isArray(fe)) return problem('faultEpoch', 'an array of fault ids or null', fe);
    for (let i = 0; i < fe.length; i++) {
      if (typeof fe[i] !== 'string') return problem(`faultEpoch[${i}]`, 'a string', fe[i]);
    }
  }
  return null;
}

/** The event itself when valid (the common case costs no copy). */
export function asEvent(o: unknown): HistoryEvent | EventProblem {
  const p = checkEvent(o);
  return p ?? (o as HistoryEvent);
}

function problem(field: string, expected: string, got: unknown): EventProblem {
  return {
    field,
    reason:
      got === undefined ? `missing (expected ${expected})` : `expected ${expected}, got ${describe(got)}`,
  };
}

export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
