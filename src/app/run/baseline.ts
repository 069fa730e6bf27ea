import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { errorMessage, UserError } from '../../core/util/errors.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import { scenarioDirName } from '../plan/resolve.ts';
import type { ScenarioEvidenceInput } from '../verdict/evidence.ts';

/**
 * RF9's baseline: the `metrics/<S>.json` file a run writes per scenario (baseline ops/s, which harness
 * captured it and when), read back from disk, never assumed. By default a scenario's baseline is the one
 * this run captures; `faultline run --baseline DIR` reads it from an earlier session instead, so RF9
 * compares this run with a baseline another harness may have taken.
 */

export const baselineFileSchema = z.looseObject({
  baselineOpsPerSec: z.number().nonnegative().nullable().optional(),
  baselineHarness: z.string().min(1),
  baselineCapturedAt: z.string().min(1),
});
export type BaselineFile = z.infer<typeof baselineFileSchema>;

/** An earlier session's baseline of one scenario: the file it came from and what it holds. */
export interface EarlierBaseline {
  path: string;
  file: BaselineFile & { baselineOpsPerSec: number };
}

/**
 * The metrics directory of `--baseline DIR`: DIR/metrics when DIR is a session directory, else DIR
 * itself (a metrics directory). A one-line error when it is neither.
 */
export function baselineMetricsDir(dir: string): string {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(
      `--baseline ${dir}: not a directory (give an earlier session or its metrics/ directory)`,
    );
  const metrics = join(dir, 'metrics');
  return existsSync(metrics) && statSync(metrics).isDirectory() ? metrics : dir;
}

/**
 * The earlier session's baseline of every row about to run, read and validated before any cluster work:
 * a missing or malformed file, or one with no baseline figure, is bad input naming the file.
 */
export function loadEarlierBaselines(dir: string, rowIds: readonly string[]): Map<string, EarlierBaseline> {
  const metricsDir = baselineMetricsDir(dir);
  const out = new Map<string, EarlierBaseline>();
  for (const id of rowIds) {
    const path = join(metricsDir, `${scenarioDirName(id)}.json`);
    out.set(id, { path, file: readBaselineFile(path, id) });
  }
  return out;
}

function readBaselineFile(path: string, id: string): EarlierBaseline['file'] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const why = existsSync(path) ? `not JSON (${errorMessage(err)})` : `no baseline of ${id} there`;
    throw new UserError(`--baseline: ${path}: ${why}`);
  }
  const b = baselineFileSchema.safeParse(raw);
  if (!b.success) {
    const issue = b.error.issues[0];
    throw new UserError(
      `--baseline: ${path}: not a baseline file (${issue?.path.join('.') || 'file'}: ${issue?.message ?? 'invalid'})`,
    );
  }
  if (b.data.baselineOpsPerSec == null)
    throw new UserError(`--baseline: ${path}: holds no baseline figure (baselineOpsPerSec is null)`);
  return { ...b.data, baselineOpsPerSec: b.data.baselineOpsPerSec };
}

/** What RF9 compares, besides the harness: this run's no-fault rate and when this run started. */
export interface BaselineContext {
  currentHarnessVersion: string;
  /** This run's no-fault ops/s (the figure it writes as its own baseline). */
  currentOpsPerSec: number | null;
  /** When this run started (the baseline's age is measured to it). */
  runStartedAt: string;
}

/**
 * RF9's facts from this session's own baseline file (captured by this run): the harness that captured
 * it, against the one running now. Null when the file names no harness or holds no baseline figure
 * (RF9 then says no baseline was recorded).
 */
export function baselineFrom(
  path: string,
  sessionDir: string,
  currentHarnessVersion: string,
  ctx: Partial<BaselineContext> = {},
): ScenarioEvidenceInput['baseline'] {
  const b = baselineFileSchema.safeParse(readJsonOrNull(path));
  if (!b.success || b.data.baselineOpsPerSec == null) return null;
  return baselineFacts(b.data, relative(sessionDir, path), false, {
    currentHarnessVersion,
    currentOpsPerSec: ctx.currentOpsPerSec ?? null,
    runStartedAt: ctx.runStartedAt ?? b.data.baselineCapturedAt,
  });
}

/** RF9's facts from an earlier session's baseline (`--baseline`), named by the path it was read from. */
export function earlierBaselineFacts(
  earlier: EarlierBaseline,
  ctx: BaselineContext,
): ScenarioEvidenceInput['baseline'] {
  return baselineFacts(earlier.file, earlier.path, true, ctx);
}

function baselineFacts(
  file: BaselineFile,
  source: string,
  earlier: boolean,
  ctx: BaselineContext,
): NonNullable<ScenarioEvidenceInput['baseline']> {
  const captured = Date.parse(file.baselineCapturedAt);
  const started = Date.parse(ctx.runStartedAt);
  const ageS =
    Number.isFinite(captured) && Number.isFinite(started)
      ? Math.round((started - captured) / 100) / 10
      : null;
  return {
    harnessVersion: file.baselineHarness,
    currentHarnessVersion: ctx.currentHarnessVersion,
    capturedAt: file.baselineCapturedAt,
    source,
    earlier,
    ageS,
    opsPerSec: file.baselineOpsPerSec ?? null,
    currentOpsPerSec: ctx.currentOpsPerSec,
  };
}
