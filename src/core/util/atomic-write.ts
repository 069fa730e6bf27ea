import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UserError } from './errors.ts';
import { kindOf } from './input-file.ts';

/**
 * The one way faultline writes a result file (converted histories, session files, reports, run files).
 *
 * The data goes to a fresh temporary file in OUT's own directory, created with O_EXCL|O_NOFOLLOW (so
 * neither an existing file nor a planted symlink is ever opened), fsynced, and renamed over OUT only
 * when OUT is missing or a regular file. So:
 * - a reader (or a crash) sees the old OUT or the complete new one, never a prefix;
 * - a device, directory, FIFO or symlink at OUT is refused (exit 254), never replaced;
 * - IN and OUT naming the same file is refused before anything is written;
 * - a killed write leaves at most a hidden `.OUT.<random>.tmp`, which nothing takes for a result.
 * Every filesystem failure is a one-line {@link UserError} naming the path.
 */
export interface AtomicWriteOptions {
  /** The file the output is derived from: writing onto it is refused. */
  input?: string;
  /** File mode of a new OUT (default 0o644, before the umask). */
  mode?: number;
  /**
   * Publish only if OUT does not exist yet (a hard link instead of a rename): the claim of a name, such
   * as a subnet, by whichever writer gets there first. An existing OUT is a {@link OutputExistsError}.
   */
  exclusive?: boolean;
  /**
   * The directory everything must stay under (`--out`, `--root`, a session's artifacts): OUT's directory,
   * after symlinks, must be inside it, so a symlink planted in a store cannot carry a write elsewhere.
   */
  root?: string;
}

/** OUT already existed under {@link AtomicWriteOptions.exclusive}: nothing was written. */
export class OutputExistsError extends UserError {
  override readonly name: string = 'OutputExistsError';
  constructor(readonly path: string) {
    super(`${path}: cannot write: it exists already`);
  }
}

const TMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw outputError(path, err);
  }
}

/** A one-line, exit-254 error for a filesystem failure on an output path. */
export function outputError(path: string, err: unknown): UserError {
  if (err instanceof UserError) return err;
  const e = err as NodeJS.ErrnoException;
  const why: Record<string, string> = {
    ENOENT: 'its directory does not exist',
    ENOTDIR: 'a parent is not a directory',
    EISDIR: 'it is a directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only filesystem',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    ELOOP: 'it is a symbolic link',
    EEXIST: 'a file appeared in the way',
    ENAMETOOLONG: 'name too long',
  };
  return new UserError(`${path}: cannot write: ${why[e.code ?? ''] ?? e.code ?? e.message}`, { cause: err });
}

/** Refuses an OUT that is not a regular file (or missing), and an OUT that is the input itself. */
export function checkOutputPath(out: string, opts: AtomicWriteOptions = {}): void {
  const st = lstatOrNull(out);
  if (st && !st.isFile())
    throw new UserError(`${out}: refusing to write: it is ${kindOf(st)}, not a regular file`);
  if (st && opts.input !== undefined) {
    let inSt: Stats | null = null;
    try {
      inSt = statSync(opts.input);
    } catch {
      inSt = null;
    }
    if (inSt && inSt.dev === st.dev && inSt.ino === st.ino)
      throw new UserError(`${out}: refusing to write: it is the input file ${opts.input}`);
  }
  if (opts.input !== undefined && resolve(opts.input) === resolve(out))
    throw new UserError(`${out}: refusing to write: it is the input file ${opts.input}`);
  const dir = dirname(resolve(out));
  const d = lstatOrNull(dir);
  if (!d) throw new UserError(`${out}: cannot write: directory ${dir} does not exist`);
  const real = d.isSymbolicLink() ? statSync(dir) : d;
  if (!real.isDirectory()) throw new UserError(`${out}: cannot write: ${dir} is not a directory`);
  if (opts.root !== undefined) insideRoot(dir, opts.root, out);
}

/** Refuses `dir` unless, after symlinks, it is `root` or inside it (the one-line error names `what`). */
export function insideRoot(dir: string, root: string, what: string = dir): void {
  let realRoot: string;
  let realDir: string;
  try {
    realRoot = realpathSync(root);
    realDir = realpathSync(dir);
  } catch (err) {
    throw outputError(what, err);
  }
  if (realDir !== realRoot && !realDir.startsWith(`${realRoot}/`))
    throw new UserError(
      `${what}: refusing to write: it leads to ${realDir}, outside ${root} (a symbolic link)`,
    );
}

/**
 * `mkdir -p` of a directory faultline names inside `root` (a session, a plan slug's directory, an
 * artifacts folder): created if missing, and refused (exit 254) if it is, or leads through, a symbolic
 * link out of `root`.
 */
export function makeDirInside(dir: string, root: string): void {
  makeOutputDir(dir);
  insideRoot(dir, root);
}

/**
 * Appends `text` to `path` (created if missing) without following a symbolic link at `path` and only
 * to a regular file inside `root`: the store's append-only index lines.
 */
export function appendFileInsideSync(path: string, text: string, root: string): void {
  checkOutputPath(path, { root });
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o644,
    );
  } catch (err) {
    throw outputError(path, err);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new UserError(`${path}: refusing to write: not a regular file`);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function tempPathFor(out: string): string {
  const full = resolve(out);
  return join(dirname(full), `.${basename(full)}.${randomBytes(6).toString('hex')}.tmp`);
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself has happened.
  }
}

/** Renames the finished temporary file over OUT, checking OUT once more right before. */
function publish(tmp: string, out: string, opts: AtomicWriteOptions): void {
  try {
    checkOutputPath(out, opts);
    if (opts.exclusive) {
      // link(2) fails with EEXIST instead of replacing: of two racing writers exactly one wins.
      linkSync(tmp, out);
      unlinkQuiet(tmp);
    } else renameSync(tmp, out);
  } catch (err) {
    unlinkQuiet(tmp);
    if (opts.exclusive && (err as NodeJS.ErrnoException).code === 'EEXIST') throw new OutputExistsError(out);
    throw outputError(out, err);
  }
  fsyncDir(dirname(resolve(out)));
}

/** Writes `data` to OUT atomically (see the module comment). */
export function writeFileAtomicSync(
  out: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): void {
  checkOutputPath(out, opts);
  const tmp = tempPathFor(out);
  let fd: number;
  try {
    fd = openSync(tmp, TMP_FLAGS, opts.mode ?? 0o644);
  } catch (err) {
    throw outputError(out, err);
  }
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkQuiet(tmp);
    throw outputError(out, err);
  }
  closeSync(fd);
  publish(tmp, out, opts);
}

export async function writeFileAtomic(
  out: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): Promise<void> {
  const f = await openAtomic(out, opts);
  try {
    await f.write(data);
  } catch (err) {
    await f.abort();
    throw err;
  }
  await f.commit();
}

/** A streamed atomic write: `write` as often as needed, then `commit` (or `abort` on failure). */
export interface AtomicFile {
  readonly path: string;
  readonly handle: FileHandle;
  write(data: string | Uint8Array): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

export async function openAtomic(out: string, opts: AtomicWriteOptions = {}): Promise<AtomicFile> {
  checkOutputPath(out, opts);
  const tmp = tempPathFor(out);
  let handle: FileHandle;
  try {
    handle = await open(tmp, TMP_FLAGS, opts.mode ?? 0o644);
  } catch (err) {
    throw outputError(out, err);
  }
  let done = false;
  const closeQuiet = () => handle.close().catch(() => undefined);
  return {
    path: out,
    handle,
    async write(data) {
      try {
        await handle.writeFile(data);
      } catch (err) {
        throw outputError(out, err);
      }
    },
    async commit() {
      if (done) return;
      done = true;
      try {
        await handle.sync();
      } catch (err) {
        await closeQuiet();
        unlinkQuiet(tmp);
        throw outputError(out, err);
      }
      await closeQuiet();
      publish(tmp, out, opts);
    },
    async abort() {
      if (done) return;
      done = true;
      await closeQuiet();
      unlinkQuiet(tmp);
    },
  };
}

/** `mkdir -p` for an output directory; a failure (a file in the way, no permission) is a 254 one-liner. */
export function makeOutputDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'EEXIST' || e.code === 'ENOTDIR'
        ? 'a file is in the way (not a directory)'
        : e.code === 'EACCES' || e.code === 'EPERM'
          ? 'permission denied'
          : (e.code ?? e.message);
    throw new UserError(`${dir}: cannot create the output directory: ${why}`, { cause: err });
  }
}

/**
 * Checks, before any work starts, that `dir` can become an output directory: it is a directory, or it
 * is missing and its nearest existing ancestor is a directory. A 254 one-liner otherwise.
 */
export function checkOutputDir(dir: string): void {
  let probe = resolve(dir);
  for (;;) {
    const st = lstatOrNull(probe);
    if (st) {
      const real = st.isSymbolicLink() ? statSync(probe) : st;
      if (!real.isDirectory())
        throw new UserError(`${dir}: cannot create the output directory: ${probe} is not a directory`);
      return;
    }
    const up = dirname(probe);
    if (up === probe) return;
    probe = up;
  }
}
