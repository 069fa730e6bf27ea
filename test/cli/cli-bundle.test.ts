import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import test from 'ava';
import { execa } from 'execa';

/**
 * The built command line's fast start (scripts/build-cli-bundle.mjs, bin/cli-bundle.cjs): `check`,
 * `history`, help and version run from one bundled file compiled from V8's code cache; a command line
 * that can load a plugin runs dist/'s ES modules, which the plugin's `import 'faultline'` shares. These
 * tests build a bundle from this checkout's dist/ (so `npm run build` first; CI builds it before the
 * suite) and compare it with the ES modules on the same command lines.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'faultline.js');
const built = existsSync(join(root, 'dist', 'src', 'app', 'cli', 'main.js'));
const { bundleServes, BUNDLED_COMMANDS } = createRequire(import.meta.url)('../../bin/cli-bundle.cjs') as {
  bundleServes(args: string[]): boolean;
  BUNDLED_COMMANDS: string[];
};

test('bundleServes: check, history, help and version without --plugin; nothing else', (t) => {
  for (const args of [
    ['check', 'h.jsonl', '--checker', 'linearizable'],
    ['history', 'stats', 'h.jsonl'],
    ['--help'],
    [],
    ['check', '--help'],
    ['-q', 'check', 'h.jsonl'],
  ])
    t.true(bundleServes(args), args.join(' '));
  for (const args of [
    ['check', 'h.jsonl', '--plugin', 'p.mjs'],
    ['check', 'h.jsonl', '--plugin=p.mjs'],
    ['--plugin', 'p.mjs', '--help'],
    ['run', 'plan.md'],
    ['test', '--db', 'etcd'],
    ['plan', 'check', 'plan.md'],
    ['help', 'check'],
    ['--version'],
    // A global option's value reads as the command word: such a line runs from dist/ (never the reverse).
    ['--log-level', 'debug', 'check', 'h.jsonl'],
  ])
    t.false(bundleServes(args), args.join(' '));
  t.deepEqual(BUNDLED_COMMANDS, ['check', 'history']);
});

// Without dist/ these tests show as skipped (npm run build, then run them).
const NOT_BUILT = 'skipped: dist/ is not built (npm run build, then run them)';
const skipped = (title: string, ..._rest: unknown[]) => test.skip(`${title} (${NOT_BUILT})`, () => undefined);
const maybe = built ? test : (skipped as unknown as typeof test);
const maybeSerial = built ? test.serial : (skipped as unknown as typeof test.serial);
const dir = mkdtempSync(join(tmpdir(), 'faultline-bundle-test-'));
// Inside the package (its npm packages resolve from there, as from dist/cli).
const out = join(root, 'dist', `cli-test-${process.pid}`);
const bundle = join(out, 'main.cjs');
test.after.always(() => {
  rmSync(out, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

const history = (name: string, read: number) => {
  const file = join(dir, name);
  writeFileSync(
    file,
    `${[
      { index: 0, type: 'invoke', f: 'write', value: 1, process: 0, time: 0, node: 'n1', faultEpoch: null },
      { index: 1, type: 'ok', f: 'write', value: 1, process: 0, time: 1, node: 'n1', faultEpoch: null },
      { index: 2, type: 'invoke', f: 'read', value: null, process: 1, time: 2, node: 'n1', faultEpoch: null },
      { index: 3, type: 'ok', f: 'read', value: read, process: 1, time: 3, node: 'n1', faultEpoch: null },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n')}\n`,
  );
  return file;
};

/** Runs bin/faultline.js with the test's bundle, or with none (dist/'s ES modules); logs what loaded. */
async function run(args: string[], withBundle: boolean, nodeFlags?: string[]) {
  const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, '');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(process.env.MODULE_LOG, url + '\\n'); return next(url, context); }
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  // The module log needs a flag of its own (--import); the cache test gives its own flags.
  const r = await execa('node', [...(nodeFlags ?? ['--import', register]), bin, ...args], {
    reject: false,
    // The built CLI under test, also when the suite itself runs from source (scripts/test.mjs sets it).
    env: {
      MODULE_LOG: log,
      FAULTLINE_FROM_SOURCE: '',
      FAULTLINE_CLI_BUNDLE: withBundle ? bundle : join(dir, 'no-bundle.cjs'),
    },
    extendEnv: true,
  });
  const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  // Timings differ from run to run.
  const norm = (s: string) => s.replace(/"elapsedMs":[\d.]+/g, '"elapsedMs":0').replaceAll(dir, 'DIR');
  return {
    exitCode: r.exitCode,
    stdout: norm(r.stdout),
    stderr: norm(r.stderr),
    fromDist: urls.some((u) => u.endsWith('/dist/src/app/cli/main.js')),
  };
}

if (built)
  test.serial.before(async () => {
    await execa('node', [join(root, 'scripts', 'build-cli-bundle.mjs'), '--out', out], {
      env: { FAULTLINE_FROM_SOURCE: '' },
    });
  });

maybeSerial('the build writes the bundle and its code cache', (t) => {
  t.true(statSync(bundle).size > 100_000);
  t.true(statSync(`${bundle}.cache`).size > 10_000);
});

maybe('the bundle answers as the ES modules do: exit code, output, errors', async (t) => {
  const ok = history('ok.jsonl', 1);
  const bad = history('bad.jsonl', 2);
  const cases: [string[], number][] = [
    [['check', ok, '--checker', 'linearizable', '--model', 'register'], 0],
    [['check', ok, '--checker', 'linearizable,stats', '--model', 'register', '--json'], 0],
    [['check', bad, '--checker', 'linearizable', '--model', 'register', '--out', join(dir, 'out')], 1],
    [['check', ok, '--checker', 'nope'], 254],
    [['check', join(dir, 'missing.jsonl'), '--checker', 'linearizable'], 254],
    [['check', ok, '--bogus'], 254],
    [['check', '--list'], 0],
    [['history', 'stats', ok], 0],
    [['--help'], 0],
    [['check', '--help'], 0],
  ];
  for (const [args, exit] of cases) {
    const [b, d] = [await run(args, true), await run(args, false)];
    const what = args.join(' ').replaceAll(dir, 'DIR');
    t.is(b.exitCode, exit, `${what}: ${b.stderr}`);
    t.false(b.fromDist, `${what}: the bundle ran`);
    t.true(d.fromDist, `${what}: dist/ ran`);
    t.deepEqual([b.exitCode, b.stdout, b.stderr], [d.exitCode, d.stdout, d.stderr], what);
  }
  t.true(readFileSync(join(dir, 'out', 'minimal-history.jsonl'), 'utf8').length > 0, 'the FAIL was shrunk');
});

maybe(
  'with --plugin the command runs from dist/, and the plugin shares its registries and classes',
  async (t) => {
    const api = pathToFileURL(join(root, 'dist', 'src', 'index.js')).href;
    // The plugin's checker runs the public check() with the plugin's own other checker: it is found only
    // if `import 'faultline'` reaches the registry the command registered the plugin in. Its UserError
    // reaches the command as one (exit 254), not as an internal error (255): one class, not two.
    const plugin = join(dir, 'plugin.mjs');
    writeFileSync(
      plugin,
      `import { check, UserError } from ${JSON.stringify(api)};
const result = (name, valid, evidence) => ({ checker: name, valid, evidence, scope: 'test', anomalies: [], stats: { opsConsumed: 0 } });
export default {
  checkers: [
    { name: 'inner', summary: 'valid', load: async () => ({ checker: { name: 'inner', check: () => result('inner', true, 'inner ran') } }) },
    { name: 'outer', summary: 'asks inner', load: async () => ({ checker: { name: 'outer', check: async (ops) => {
      const r = await check(ops, 'inner');
      return result('outer', r.valid, r.results[0].evidence);
    } } }) },
    { name: 'refuses', summary: 'user error', load: async () => ({ checker: { name: 'refuses', check: () => { throw new UserError('refused by the plugin'); } } }) },
  ],
};
`,
    );
    const ok = history('plugin.jsonl', 1);
    const r = await run(['check', ok, '--checker', 'outer', '--plugin', plugin, '--json'], true);
    t.is(r.exitCode, 0, r.stderr);
    t.true(r.fromDist);
    t.like(JSON.parse(r.stdout), { valid: true, results: { outer: { evidence: 'inner ran' } } });
    const refused = await run(['check', ok, '--checker', 'refuses', '--plugin', plugin], true);
    t.true(refused.fromDist);
    t.not(refused.exitCode, 255, refused.stderr);
    t.regex(refused.stdout + refused.stderr, /refused by the plugin/);
  },
);

maybeSerial(
  'a missing or rejected code cache: the command still answers and the cache is rewritten',
  async (t) => {
    const ok = history('cache.jsonl', 1);
    const args = ['check', ok, '--checker', 'linearizable', '--model', 'register'];
    const cache = `${bundle}.cache`;
    rmSync(cache);
    const first = await run(args, true, []);
    t.is(first.exitCode, 0, first.stderr);
    t.true(statSync(cache).size > 10_000, 'written after the command');
    // Not a cache V8 made: rejected, compiled from source, then replaced by a good one.
    const junk = Buffer.alloc(4096, 7);
    writeFileSync(cache, junk);
    const second = await run(args, true, []);
    t.is(second.exitCode, 0, second.stderr);
    t.deepEqual(second.stdout, first.stdout);
    t.false(readFileSync(cache).subarray(0, junk.length).equals(junk), 'rewritten');
    // Other V8 flags (V8 would reject the cache above): a cache file of their own, the first left alone.
    const before = readFileSync(cache);
    const flagged = await run(args, true, ['--max-old-space-size=512']);
    t.is(flagged.exitCode, 0, flagged.stderr);
    t.deepEqual(flagged.stdout, first.stdout);
    t.true(readFileSync(cache).equals(before));
    t.true(readdirSync(out).some((f) => /^main\.cjs\.[0-9a-f]+\.cache$/.test(f)));
  },
);
