import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import type { ExecResult, Remote } from '../../src/core/control/types.ts';
import { daemonRunning, ensureStartedProcess, startDaemon } from '../../src/lib/databases/daemon.ts';

/**
 * `daemonRunning` on this host's own shell: a live process of the right name runs, a zombie of that
 * name does not (a restart that saw the old pid exit must start the new one even before the exit is
 * reaped), and neither does a pidfile naming another program.
 */
const dir = mkdtempSync(join(tmpdir(), 'faultline-daemon-running-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const localShell = {
  exec: (_node: string, command: string) =>
    new Promise<ExecResult>((resolve) => {
      execFile('sh', ['-c', command], (err, stdout, stderr) =>
        resolve({
          node: 'local',
          command,
          stdout,
          stderr,
          code: err ? Number(err.code ?? 1) : 0,
          durationMs: 0,
        }),
      );
    }),
} as unknown as Remote;

test('a live daemon runs; its zombie does not; a pidfile naming another program does not', async (t) => {
  const pidFile = join(dir, 'sleep.pid');
  // The child exits half a second later, after its parent has exec'd into `sleep 6`, which never reaps it:
  // a zombie. (A child that exited at once could be reaped by the shell itself before its exec.)
  const parent = spawn('sh', ['-c', `sleep 0.5 & echo $! > ${pidFile}; exec sleep 6`], { stdio: 'ignore' });
  t.teardown(() => parent.kill('SIGKILL'));
  await sleep(1500);
  const zombie = readFileSync(pidFile, 'utf8').trim();
  t.regex(readFileSync(`/proc/${zombie}/status`, 'utf8'), /^State:\s*Z/m, 'the child is a zombie');
  t.false(await daemonRunning(localShell, 'local', pidFile, 'sleep'), 'a zombie is not running');

  writeFileSync(pidFile, String(parent.pid));
  t.true(await daemonRunning(localShell, 'local', pidFile, 'sleep'), 'the live sleep is running');
  t.false(await daemonRunning(localShell, 'local', pidFile, 'etcd'), 'a pid of another program is not');
});

test('a start script that forks the daemon is a clear error; one that execs it, or a foreground daemon, is fine', async (t) => {
  const spec = (name: string, script: string) => {
    const path = join(dir, `${name}.sh`);
    writeFileSync(path, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    return {
      binary: path,
      processName: 'sleep',
      args: [],
      pidFile: join(dir, `${name}.pid`),
      logFile: join(dir, `${name}.log`),
      cwd: dir,
    };
  };
  const kill = (pidFile: string) => {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {}
  };
  const forks = spec('forks', 'sleep 30 &\necho started');
  await startDaemon(localShell, 'local', forks);
  const err = await t.throwsAsync(ensureStartedProcess(localShell, 'local', forks));
  t.regex(
    err?.message ?? '',
    /exited right after its start.*forks the daemon.*`exec` the daemon.*last lines: started/,
  );

  const stays = spec('stays', 'sleep 30\necho done');
  await startDaemon(localShell, 'local', stays);
  t.teardown(() => kill(stays.pidFile));
  const other = await t.throwsAsync(ensureStartedProcess(localShell, 'local', stays));
  t.regex(other?.message ?? '', /is `stays\.sh`, not `sleep`: a start script must `exec` the daemon/);

  const execs = spec('execs', 'exec sleep 30');
  await startDaemon(localShell, 'local', execs);
  t.teardown(() => kill(execs.pidFile));
  await t.notThrowsAsync(ensureStartedProcess(localShell, 'local', execs));
});
