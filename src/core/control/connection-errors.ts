import { UserError } from '../util/errors.ts';

/**
 * Typed failures of the control layer. All are UserErrors (exit 254): a node the user pointed us at is
 * unreachable, refuses our key, or presents a different host key. Messages name the node and never carry
 * passwords, key material or stdin.
 */
export class RemoteError extends UserError {
  override readonly name: string = 'RemoteError';
  constructor(
    readonly node: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${node}: ${message}`, options);
  }
}

/** TCP connect or SSH handshake failed (refused, unreachable, timed out). Retried with backoff. */
export class RemoteConnectError extends RemoteError {
  override readonly name: string = 'RemoteConnectError';
}

/** The server rejected every authentication method we offered. Never retried. */
export class RemoteAuthError extends RemoteError {
  override readonly name: string = 'RemoteAuthError';
}

/** The host key is unknown (strict mode) or differs from the recorded one. Never retried. */
export class RemoteHostKeyError extends RemoteError {
  override readonly name: string = 'RemoteHostKeyError';
  constructor(
    node: string,
    message: string,
    readonly fingerprint: string,
    readonly kind: 'unknown' | 'changed' | 'revoked',
  ) {
    super(node, message);
  }
}

/** The connection or channel broke while a command was running; whether it ran is unknown. */
export class RemoteChannelError extends RemoteError {
  override readonly name: string = 'RemoteChannelError';
}

/** The command exceeded its timeout; the remote process group was killed. */
export class RemoteTimeoutError extends RemoteError {
  override readonly name: string = 'RemoteTimeoutError';
  constructor(
    node: string,
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(node, `command timed out after ${timeoutMs} ms and was killed: ${abbreviate(command)}`);
  }
}

/** Non-zero exit. Carries the tail of stderr so the one-line message says why. */
export class RemoteCommandError extends RemoteError {
  override readonly name: string = 'RemoteCommandError';
  constructor(
    node: string,
    readonly command: string,
    readonly code: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(node, `exit ${code}: ${abbreviate(command)}${stderrTail(stderr)}`);
  }
}

export function abbreviate(s: string, max = 160): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function stderrTail(stderr: string): string {
  const lines = stderr.trimEnd().split('\n').filter(Boolean);
  if (lines.length === 0) return '';
  return ` — ${abbreviate(lines.slice(-3).join(' | '), 300)}`;
}
