import { RemoteCommandError, RemoteError, RemoteTimeoutError } from '../../core/control/connection-errors.ts';
import type { Remote } from '../../core/control/types.ts';
import { CallTimeoutError } from '../../core/util/bounded.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';

/**
 * A database or client hook that failed, as its author needs to read it: which hook, on which node, the
 * full command that failed and the tail of its stderr, and where the node's command log is. A hook is
 * the plugin's (or the daemon description's) code: its failure is the user's to fix, so it exits 254,
 * never as an internal error.
 */
export class HookError extends UserError {
  override readonly name: string = 'HookError';
  constructor(
    readonly hook: string,
    readonly node: string | null,
    cause: unknown,
    detail: string,
  ) {
    super(detail, { cause });
  }
}

const STDERR_LINES = 8;

/** Wraps a hook's failure (a HookError passes through unchanged). */
export function hookError(
  db: string,
  hook: string,
  node: string | null,
  err: unknown,
  remote?: Remote,
): HookError {
  if (err instanceof HookError) return err;
  const where = `${db}: ${hook}${node ? ` on ${node}` : ''} failed`;
  const parts: string[] = [];
  if (err instanceof RemoteCommandError) {
    parts.push(`exit ${err.code} from: ${err.command}`);
    const tail = err.stderr.trimEnd().split('\n').filter(Boolean).slice(-STDERR_LINES);
    if (tail.length > 0) parts.push(`stderr (last ${tail.length} lines):\n  ${tail.join('\n  ')}`);
  } else if (err instanceof RemoteTimeoutError) {
    parts.push(`timed out after ${err.timeoutMs} ms: ${err.command}`);
  } else if (err instanceof CallTimeoutError) {
    parts.push(err.message);
  } else if (err instanceof RemoteError) {
    parts.push(err.message);
  } else {
    parts.push(errorMessage(err));
  }
  const logNode = node ?? (err instanceof RemoteError ? err.node : null);
  const logPath = logNode ? remote?.commandLogPath?.(logNode) : null;
  if (logPath) parts.push(`every command run on ${logNode}: ${logPath}`);
  return new HookError(hook, node, err, `${where}: ${parts.join('\n')}`);
}

/** Runs one hook, turning any failure into a HookError. */
export async function inHook<T>(
  db: string,
  hook: string,
  node: string | null,
  remote: Remote | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw hookError(db, hook, node, err, remote);
  }
}
