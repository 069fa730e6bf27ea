import { basename } from 'node:path';
import { RemoteChannelError } from '../../core/control/connection-errors.ts';
import { killTreeCommand } from '../../core/control/process-tree.ts';
import { envPrefix, shellJoin, shellQuote } from '../../core/control/quote.ts';
import type { ExecOptions, ExecResult, Remote } from '../../core/control/types.ts';
import type { DbContext, ProcessControl } from '../../core/database/capabilities.ts';
import { retry, waitFor } from '../../core/util/retry.ts';

/**
 * Pidfile-driven daemon control over the remote shell: the one place that starts, kills, pauses and
 * resumes a DB process. Works on any Linux node (setsid/nohup/kill only) and, on the local cluster,
 * inside each node's own PID namespace (the pid in the file is the node's view).
 */
export interface DaemonSpec {
  binary: string;
  /** The process name (/proc/PID/comm) when `binary` is a wrapper that execs the real one. */
  processName?: string;
  args: readonly string[];
  /** Environment of the daemon (names are checked, values quoted). */
  env?: Record<string, string>;
  pidFile: string;
  logFile: string;
  cwd: string;
}

/**
 * Runs a command that is safe to repeat (kill by pidfile, mkdir, rm, a status probe) and repeats it when
 * the SSH channel was lost mid-command (the outcome is then unknown, and repeating is harmless).
 * Bounded: 3 attempts.
 */
export async function execIdempotent(
  remote: Remote,
  node: string,
  command: string,
  opts: ExecOptions = {},
): Promise<ExecResult> {
  return retry(() => remote.exec(node, command, opts), {
    attempts: 3,
    retryable: lostChannel,
    what: `${node}: SSH channel lost during an idempotent command`,
  });
}

const lostChannel = (err: unknown) => err instanceof RemoteChannelError;

/** Start unless already running. The daemon is detached (setsid) so it outlives the SSH channel. */
export async function startDaemon(remote: Remote, node: string, d: DaemonSpec): Promise<void> {
  const name = d.processName ?? basename(d.binary);
  if (await daemonRunning(remote, node, d.pidFile, name)) return;
  const cmd = startDaemonCommand(d);
  // Channel lost: the daemon may or may not have started. Start again only if it is not running.
  await retry(
    async (attempt) => {
      if (attempt > 1 && (await daemonRunning(remote, node, d.pidFile, name))) return;
      await remote.exec(node, cmd, { sudo: true, timeoutMs: 30_000 });
    },
    { attempts: 3, retryable: lostChannel, what: `${node}: SSH channel lost while starting ${name}` },
  );
}

/**
 * The shell command that starts the daemon detached and writes its pidfile (it does not check whether
 * one runs already). `rawArgs` is appended unquoted: shell words the caller built itself, e.g. an
 * argument from a variable the command computed before (`--initial-cluster "$ic"`).
 */
export function startDaemonCommand(d: DaemonSpec, rawArgs = ''): string {
  // setsid without -f does not fork here (a non-interactive shell's job is no group leader), so $! is the daemon.
  // `env` execs the binary in place, so the pid stays the daemon's.
  const env =
    d.env && Object.keys(d.env).length > 0
      ? `${envPrefix(d.env)
          .replace(/^export /, 'env ')
          .replace(/; $/, '')} `
      : '';
  return (
    `mkdir -p ${shellQuote(d.cwd)} && cd ${shellQuote(d.cwd)} && ` +
    `{ setsid ${env}${shellJoin([d.binary, ...d.args])}${rawArgs ? ` ${rawArgs}` : ''} >>${shellQuote(d.logFile)} 2>&1 </dev/null & } && ` +
    `echo $! > ${shellQuote(d.pidFile)}`
  );
}

/**
 * Shell snippet: sets p to the pid in the pidfile only when that process is alive and really is `name`
 * (a pidfile left by an earlier incarnation of the node may name an unrelated process, even its sshd).
 * A zombie is not alive: between a daemon's exit and its reaping, /proc still names it, and a restart
 * that polled the old pid gone must not then skip the start as "already running".
 */
function livePid(pidFile: string, name: string): string {
  const pf = shellQuote(pidFile);
  return `p=""; if test -s ${pf}; then q="$(cat ${pf})"; if [ "$(cat /proc/$q/comm 2>/dev/null)" = ${shellQuote(name.slice(0, 15))} ] && ! grep -q '^State:[[:space:]]*[ZX]' /proc/$q/status 2>/dev/null; then p="$q"; fi; fi`;
}

/**
 * After a start: the pid faultline recorded must still be the named process a moment later. A start
 * command that is a script which forks the daemon into the background (or a daemon that daemonizes
 * itself) leaves a pid that is gone, or that names the script: kill, pause and restart would then act on
 * nothing. That is a clear error here, not a ready check that times out later.
 */
export async function ensureStartedProcess(remote: Remote, node: string, d: DaemonSpec): Promise<void> {
  const name = d.processName ?? basename(d.binary);
  const pf = shellQuote(d.pidFile);
  // A wrapper (the clock nemesis's libfaketime script) takes a moment to exec the daemon: up to 3 s.
  const probe =
    `sleep 0.5; i=0; while :; do q="$(cat ${pf} 2>/dev/null)"; c="$(cat /proc/$q/comm 2>/dev/null)"; ` +
    `if [ -z "$q" ] || [ -z "$c" ] || grep -q '^State:[[:space:]]*[ZX]' /proc/$q/status 2>/dev/null; then echo "gone $q"; break; fi; ` +
    `if [ "$c" = ${shellQuote(name.slice(0, 15))} ]; then echo ok; break; fi; ` +
    `i=$((i+1)); if [ $i -ge 25 ]; then echo "other $q $c"; break; fi; sleep 0.1; done`;
  const r = await execIdempotent(remote, node, probe, { sudo: true, check: false, timeoutMs: 15_000 });
  const [state, pid, comm] = r.stdout.trim().split(/\s+/);
  if (state === 'gone') {
    const tail = await remote
      .exec(node, `tail -n 5 ${shellQuote(d.logFile)}`, { sudo: true, check: false, timeoutMs: 10_000 })
      .then((x) => x.stdout.trim().replace(/\n/g, ' | '))
      .catch(() => '');
    throw new Error(
      `${node}: ${name} (pid ${pid ?? '?'}) exited right after its start. If the start command forks the daemon into the background (a script, or a daemon that daemonizes), nothing is left to kill or pause: run it in the foreground (in a script, \`exec\` the daemon), or declare \`pidfile:\` for a daemon that writes its own; console: ${d.logFile}${tail ? ` (last lines: ${tail})` : ''}`,
    );
  }
  if (state === 'other')
    throw new Error(
      `${node}: the started process (pid ${pid}) is \`${comm}\`, not \`${name}\`: a start script must \`exec\` the daemon so the pid is the daemon's (or set \`processName:\` to what /proc/PID/comm shows)`,
    );
}

export async function daemonRunning(
  remote: Remote,
  node: string,
  pidFile: string,
  name: string,
): Promise<boolean> {
  const r = await execIdempotent(remote, node, `${livePid(pidFile, name)}; test -n "$p"`, {
    sudo: true,
    check: false,
    timeoutMs: 15_000,
  });
  return r.code === 0;
}

/**
 * The process capability of a daemon with a pidfile: its own start, and a kill of the daemon and every
 * process it started, by the pidfile (never by process name across nodes). Pauses and resumes are the
 * process nemesis's: it signals the same tree from the pidfile and records how to undo it.
 */
export function pidfileProcess(
  processName: string,
  pidFile: (ctx: DbContext, node: string) => string,
  start: (ctx: DbContext, node: string) => Promise<void>,
): ProcessControl {
  return {
    processName,
    pidFile,
    start,
    kill: (ctx, node) => killDaemon(ctx.remote, node, pidFile(ctx, node), processName),
  };
}

/** SIGKILL the daemon and its children by pidfile, wait (bounded) until all are gone, remove the pidfile. */
export async function killDaemon(remote: Remote, node: string, pidFile: string, name: string): Promise<void> {
  // Safe to repeat: a daemon already gone leaves only its pidfile to remove.
  await execIdempotent(remote, node, killTreeCommand(pidFile, name), { sudo: true, timeoutMs: 30_000 });
}

/**
 * Start a daemon that forks and writes its own pidfile (unless already running), then wait (bounded)
 * until the pidfile names a live process of the right name.
 */
export async function startSelfDaemonizing(remote: Remote, node: string, d: DaemonSpec): Promise<void> {
  const name = d.processName ?? basename(d.binary);
  if (await daemonRunning(remote, node, d.pidFile, name)) return;
  const cmd =
    `mkdir -p ${shellQuote(d.cwd)} && cd ${shellQuote(d.cwd)} && ` +
    `setsid ${shellJoin([d.binary, ...d.args])} >>${shellQuote(d.logFile)} 2>&1 </dev/null`;
  await remote.exec(node, cmd, { sudo: true, timeoutMs: 30_000 });
  const up = await waitFor(() => daemonRunning(remote, node, d.pidFile, name), 10_000, 100);
  if (!up) throw new Error(`${node}: ${name} did not write a live pid to ${d.pidFile}`);
}
