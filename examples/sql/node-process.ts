import { type DbContext, UserError } from 'faultline';
import { type Remote, shellQuote } from 'faultline/control';
import type { ProcessControl, StopSignal } from 'faultline/database';

/**
 * The SQL servers' processes on a node, through faultline's public Remote only. PostgreSQL is a process
 * tree whose children each become their own session leader (the postmaster forks a backend per
 * connection plus its checkpointer, WAL writer …), so kill, pause and resume signal the server and its
 * children by pid: a SIGKILL of the postmaster alone leaves backends holding the port and shared memory
 * (the restart refuses to run), a SIGSTOP of the postmaster alone leaves backends answering queries.
 * The server is stopped first so it forks nothing while its children are signalled.
 *
 * Everything a server has lives under /var/lib/faultline/<database>/<cluster>/<node> (data, sockets,
 * logs, pidfile), so nodes of one local cluster sharing the host's filesystem never meet.
 */
export const BASE_DIR = '/var/lib/faultline';

export function nodeDir(ctx: DbContext, db: string, node: string): string {
  const spec = ctx.remote.node(node);
  return `${BASE_DIR}/${segment(db)}/${segment(spec.labels?.cluster ?? spec.host)}/${segment(node)}`;
}

/** The address other nodes and the clients reach a node at. */
export function nodeAddress(ctx: DbContext, node: string): string {
  const spec = ctx.remote.node(node);
  return spec.labels?.privateAddress ?? spec.host;
}

function segment(s: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(s) || s.includes('..'))
    throw new UserError(`${JSON.stringify(s)} cannot be used in a path`);
  return s;
}

/** Shell: sets p to the pidfile's pid when that process is alive and is `name`, else to "". */
function livePid(pidFile: string, name: string): string {
  const pf = shellQuote(pidFile);
  return `p=""; if test -s ${pf}; then q="$(cat ${pf})"; if [ "$(cat /proc/$q/comm 2>/dev/null)" = ${shellQuote(name.slice(0, 15))} ]; then p="$q"; fi; fi`;
}

export interface ServerProcess {
  /** What /proc/PID/comm shows for the group leader. */
  processName: string;
  pidFile(ctx: DbContext, node: string): string;
  /** The signal for a prompt clean shutdown, when not TERM (ProcessControl.stopSignal). */
  stopSignal?: StopSignal;
  /** The full command line (already quoted words) and where its console output goes. */
  command(ctx: DbContext, node: string): { argv: string[]; log: string; cwd: string };
}

export async function running(remote: Remote, node: string, s: ServerProcess, pidFile: string) {
  const r = await remote.exec(node, `${livePid(pidFile, s.processName)}; test -n "$p"`, {
    sudo: true,
    check: false,
    timeoutMs: 15_000,
  });
  return r.code === 0;
}

/** Start the server detached (setsid) unless it runs; $! is the server (setsid does not fork here). */
export async function startServer(ctx: DbContext, node: string, s: ServerProcess): Promise<void> {
  const pidFile = s.pidFile(ctx, node);
  if (await running(ctx.remote, node, s, pidFile)) return;
  const { argv, log, cwd } = s.command(ctx, node);
  const cmd =
    `cd ${shellQuote(cwd)} && { setsid ${argv.map(shellQuote).join(' ')} >>${shellQuote(log)} 2>&1 </dev/null & } && ` +
    `echo $! > ${shellQuote(pidFile)}`;
  await ctx.remote.exec(node, cmd, { sudo: true, timeoutMs: 30_000 });
}

/** SIGKILL the server and its children, wait (bounded) until every one is gone, remove the pidfile. */
export async function killServer(ctx: DbContext, node: string, s: ServerProcess): Promise<void> {
  const pidFile = s.pidFile(ctx, node);
  const cmd = [
    livePid(pidFile, s.processName),
    'if test -n "$p"; then kill -STOP "$p"; all="$p $(pgrep -P "$p" | tr "\\n" " ")"; kill -KILL $all 2>/dev/null',
    'i=0; while kill -0 $all 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done',
    'kill -0 $all 2>/dev/null && { echo "pids $all still alive" >&2; exit 1; }; fi',
    `rm -f ${shellQuote(pidFile)}`,
  ].join('; ');
  await ctx.remote.exec(node, cmd, { sudo: true, timeoutMs: 30_000 });
}

/** SIGSTOP: the server first (it forks nothing more), then its children; SIGCONT: children first. */
export async function signalServer(
  ctx: DbContext,
  node: string,
  s: ServerProcess,
  signal: 'STOP' | 'CONT',
): Promise<void> {
  const kids = 'kids="$(pgrep -P "$p" | tr "\\n" " ")"';
  const order =
    signal === 'STOP'
      ? `kill -STOP "$p" && ${kids} && kill -STOP $kids 2>/dev/null; true`
      : `${kids}; kill -CONT $kids 2>/dev/null; kill -CONT "$p"`;
  const cmd = `${livePid(s.pidFile(ctx, node), s.processName)}; test -n "$p" || { echo "${s.processName} is not running" >&2; exit 1; }; ${order}`;
  await ctx.remote.exec(node, cmd, { sudo: true, timeoutMs: 15_000 });
}

/** The ProcessControl capability (what kill, pause and restart faults act on) for a server process. */
export function processControl(s: ServerProcess): ProcessControl {
  return {
    processName: s.processName,
    ...(s.stopSignal && { stopSignal: s.stopSignal }),
    pidFile: (ctx, node) => s.pidFile(ctx, node),
    start: (ctx, node) => startServer(ctx, node, s),
    kill: (ctx, node) => killServer(ctx, node, s),
    pause: (ctx, node) => signalServer(ctx, node, s, 'STOP'),
    resume: (ctx, node) => signalServer(ctx, node, s, 'CONT'),
  };
}

/**
 * Packages by their Debian names, installed with each node's own package family (apt, dnf, apk, zypper;
 * a `packageFamily: none` node installs nothing and says what it lacks): faultline's package layer.
 */
export { ensurePackages } from 'faultline/control';

/** Poll `probe` until it returns null (ready) or the deadline passes; the last reason names what is missing. */
export async function waitUntil(
  what: string,
  timeoutMs: number,
  probe: () => Promise<string | null>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not checked';
  for (;;) {
    const why = await probe().catch((err: Error) => err.message);
    if (why === null) return;
    last = why;
    if (Date.now() > deadline) throw new UserError(`${what} not ready within ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
