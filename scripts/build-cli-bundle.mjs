#!/usr/bin/env node
/**
 * The command line's fast start: `npm run build` (after tsc) bundles the compiled CLI (dist/src/app/cli/
 * main.js and everything it reaches in faultline; npm packages stay external) into one CommonJS file,
 * dist/cli/main.cjs, and V8's code cache for it (main.cjs.cache, bin/cli-bundle.cjs loads both). Node 20 has no code cache for ES modules and pays its module
 * loader per module: the bundle, compiled from that cache, starts `check` ~15-20 ms of CPU sooner.
 *
 * bin/faultline.js uses the bundle only for command lines that load no code of the user's (`check`,
 * `history`, help and version without `--plugin`): a plugin imports 'faultline' (dist/src/index.js) and
 * must see the same registries, logger and error classes as the command, so any command line that can
 * load one runs the ES modules in dist/ as before.
 *
 *   node scripts/build-cli-bundle.mjs [--dist DIR] [--out DIR]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: { dist: { type: 'string', default: join(root, 'dist') }, out: { type: 'string' } },
});
const dist = resolve(args.dist);
const outDir = resolve(args.out ?? join(dist, 'cli'));
const outFile = join(outDir, 'main.cjs');
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

/**
 * `import.meta` of each bundled module becomes that module's own compiled file in dist/ (worker threads
 * start from `new URL('./worker.js', import.meta.url)`, package-info walks up from it), found from the
 * bundle's directory at run time so an installed package works wherever it lives.
 */
const importMetaPerFile = {
  name: 'import-meta-per-file',
  setup(b) {
    b.onLoad({ filter: /\.js$/, namespace: 'file' }, (a) => {
      const text = readFileSync(a.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const rel = JSON.stringify(relative(outDir, a.path));
      return { contents: text.replaceAll('import.meta', `__faultlineImportMeta(${rel})`), loader: 'js' };
    });
  },
};
const { BUNDLED_COMMANDS } = createRequire(import.meta.url)('../bin/cli-bundle.cjs');
/**
 * The other commands' modules are left out (bin/faultline.js never routes them here): in their place a
 * module that fails loudly, should a change ever make the bundle reach one.
 */
const onlyBundledCommands = {
  name: 'only-bundled-commands',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\/[a-z-]+\.js$/ }, (a) => {
      const name = a.path.slice('./commands/'.length, -'.js'.length);
      if (!a.importer.endsWith(join('cli', 'main.js')) || BUNDLED_COMMANDS.includes(name)) return undefined;
      return { path: name, namespace: 'not-bundled' };
    });
    b.onLoad({ filter: /.*/, namespace: 'not-bundled' }, (a) => ({
      contents: `throw new Error(${JSON.stringify(`the command line bundle holds no '${a.path}' command (bin/cli-bundle.cjs BUNDLED_COMMANDS)`)});`,
      loader: 'js',
    }));
  },
};
/**
 * npm packages stay external (loaded from node_modules as dist/ loads them) except commander: help and
 * usage errors need it, and inside the bundle it is compiled from the code cache too.
 */
const packagesExceptCommander = {
  name: 'packages-except-commander',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (a) =>
      a.path === 'commander' || a.path.startsWith('node:') ? undefined : { path: a.path, external: true },
    );
  },
};
// resolve() answers as require() does (Node 20 has no ES-module resolver callable from CommonJS): the
// sources use it only under tsx (FAULTLINE_FROM_SOURCE), which never runs this bundle.
const banner = `"use strict";
const __faultlineImportMeta = (rel) => {
  const file = require("node:path").join(__dirname, rel);
  const url = require("node:url").pathToFileURL(file).href;
  return { url, filename: file, dirname: require("node:path").dirname(file), resolve: (s) => require("node:url").pathToFileURL(require("node:module").createRequire(file).resolve(s)).href };
};`;

await build({
  entryPoints: [join(dist, 'src', 'app', 'cli', 'main.js')],
  outfile: outFile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // Smaller source to read and hash; names kept so an internal error's stack still reads.
  minifyWhitespace: true,
  minifySyntax: true,
  // A script compiled by vm.Script cannot import() (Node 20 wants --experimental-vm-modules for it):
  // npm packages are loaded with require(), which loads an ES-module package too (Node ≥ 20.19).
  supported: { 'dynamic-import': false },
  banner: { js: banner },
  plugins: [importMetaPerFile, onlyBundledCommands, packagesExceptCommander],
  logLevel: 'warning',
});

// The code cache: V8 stores what a script has compiled so far, so the bundle first runs the command lines
// it is for (a `check`, `history stats`, the help) here, their output discarded; the cache is made after.
const work = mkdtempSync(join(tmpdir(), 'faultline-bundle-'));
try {
  const history = join(work, 'history.jsonl');
  const events = [];
  for (let i = 0; i < 10; i++) {
    const f = i % 2 === 0 ? 'write' : 'read';
    const common = { f, process: i % 3, node: 'n1', faultEpoch: null };
    events.push({ ...common, index: 2 * i, type: 'invoke', value: f === 'write' ? i : null, time: 2 * i });
    events.push({ ...common, index: 2 * i + 1, type: 'ok', value: f === 'write' ? i : i - 1, time: 2 * i + 1 });
  }
  writeFileSync(history, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const { loadBundle } = createRequire(import.meta.url)('../bin/cli-bundle.cjs');
  const bundle = loadBundle(outFile);
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const runs = [
    ['check', history, '--checker', 'linearizable', '--model', 'register'],
    ['history', 'stats', history],
    ['--help'],
  ];
  const codes = [];
  try {
    process.stdout.write = process.stderr.write = () => true;
    for (const argv of runs) codes.push(await bundle.main(['node', 'faultline', ...argv]));
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    process.exitCode = undefined;
  }
  const failed = runs.filter((_, i) => codes[i] !== 0);
  if (failed.length > 0) throw new Error(`the bundle's warm-up failed: faultline ${failed[0].join(' ')}`);
  bundle.writeCache();
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.stderr.write(`build-cli-bundle: ${relative(root, outFile)} and its code cache\n`);
