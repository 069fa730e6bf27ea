import { join } from 'node:path';
import type { Operation } from '../../src/core/history/operation.ts';
import { errorMessage, UserError } from '../../src/core/util/errors.ts';
import type { CheckContext, Checker, CheckResult, OpSink } from '../types.ts';
import { checkPrepared } from './check.ts';
import { createModel, describeSemantics } from './models/index.ts';
import { type LinearizabilityOptions, linearizabilityOptionsSchema } from './options.ts';
import { HistoryPreparer, OperationInputError } from './prepare.ts';
import { buildResult, CHECKER_NAME } from './report.ts';

export type { CheckOperationsOptions, CheckOutcome, PartitionResult } from './check.ts';
export { checkOperations } from './check.ts';
export type { AnyModel, Model } from './model.ts';
export { ILLEGAL } from './model.ts';
export { createModel, MODEL_NAMES, models } from './models/index.ts';
export type { LinearizabilityOptions } from './options.ts';
export { linearizabilityOptionsSchema } from './options.ts';

/** Default search budget: generous, since Porcupine has none; `unknown` beats hanging. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Porcupine-class linearizability oracle: P-compositional Wing & Gong / Lowe search against a
 * sequential model, with a budget that yields `unknown` rather than hanging. Its stream form takes ops
 * one at a time in any order (`faultline check FILE` feeds it while reading) and keeps each only as a
 * few numbers in its partition's columns; the HTML visualisation, when asked for, also keeps the ops.
 */
export const linearizabilityChecker: Checker<LinearizabilityOptions> = {
  name: CHECKER_NAME,
  async check(
    ops: readonly Operation[],
    options: LinearizabilityOptions,
    ctx?: CheckContext,
  ): Promise<CheckResult> {
    const sink = openCheck(options, ctx, ops);
    for (const op of ops) sink.add(op);
    return sink.finish();
  },
  stream(options: LinearizabilityOptions, ctx?: CheckContext): OpSink {
    return openCheck(options, ctx, null);
  },
};

/**
 * One check: ops go to a HistoryPreparer as they come; `finish` searches and reports. `given` is the
 * caller's array (the HTML needs the ops themselves); without it the HTML, if any, keeps its own copy.
 */
function openCheck(
  options: LinearizabilityOptions,
  ctx: CheckContext | undefined,
  given: readonly Operation[] | null,
): OpSink {
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
  const checked = model;
  const htmlPath = o.htmlPath ?? (ctx?.outDir ? join(ctx.outDir, 'linearizability.html') : undefined);
  const kept: Operation[] | null = htmlPath && !given ? [] : null;
  const preparer = new HistoryPreparer(checked);
  return {
    add(op: Operation): void {
      try {
        preparer.add(op);
      } catch (err) {
        if (err instanceof OperationInputError)
          throw new UserError(`${CHECKER_NAME} (${o.model}): ${err.message}`);
        throw err;
      }
      kept?.push(op);
    },
    async finish(): Promise<CheckResult> {
      const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const outcome = await checkPrepared(checked, preparer.finish(), {
        timeoutMs,
        ...(ctx?.signal ? { signal: ctx.signal } : {}),
        ...(o.workers === undefined ? { workers: 2 } : { workers: o.workers }),
      });
      const result = buildResult(checked, outcome, timeoutMs, ctx?.key);
      const semantics = describeSemantics(o.model, o);
      if (semantics) {
        result.evidence += ` (${semantics})`;
        result.stats.nilRead = o.nilRead ?? 'unknown';
        if (o.model === 'cas-register') result.stats.failedCas = o.failedCas ?? 'ignored';
      }
      if (htmlPath) {
        const { writeHtml } = await import('./html.ts');
        await writeHtml(htmlPath, checked, outcome, {
          ...(o.htmlBudgetMs === undefined ? {} : { budgetMs: o.htmlBudgetMs }),
          title: `faultline linearizability (${checked.name})${ctx?.key === undefined ? '' : `, key ${ctx.key}`}`,
          ...(ctx?.key !== undefined && { key: ctx.key }),
          ops: given ?? kept ?? [],
          ...(ctx?.faults && { faults: ctx.faults }),
        });
        result.artifacts = [htmlPath];
      }
      return result;
    },
  };
}
