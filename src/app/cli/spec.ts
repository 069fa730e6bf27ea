/**
 * Commands declared as data: the one definition of a command's arguments and options, from which
 * `./commander-spec.ts` builds the commander command (help, errors, every unusual command line) and
 * `parseCommandLine` below reads a plain command line without loading commander at all. commander and
 * the `node:child_process` it loads cost about as much start-up as all of a `check`'s own modules, and
 * `check` and `history stats` run once per history file in CI jobs. This file imports nothing.
 */

export interface OptionSpec {
  /** commander's syntax: `--json`, `--no-color`, `-c, --checker <names>` (`<value>` = required). */
  flags: string;
  description: string;
  /** Listed in `--help`; a value outside them is an error (unless `parse` checks the value itself). */
  choices?: readonly string[];
  default?: unknown;
  /** An environment variable that gives the value when the flag is absent. */
  env?: string;
  /** Converts (and validates) a value; `previous` is the value so far (repeatable options collect). */
  parse?(value: string, previous: unknown): unknown;
}

export type CommandAction = (args: (string | undefined)[], options: Record<string, unknown>) => Promise<void>;

export interface CommandSpec {
  name: string;
  description: string;
  /** Command lines shown under `--help`, each optionally followed by `  # what it does`. */
  examples: readonly string[];
  /** `[name]` optional, `<name>` required; then the description. */
  arguments?: readonly (readonly [string, string])[];
  options?: readonly OptionSpec[];
  action?: CommandAction;
  subcommands?: readonly CommandSpec[];
}

export interface FlagShape {
  short?: string;
  long: string;
  /** The options object's key: commander's camelCase of the long name without `no-`. */
  key: string;
  value: 'none' | 'required' | 'optional';
  negate: boolean;
}

const FLAGS = /^(?:-([A-Za-z]), )?--([a-z][a-z0-9-]*)(?: ([<[])[^>\]]+[>\]])?$/;

export function flagShape(flags: string): FlagShape {
  const m = FLAGS.exec(flags);
  if (!m) throw new Error(`unsupported option flags: ${flags}`);
  const long = m[2] as string;
  const negate = long.startsWith('no-');
  const key = (negate ? long.slice(3) : long).replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const value = m[3] === '<' ? 'required' : m[3] === '[' ? 'optional' : 'none';
  return { ...(m[1] !== undefined && { short: m[1] }), long, key, value, negate };
}

export interface ParsedCommandLine {
  command: CommandSpec;
  args: (string | undefined)[];
  options: Record<string, unknown>;
  globals: Record<string, unknown>;
}

interface Known {
  spec: OptionSpec;
  shape: FlagShape;
}

function lookup(word: string, known: readonly Known[]): Known | undefined {
  return known.find((k) =>
    word.startsWith('--') ? word === `--${k.shape.long}` : word === `-${k.shape.short}`,
  );
}

/** The value a flag's word gives, or undefined when commander must judge it (not in the choices). */
function flagValue(k: Known, text: string, previous: unknown): { value: unknown } | undefined {
  if (k.spec.parse) return { value: k.spec.parse(text, previous) };
  if (k.spec.choices && !k.spec.choices.includes(text)) return undefined;
  return { value: text };
}

/** Given values, then the environment's, then defaults, keyed like commander's `opts()`. */
function settle(
  known: readonly Known[],
  given: Map<Known, unknown>,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const k of known) {
    const fromEnv = k.spec.env === undefined ? undefined : env[k.spec.env];
    if (given.has(k)) out[k.shape.key] = given.get(k);
    else if (fromEnv !== undefined) {
      const v = flagValue(k, fromEnv, k.spec.default);
      if (v === undefined) return undefined;
      out[k.shape.key] = v.value;
    } else if (k.spec.default !== undefined) out[k.shape.key] = k.spec.default;
    else if (k.shape.negate) out[k.shape.key] = true;
  }
  return out;
}

/**
 * Reads a command line naming `top` (global options anywhere, the command and subcommand names, then the
 * command's options and arguments) the way commander would, or returns undefined for anything else:
 * `--help`, an unknown or malformed flag, a value outside its choices, a missing or extra argument,
 * `--`, `-`, combined short flags. commander then reads the same line and prints its help or its error,
 * so this never accepts a line commander would reject. A `parse` function's own error (an unknown
 * registry name) is thrown as it is from commander.
 */
export function parseCommandLine(
  words: readonly string[],
  globals: readonly OptionSpec[],
  top: CommandSpec,
  env: NodeJS.ProcessEnv = process.env,
): ParsedCommandLine | undefined {
  const globalKnown = globals.map((spec) => ({ spec, shape: flagShape(spec.flags) }));
  let command: CommandSpec | undefined;
  let own: Known[] = [];
  const given = new Map<Known, unknown>();
  const positionals: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word.startsWith('-')) {
      const eq = word.startsWith('--') ? word.indexOf('=') : -1;
      const flag = eq > 0 ? word.slice(0, eq) : word;
      const k = lookup(flag, command?.action ? [...own, ...globalKnown] : globalKnown);
      if (!k || k.shape.value === 'optional') return undefined;
      if (k.shape.value === 'none') {
        if (eq > 0) return undefined;
        given.set(k, !k.shape.negate);
        continue;
      }
      const text = eq > 0 ? word.slice(eq + 1) : words[++i];
      if (text === undefined || (eq < 0 && text.startsWith('-'))) return undefined;
      const v = flagValue(k, text, given.has(k) ? given.get(k) : k.spec.default);
      if (v === undefined) return undefined;
      given.set(k, v.value);
    } else if (command === undefined) {
      if (word !== top.name) return undefined;
      command = top;
      own = (command.options ?? []).map((spec) => ({ spec, shape: flagShape(spec.flags) }));
    } else if (!command.action) {
      command = command.subcommands?.find((s) => s.name === word);
      if (command === undefined) return undefined;
      own = (command.options ?? []).map((spec) => ({ spec, shape: flagShape(spec.flags) }));
    } else positionals.push(word);
  }
  if (command?.action === undefined) return undefined;
  const declared = command.arguments ?? [];
  if (positionals.length > declared.length) return undefined;
  if (declared.some(([name], i) => name.startsWith('<') && positionals[i] === undefined)) return undefined;
  const options = settle(own, given, env);
  const globalValues = settle(globalKnown, given, env);
  if (options === undefined || globalValues === undefined) return undefined;
  return {
    command,
    args: declared.map((_, i) => positionals[i]),
    options,
    globals: globalValues,
  };
}
