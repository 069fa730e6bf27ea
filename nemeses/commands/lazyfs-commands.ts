import { daemonPidLines } from '../../src/core/control/process-tree.ts';
import { shellQuote } from '../../src/core/control/quote.ts';
import type { StopSignal } from '../../src/core/database/capabilities.ts';

/**
 * Shell commands the lazy-filesystem nemesis runs on a node. Pure builders (and parsers of what they
 * print), so their text is testable without a node. Paths are always shell-quoted.
 */

export const LAZYFS_FSTYPE = 'fuse.faultline-lazyfs';
/** Debian's interpreter (fusepy is a Debian package), never a user's pyenv or venv shim. */
export const PYTHON = '/usr/bin/python3';

/** Prints `ok` when the node can mount the lazy filesystem, else the reason. */
export function capabilityCommand(): string {
  return `if [ ! -c /dev/fuse ]; then echo 'no /dev/fuse'; elif ! ${PYTHON} -c 'import fusepy' 2>/dev/null; then echo 'no python3-fusepy'; else echo ok; fi`;
}

/** Write the program (base64 of its text) to `path`. */
export function installProgramCommand(path: string, programBase64: string): string {
  const dir = path.slice(0, path.lastIndexOf('/'));
  return `mkdir -p ${shellQuote(dir)} && printf '%s' ${shellQuote(programBase64)} | base64 -d > ${shellQuote(path)}.tmp && mv ${shellQuote(path)}.tmp ${shellQuote(path)}`;
}

/** Prints `mounted` when DIR is a lazy-filesystem mount point, else `absent`. */
export function mountedCommand(dir: string): string {
  return `awk -v d=${shellQuote(dir)} '$2 == d && $3 == "${LAZYFS_FSTYPE}" {m=1} END {print m ? "mounted" : "absent"}' /proc/self/mounts`;
}

/** Every lazy-filesystem mount point on the node, one a line. */
export function listMountsCommand(): string {
  return `awk '$3 == "${LAZYFS_FSTYPE}" {print $2}' /proc/self/mounts`;
}

/**
 * Stop the daemon by pidfile (only a process whose comm matches), with `signal` first and SIGKILL after
 * `graceS` seconds; waits until it is gone (a zombie counts as gone). Prints the pid it stopped, or `none`.
 */
export function stopDaemonCommand(
  pidFile: string,
  processName: string,
  signal: StopSignal | 'KILL',
  graceS = 10,
): string {
  return [
    ...daemonPidLines(pidFile, processName),
    `kill -${signal} "$pid" 2>/dev/null`,
    'gone() { [ ! -e /proc/$pid ] || grep -q "^State:[[:space:]]*[ZX]" /proc/$pid/status 2>/dev/null; }',
    `i=0; while ! gone && [ $i -lt ${graceS * 20} ]; do sleep 0.05; i=$((i+1)); done`,
    'if ! gone; then kill -KILL "$pid" 2>/dev/null; i=0; while ! gone && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; fi',
    'echo "$pid"',
  ].join('\n');
}

/**
 * Put DIR on the lazy filesystem: DIR moves to BACKING (same parent, so a rename), an empty DIR with the
 * same owner and mode becomes the mount point, and the filesystem is started detached; waits up to 15 s
 * for the mount. The daemon must be stopped first.
 */
export function mountCommand(o: {
  dir: string;
  backing: string;
  socket: string;
  program: string;
  log: string;
}): string {
  const d = shellQuote(o.dir);
  const b = shellQuote(o.backing);
  return [
    'set -e',
    `if [ -e ${b} ]; then echo "backing directory ${o.backing} exists: a previous fault was not healed" >&2; exit 3; fi`,
    `mkdir -p ${d}`,
    `owner=$(stat -c %u:%g ${d}); mode=$(stat -c %a ${d})`,
    `mv ${d} ${b}`,
    `mkdir ${d} && chown "$owner" ${d} && chmod "$mode" ${d}`,
    `rm -f ${shellQuote(o.socket)}`,
    `setsid ${PYTHON} ${shellQuote(o.program)} mount ${b} ${d} ${shellQuote(o.socket)} </dev/null >${shellQuote(o.log)} 2>&1 &`,
    `i=0; while [ "$(${mountedCommand(o.dir)})" != mounted ] || [ ! -S ${shellQuote(o.socket)} ]; do`,
    `  i=$((i+1)); if [ $i -gt 300 ]; then echo "the lazy filesystem did not mount on ${o.dir}: $(tail -5 ${shellQuote(o.log)})" >&2; exit 4; fi; sleep 0.05`,
    'done',
    'echo mounted',
  ].join('\n');
}

/** Send one control command; prints the filesystem's JSON answer (or an error JSON when it is gone). */
export function controlCommand(program: string, socket: string, words: readonly string[]): string {
  return `${PYTHON} ${shellQuote(program)} ctl ${shellQuote(socket)} ${words.map(shellQuote).join(' ')} 2>&1 || true`;
}

/**
 * Unmount DIR (lazily when busy) and move BACKING back to DIR. Idempotent: with no mount and no backing
 * directory it does nothing. Prints what it did.
 */
export function unmountCommand(dir: string, backing: string): string {
  const d = shellQuote(dir);
  const b = shellQuote(backing);
  return [
    `if [ "$(${mountedCommand(dir)})" = mounted ]; then`,
    `  umount ${d} 2>/dev/null || { sleep 0.5; umount ${d} 2>/dev/null; } || umount -l ${d}; echo unmounted`,
    'fi',
    `if [ -d ${b} ]; then rmdir ${d} 2>/dev/null || rm -rf ${d}; mv ${b} ${d}; echo restored; fi`,
    'true',
  ].join('\n');
}

/** The daemon's pid when it runs with its working directory or an open file under DIR, else `none`. */
export function daemonOnDirCommand(pidFile: string, dir: string): string {
  return [
    `pid=$(cat ${shellQuote(pidFile)} 2>/dev/null | tr -dc 0-9)`,
    `if [ -z "$pid" ] || [ ! -e /proc/$pid ]; then echo none; exit 0; fi`,
    `n=$(ls -l /proc/$pid/fd 2>/dev/null | grep -c -F -- ${shellQuote(`${dir}/`)} || true)`,
    `cwd=$(readlink /proc/$pid/cwd 2>/dev/null || true)`,
    `case "$cwd/" in ${shellQuote(`${dir}/`)}*) n=$((n+1));; esac`,
    'if [ "$n" -gt 0 ]; then echo "$pid $n"; else echo "none"; fi',
  ].join('\n');
}

/** Time one fsync of a probe file on the mount: prints `ok MS` or `err MS ERRNO-NAME`. */
export function fsyncProbeCommand(dir: string): string {
  const py = [
    'import os,sys,time,errno',
    'p=sys.argv[1]+"/.faultline-lazyfs-probe"',
    't=time.monotonic()',
    'fd=os.open(p,os.O_CREAT|os.O_WRONLY,0o600)',
    'os.write(fd,b"probe")',
    'try:',
    ' os.fsync(fd); r="ok"',
    'except OSError as e:',
    ' r="err %s" % errno.errorcode.get(e.errno,e.errno)',
    'os.close(fd); os.unlink(p)',
    'ms=int((time.monotonic()-t)*1000)',
    'print(r.split()[0], ms, *r.split()[1:])',
  ].join('\n');
  return `${PYTHON} -c ${shellQuote(py)} ${shellQuote(dir)} 2>&1 || true`;
}

/** Time one small write + read back on the mount: prints `ok MS`. */
export function ioProbeCommand(dir: string): string {
  const py = [
    'import os,sys,time',
    'p=sys.argv[1]+"/.faultline-lazyfs-io-probe"',
    't=time.monotonic()',
    'fd=os.open(p,os.O_CREAT|os.O_RDWR,0o600)',
    'os.write(fd,b"probe"); os.pread(fd,5,0); os.close(fd); os.unlink(p)',
    'print("ok", int((time.monotonic()-t)*1000))',
  ].join('\n');
  return `${PYTHON} -c ${shellQuote(py)} ${shellQuote(dir)} 2>&1 || true`;
}

export interface ProbeResult {
  ok: boolean;
  ms: number;
  error?: string;
}

export function parseProbe(text: string): ProbeResult | null {
  const m = /^(ok|err) (\d+)(?: (\S+))?\s*$/m.exec(text);
  if (!m) return null;
  return { ok: m[1] === 'ok', ms: Number(m[2]), ...(m[3] && { error: m[3] }) };
}

/**
 * What a database's log says about an I/O error (EIO), in any of the usual spellings: strerror's
 * `Input/output error` (PostgreSQL's PANIC quotes it as is), Go's lower-case `input/output error`
 * (etcd), `I/O error`, `EIO`.
 */
export const IO_ERROR_PATTERN = '[Ii]nput/output error|I/O error|[^A-Z]EIO([^A-Z]|$)';

/**
 * Count the lines of the database's log files that report an I/O error, and print the last one (cut to
 * 400 characters): `COUNT` on the first line, the last matching line on the second.
 */
export function ioErrorLogCommand(files: readonly string[]): string {
  if (files.length === 0) return 'echo 0';
  const all = files.map(shellQuote).join(' ');
  const p = shellQuote(IO_ERROR_PATTERN);
  return `cat ${all} 2>/dev/null | grep -c -E ${p}; cat ${all} 2>/dev/null | grep -E ${p} | tail -n 1 | cut -c 1-400`;
}

export function parseIoErrorLog(text: string): { count: number; last: string } {
  const [first = '', ...rest] = text.split('\n');
  const n = Number.parseInt(first.trim(), 10);
  return { count: Number.isFinite(n) ? n : 0, last: rest.join('\n').trim() };
}

/** Prints `running` while PID is alive (a zombie is not), else `exited`. */
export function pidAliveCommand(pid: number): string {
  return `if [ -e /proc/${pid} ] && ! grep -q '^State:[[:space:]]*[ZX]' /proc/${pid}/status 2>/dev/null; then echo running; else echo exited; fi`;
}
