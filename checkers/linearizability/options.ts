import type { OptionsSchema } from '../../src/core/util/options.ts';
import { FAILED_CAS, type FailedCas, models, NIL_READS, type NilRead } from './models/registry.ts';

/**
 * The linearizability checker's options and their validation.
 *
 * Validated by hand rather than with zod: `faultline check --checker linearizable` is run once per
 * history file by CI jobs, and loading zod (about ninety modules) was the largest single part of its
 * start-up. The shape is small and flat; `linearizabilityOptionsSchema` offers zod's `safeParse` result
 * shape (the `OptionsSchema` contract), with one issue per offending field, so callers cannot tell.
 */
export interface LinearizabilityOptions {
  model: string;
  /** Initial value for registers (nil or a value), counters (a number), kv strings, txn key maps. */
  initialValue?: unknown;
  /** Registers: 'unknown' (default, Knossos) an ok nil read constrains nothing; 'value' nil was read. */
  nilRead?: NilRead;
  /** cas-register: 'ignored' (default, Knossos) a failed cas did not happen; 'mismatch' it saw another value. */
  failedCas?: FailedCas;
  /** Search budget in ms; 0 means no limit. */
  timeoutMs?: number;
  /** Write the HTML visualization here. */
  htmlPath?: string;
  /** Budget of the visualization's own extra search, ms. */
  htmlBudgetMs?: number;
  /** Worker threads for partitions (used only for large histories); 0 or 1: inline. */
  workers?: number;
}

type Issue = { path: PropertyKey[]; message: string };
type FieldCheck = (v: unknown) => string | null;

const oneOf =
  (choices: readonly string[]): FieldCheck =>
  (v) =>
    typeof v === 'string' && choices.includes(v)
      ? null
      : `expected one of ${choices.map((c) => `"${c}"`).join('|')}`;

const count: FieldCheck = (v) =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? null : 'expected a non-negative integer';

/** Every key the options may have, with its check (undefined means "absent" for optional keys). */
const FIELDS: Readonly<Record<keyof LinearizabilityOptions, FieldCheck>> = {
  model: (v) =>
    typeof v !== 'string'
      ? 'expected a string naming the model'
      : models.has(v)
        ? null
        : `unknown model; known: ${models.names().join(', ')}`,
  initialValue: () => null,
  nilRead: oneOf(NIL_READS),
  failedCas: oneOf(FAILED_CAS),
  timeoutMs: count,
  htmlPath: (v) => (typeof v === 'string' && v.length > 0 ? null : 'expected a non-empty string'),
  htmlBudgetMs: count,
  workers: count,
};

function issuesOf(v: unknown): Issue[] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return [{ path: [], message: 'expected an object' }];
  }
  const o = v as Record<string, unknown>;
  const issues: Issue[] = [];
  const unknownKeys = Object.keys(o).filter((k) => !Object.hasOwn(FIELDS, k));
  if (unknownKeys.length > 0) {
    issues.push({
      path: [],
      message: `unrecognized key${unknownKeys.length > 1 ? 's' : ''}: ${unknownKeys.map((k) => `"${k}"`).join(', ')}`,
    });
  }
  for (const [key, check] of Object.entries(FIELDS)) {
    const value = o[key];
    if (value === undefined && key !== 'model') continue;
    const problem = check(value);
    if (problem) issues.push({ path: [key], message: problem });
  }
  return issues;
}

type ParseResult =
  | { success: true; data: LinearizabilityOptions }
  | { success: false; error: { issues: Issue[] } };

export const linearizabilityOptionsSchema = {
  safeParse(v: unknown): ParseResult {
    const issues = issuesOf(v);
    return issues.length === 0
      ? { success: true, data: { ...(v as LinearizabilityOptions) } }
      : { success: false, error: { issues } };
  },
} satisfies OptionsSchema;
