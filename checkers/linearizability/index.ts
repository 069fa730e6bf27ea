import { join } from 'node:path';
import type { Operation } from '../../src/core/history/operation.ts';
import { errorMessage, UserError } from '../../src/core/util/errors.ts';
import type { CheckContext, Checker, CheckResult, OpSink } from '../types.ts';
import { checkPrepared } from './check.ts';
import { createModel, describeSemantics, loadModel } from './models/registry.ts';
import { type LinearizabilityOptions, linearizabilityOptionsSchema } from './options.ts';
import { HistoryPreparer, OperationInputError } from './prepare.ts';
import { buildResult, CHECKER_NAME } from './report.ts';

export type { CheckOperationsOptions, CheckOutcome, PartitionResult } from './check.ts';
export { checkOperations } from './check.ts';
export type { AnyModel, Model } from './model.ts';
export { ILLEGAL } from './model.ts';
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
    const sink = await openCheck(options, ctx, ops);
    for (const op of ops) sink.add(op);
    return sink.finish();
  },
  stream(options: LinearizabilityOptions, ctx?: CheckContext): Promise<OpSink> {
    return openCheck(options, ctx, null);
  },
};

/**
 * One check: ops go to a HistoryPreparer as they come; `finish` searches and reports. `given` is the
 * caller's array (the HTML needs the ops themselves); without it the HTML, if any, keeps its own copy.
 */
async function openCheck(
  options: LinearizabilityOptions,
  ctx: CheckContext | undefined,
  given: readonly Operation[] | null,
): Promise<OpSink> {
  const parsed = linearizabilityOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join('.') : 'options';
    throw new UserError(`${CHECKER_NAME}: ${where}: ${issue?.message ?? 'invalid options'}`);
  }
  const o = parsed.data;
  await loadModel(o.model);
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
      if (outcome.valid === false)
        await attachMinimalHistory(result, checked, outcome, given ?? kept, ctx, o);
      if (htmlPath) {
        const { writeHtml } = await import('./html.ts');
        await writeHtml(htmlPath, checked, outcome, {
          ...(o.htmlBudgetMs === undefined ? {} : { budgetMs: o.htmlBudgetMs }),
          title: `faultline linearizability (${checked.name})${ctx?.key === undefined ? '' : `, key ${ctx.key}`}`,
          ...(ctx?.key !== undefined && { key: ctx.key }),
          ops: given ?? kept ?? [],
          ...(ctx?.faults && { faults: ctx.faults }),
        });
        result.artifacts = [...(result.artifacts ?? []), htmlPath];
      }
      return result;
    },
  };
}

/**
 * The first failing partition shrunk to the fewest ops that still fail (delta debugging over ops): its
 * size goes in the stats and the first anomaly; with an output directory and the ops at hand, the
 * sub-history is written as minimal-history.jsonl for `faultline check` to re-check on its own.
 */
async function attachMinimalHistory(
  result: CheckResult,
  model: NonNullable<ReturnType<typeof createModel>>,
  outcome: Awaited<ReturnType<typeof checkPrepared>>,
  ops: readonly Operation[] | null,
  ctx: CheckContext | undefined,
  o: { model: string; nilRead?: string | undefined; failedCas?: string | undefined; initialValue?: unknown },
): Promise<void> {
  const part = outcome.partitions[outcome.failing[0] as number];
  if (!part) return;
  // Loaded here, not up front: only a FAIL needs them, and every module costs `faultline check` start-up.
  const { shrinkFailingPartition } = await import('./shrink.ts');
  const shrunk = shrinkFailingPartition(model, part.ops);
  const byId = new Map<number, Operation>();
  for (const op of ops ?? []) byId.set(op.id, op);
  const kept = shrunk.ids.map((id) => byId.get(id)).filter((op): op is Operation => op !== undefined);
  const { invokeIndices } = shrunk;
  result.stats.minimalHistory = {
    key: part.key,
    ops: shrunk.ids.length,
    of: part.ops.length,
    minimal: shrunk.minimal,
    checks: shrunk.checks,
    invokeIndices,
  };
  // On the evidence line, not in the anomaly's explanation: that one is the headline's sentence.
  result.evidence += `; minimal failing sub-history: ${shrunk.ids.length} of ${part.ops.length} ops${shrunk.minimal ? ' (1-minimal)' : ' (shrinking budget ran out)'}${invokeIndices.length <= 12 ? `: ops ${invokeIndices.join(', ')}` : ''}`;
  const first = result.anomalies[0];
  if (first) first.minimalOps = invokeIndices;
  if (ctx?.outDir && kept.length === shrunk.ids.length) {
    const { mkdir, writeFile } = await import('node:fs/promises');
    const { subHistoryLines } = await import('../sub-history.ts');
    await mkdir(ctx.outDir, { recursive: true });
    const path = join(ctx.outDir, 'minimal-history.jsonl');
    await writeFile(path, subHistoryLines(kept));
    result.artifacts = [...(result.artifacts ?? []), path];
    const flags = [
      `--model ${o.model}`,
      ...(o.nilRead ? [`--nil-read ${o.nilRead}`] : []),
      ...(o.failedCas ? [`--failed-cas ${o.failedCas}`] : []),
      ...(o.initialValue !== undefined ? [`--initial-value '${JSON.stringify(o.initialValue)}'`] : []),
    ].join(' ');
    result.stats.minimalHistory = {
      ...(result.stats.minimalHistory as object),
      file: path,
      recheck: `faultline check ${path} --checker linearizable ${flags}`,
    };
  }
}
