import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { killTreeCommand } from '../../src/core/control/process-tree.ts';
import { shellQuote } from '../../src/core/control/quote.ts';

/**
 * The teardown's kill (`killTreeCommand`, behind every built-in database's ProcessControl.kill) run
 * under sh (a node's shell may be dash) on a real process tree on this host.
 */

const state = (pid: number) =>
  /^State:\s*(\S)/m.exec(spawnSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' }).stdout)?.[1];
const gone = (pid: number) => state(pid) === undefined || state(pid) === 'Z';

/**
 * A bash daemon with a child and a grandchild in a directory of its own, its pid in `pidFile`; resolves
 * once the tree is up. Both go when the test ends.
 */
async function daemonTree(t: ExecutionContext): Promise<{ pidFile: string; tree: () => number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-kill-tree-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = join(dir, 'daemon.pid');
  const child = spawn(
    'bash',
    ['-c', `echo $$ > ${shellQuote(pidFile)}; ( sleep 60 & wait ) & sleep 60 & wait`],
    { detached: true, stdio: 'ignore', cwd: dir },
  );
  child.unref();
  const daemon = child.pid as number;
  t.teardown(() => {
    spawnSync('pkill', ['-KILL', '-s', String(daemon)]);
  });
  const tree = () => {
    const out = spawnSync('ps', ['-o', 'pid=', '-s', String(daemon)], { encoding: 'utf8' }).stdout;
    return out
      .trim()
      .split(/\s+/)
      .filter((p) => p !== '')
      .map(Number)
      .filter((p) => !gone(p));
  };
  const until = Date.now() + 10_000;
  while ((tree().length < 4 || !existsSync(pidFile)) && Date.now() < until)
    await new Promise((r) => setTimeout(r, 50));
  return { pidFile, tree };
}

/** A pidfile naming this test process (alive for the whole test), and its comm. */
function pidFileOfThisProcess(t: ExecutionContext): { pidFile: string; comm: string } {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-kill-tree-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = join(dir, 'daemon.pid');
  writeFileSync(pidFile, `${process.pid}\n`);
  const comm = spawnSync('cat', [`/proc/${process.pid}/comm`], { encoding: 'utf8' }).stdout.trim();
  return { pidFile, comm };
}

test.serial(
  'the kill takes the daemon and every process it started, then the pidfile; again, it does nothing',
  async (t) => {
    const { pidFile, tree } = await daemonTree(t);
    const before = tree();
    t.is(before.length, 4, 'the daemon, its subshell, its sleep and the subshell’s sleep');
    const r = spawnSync('sh', ['-c', killTreeCommand(pidFile, 'bash')], { encoding: 'utf8' });
    t.is(r.status, 0, r.stderr);
    t.is(r.stdout, '', 'the pids stay inside the command');
    for (const p of before) t.true(gone(p), `${p} is gone`);
    t.false(existsSync(pidFile), 'the pidfile is removed');
    const again = spawnSync('sh', ['-c', killTreeCommand(pidFile, 'bash')], { encoding: 'utf8' });
    t.is(again.status, 0, again.stderr);
  },
);

test.serial('a pidfile naming another program leaves it running; only the pidfile goes', async (t) => {
  const { pidFile, tree } = await daemonTree(t);
  const r = spawnSync('sh', ['-c', killTreeCommand(pidFile, 'postgres')], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.is(tree().length, 4, 'a pid the system gave to another program is not the daemon');
  t.false(existsSync(pidFile));
  // Not digits: nothing reaches a kill.
  writeFileSync(pidFile, '1;touch /tmp/x\n');
  t.is(spawnSync('sh', ['-c', killTreeCommand(pidFile, 'bash')], { encoding: 'utf8' }).status, 0);
  t.is(tree().length, 4);
});

test('a pid that outlives the kill fails the command and the script around it, naming the pid', (t) => {
  // A stand-in `kill` that signals nothing: the daemon survives, as one in uninterruptible sleep would.
  const { pidFile, comm } = pidFileOfThisProcess(t);
  const script = `kill() { :; }; sleep() { :; }; ${killTreeCommand(pidFile, comm)}; echo after`;
  const r = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
  t.is(r.status, 1);
  t.regex(r.stderr, new RegExp(`pids ${process.pid}( \\d+)* still alive`));
  t.notRegex(r.stdout, /after/, 'the script stops there');
  t.true(existsSync(pidFile), 'the pidfile stays with its live process');
});

test('a pid once seen gone stays gone: a second look while it is reaped cannot fail the kill', (t) => {
  // While its parent reaps it, a process's /proc entry can outlive a readable status. Here the first
  // look at each pid sees a zombie and every later one cannot read the status (a stand-in grep).
  const { pidFile, comm } = pidFileOfThisProcess(t);
  const lookOnce = `seen=' '; grep() { case "$seen" in *" $3 "*) return 1 ;; esac; seen="$seen$3 "; }`;
  const script = `kill() { :; }; sleep() { :; }; ${lookOnce}; ${killTreeCommand(pidFile, comm)}`;
  const r = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.false(existsSync(pidFile));
});
