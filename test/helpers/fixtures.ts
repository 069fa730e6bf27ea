import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The external reference corpora (Porcupine's, Elle's and Jepsen's histories with their known verdicts):
 * `FAULTLINE_FIXTURES`, else `../shared/fixtures` next to the checkout. They are never copied into the
 * repository, so a plain clone has none: the suites that read them are the conformance suite, which runs
 * when they are present and is otherwise skipped, saying so once per suite. The default suite never
 * needs them (see conformance.ts). Free of ava: the benchmarks read it too. Always ends with a slash.
 */
export const fixturesDir: string = (() => {
  const env = process.env.FAULTLINE_FIXTURES;
  if (env) return env.endsWith('/') ? env : `${env}/`;
  return fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));
})();

/** Whether the reference corpora are here. */
export const fixturesPresent: boolean = existsSync(fixturesDir);

/** Why a conformance suite cannot run here, or null when it can. */
export const fixturesAbsence: string | null = fixturesPresent
  ? null
  : `no reference fixtures at ${fixturesDir} (set FAULTLINE_FIXTURES=DIR, or place them at ../shared/fixtures)`;

/** Absolute path of a fixture, from its path relative to the fixtures directory. */
export function fixture(rel: string): string {
  return fixturesDir + rel;
}
