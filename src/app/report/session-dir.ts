import { join } from 'node:path';
import { makeOutputDir } from '../../core/util/atomic-write.ts';
import { pathName, resolveInside } from '../../core/util/paths.ts';

/**
 * The session directory of spec §6: `{{session_root}}/{{plan_slug}}/{{UTC_timestamp}}/` with `logs/`,
 * `metrics/`, `artifacts/` (and the ephemeral `artifacts/harness/`) and `findings/`. The root is the
 * caller's `--out` exactly as given (default `./test-sessions/`); it is never second-guessed.
 */
export const SESSION_SUBDIRS = ['logs', 'metrics', 'artifacts', 'artifacts/harness', 'findings'] as const;

/** `2026-11-30T03:19:09.123Z` → `2026-11-30T03-19-09Z`: sortable, and safe on every filesystem. */
export function sessionTimestamp(d: Date): string {
  return d
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}

export async function createSessionDir(root: string, slug: string, startedAt: Date): Promise<string> {
  const dir = resolveInside(root, `${pathName('plan slug', slug)}/${sessionTimestamp(startedAt)}`, {
    what: 'session directory',
    local: true,
  });
  for (const sub of SESSION_SUBDIRS) makeOutputDir(join(dir, sub));
  return dir;
}
