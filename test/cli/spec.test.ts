import test from 'ava';
import { Command } from 'commander';
import { addCommand } from '../../src/app/cli/commander-spec.ts';
import { type CommandSpec, type OptionSpec, parseCommandLine } from '../../src/app/cli/spec.ts';

/**
 * The start-up fast path (`parseCommandLine`) must read a command line exactly as commander does with
 * the same declaration, or decline it (undefined) so commander reads it.
 */
const globals: OptionSpec[] = [
  { flags: '--log-json', description: 'json' },
  {
    flags: '--log-level <level>',
    description: 'level',
    choices: ['info', 'warn'],
    env: 'T_LEVEL',
    default: 'info',
  },
  { flags: '--no-color', description: 'colour' },
  { flags: '-q, --quiet', description: 'quiet' },
];
const seen: { args: (string | undefined)[]; options: Record<string, unknown> }[] = [];
const spec: CommandSpec = {
  name: 'history',
  description: 'group',
  examples: [],
  subcommands: [
    {
      name: 'stats',
      description: 'stats',
      examples: [],
      arguments: [
        ['<file>', 'file'],
        ['[out]', 'out'],
      ],
      options: [
        { flags: '--from <format>', description: 'from', choices: ['auto', 'edn'], default: 'auto' },
        { flags: '-c, --checker <names>', description: 'checker' },
        {
          flags: '--plugin <path>',
          description: 'plugin',
          parse: (v, p) => [...(p as string[]), v],
          default: [],
        },
        { flags: '--allow-torn-tail', description: 'torn' },
      ],
      action: async (args, options) => {
        seen.push({ args, options });
      },
    },
  ],
};

async function viaCommander(words: string[], env: NodeJS.ProcessEnv) {
  seen.length = 0;
  const saved = process.env.T_LEVEL;
  if (env.T_LEVEL === undefined) delete process.env.T_LEVEL;
  else process.env.T_LEVEL = env.T_LEVEL;
  try {
    const program = new Command('faultline').exitOverride().configureOutput({ writeErr: () => {} });
    const { optionOf } = await import('../../src/app/cli/commander-spec.ts');
    for (const g of globals) program.addOption(optionOf(g));
    let globalValues: Record<string, unknown> = {};
    program.hook('preAction', (cmd) => {
      globalValues = program.opts();
      void cmd;
    });
    addCommand(program, spec);
    await program.parseAsync(words, { from: 'user' });
    return { ...(seen[0] as (typeof seen)[number]), globals: globalValues };
  } finally {
    if (saved === undefined) delete process.env.T_LEVEL;
    else process.env.T_LEVEL = saved;
  }
}

const agreeing: [string[], NodeJS.ProcessEnv][] = [
  [['history', 'stats', 'h.jsonl'], {}],
  [['-q', 'history', 'stats', 'h.jsonl', '--allow-torn-tail'], {}],
  [['--log-level', 'warn', 'history', 'stats', 'h.jsonl', 'out', '--from', 'edn'], {}],
  [['history', 'stats', '--from=edn', 'h.jsonl', '-c', 'a,b', '--no-color', '--log-json'], {}],
  [['history', 'stats', 'h', '--plugin', 'p1', '--plugin=p2', '--from', 'auto', '--from', 'edn'], {}],
  [['history', 'stats', 'h'], { T_LEVEL: 'warn' }],
  [['history', 'stats', 'h', '--log-level', 'info'], { T_LEVEL: 'warn' }],
];

for (const [words, env] of agreeing) {
  test.serial(`reads ${words.join(' ')} ${JSON.stringify(env)} as commander does`, async (t) => {
    const fast = parseCommandLine(words, globals, spec, env);
    t.truthy(fast, 'the fast path reads it');
    const slow = await viaCommander(words, env);
    t.deepEqual(fast?.args, slow.args);
    t.deepEqual(fast?.options, slow.options);
    t.deepEqual(fast?.globals, slow.globals);
  });
}

const declined: [string[], NodeJS.ProcessEnv][] = [
  [['history', 'stats'], {}],
  [['history', 'stats', 'a', 'b', 'c'], {}],
  [['history', 'stats', 'h', '--help'], {}],
  [['history', 'stats', 'h', '--bogus'], {}],
  [['history', 'stats', 'h', '--from', 'xml'], {}],
  [['history', 'stats', 'h', '--from'], {}],
  [['history', 'stats', 'h', '--from', '--json'], {}],
  [['history', 'stats', 'h', '--allow-torn-tail=yes'], {}],
  [['history', 'stats', '-', 'h'], {}],
  [['history', 'stats', '--', 'h'], {}],
  [['history', 'stats', 'h', '-qc', 'x'], {}],
  [['history', '--from', 'edn', 'stats', 'h'], {}],
  [['history', 'convert', 'h'], {}],
  [['history'], {}],
  [['check', 'h'], {}],
  [['history', 'stats', 'h'], { T_LEVEL: 'loud' }],
];

for (const [words, env] of declined) {
  test.serial(`declines ${words.join(' ')} ${JSON.stringify(env)} (commander reads it)`, (t) => {
    t.is(parseCommandLine(words, globals, spec, env), undefined);
  });
}

test('a parse function error is thrown as commander would throw it', async (t) => {
  const strict: CommandSpec = {
    name: 'check',
    description: 'check',
    examples: [],
    options: [
      {
        flags: '--model <m>',
        description: 'model',
        parse: (v) => {
          if (v !== 'register') throw new Error(`--model: unknown model "${v}"`);
          return v;
        },
      },
    ],
    action: async () => {},
  };
  t.throws(() => parseCommandLine(['check', '--model', 'x'], globals, strict, {}), {
    message: '--model: unknown model "x"',
  });
  const program = new Command('faultline').exitOverride();
  addCommand(program, strict);
  await t.throwsAsync(program.parseAsync(['check', '--model', 'x'], { from: 'user' }), {
    message: '--model: unknown model "x"',
  });
});
