import { UserError } from '../../core/util/errors.ts';

/** A flag's value as a whole number of at least 0 (`--seed`, `--cluster-wait` …), or a one-line error. */
export function nonNegativeInt(v: unknown, flag: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new UserError(`${flag}: expected a non-negative integer (got ${String(v)})`);
  return n;
}

/** A flag's value as a whole number of at least 1 (`--local`, `--test-count` …), or a one-line error. */
export function positiveInt(v: unknown, flag: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UserError(`${flag}: expected a positive integer (got ${String(v)})`);
  return n;
}
