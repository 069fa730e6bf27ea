#!/usr/bin/env node
// Entry point. Runs the compiled CLI (dist/, what the published package ships). In a development
// checkout without dist/ (or with FAULTLINE_FROM_SOURCE=1) it loads the TypeScript sources through tsx,
// a development dependency, so a fresh `npm ci` is enough to run faultline.
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'src', 'app', 'cli', 'main.js');
let entry;
if (existsSync(compiled) && !process.env.FAULTLINE_FROM_SOURCE) {
  entry = compiled;
} else {
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
  register(new URL('./source-hook.mjs', import.meta.url));
  entry = join(root, 'src', 'app', 'cli', 'main.ts');
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv);
