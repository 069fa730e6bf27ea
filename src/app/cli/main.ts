import type { Command } from 'commander';
import { EXIT, UserError } from '../../core/util/errors.ts';
import { configureLogger } from '../../core/util/log.ts';
import { type CommandSpec, flagShape, type OptionSpec, parseCommandLine } from './spec.ts';

/**
 * faultline's command line. Each file in ./commands is named after the top-level command it defines and
 * exports either `register(program)` (commander calls) or `command()`, the command declared as data
 * (./spec.ts); commands import their implementation lazily inside the action. Start-up is paid on every
 * invocation (CI jobs check hundreds of histories), so a command line naming a command loads only that
 * command's file: `faultline history stats` never loads ssh2, the cluster code or the other commands'
 * option registries. A plain command line of a declared command (`check`, `history`) is read without
 * commander (`parseCommandLine`); `--help`, errors and anything unusual go to commander, built from the
 * same declaration. Without a known command (`--help`, a typo) every file is loaded so help and
 * commander's suggestions see them all; `--version` alone loads none.
 */
type CommandModule = { register(program: Command): void } | { command(): CommandSpec };

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/** Options every command accepts (commander: the program's own options). */
const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { flags: '--log-json', description: 'log JSON lines to stderr instead of pretty text' },
  {
    flags: '--log-level <level>',
    description: 'how much to log',
    choices: LOG_LEVELS,
    env: 'FAULTLINE_LOG_LEVEL',
    default: 'info',
  },
  { flags: '--no-color', description: 'no colour in logs (also: the NO_COLOR environment variable)' },
  {
    flags: '-q, --quiet',
    description: 'only warnings, errors and results: no progress lines (log level warn)',
  },
];

/** commander's version flags; a command line of one of them alone is answered without commander. */
const VERSION_FLAGS = '-V, --version';

/** Before a command runs: colour and the logger from the global options. */
function applyGlobalOptions(o: {
  logJson?: boolean;
  logLevel?: string;
  color?: boolean;
  quiet?: boolean;
}): void {
  // NO_COLOR is the one switch the logger and any child process read.
  if (o.color === false) process.env.NO_COLOR = '1';
  configureLogger({ json: o.logJson ?? false, level: o.quiet ? 'warn' : (o.logLevel ?? 'info') });
}

/**
 * Every top-level command and its module. Static imports (not a directory listing) so a bundler splits
 * each command into its own chunk, loaded only when its command is named.
 */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  author: () => import('./commands/author.ts'),
  check: () => import('./commands/check.ts'),
  cluster: () => import('./commands/cluster.ts'),
  doctor: () => import('./commands/doctor.ts'),
  heal: () => import('./commands/heal.ts'),
  history: () => import('./commands/history.ts'),
  plan: () => import('./commands/plan.ts'),
  run: () => import('./commands/run.ts'),
  serve: () => import('./commands/serve.ts'),
  sessions: () => import('./commands/sessions.ts'),
  test: () => import('./commands/test.ts'),
};

/** The command names, in the order help lists them. */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS).sort();

/** Global options that take a value: the word after them is not the command. */
const GLOBAL_VALUE_OPTIONS = new Set(
  GLOBAL_OPTIONS.map((o) => flagShape(o.flags))
    .filter((f) => f.value !== 'none')
    .map((f) => `--${f.long}`),
);

/** The first word of the command line that is not a global option (the command name), if any. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (GLOBAL_VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** A version flag anywhere on the command line (commander answers it before any command). */
function asksVersion(args: readonly string[]): boolean {
  return args.some((a) => a === '--version' || a === '-V');
}

/**
 * The program with every command registered, or only the one `args` names (faster start-up). With
 * `listOnly`, each command is only its name and help line from command-summaries.ts (generated from the
 * full definitions, a test keeps them equal): enough for the top-level `--help` and commander's "did you
 * mean" on a typo, without loading eleven command modules and their option schemas.
 */
export async function buildProgram(args: readonly string[] = [], listOnly = false): Promise<Command> {
  const { Command } = await import('commander');
  const { addCommand, optionOf } = await import('./commander-spec.ts');
  const { packageVersion } = await import('../../core/util/package-info.ts');
  const { helpEpilogue } = await import('./help.ts');
  const program = new Command('faultline').description(
    'Jepsen-style distributed-systems testing: plans, faults with landing evidence, oracles, verdicts',
  );
  for (const option of GLOBAL_OPTIONS) program.addOption(optionOf(option));
  program
    .version(packageVersion, VERSION_FLAGS)
    .showHelpAfterError()
    .exitOverride()
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline run plans/etcd-register.md --local 3      # a test plan on a local cluster',
        'faultline test --nodes n1,n2,n3 --db etcd --nemesis partition --time-limit 60s',
        'faultline check history.edn --checker linearizable --model cas-register',
      ]),
    )
    .hook('preAction', (cmd) => applyGlobalOptions(cmd.optsWithGlobals()));
  const word = commandWord(args);
  const versionOnly = word === undefined && asksVersion(args);
  const names = versionOnly
    ? []
    : word !== undefined && Object.hasOwn(COMMANDS, word)
      ? [word]
      : COMMAND_NAMES;
  if (listOnly) {
    const { COMMAND_SUMMARIES } = await import('./command-summaries.ts');
    for (const c of COMMAND_SUMMARIES) program.command(c.name).description(c.description);
    const terms = new Map(COMMAND_SUMMARIES.map((c) => [c.name, c.term]));
    const standard = program.createHelp();
    program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? standard.subcommandTerm(cmd) });
    return program;
  }
  for (const name of names) {
    const mod = await (COMMANDS[name] as () => Promise<CommandModule>)();
    if ('command' in mod) addCommand(program, mod.command());
    else mod.register(program);
  }
  return program;
}

/**
 * Runs a plain command line of a declared command without commander; false when commander must read
 * it (help, an error to report, a command declared through commander calls).
 */
async function runWithoutCommander(args: readonly string[]): Promise<boolean> {
  const version = flagShape(VERSION_FLAGS);
  if (args.length === 1 && (args[0] === `--${version.long}` || args[0] === `-${version.short}`)) {
    const { packageVersion } = await import('../../core/util/package-info.ts');
    process.stdout.write(`${packageVersion}\n`);
    return true;
  }
  const word = commandWord(args);
  if (word === undefined || !Object.hasOwn(COMMANDS, word)) return false;
  const mod = await (COMMANDS[word] as () => Promise<CommandModule>)();
  if (!('command' in mod)) return false;
  const parsed = parseCommandLine(args, GLOBAL_OPTIONS, mod.command());
  if (parsed?.command.action === undefined) return false;
  applyGlobalOptions(parsed.globals);
  await parsed.command.action(parsed.args, parsed.options);
  return true;
}

/** commander reads the command line; its exits (help, version, usage errors) become exit codes. */
async function runWithCommander(argv: string[]): Promise<void> {
  const { CommanderError } = await import('commander');
  try {
    const args = argv.slice(2);
    const word = commandWord(args);
    // No command to run (`--help`, nothing, a typo): the command list is enough. `help <command>` is
    // commander's own command and needs the named command's full definition.
    const listOnly =
      word === undefined ? !asksVersion(args) : !Object.hasOwn(COMMANDS, word) && word !== 'help';
    await (await buildProgram(args, listOnly)).parseAsync(argv);
  } catch (err) {
    // --help and --version end here with code 0; usage errors were already printed by commander.
    if (err instanceof CommanderError) process.exitCode = err.exitCode === 0 ? 0 : EXIT.badInput;
    else throw err;
  }
}

/**
 * `faultline … | head`: the reader went away. Output stops, the command does not: a run still heals its
 * faults and writes its session (dying on EPIPE here could leave a partition in place).
 */
function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
}

export async function main(given: string[]): Promise<number> {
  ignoreClosedOutput();
  try {
    // The three readers below are loaded only for a command line that can need them (a word starting
    // with `--p` or `--a`): start-up pays per module, and `check` and `history` lines rarely do.
    const mayNeed = (prefix: string) => given.slice(2).some((a) => a.startsWith(prefix));
    // `--password VALUE` leaves the argv before anything parses or records it (test.json keeps the argv).
    const argv = mayNeed('--p')
      ? (await import('../../core/control/cli-password.ts')).hideCliPassword(given)
      : given;
    if (argv.length !== given.length || argv.some((a, i) => a !== given[i])) process.argv = argv;
    // Only the command line can allow a file's ProxyCommand / Match exec (command-fields.ts).
    if (mayNeed('--a')) {
      const { ALLOW_PROXY_COMMAND_FLAG, allowProxyCommands } = await import(
        '../../core/control/command-fields.ts'
      );
      if (argv.slice(2).includes(ALLOW_PROXY_COMMAND_FLAG)) allowProxyCommands();
    }
    // Plugins first: their names are choices in --help and in every registry the commands read.
    const plugins = mayNeed('--p') ? (await import('../plugin/args.ts')).pluginArgs(argv.slice(2)) : [];
    if (plugins.length > 0) {
      const { loadCommandLinePlugin } = await import('../plugin/load-plugins.ts');
      for (const p of plugins) await loadCommandLinePlugin(p);
    }
    if (!(await runWithoutCommander(argv.slice(2)))) await runWithCommander(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`faultline: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(
      `faultline: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return EXIT.internal;
  }
}
