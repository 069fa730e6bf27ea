// A module resolve hook for running faultline from its TypeScript sources (a checkout without dist/, or
// FAULTLINE_FROM_SOURCE=1): `faultline` and each `faultline/<subpath>` resolve to the source file the
// package's `exports` entry is compiled from (./dist/src/index.js ← src/index.ts), so a plugin gets the
// same module instances as the running CLI: two copies of the registries, classes and generator symbols
// would not work together.
import { readFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const exportsMap = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).exports;

/** The source URL for a `faultline` specifier, or null. */
export function sourceOf(specifier) {
  if (specifier !== 'faultline' && !specifier.startsWith('faultline/')) return null;
  const target = exportsMap[specifier === 'faultline' ? '.' : `.${specifier.slice('faultline'.length)}`];
  const file = target?.default;
  if (typeof file !== 'string' || !file.startsWith('./dist/') || !file.endsWith('.js')) return null;
  return new URL(`${file.slice('./dist/'.length, -'.js'.length)}.ts`, root).href;
}

export async function resolve(specifier, context, next) {
  return next(sourceOf(specifier) ?? specifier, context);
}
