import { fileURLToPath } from 'node:url';

/**
 * The shared fixtures directory (`../shared/fixtures` next to the repo), never copied into the repo.
 * `FAULTLINE_FIXTURES` overrides it (a CI checkout elsewhere). Always ends with a slash.
 */
export const fixturesDir: string = (() => {
  const env = process.env.FAULTLINE_FIXTURES;
  if (env) return env.endsWith('/') ? env : `${env}/`;
  return fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));
})();

/** Absolute path of a fixture, from its path relative to the fixtures directory. */
export function fixture(rel: string): string {
  return fixturesDir + rel;
}
