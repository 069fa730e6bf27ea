import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

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
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(slug)) {
    throw new Error(`plan slug "${slug}" cannot name a directory (letters, digits, . _ - only)`);
  }
  const dir = join(resolve(root), slug, sessionTimestamp(startedAt));
  for (const sub of SESSION_SUBDIRS) await mkdir(join(dir, sub), { recursive: true });
  return dir;
}
