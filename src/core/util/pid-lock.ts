import { linkSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { processExists } from './pid.ts';
import { pollFor } from './retry.ts';
import { terminalText } from './terminal.ts';

/**
 * A lock held by a live process: a file naming its holder, made with `link` so that it appears whole
 * or not at all (a holder read half-written would look dead and be taken over). A lock whose holder is
 * gone (killed, or the host rebooted) is stale and taken over; a pid reused by another process is told
 * apart by the process's start time, where `/proc` gives it. The file is read as data: a holder it
 * cannot parse counts as gone.
 */
export interface LockHolder {
  pid: number;
  /** The holder's start time in clock ticks since boot (`/proc/PID/stat` field 22), where known. */
  startTicks: number | null;
  /** What holds it, for a person to read (`faultline run plans/etcd.md …`). */
  what: string;
  /** When it was taken (ISO time). */
  since: string;
}

const HolderSchema = z
  .object({
    pid: z.number().int().positive(),
    startTicks: z.number().int().nonnegative().nullable(),
    what: z.string().max(1000),
    since: z.string().max(64),
  })
  .strict();

/** A process's start time in clock ticks since boot, or null where `/proc` does not say. */
export function processStartTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[22 - 3]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** Whether the process that took the lock still runs (not merely some process with its pid). */
export function holderAlive(h: LockHolder): boolean {
  if (!processExists(h.pid)) return false;
  if (h.startTicks === null) return true;
  const now = processStartTicks(h.pid);
  return now === null || now === h.startTicks;
}

interface Seen {
  /** The holder the file names, or null when it names none that can be read. */
  holder: LockHolder | null;
  ino: number;
}

/** The lock file's holder and identity, or null when there is no lock file. */
function readLock(path: string): Seen | null {
  let ino: number;
  let text: string;
  try {
    ino = lstatSync(path).ino;
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return { holder: parseHolder(text), ino };
}

function parseHolder(text: string): LockHolder | null {
  const trimmed = text.trim();
  // Locks written before holders were described held only the pid.
  if (/^[1-9][0-9]{0,9}$/.test(trimmed))
    return { pid: Number(trimmed), startTicks: null, what: '', since: '' };
  try {
    const r = HolderSchema.safeParse(JSON.parse(trimmed));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** The live holder of the lock at `path`, or null (no lock, or its holder is gone). */
export function lockHolder(path: string): LockHolder | null {
  const seen = readLock(path);
  return seen?.holder && holderAlive(seen.holder) ? seen.holder : null;
}

/**
 * Remove the stale lock file seen as `ino`, and only that one; true when this call removed it. Of all
 * who saw the same stale lock, one removes it: the one that creates its claim (`PATH.stale-INO`,
 * created exclusively) first, and only after looking again under the claim. Nothing else removes a lock
 * with that inode meanwhile (its holder is gone, and every other remover needs the claim), so the look
 * and the removal see the same file, and a lock someone has taken since is never touched. Moving the
 * file aside and putting back a live lock found there instead, as this once did, left a moment with no
 * lock file in which a third process could take the lock too: two holders.
 */
function removeStale(path: string, ino: number): boolean {
  const claim = `${path}.stale-${ino}`;
  try {
    writeFileSync(claim, `${JSON.stringify(ownHolder('removing a stale lock'))}\n`, {
      flag: 'wx',
      mode: 0o644,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    clearAbandonedClaim(claim);
    return false;
  }
  try {
    const now = readLock(path);
    if (now === null || now.ino !== ino || (now.holder && holderAlive(now.holder))) return false;
    rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(claim, { force: true });
  }
}

/** A claim is held for a few system calls: one this old whose maker is gone was left by a killed process. */
const ABANDONED_CLAIM_MS = 10_000;

/**
 * Remove a claim its maker left when it was killed between making and removing it (otherwise that stale
 * lock could never be taken over). Only an old claim of a process that is gone, so a live remover's claim
 * stands; two processes clearing the same abandoned claim at the same instant is the one case left.
 */
function clearAbandonedClaim(claim: string): void {
  try {
    const age = Date.now() - lstatSync(claim).mtimeMs;
    if (age < ABANDONED_CLAIM_MS) return;
    const maker = parseHolder(readFileSync(claim, 'utf8'));
    if (maker && holderAlive(maker)) return;
    rmSync(claim, { force: true });
  } catch {
    // Gone already: its remover finished.
  }
}

/** Block this thread for `ms` (the lock is taken synchronously; a remover holds its claim for moments). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** This process as a holder. */
export function ownHolder(what: string): LockHolder {
  return {
    pid: process.pid,
    startTicks: processStartTicks(process.pid),
    what: what.slice(0, 1000),
    since: new Date().toISOString(),
  };
}

/**
 * Take the lock at `path` for this process: null when taken, else the live holder that has it. A stale
 * lock is taken over. The file appears whole: it is written beside the lock and linked into place.
 */
export function tryTakeLock(path: string, what: string): LockHolder | null {
  mkdirSync(dirname(path), { recursive: true });
  const draft = `${path}.${process.pid}.new`;
  writeFileSync(draft, `${JSON.stringify(ownHolder(what))}\n`, { mode: 0o644 });
  try {
    // Rounds: each either takes the lock, finds a live holder, or clears a stale one (or, when another
    // process is clearing it, gives that one a moment).
    for (let round = 0; round < 200; round++) {
      try {
        linkSync(draft, path);
        return null;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const seen = readLock(path);
      if (seen === null) continue;
      if (seen.holder && holderAlive(seen.holder)) return seen.holder;
      if (!removeStale(path, seen.ino)) sleepSync(5);
    }
    throw new Error(`${path}: the lock changed hands too often to take`);
  } finally {
    rmSync(draft, { force: true });
  }
}

/** Give the lock back, if this process still holds it (a forced removal may have taken it away). */
export function releaseLock(path: string): void {
  const seen = readLock(path);
  if (seen?.holder?.pid === process.pid) rmSync(path, { force: true });
}

export interface TakeLockOptions {
  /** How long to wait for a live holder to let go, ms (0: do not wait). */
  timeoutMs: number;
  /** Pause between attempts, ms. */
  stepMs?: number;
  /** Called once, when the first attempt finds a live holder and the call is going to wait. */
  onWait?: (holder: LockHolder) => void;
  signal?: AbortSignal;
}

/**
 * Take the lock, waiting up to `timeoutMs` for a live holder to let go: the release function, or the
 * holder still in the way when the time ran out.
 */
export async function takeLock(
  path: string,
  what: string,
  o: TakeLockOptions,
): Promise<{ release: () => void; holder: null } | { release: null; holder: LockHolder }> {
  let told = false;
  const holder = await pollFor(
    async () => {
      const h = tryTakeLock(path, what);
      if (h !== null && !told && o.timeoutMs > 0) o.onWait?.(h);
      told ||= h !== null;
      return h;
    },
    (h) => h === null,
    { timeoutMs: o.timeoutMs, stepMs: o.stepMs ?? 1000, ...(o.signal && { signal: o.signal }) },
  );
  return holder === null ? { release: () => releaseLock(path), holder: null } : { release: null, holder };
}

/**
 * A stale lock removed (its holder is gone); a live one reported, never touched. For commands that
 * tidy up after crashed runs.
 */
export function clearStaleLock(path: string): { removed: boolean; holder: LockHolder | null } {
  const seen = readLock(path);
  if (seen === null) return { removed: false, holder: null };
  if (seen.holder && holderAlive(seen.holder)) return { removed: false, holder: seen.holder };
  // Removed here or by another process removing it at the same moment: either way it is gone.
  removeStale(path, seen.ino);
  return { removed: true, holder: null };
}

/**
 * `pid 1234 (faultline run plans/etcd.md …) since 2026-12-07T14:05:01Z`, on one line. The lock file is
 * data: its text is shown with control characters and newlines escaped, never sent to the terminal.
 */
export function describeHolder(h: LockHolder): string {
  const shown = (s: string) => terminalText(s).replace(/\n/g, '\\n');
  const what = h.what ? ` (${shown(h.what)})` : '';
  const since = h.since ? ` since ${shown(h.since.replace(/\.\d+Z$/, 'Z'))}` : '';
  return `pid ${h.pid}${what}${since}`;
}
