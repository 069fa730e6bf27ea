import test from 'ava';
import type { Command } from 'commander';
import { execa } from 'execa';
import { EXIT_CODE_TABLE } from '../../src/app/cli/help.ts';
import { buildProgram } from '../../src/app/cli/main.ts';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const run = (args: string[], env: Record<string, string> = {}) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1', ...env } });

function allCommands(c: Command, path: string[] = []): { path: string; cmd: Command }[] {
  const here = { path: ['faultline', ...path].join(' '), cmd: c };
  return [here, ...c.commands.flatMap((sub) => allCommands(sub, [...path, sub.name()]))];
}

function helpOf(c: Command): string {
  let text = '';
  c.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
  c.outputHelp();
  return text;
}

test('every command’s --help ends with 1–3 examples of itself and the one exit-code table', async (t) => {
  const program = await buildProgram();
  const commands = allCommands(program).filter((c) => c.cmd.name() !== 'help');
  t.true(commands.length >= 18, `${commands.length} commands`);
  for (const { path, cmd } of commands) {
    const help = helpOf(cmd);
    t.true(help.trimEnd().endsWith(EXIT_CODE_TABLE), `${path}: ends with the exit-code table`);
    const examples = /\nExamples:\n((?: {2}\$ .*\n)+)/.exec(help)?.[1]?.trim().split('\n') ?? [];
    t.true(examples.length >= 1 && examples.length <= 3, `${path}: ${examples.length} examples`);
    for (const e of examples)
      t.true(e.includes(`$ ${path === 'faultline' ? 'faultline ' : path}`), `${path}: ${e}`);
  }
});

test('--log-level takes only its choices, from the flag or FAULTLINE_LOG_LEVEL; bad values exit 254', async (t) => {
  const flag = await run(['--log-level', 'bogus', 'cluster', 'list']);
  t.is(flag.exitCode, 254);
  t.regex(flag.stderr, /'bogus' is invalid\. Allowed choices are trace, debug, info, warn, error, fatal/);
  const env = await run(['cluster', 'list'], { FAULTLINE_LOG_LEVEL: 'loud' });
  t.is(env.exitCode, 254);
  t.regex(env.stderr, /from env 'FAULTLINE_LOG_LEVEL' is invalid/);
  // The flag wins over the variable, so a good flag rescues a bad variable.
  t.is((await run(['--log-level', 'warn', 'cluster', 'list'], { FAULTLINE_LOG_LEVEL: 'loud' })).exitCode, 0);
  t.is((await run(['cluster', 'list'], { FAULTLINE_LOG_LEVEL: 'error' })).exitCode, 0);
});

test('--no-color, NO_COLOR and --quiet are accepted by every command', async (t) => {
  for (const args of [
    ['--no-color', 'cluster', 'list'],
    ['--quiet', 'cluster', 'list'],
    ['-q', 'cluster', 'list'],
  ]) {
    const r = await run(args);
    t.is(r.exitCode, 0, `${args.join(' ')}: ${r.stderr}`);
  }
  const help = await run(['--help']);
  t.regex(help.stdout, /--no-color/);
  t.regex(help.stdout, /NO_COLOR/);
  t.regex(help.stdout, /-q, --quiet/);
});
