/**
 * What the register models' encodings look like (./register.ts) and how their values are compared by
 * key, shared by the passes that read encoded register ops without stepping the model
 * (./stale-read.ts, ./register-simplify.ts).
 */
export interface RegisterInput {
  f: 'read' | 'write' | 'cas';
  a: unknown;
  b: unknown;
}

export interface RegisterOutput {
  /** False for an `info`/open op: any outcome is allowed. */
  known: boolean;
  /** What a read returned. */
  value: unknown;
  /** Whether a cas succeeded. */
  ok: boolean;
}

/**
 * A Map key equal for deep-equal values: the value itself when it is not a string or object (Map's
 * SameValueZero agrees with deepEqual there, and such keys never equal a string), else its canonical
 * string. No string is built per op on a history of numbers.
 */
export function valueKey(v: unknown): unknown {
  return typeof v === 'string' || (v !== null && typeof v === 'object') ? canonicalKey(v) : v;
}

/** A string equal for deep-equal values (object keys sorted), distinct otherwise. */
function canonicalKey(v: unknown): string {
  if (v === undefined) return 'u';
  if (v === null || typeof v !== 'object') return `${typeof v}:${String(v)}`;
  if (Array.isArray(v)) return `[${v.map(canonicalKey).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalKey((v as Record<string, unknown>)[k])}`).join(',')}}`;
}
