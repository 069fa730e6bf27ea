import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, resolve } from 'node:path';
import { checkers } from '../../../checkers/registry.ts';
import { InputError, UserError } from '../../core/util/errors.ts';
import { regularInput } from '../../core/util/input-file.ts';
import { optionsIssue } from '../../core/util/options.ts';
import { type ParsedYaml, parseYaml, parseYamlDocument, yamlAt } from '../../core/util/yaml.ts';
import { INSPECT_ONLY, type PlanModulePolicy, planModuleVerdict } from '../plugin/trust.ts';
import { bindingCheckers, nominalWorkload } from './binding.ts';
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

/**
 * `policy`: whether the plan's own `module:` bindings may be imported (`run --trust-plan-modules`);
 * by default (plan check, plan show, author) nothing the plan names is imported (src/app/plugin/trust.ts).
 */
export async function loadPlan(path: string, policy: PlanModulePolicy = INSPECT_ONLY): Promise<LoadedPlan> {
  let text: string;
  regularInput(path, 'plan');
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UserError(`${path}: cannot read plan: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  await loadBindingModules(text, path, policy);
  const plan = parsePlanText(text, path);
  plan.loadProblems.push(...(await checkerOptionProblems(plan)));
  return plan;
}

/**
 * The options each binding's checkers would run with, checked by the checkers' own schemas (loaded
 * lazily, hence here and not in the synchronous checks): an SLO without thresholds, a fairness checker
 * without groups, a final-state checker without its dump are plan errors, not a run that ends unknown.
 */
async function checkerOptionProblems(plan: LoadedPlan): Promise<Problem[]> {
  const out: Problem[] = [];
  for (const r of plan.resolved) {
    const b = r.binding;
    const workload = b && nominalWorkload(b);
    if (!b || !workload) continue;
    for (const spec of bindingCheckers(b, workload)) {
      const def = checkers.get(spec.name);
      const loaded = def ? await def.load().catch(() => null) : null;
      const parsed = loaded?.schema?.safeParse(spec.options);
      if (parsed && !parsed.success)
        out.push({
          scenario: r.id,
          field: `binding.checkerOptions.${spec.name}`,
          reason: optionsIssue(parsed.error.issues),
          severity: 'error',
          line: r.scenario.fieldLines.binding ?? r.scenario.line,
        });
    }
  }
  return out;
}

/**
 * The plugin modules the plan's bindings name (`module: ./plugin.ts`, relative to the plan), loaded
 * before the plan is read so the names they register are valid in its bindings, when the trust model
 * allows it (`planModuleVerdict`: the same file given with --plugin, or --trust-plan-modules); any other
 * module is a one-line error naming the plan's line, before anything is imported. The text is only
 * skimmed here; the real reading (with every problem located) comes after.
 */
export async function loadBindingModules(
  text: string,
  path: string,
  policy: PlanModulePolicy,
): Promise<string[]> {
  const modules = new Set<string>();
  // Each inline or file-named daemon, with the document it was read from (for its lines) and its path there.
  const daemons: { value: unknown; yaml?: ParsedYaml; at: PropertyKey[] }[] = [];
  const add = (binding: unknown, yaml?: ParsedYaml, at: PropertyKey[] = []) => {
    const m = (binding as { module?: unknown } | null)?.module;
    for (const x of Array.isArray(m) ? m : [m]) if (typeof x === 'string' && x !== '') modules.add(x);
    const d = (binding as { daemon?: unknown } | null)?.daemon;
    if (d !== undefined && d !== null)
      daemons.push({ value: d, ...(yaml && { yaml }), at: [...at, 'daemon'] });
  };
  const ext = extname(path).toLowerCase();
  if (ext === '.json') {
    const raw = skim(() => JSON.parse(text));
    const scenarios = (raw as { scenarios?: unknown } | null)?.scenarios;
    if (Array.isArray(scenarios)) for (const sc of scenarios) add((sc as { binding?: unknown })?.binding);
  } else if (ext === '.yaml' || ext === '.yml') {
    const yaml = skim(() => parseYamlDocument(text, path)) as ParsedYaml | null;
    const scenarios = (yaml?.value as { scenarios?: unknown } | null)?.scenarios;
    if (Array.isArray(scenarios))
      for (const [i, sc] of scenarios.entries())
        add((sc as { binding?: unknown })?.binding, yaml ?? undefined, ['scenarios', i, 'binding']);
  } else {
    for (const m of text.matchAll(/^(?:```|~~~)faultline[ \t]*\r?\n([\s\S]*?)^(?:```|~~~)/gm)) {
      // The block's lines are the plan's: its fence is on the line after the newlines before it.
      const fence = text.slice(0, m.index).split('\n').length;
      const yaml = skim(() => parseYamlDocument(m[1] as string, path, fence)) as ParsedYaml | null;
      if (yaml) add(yaml.value, yaml);
    }
  }
  if (modules.size === 0 && daemons.length === 0) return [];
  const { loadPlugin, readDaemonDescription, registerDaemon } = await import('../plugin/load-plugins.ts');
  const { parseDaemonDescription } = await import('../../lib/databases/daemon-db.ts');
  const toImport = [...modules].filter(
    (m) => planModuleVerdict(m, path, dirname(path), moduleLine(text, m), policy) === 'import',
  );
  for (const m of toImport) await loadPlugin(m, dirname(path));
  for (const d of daemons)
    registerDaemon(
      typeof d.value === 'string'
        ? readDaemonDescription(resolve(dirname(path), d.value))
        : inlineDaemon(() => parseDaemonDescription(d.value, path, d.yaml && yamlAt(d.yaml, d.at, d.value))),
      path,
    );
  return [...modules];
}

/** A binding's inline `daemon:` block; its problems named as `binding.daemon.FIELD` at their plan line. */
function inlineDaemon<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    throw new InputError(
      err.file,
      err.line,
      ['binding.daemon', err.field].filter(Boolean).join('.'),
      err.reason,
    );
  }
}

/** The line of the plan text naming module `m` (for the error), if it can be found. */
function moduleLine(text: string, m: string): number | null {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.includes('module') && l.includes(m));
  const j = i >= 0 ? i : lines.findIndex((l) => l.includes(m));
  return j >= 0 ? j + 1 : null;
}

function skim(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return null;
  }
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
  if (ext !== '.json') raw = parseYaml(text, path);
  else
    try {
      raw = JSON.parse(text);
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
