#!/usr/bin/env node
// Entry point. Runs the compiled CLI (dist/, what the published package ships). In a development
// checkout without dist/ (or with FAULTLINE_FROM_SOURCE=1) it loads the TypeScript sources through tsx,
// a development dependency, so a fresh `npm ci` is enough to run faultline.
//
// Built, a command line that loads no code of the user's (`check`, `history`, help, version: no
// `--plugin`) runs dist/cli/main.cjs, the same CLI bundled into one file and compiled from V8's code
// cache (scripts/build-cli-bundle.mjs): Node 20 pays its ES-module loader per module and keeps no code
// cache for ES modules, so this starts `check` sooner. Every other command line runs the ES modules in
// dist/, which a plugin's `import 'faultline'` shares (one set of registries). Node's own modules come
// from process.getBuiltinModule: an ES import of each would build its facade first.
const { existsSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule('node:url');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'src', 'app', 'cli', 'main.js');
const fromSource = !existsSync(compiled) || Boolean(process.env.FAULTLINE_FROM_SOURCE);

const bundle = process.env.FAULTLINE_CLI_BUNDLE ?? join(root, 'dist', 'cli', 'main.cjs');
const cliBundle = fromSource
  ? undefined
  : process.getBuiltinModule('node:module').createRequire(import.meta.url)('./cli-bundle.cjs');
if (cliBundle?.bundleServes(process.argv.slice(2)) && existsSync(bundle)) {
  const loaded = cliBundle.loadBundle(bundle);
  process.exitCode = await loaded.main(process.argv);
  if (loaded.cacheMissed) loaded.writeCache();
} else {
  let entry = compiled;
  if (fromSource) {
    let api;
    try {
      api = await import('tsx/esm/api');
    } catch {
      process.stderr.write(
        'faultline: dist/ is missing and tsx is not installed: run `npm run build` (or `npm ci`)\n',
      );
      process.exit(254);
    }
    api.register();
    // A plugin that imports 'faultline' (or a subpath) gets these same sources, not a compiled dist/.
    process.getBuiltinModule('node:module').register(new URL('./source-hook.mjs', import.meta.url));
    entry = join(root, 'src', 'app', 'cli', 'main.ts');
  }
  const { main } = await import(pathToFileURL(entry).href);
  process.exitCode = await main(process.argv);
}
