#!/usr/bin/env node
// Entry point. Runs the compiled CLI when `npm run build` has produced it, otherwise
// loads the TypeScript sources through tsx, so a fresh `npm ci` is enough to run faultline.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'src', 'app', 'cli', 'main.js');
let entry;
if (existsSync(compiled) && !process.env.FAULTLINE_FROM_SOURCE) {
  entry = compiled;
} else {
  const { register } = await import('tsx/esm/api');
  register();
  entry = join(root, 'src', 'app', 'cli', 'main.ts');
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv);
