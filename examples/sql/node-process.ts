import { type DbContext, UserError } from 'faultline';
import { type Remote, shellQuote } from 'faultline/control';
import { type ProcessControl, pidfileProcess, type StopSignal } from 'faultline/database';

/**
 * The SQL servers' processes on a node, through faultline's public Remote only. PostgreSQL is a process
 * tree whose children each become their own session leader (the postmaster forks a backend per
 * connection plus its checkpointer, WAL writer …). faultline's kill (the teardown's, `pidfileProcess`)
 * and its process faults act on the server and every process it started: a SIGKILL of the postmaster
 * alone leaves backends holding the port and shared memory (the restart refuses to run), a SIGSTOP of
 * the postmaster alone leaves backends answering queries.
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

/**
 * The ProcessControl capability for a server process: faultline's own kill of the server and the
 * processes it started (teardown), this module's start; process faults act on the same pidfile.
 */
export function processControl(s: ServerProcess): ProcessControl {
  return {
    ...pidfileProcess(
      s.processName,
      (ctx, node) => s.pidFile(ctx, node),
      (ctx, node) => startServer(ctx, node, s),
    ),
    ...(s.stopSignal && { stopSignal: s.stopSignal }),
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
