import { existsSync, realpathSync } from 'node:fs';
import { posix } from 'node:path';
import { UserError } from './errors.ts';

/**
 * Confinement of every path that comes from a plan, an inventory or a flag. Two rules, one place:
 *
 * - A *name* that becomes one path segment (cluster, node, scenario, plan slug, `labels.cluster`) matches
 *   {@link PATH_NAME}: letters, digits, `_ . -`, not starting with `.` or `-`, no `..`, at most 128
 *   characters. Such a name can never be `..`, contain a `/`, or look like an option.
 * - A *relative path* chosen by input is resolved with {@link resolveInside} against the root it is allowed
 *   under; absolute paths and `..` segments are refused before anything is resolved, and (for local paths)
 *   a symlink on the way that leads outside the root is refused too.
 *
 * Both throw a {@link UserError} (exit 254) naming what was refused and why.
 */
export const PATH_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** `what` names the kind in the error (e.g. `cluster`, `node`, `scenario`, `plan slug`). */
export function pathName(what: string, name: string): string {
  if (typeof name !== 'string' || !PATH_NAME.test(name) || name.includes('..'))
    throw new UserError(
      `${what} name ${JSON.stringify(name)} cannot be used in a path: use 1-128 of letters, digits, _ . - (not starting with . or -, no ..)`,
    );
  return name;
}

export function isPathName(name: string): boolean {
  return PATH_NAME.test(name) && !name.includes('..');
}

export interface ResolveInsideOptions {
  /** Names the input in the error (e.g. `Target test file`, `--out`). */
  what?: string;
  /**
   * Local filesystem paths: also resolve symlinks of the deepest existing ancestor, so a link inside the
   * root pointing outside it is refused. Off for paths on remote nodes (checked lexically only).
   */
  local?: boolean;
}

/**
 * `root/path`, normalised, after checking that it stays inside `root`: an absolute `path` or one with a
 * `..` segment is refused outright (never "normalised back in"), and so is the empty path.
 */
export function resolveInside(root: string, path: string, opts: ResolveInsideOptions = {}): string {
  const what = opts.what ?? 'path';
  const refuse = (why: string): never => {
    throw new UserError(`${what} ${JSON.stringify(path)} refused: ${why} (allowed only under ${root})`);
  };
  if (typeof path !== 'string' || path.trim() === '') refuse('empty');
  if (path.includes('\0')) refuse('contains a NUL byte');
  if (posix.isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path)) refuse('absolute paths are not allowed');
  if (path.split(/[\\/]/).includes('..')) refuse('".." is not allowed');
  const base = posix.resolve(root);
  const full = posix.resolve(base, path);
  if (full === base || !full.startsWith(`${base}/`)) refuse('it does not name a file under the root');
  if (opts.local) {
    const realBase = realish(base);
    const real = realish(full);
    if (!real.startsWith(`${realBase}/`)) refuse(`it leads to ${real}, outside the root (symlink)`);
  }
  return full;
}

/** The path with symlinks resolved as far as it exists, the rest (not created yet) appended as given. */
function realish(path: string): string {
  let probe = path;
  while (!existsSync(probe) && probe !== posix.dirname(probe)) probe = posix.dirname(probe);
  const real = realpathSync(probe);
  return probe === path ? real : posix.join(real, posix.relative(probe, path));
}

/**
 * The path segment that keeps one cluster's node directories apart from another's: the inventory's
 * `labels.cluster` (validated, never rewritten), else the node's host with anything outside the name
 * alphabet (an IPv6 address's colons) replaced by `_`.
 */
export function clusterSegment(spec: { host: string; labels?: Record<string, string> }): string {
  const label = spec.labels?.cluster;
  if (label !== undefined) return pathName('cluster label', label);
  return pathName('host', spec.host.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[.-]/, '_'));
}
