import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import { COMMAND_NAMES, commandWord } from '../../src/app/cli/main.ts';

/**
 * Start-up stays small because a command line loads only what its command needs. These tests record
 * every module Node loads (a module-loader hook) and check that `history stats` and `check --checker
 * linearizable` never load zod, ssh2, pino or another command's module. (How long start-up takes is
 * measured by `npm run bench:startup`, not here.)
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'faultline-startup-'));
/** A write of 1, then a read that returned `read`: linearizable when it is 1. */
function writeThenRead(file: string, read: number): string {
  writeFileSync(
    file,
    [
      { index: 0, type: 'invoke', f: 'write', value: 1, process: 0, time: 0, node: 'n1', faultEpoch: null },
      { index: 1, type: 'ok', f: 'write', value: 1, process: 0, time: 1, node: 'n1', faultEpoch: null },
      { index: 2, type: 'invoke', f: 'read', value: null, process: 1, time: 2, node: 'n1', faultEpoch: null },
      { index: 3, type: 'ok', f: 'read', value: read, process: 1, time: 3, node: 'n1', faultEpoch: null },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n'),
  );
  return file;
}
const history = writeThenRead(join(dir, 'history.jsonl'), 1);
const hooks = join(dir, 'hooks.mjs');
writeFileSync(
  hooks,
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.MODULE_LOG, url + '\\n');
  return next(url, context);
}
`,
);
const register = join(dir, 'register.mjs');
writeFileSync(
  register,
  // Node's own modules loaded inside it (not through import, so the hook misses them) go to the log as
  // builtin:NAME when the process ends: \`performance\` loading perf_hooks, for one.
  `import { register } from 'node:module';\nimport { appendFileSync } from 'node:fs';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\nprocess.on('exit', () => appendFileSync(process.env.MODULE_LOG, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => 'builtin:' + m.slice(13) + '\\n').join('')));\n`,
);

async function modulesLoaded(name: string, args: string[]): Promise<{ exitCode: number; urls: string[] }> {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = await execa('node', ['--import', register, bin, ...args], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1', MODULE_LOG: log },
  });
  return { exitCode: r.exitCode ?? -1, urls: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

const heavy = /\/node_modules\/(zod|ssh2|pino|yaml|ioredis|lossless-json|commander)\//;
const otherCommand = (own: string) => new RegExp(`/cli/commands/(?!${own}\\.)[a-z-]+\\.(ts|js)$`);

test('history stats loads neither commander, zod, ssh2, pino, lossless-json nor other commands', async (t) => {
  const r = await modulesLoaded('stats', ['history', 'stats', history]);
  t.is(r.exitCode, 0);
  t.true(
    r.urls.some((u) => u.endsWith('/cli/commands/history.ts')),
    'the command itself was loaded',
  );
  t.deepEqual(
    r.urls.filter((u) => heavy.test(u) || otherCommand('history').test(u)),
    [],
  );
});

/**
 * What `check --checker linearizable --model register` loads on a valid history, counted: its start-up
 * is Node's module loader, paid per module. A change that adds a module to this path fails here; load
 * it where it is needed (as the other models, the shrinker and the duration parser are), or raise
 * the ceiling in the same commit and say why.
 */
// 42 since the register model simplifies crashed writes before every search (models/register-simplify.ts),
// keying values as the stale-read refutation does (src/core/history/values.ts, loaded anyway; the
// models' own register-values.ts now holds only types); `check` runs from the bundle, where the count
// costs nothing (startup.check stayed within its baseline ratio).
const CHECK_PATH_MODULES = 42;

test("check --checker linearizable loads neither commander, zod, ssh2, pino, lossless-json, other commands, other formats' readers, other models, the failure path nor perf_hooks", async (t) => {
  const r = await modulesLoaded('check', [
    '--log-level',
    'warn',
    'check',
    history,
    '--checker',
    'linearizable',
    '--model',
    'register',
  ]);
  t.is(r.exitCode, 0);
  t.true(
    r.urls.some((u) => u.includes('/checkers/linearizability/')),
    'the checker was loaded',
  );
  t.deepEqual(
    r.urls.filter(
      (u) => heavy.test(u) || otherCommand('check').test(u) || /\/history\/(read-foreign|edn)\./.test(u),
    ),
    [],
  );
  t.false(r.urls.includes('node:child_process'), 'commander brings node:child_process');
  const models = r.urls.filter((u) => /\/linearizability\/models\/[a-z-]+\.(ts|js)$/.test(u));
  t.deepEqual(
    models.map((u) => u.replace(/^.*\/models\//, '')).sort(),
    ['register-simplify.ts', 'register.ts', 'registry.ts', 'stale-read.ts'],
    'the register model only (its refutation and simplification with it)',
  );
  t.deepEqual(
    r.urls.filter((u) =>
      /\/(shrink|sub-history|html|parallel|duration|help|commander-spec|read-foreign)\.(ts|js)$/.test(u),
    ),
    [],
    'a valid check without budget flags needs none of these',
  );
  t.false(r.urls.includes('builtin:perf_hooks'), 'the global performance loads perf_hooks');
  const own = r.urls.filter(
    (u) => /^file:.*\/(src|checkers|nemeses)\//.test(u) && !u.includes('/node_modules/'),
  );
  // An ES module's import of a builtin builds the builtin's facade: node:os cost several ms of CPU here.
  // (Read from the sources: under tsx, as tests run, esbuild loads node:os itself.)
  t.deepEqual(
    own.filter((u) => /from 'node:os'/.test(readFileSync(fileURLToPath(u), 'utf8'))),
    [],
    'node:os (the control code, the gunzip of a .gz history) is not needed',
  );
  t.true(
    own.length <= CHECK_PATH_MODULES,
    `check loads ${own.length} of faultline's modules, more than ${CHECK_PATH_MODULES}:\n${own.join('\n')}`,
  );
});

test('a failing check still loads the shrinker (lazily) and reports a minimal sub-history', async (t) => {
  const bad = writeThenRead(join(dir, 'bad.jsonl'), 2);
  const out = join(dir, 'bad-out');
  const r = await modulesLoaded('check-bad', [
    'check',
    bad,
    '--checker',
    'linearizable',
    '--model',
    'register',
    '--out',
    out,
    '--timeout',
    '10s',
  ]);
  t.is(r.exitCode, 1);
  t.true(r.urls.some((u) => /\/linearizability\/shrink\.(ts|js)$/.test(u)));
  t.true(
    r.urls.some((u) => /\/util\/duration\.(ts|js)$/.test(u)),
    '--timeout loads the duration parser',
  );
  t.true(readFileSync(join(out, 'minimal-history.jsonl'), 'utf8').length > 0);
});

test('a bad flag, --help or an extra argument of a declared command goes to commander', async (t) => {
  for (const args of [
    ['history', 'stats', history, '--bogus'],
    ['history', 'stats', history, history],
    ['history', 'stats', '--help'],
    ['check', history, '--format', 'nope'],
  ]) {
    const r = await modulesLoaded('fallback', args);
    t.true(
      r.urls.some((u) => /\/node_modules\/commander\//.test(u)),
      `${args.join(' ')}: commander read it`,
    );
    t.is(r.exitCode, args.includes('--help') ? 0 : 254, args.join(' '));
  }
});

test('without a command word every command is registered (help lists them all)', async (t) => {
  const r = await execa('node', [bin, '--help'], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
  t.is(r.exitCode, 0);
  for (const c of ['check', 'history', 'cluster', 'run', 'plan', 'doctor'])
    t.regex(r.stdout, new RegExp(`\\n  ${c}\\b`));
});

test('--help without a command loads no command module and no option schema', async (t) => {
  const r = await modulesLoaded('help', ['--help']);
  t.is(r.exitCode, 0);
  t.deepEqual(
    r.urls.filter((u) => /\/cli\/commands\/|\/node_modules\/(zod|ssh2|pino)\//.test(u)),
    [],
  );
});

test('commandWord skips global options and their values', (t) => {
  t.is(commandWord(['check', 'h.jsonl']), 'check');
  t.is(commandWord(['--log-level', 'debug', 'history', 'stats']), 'history');
  t.is(commandWord(['--log-json', 'run', 'plan.md']), 'run');
  t.is(commandWord(['--help']), undefined);
  t.is(commandWord([]), undefined);
});

test('--version loads neither a command module nor commander', async (t) => {
  const r = await modulesLoaded('version', ['--version']);
  t.is(r.exitCode, 0);
  t.deepEqual(
    r.urls.filter((u) => /\/cli\/commands\/|\/node_modules\/commander\//.test(u)),
    [],
  );
});

test('every file in src/app/cli/commands is a registered command or its action', (t) => {
  const all = readdirSync(new URL('../../src/app/cli/commands/', import.meta.url));
  const actions = all.filter((f) => f.endsWith('-action.ts')).map((f) => f.slice(0, -'-action.ts'.length));
  t.deepEqual(
    actions.filter((a) => !all.includes(`${a}.ts`)),
    [],
    'an action without its registration',
  );
  const files = all
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('-action.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
  t.deepEqual([...COMMAND_NAMES], files);
});

test('history stats on a plain file does not load zlib (only a .gz history needs it)', async (t) => {
  const r = await modulesLoaded('zlib', ['history', 'stats', history]);
  t.is(r.exitCode, 0);
  t.false(r.urls.includes('node:zlib'));
});
