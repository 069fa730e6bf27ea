/**
 * What the register models' encodings look like (./register.ts), shared by the passes that read encoded
 * register ops without stepping the model (./stale-read.ts, ./register-simplify.ts). Those passes key
 * values by `valueKey` (src/core/history/values.ts), equal exactly when the model's `deepEqual` is.
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
