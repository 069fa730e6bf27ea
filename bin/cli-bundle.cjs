'use strict';
// Loads dist/cli/main.cjs (scripts/build-cli-bundle.mjs) with V8's code cache beside it. Node's own
// modules come from process.getBuiltinModule (a CommonJS require of them is as cheap; kept alike).
const fs = process.getBuiltinModule('node:fs');
const vm = process.getBuiltinModule('node:vm');
const { dirname } = process.getBuiltinModule('node:path');
const { createRequire, wrap } = process.getBuiltinModule('node:module');

/**
 * The commands the bundle holds: none of them imports a plugin's code (run, test, plan… read plans that
 * can name one, and a plugin's `import 'faultline'` must share the registries of dist/'s ES modules).
 * bin/faultline.js routes only these (and help, version) here; scripts/build-cli-bundle.mjs leaves the
 * other command modules out.
 */
const BUNDLED_COMMANDS = ['check', 'history'];

/** True when the bundle serves this command line: no `--plugin`, a bundled command or none. */
function bundleServes(args) {
  // `--version` alone reads package.json only: the ES modules answer it sooner than the bundle loads.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) return false;
  if (args.some((a) => a === '--plugin' || a.startsWith('--plugin='))) return false;
  // The first word that is not an option. A global option's value (`--log-level debug check`) reads as
  // the command here: that line runs from dist/, slower but the same.
  const word = args.find((a) => !a.startsWith('-'));
  return word === undefined || BUNDLED_COMMANDS.includes(word);
}

/**
 * The cache for this process's V8 flags: `main.cjs.cache` (what the build writes) without any, another
 * file per set of flags (`NODE_OPTIONS=--max-old-space-size=…` for a large history would otherwise make
 * V8 reject the build's cache, and runs with and without it would keep replacing each other's).
 */
function cacheFileOf(file) {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  if (flags === '') return `${file}.cache`;
  let h = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) h = Math.imul(h ^ flags.charCodeAt(i), 0x01000193) >>> 0;
  return `${file}.${h.toString(16)}.cache`;
}

/**
 * Compiles the bundle from its code cache and runs its top level. V8 rejects a cache made by another
 * Node version or under other V8 flags: then the bundle compiles from source and `cacheMissed` says the
 * caller should `writeCache()` once the command has run (the cache then holds every function the
 * command compiled, not only the top level). The write is atomic and skipped where the package
 * directory is read-only.
 */
function loadBundle(file) {
  const cacheFile = cacheFileOf(file);
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {}
  const script = new vm.Script(wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  const writeCache = () => {
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  };
  return {
    main: module.exports.main,
    cacheMissed: cachedData === undefined || script.cachedDataRejected,
    writeCache,
  };
}

module.exports = { BUNDLED_COMMANDS, bundleServes, loadBundle };
