import { envPrefix, shellQuote } from './quote.ts';
import type { ExecOptions, NodeSpec } from './types.ts';

/** Seconds given to the remote process group between TERM and KILL once its timeout expires. */
export const KILL_GRACE_S = 2;

/**
 * The command line actually sent to the node. The user's command runs under `sh -c` inside GNU
 * `timeout`, which puts it in its own process group and signals the whole group when time is up, so the
 * remote work really ends (closing an SSH channel does not kill anything without a pty). With sudo the
 * timeout runs *inside* sudo so it has the rights to kill what it started. The sudo password, when there
 * is one, is fed on stdin (`sudo -S -p ''`), never on the command line.
 */
export function buildRemoteCommand(
  spec: NodeSpec,
  command: string,
  opts: ExecOptions,
  timeoutMs: number,
  hasSudoPassword: boolean,
): string {
  return `exec ${remoteArgv(spec, command, opts, timeoutMs, hasSudoPassword)}`;
}

/** The same command line without the leading `exec`, for a shell that must survive it (a runner). */
export function remoteArgv(
  spec: NodeSpec,
  command: string,
  opts: ExecOptions,
  timeoutMs: number,
  hasSudoPassword: boolean,
): string {
  let argv = `sh -c ${shellQuote(remoteScript(command, opts))}`;
  if (timeoutMs > 0) argv = `timeout -k ${KILL_GRACE_S} ${(timeoutMs / 1000).toFixed(3)} ${argv}`;
  if (needsSudo(spec, opts)) {
    argv = hasSudoPassword ? `sudo -S -p '' -- ${argv}` : `sudo -n -- ${argv}`;
  }
  return argv;
}

/** The shell text the node's `sh` runs: the env exports, the `cd`, then the command. */
export function remoteScript(command: string, opts: ExecOptions): string {
  const inner = envPrefix(opts.env) + command;
  return opts.cwd ? `cd ${shellQuote(opts.cwd)} && ${inner}` : inner;
}

/** Whether the command is wrapped in sudo: asked for, and the login user is not root already. */
export function needsSudo(spec: NodeSpec, opts: ExecOptions): boolean {
  return (opts.sudo ?? false) && spec.user !== 'root';
}

/**
 * GNU timeout exits 124 after TERM, 128+9 when it had to KILL; a runner's watchdog (ssh-runner.ts) reports
 * its timeouts the same way.
 */
export function looksTimedOut(code: number, elapsedMs: number, timeoutMs: number): boolean {
  return timeoutMs > 0 && (code === 124 || code === 137) && elapsedMs >= timeoutMs * 0.9;
}
