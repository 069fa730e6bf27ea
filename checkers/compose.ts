import type { Operation } from '../src/core/history/operation.ts';
import { errorMessage } from '../src/core/util/errors.ts';
import { type CheckContext, type Checker, type CheckResult, mergeValidity, type Validity } from './types.ts';

/**
 * Jepsen's `compose` and `check-safe`: run several checkers over one history and merge their validity
 * with priority false > unknown > true. A checker that throws (bad options, a bug, an aborted search)
 * becomes `valid: 'unknown'` carrying the error; composition itself never throws for a checker's sake.
 */

export interface ComposedResult {
  valid: Validity;
  /** One result per checker, in the order given. */
  results: Record<string, CheckResult>;
}

export interface ComposeOptions {
  /**
   * Errors to let through instead of turning into 'unknown' (the CLI passes bad-input errors, so a
   * checker refusing its options exits 254 rather than 2).
   */
  rethrow?: (err: unknown) => boolean;
}

export interface ComposeEntry {
  checker: Checker<never>;
  options?: unknown;
}

/** Run one checker and never throw: an exception yields 'unknown' with the error message. */
export async function checkSafe(
  name: string,
  checker: Checker<never>,
  ops: readonly Operation[],
  options: unknown,
  ctx?: CheckContext,
  opts?: ComposeOptions,
): Promise<CheckResult> {
  try {
    const r = await (checker as Checker<unknown>).check(ops, options ?? {}, ctx);
    return { ...r, checker: r.checker || name };
  } catch (err) {
    if (opts?.rethrow?.(err)) throw err;
    return {
      checker: name,
      valid: 'unknown',
      evidence: `${name}: did not finish: ${errorMessage(err)}`,
      scope: 'nothing: the checker failed before reaching a verdict',
      anomalies: [],
      stats: { opsConsumed: 0 },
      error: errorMessage(err),
    };
  }
}

/**
 * Run `{name: {checker, options}}` concurrently (async checkers overlap; CPU-bound ones run in turn on
 * the event loop) and merge. Names are the keys, so one checker may appear twice with different options.
 */
export async function compose(
  entries: Record<string, ComposeEntry | Checker<never>>,
  ops: readonly Operation[],
  ctx?: CheckContext,
  opts?: ComposeOptions,
): Promise<ComposedResult> {
  const names = Object.keys(entries);
  const settled = await Promise.all(
    names.map((name) => {
      const e = entries[name] as ComposeEntry | Checker<never>;
      const entry: ComposeEntry = 'checker' in e ? e : { checker: e };
      return checkSafe(name, entry.checker, ops, entry.options, ctx, opts);
    }),
  );
  const results: Record<string, CheckResult> = {};
  names.forEach((name, i) => {
    results[name] = settled[i] as CheckResult;
  });
  return { valid: mergeValidity(settled.map((r) => r.valid)), results };
}

/** Build a checker out of a composition, so compositions nest (Jepsen's compose is itself a checker). */
export function composedChecker(
  name: string,
  entries: Record<string, ComposeEntry | Checker<never>>,
): Checker {
  return {
    name,
    async check(ops, _options, ctx) {
      const { valid, results } = await compose(entries, ops, ctx);
      const all = Object.values(results);
      return {
        checker: name,
        valid,
        evidence: all.map((r) => r.evidence).join('; '),
        scope: all.map((r) => `${r.checker}: ${r.scope}`).join(' '),
        anomalies: all.flatMap((r) => r.anomalies.map((a) => ({ ...a, checker: r.checker }))),
        stats: {
          opsConsumed: all.reduce((m, r) => Math.max(m, r.stats.opsConsumed), 0),
          results,
        },
      };
    },
  };
}
