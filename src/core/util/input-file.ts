import { type Stats, statSync } from 'node:fs';
import { UserError } from './errors.ts';

/**
 * Input files (plans, inventories, ledgers, histories) are opened only when they are regular files: a
 * FIFO would block the read forever and a device (/dev/zero) would never end. Anything else is a
 * one-line error (exit 254) naming the file, before it is opened. A missing file is left to the
 * caller's own "cannot read" message.
 */
export function regularInput(path: string, what: string): string {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return path;
  }
  if (!st.isFile())
    throw new UserError(`${path}: cannot read the ${what}: it is ${kindOf(st)}, not a regular file`);
  return path;
}

/** What a non-regular file is, for one-line errors about inputs and outputs. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}
