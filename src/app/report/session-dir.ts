import { appendFileSync, mkdirSync } from 'node:fs';
import { mkdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { makeDirInside } from '../../core/util/atomic-write.ts';
import { pathName } from '../../core/util/paths.ts';

/**
 * The session store, one layout for `faultline run` and `faultline test`:
 * `<root>/<plan-slug or test name>/<UTC timestamp>/`, with `<root>/<name>/latest` pointing at the newest
 * session. `run` adds spec §6's `logs/`, `metrics/`, `artifacts/` (and the ephemeral
 * `artifacts/harness/`) and `findings/`. Every session keeps its control log (everything printed:
 * `logs/control.log`; the debug-level log: `logs/control.debug.jsonl`) and each node's SSH command log
 * (`logs/ssh/<node>.commands.jsonl`). The root is the caller's `--out` exactly as given (default
 * `./test-sessions/`); it is never second-guessed.
 */
export const SESSION_SUBDIRS = ['logs', 'metrics', 'artifacts', 'artifacts/harness', 'findings'] as const;
export const DEFAULT_STORE_ROOT = './test-sessions/';
export const LATEST = 'latest';
export const CONTROL_LOG = 'logs/control.log';
export const DEBUG_LOG = 'logs/control.debug.jsonl';
export const SSH_LOG_DIR = 'logs/ssh';

/** `2026-11-30T03:19:09.123Z` → `2026-11-30T03-19-09Z`: sortable, and safe on every filesystem. */
export function sessionTimestamp(d: Date): string {
  return d
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}

/** A session directory name: the timestamp, with `-2`, `-3` … when two sessions start in one second. */
export const SESSION_NAME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z(?:-\d+)?$/;

export async function createSessionDir(
  root: string,
  name: string,
  startedAt: Date,
  subdirs: readonly string[] = SESSION_SUBDIRS,
): Promise<string> {
  pathName('plan slug', name);
  const parent = join(resolve(root), name);
  // `<root>/<name>` may exist from earlier sessions; a symbolic link planted there is refused.
  makeDirInside(parent, resolve(root));
  const stamp = sessionTimestamp(startedAt);
  let dir = join(parent, stamp);
  for (let n = 2; ; n++) {
    try {
      await mkdir(dir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      dir = join(parent, `${stamp}-${n}`);
    }
  }
  for (const sub of [...subdirs, 'logs']) await mkdir(join(dir, sub), { recursive: true });
  await pointLatest(parent, dir.slice(parent.length + 1));
  return dir;
}

/** `<name>/latest` → the session, replaced atomically (a reader never sees it missing). */
async function pointLatest(parent: string, session: string): Promise<void> {
  const link = join(parent, LATEST);
  const tmp = join(parent, `.${LATEST}.${process.pid}`);
  await rm(tmp, { force: true });
  await symlink(session, tmp);
  await rename(tmp, link);
}

/** The session a `latest` link points at, or null. */
export async function latestSession(parent: string): Promise<string | null> {
  try {
    return join(parent, await readlink(join(parent, LATEST)));
  } catch {
    return null;
  }
}

/**
 * The session's copy of everything the command printed, appended synchronously so a crash loses no
 * line. A line that cannot be written is dropped from the file only: the terminal still has it.
 */
export class ControlLog {
  readonly path: string;
  constructor(sessionDir: string) {
    this.path = join(sessionDir, CONTROL_LOG);
    mkdirSync(join(sessionDir, 'logs'), { recursive: true });
  }

  write(text: string): void {
    try {
      appendFileSync(this.path, text.endsWith('\n') ? text : `${text}\n`);
    } catch {
      // the terminal still has the line
    }
  }
}
