/**
 * Does a process with this pid exist (signal 0)? EPERM means it exists but belongs to another user: it
 * counts as alive, so nothing is taken over from a process that is still running.
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
