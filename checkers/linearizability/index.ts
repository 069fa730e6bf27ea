import { join } from 'node:path';
import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import { errorMessage, UserError } from '../../src/core/util/errors.ts';
import type { CheckContext, Checker, CheckResult } from '../types.ts';
import { checkOperations } from './check.ts';
import { createModel, describeSemantics, FAILED_CAS, models, NIL_READS } from './models/index.ts';
import { OperationInputError } from './prepare.ts';
import { buildResult, CHECKER_NAME } from './report.ts';

export type { CheckOperationsOptions, CheckOutcome, PartitionResult } from './check.ts';
export { checkOperations } from './check.ts';
export type { AnyModel, Model } from './model.ts';
export { ILLEGAL } from './model.ts';
export { createModel, MODEL_NAMES, models } from './models/index.ts';

/** Default search budget: generous, since Porcupine has none; `unknown` beats hanging. */
export const DEFAULT_TIMEOUT_MS = 60_000;

export const linearizabilityOptionsSchema = z.strictObject({
  model: z.string().refine((m) => models.has(m), {
    error: () => `unknown model; known: ${models.names().join(', ')}`,
  }),
  /** Initial value for registers (nil or a value), counters (a number), kv strings, txn key maps. */
  initialValue: z.unknown().optional(),
  /** Registers: 'unknown' (default, Knossos) an ok nil read constrains nothing; 'value' nil was read. */
  nilRead: z.enum(NIL_READS).optional(),
  /** cas-register: 'ignored' (default, Knossos) a failed cas did not happen; 'mismatch' it saw another value. */
  failedCas: z.enum(FAILED_CAS).optional(),
  /** Search budget in ms; 0 means no limit. */
  timeoutMs: z.number().int().nonnegative().optional(),
  /** Write the HTML visualization here. */
  htmlPath: z.string().min(1).optional(),
  /** Budget of the visualization's own extra search, ms. */
  htmlBudgetMs: z.number().int().nonnegative().optional(),
  /** Worker threads for partitions (used only for large histories); 0 or 1: inline. */
  workers: z.number().int().nonnegative().optional(),
});

export type LinearizabilityOptions = z.input<typeof linearizabilityOptionsSchema>;

/**
 * Porcupine-class linearizability oracle: P-compositional Wing & Gong / Lowe search against a
 * sequential model, with a budget that yields `unknown` rather than hanging.
 */
export const linearizabilityChecker: Checker<LinearizabilityOptions> = {
  name: CHECKER_NAME,
  async check(
    ops: readonly Operation[],
    options: LinearizabilityOptions,
    ctx?: CheckContext,
  ): Promise<CheckResult> {
    const parsed = linearizabilityOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.map(String).join('.') : 'options';
      throw new UserError(`${CHECKER_NAME}: ${where}: ${issue?.message ?? 'invalid options'}`);
    }
    const o = parsed.data;
    let model: ReturnType<typeof createModel>;
    try {
      model = createModel(o.model, {
        initialValue: o.initialValue,
        ...(o.nilRead && { nilRead: o.nilRead }),
        ...(o.failedCas && { failedCas: o.failedCas }),
      });
    } catch (err) {
      throw new UserError(`${CHECKER_NAME}: initialValue: ${errorMessage(err)}`);
    }
    if (!model) throw new UserError(`${CHECKER_NAME}: model: unknown model ${JSON.stringify(o.model)}`);
    const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let outcome: Awaited<ReturnType<typeof checkOperations>>;
    try {
      outcome = await checkOperations(model, ops, {
        timeoutMs,
        ...(ctx?.signal ? { signal: ctx.signal } : {}),
        ...(o.workers === undefined ? { workers: 2 } : { workers: o.workers }),
      });
    } catch (err) {
      if (err instanceof OperationInputError)
        throw new UserError(`${CHECKER_NAME} (${o.model}): ${err.message}`);
      throw err;
    }
    const result = buildResult(model, outcome, timeoutMs, ctx?.key);
    const semantics = describeSemantics(o.model, o);
    if (semantics) {
      result.evidence += ` (${semantics})`;
      result.stats.nilRead = o.nilRead ?? 'unknown';
      if (o.model === 'cas-register') result.stats.failedCas = o.failedCas ?? 'ignored';
    }
    const htmlPath = o.htmlPath ?? (ctx?.outDir ? join(ctx.outDir, 'linearizability.html') : undefined);
    if (htmlPath) {
      const { writeHtml } = await import('./html.ts');
      await writeHtml(htmlPath, model, outcome, {
        ...(o.htmlBudgetMs === undefined ? {} : { budgetMs: o.htmlBudgetMs }),
        title: `faultline linearizability (${model.name})${ctx?.key === undefined ? '' : `, key ${ctx.key}`}`,
        ...(ctx?.key !== undefined && { key: ctx.key }),
        ops,
        ...(ctx?.faults && { faults: ctx.faults }),
      });
      result.artifacts = [htmlPath];
    }
    return result;
  },
};
