import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { DeclaredSignal } from '../../../nemeses/declared-signal.ts';
import { UserError } from '../../core/util/errors.ts';

/**
 * The trust model in one place (docs/security.md): only plugins are code. A module runs when the
 * operator names it on the command line (`--plugin PATH`, loaded by the CLI before anything else), or
 * when a plan's binding names it (`module:`) and the operator either passed `--plugin` with that same
 * module or `--trust-plan-modules` on `run`. A plan is data written by someone else: `plan check`,
 * `plan show` and `author` never import anything it names. Every decision goes through
 * `planModuleVerdict`, so there is no second path by which a plan's text becomes an import. A plan's
 * landing `command:` is code too: {@link gatePlanCommands} runs it only on `run --trust-plan-commands`,
 * and so is a binary only the plan names, which the capability probe runs with `--version` only then
 * ({@link PLAN_BINARY_NOT_RUN}).
 */

/** Whether a plan's own `module:` bindings may be imported (only `run --trust-plan-modules`). */
export interface PlanModulePolicy {
  trustPlanModules: boolean;
}

export const INSPECT_ONLY: PlanModulePolicy = { trustPlanModules: false };

/** The module file a path names (symlinks resolved, so two spellings of one file are one module). */
export function moduleIdentity(path: string, baseDir: string): string {
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

const fromCommandLine = new Set<string>();

/** Record a module the operator named with `--plugin` (called by the plugin loader only). */
export function trustCommandLinePlugin(identity: string): void {
  fromCommandLine.add(identity);
}

/**
 * May the plan module `path` (as written in `planFile` at `line`) be imported? Yes when the operator
 * named the same file with `--plugin` (it is then already loaded) or passed `--trust-plan-modules`;
 * otherwise a one-line error naming the plan, the line and both ways to opt in.
 */
export function planModuleVerdict(
  path: string,
  planFile: string,
  planDir: string,
  line: number | null,
  policy: PlanModulePolicy,
): 'loaded' | 'import' {
  const identity = moduleIdentity(path, planDir);
  if (fromCommandLine.has(identity)) return 'loaded';
  if (policy.trustPlanModules) return 'import';
  const where = line === null ? planFile : `${planFile}:${line}`;
  const asGiven = relative(process.cwd(), identity) || identity;
  throw new UserError(
    `${where}: binding.module: ${JSON.stringify(path)} is code and a plan cannot run code: pass --plugin ${asGiven} (or, for run, --trust-plan-modules)`,
  );
}

/** What a plan's landing `command:` records when it is not run. */
export const PLAN_COMMAND_REFUSED =
  "a plan's command is a shell command run with sudo on the nodes: run --trust-plan-commands runs it";

/** Why the capability probe did not run a binary only the plan names with `--version`. */
export const PLAN_BINARY_NOT_RUN =
  'a binary only the plan names is code the plan chose: run --trust-plan-commands asks it for its version';

/**
 * A plan's declared landing signals as a run reads them. A `command:` span is a shell command run with
 * sudo on every node of the fault: code, written by whoever wrote the plan. It runs only when the
 * operator passed `--trust-plan-commands`; otherwise it is kept, marked refused, and the fault it should
 * prove is recorded as not proven by it, naming the flag. `metric:` and `log:` spans are data (a URL
 * fetched and a pattern counted, both shell-quoted) and always run.
 */
export function gatePlanCommands(signals: readonly DeclaredSignal[], trusted: boolean): DeclaredSignal[] {
  if (trusted) return [...signals];
  return signals.map((s) => (s.type === 'command' ? { ...s, refused: PLAN_COMMAND_REFUSED } : s));
}
