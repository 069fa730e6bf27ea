import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { InputError, UserError } from '../../core/util/errors.ts';
import { parseMarkdownPlan } from './markdown.ts';
import type { Problem } from './problem.ts';
import { resolveScenarios } from './resolve.ts';
import { type Plan, planSchema } from './schema.ts';

/**
 * `loadPlan(path) → Plan`. Markdown (`.md`, `.markdown`) is parsed by the §1 reader; `.yaml`/`.yml`/`.json`
 * are native plans validated by zod against the same shape. An unreadable or structurally invalid file
 * is a UserError (exit 254); content problems a plan author must fix (a missing oracle, a TBD budget, an
 * invalid binding) are kept in `loadProblems` for `checkPlan` to list with everything else.
 */
export interface LoadedPlan extends Plan {
  loadProblems: Problem[];
}

export async function loadPlan(path: string): Promise<LoadedPlan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UserError(`${path}: cannot read plan: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parsePlanText(text, path);
}

export function parsePlanText(text: string, path: string): LoadedPlan {
  // Editors on Windows save a byte-order mark; it would hide the title line.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const ext = extname(path).toLowerCase();
  if (ext === '.yaml' || ext === '.yml' || ext === '.json') return parseNative(text, path, ext);
  const { plan: input, problems } = parseMarkdownPlan(text, path);
  const r = planSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new InputError(path, null, issue.path.join('.'), issue.message);
  }
  return finish(r.data, path, 'markdown', problems);
}

function parseNative(text: string, path: string, ext: string): LoadedPlan {
  let raw: unknown;
  try {
    raw = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new InputError(
      path,
      lineOf(err),
      null,
      `not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${firstLine(err)}`,
    );
  }
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && !('slug' in raw)) {
    (raw as Record<string, unknown>).slug = basename(path, ext);
  }
  const r = planSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const more = r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more)` : '';
    throw new InputError(path, null, issue.path.join('.') || null, `${issue.message}${more}`);
  }
  return finish(r.data, path, ext === '.json' ? 'json' : 'yaml', []);
}

function finish(
  data: ReturnType<typeof planSchema.parse>,
  path: string,
  format: Plan['source']['format'],
  loadProblems: Problem[],
): LoadedPlan {
  return { ...data, source: { path, format }, resolved: resolveScenarios(data), loadProblems };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

function lineOf(err: unknown): number | null {
  const pos = (err as { linePos?: { line: number }[] }).linePos;
  return pos?.[0]?.line ?? null;
}
