import { shellQuote } from './quote.ts';

/**
 * Shell commands that act on a daemon and every process it started, found through /proc (no procps
 * needed on the node). Pure builders, so their text is testable without a node; pids that come back from
 * a node are data and reach a command only as digits.
 */

/**
 * What a tree is sent. Never KILL: a child whose parent is killed first is given to init before the walk
 * finds it. To kill a tree, stop it, then kill the pids the stop printed ({@link killPidsCommand}).
 */
export type TreeSignal = 'STOP' | 'CONT';

/**
 * The daemon's pid from its pidfile into `$pid`, only when that process runs with the daemon's name (a
 * pid the system gave to another process since is not the daemon); otherwise print `none` and exit.
 */
export function daemonPidLines(pidFile: string, processName: string): string[] {
  const comm = processName.slice(0, 15);
  return [
    `pid=$(cat ${shellQuote(pidFile)} 2>/dev/null | tr -dc 0-9)`,
    `if [ -z "$pid" ] || [ ! -e /proc/$pid ] || [ "$(cat /proc/$pid/comm 2>/dev/null)" != ${shellQuote(comm)} ]; then echo none; exit 0; fi`,
  ];
}

/**
 * Send `signal` to the daemon named by its pidfile (only a process whose comm matches) and to every
 * process descended from it. The daemon comes first, so that a stopped one forks no more children; each
 * child is signalled as it is found and its own children looked for in the next pass. Prints the pids,
 * the daemon's first, on one line, or `none`.
 *
 * SIGSTOP is the instant of a power failure: none of the database's processes writes, fsyncs or answers a
 * client from then on, and they are killed ({@link killPidsCommand}) only once the unsynced writes are
 * dropped. A SIGKILL of the daemon alone would leave its children running until they notice: PostgreSQL's
 * WAL writer can finish one more fsync after its postmaster dies, making durable commits that a real
 * power failure loses. SIGCONT undoes a stop that a killed run left behind.
 */
export function signalTreeCommand(pidFile: string, processName: string, signal: TreeSignal): string {
  return [...daemonPidLines(pidFile, processName), ...treeLines(signal)].join('\n');
}

/** {@link signalTreeCommand} for a pid the caller has read and checked itself. */
export function signalPidTreeCommand(pid: number, signal: TreeSignal): string {
  if (!Number.isInteger(pid) || pid < 2) throw new Error(`not a process id: ${pid}`);
  return [`pid=${pid}`, 'if [ ! -e /proc/$pid ]; then echo none; exit 0; fi', ...treeLines(signal)].join(
    '\n',
  );
}

/** Signal `$pid`, then each process descended from it as it is found; print them all, `$pid` first. */
function treeLines(signal: TreeSignal): string[] {
  return [
    `kill -${signal} "$pid" 2>/dev/null`,
    'all=$pid; new=$pid; pass=0',
    // /proc/PID/stat is "pid (comm) state ppid …"; comm may hold spaces and parentheses, so the fields
    // are read after the last ") ".
    'while [ -n "$new" ] && [ $pass -lt 32 ]; do',
    '  next=',
    '  for s in /proc/[0-9]*/stat; do',
    '    { read -r st < "$s"; } 2>/dev/null || continue',
    `    rest=\${st##*) }; set -- $rest`,
    '    for p in $new; do',
    `      if [ "$2" = "$p" ]; then c=\${s#/proc/}; c=\${c%/stat}; kill -${signal} "$c" 2>/dev/null; next="$next $c"; fi`,
    '    done',
    '  done',
    '  all="$all$next"; new=$next; pass=$((pass+1))',
    'done',
    'echo $all',
  ];
}

/**
 * Defines `gone PID` (no such process, or a zombie) and waits (bounded) until each of `$pids` is; those
 * still there when the wait ran out are listed in `$left`. A pid once seen gone is not looked at again:
 * while its parent reaps it, /proc/PID can still be there with its status unreadable, so a second look
 * could take a process already dead for a live one.
 */
const GONE_LINES = [
  'gone() { [ ! -e /proc/$1 ] || grep -q "^State:[[:space:]]*[ZX]" /proc/$1/status 2>/dev/null; }',
  'left=; for p in $pids; do i=0; while ! gone $p; do i=$((i+1)); if [ $i -ge 200 ]; then left="$left $p"; break; fi; sleep 0.05; done; done',
];

/** SIGKILL these pids (digits only; anything else is dropped) and wait until each is gone (a zombie counts). */
export function killPidsCommand(pids: readonly (string | number)[]): string {
  const valid = pids.map(String).filter((p) => /^[1-9]\d{0,9}$/.test(p));
  if (valid.length === 0) return 'true';
  return [`pids='${valid.join(' ')}'`, 'kill -KILL $pids 2>/dev/null', ...GONE_LINES].join('\n');
}

/**
 * Kill the daemon named by its pidfile and every process it started, wait (bounded) until each is gone,
 * then remove the pidfile; exits 1, leaving the pidfile and naming the pids, when one outlives the wait. The tree
 * is stopped first and then killed, so no child is given to init before it is found, and none acts
 * after its parent is gone: a teardown that killed a PostgreSQL postmaster alone left its backends
 * holding the port and the shared memory the next start needs. Safe to repeat: a daemon that is not
 * running (or a pid reused by another program) is left alone, and only the pidfile goes.
 */
export function killTreeCommand(pidFile: string, processName: string): string {
  const tree = [
    ...daemonPidLines(pidFile, processName),
    ...treeLines('STOP'),
    'pids=$all',
    'kill -KILL $pids 2>/dev/null',
    ...GONE_LINES,
    'if [ -n "$left" ]; then echo "pids$left still alive" >&2; exit 1; fi',
  ].join('\n');
  // A subshell, so the pidfile check's early exit ends the walk only; a pid that survives exits the
  // caller's script too, as a failed kill must (a start after it would find the old daemon).
  return `{ (\n${tree}\n) >/dev/null && rm -f ${shellQuote(pidFile)}; } || exit 1`;
}

/** The pids a tree command printed (digits only; `none` is none). */
export function parsePids(stdout: string): number[] {
  return stdout
    .trim()
    .split(/\s+/)
    .filter((p) => /^[1-9]\d{0,9}$/.test(p))
    .map(Number);
}
