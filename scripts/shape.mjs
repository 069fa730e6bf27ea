#!/usr/bin/env node
// Prints the code's shape in figures anyone can re-run and compare before and after a clean-up:
// functions over 100 lines, clone pairs of six or more lines per tree (jscpd: exact token runs, 50 tokens at least), the names the
// package exports (root and each subpath of package.json `exports`), and imports that break the layer
// rules (test/layers.test.ts is the rule; its failures are counted here). `--json` prints one JSON object.
// Usage: npm run shape [-- --json]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { functionLengths } from './function-lengths.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const TREES = ['src', 'nemeses', 'checkers'];

/** Clone pairs of ≥ 6 lines in one tree, as jscpd (token-based, exact and renamed-identifier clones) counts them. */
function duplicatePairs(tree) {
  const out = mkdtempSync(join(tmpdir(), 'faultline-shape-'));
  try {
    execFileSync(
      join(root, 'node_modules/.bin/jscpd'),
      ['--min-lines', '6', '--format', 'typescript', '--reporters', 'json', '--output', out, '--silent', tree],
      { cwd: root, stdio: 'ignore' },
    );
    return JSON.parse(readFileSync(join(out, 'jscpd-report.json'), 'utf8')).duplicates.length;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Source entry points of package.json `exports` (dist/src/x.js ← src/x.ts). */
function entryPoints() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const entries = [];
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const js = typeof target === 'string' ? target : target.default;
    if (!js?.startsWith('./dist/')) continue;
    entries.push({ subpath, file: js.replace('./dist/', '').replace(/\.js$/, '.ts') });
  }
  return entries;
}

/** The names each entry point exports, values and types alike, as the type checker resolves them. */
function exportedNames() {
  const entries = entryPoints();
  const program = ts.createProgram(
    entries.map((e) => join(root, e.file)),
    { allowImportingTsExtensions: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022 },
  );
  const checker = program.getTypeChecker();
  return entries.map((e) => {
    const sf = program.getSourceFile(join(root, e.file));
    const symbol = sf && checker.getSymbolAtLocation(sf);
    return { subpath: e.subpath, names: symbol ? checker.getExportsOfModule(symbol).length : 0 };
  });
}

/** Failing layer rules: the number of failed assertions of test/layers.test.ts and their messages. */
function layerViolations() {
  const r = spawnSync('npx', ['ava', '--tap', 'test/layers.test.ts'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
  });
  const failed = (r.stdout.match(/^not ok /gm) ?? []).length;
  const passed = (r.stdout.match(/^ok /gm) ?? []).length;
  return { rulesPassed: passed, rulesFailed: failed };
}

const fns = functionLengths();
const shape = {
  functionsOver100Lines: fns.filter((f) => f.lines > 100).length,
  longestFunction: fns[0] ? `${fns[0].lines} lines, ${fns[0].file}:${fns[0].line} ${fns[0].name}` : null,
  duplicatePairs: Object.fromEntries(TREES.map((t) => [t, duplicatePairs(t)])),
  exportedNames: exportedNames(),
  layers: layerViolations(),
};

if (process.argv.includes('--json')) console.log(JSON.stringify(shape));
else {
  console.log(`functions over 100 lines   ${shape.functionsOver100Lines} (longest: ${shape.longestFunction})`);
  for (const t of TREES) console.log(`duplicate pairs in ${`${t}/`.padEnd(9)} ${shape.duplicatePairs[t]} (jscpd, ≥ 6 lines)`);
  for (const e of shape.exportedNames) console.log(`exported names ${e.subpath.padEnd(12)} ${e.names}`);
  console.log(`layer rules                ${shape.layers.rulesPassed} passed, ${shape.layers.rulesFailed} failed (test/layers.test.ts)`);
}
