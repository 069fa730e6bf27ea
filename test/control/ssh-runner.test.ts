import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Client, ClientChannel } from 'ssh2';
import { remoteArgv, remoteScript } from '../../src/core/control/remote-command.ts';
import {
  CommandRunner,
  type RunnerJob,
  RunnerLostError,
  type RunnerSudo,
  RunnerSudoError,
  runnerForm,
} from '../../src/core/control/ssh-runner.ts';
import type { ExecOptions, NodeSpec } from '../../src/core/control/types.ts';

/**
 * A runner on this machine: `sh -c 'exec sh'` stands in for sshd's session (its own session and process
 * group, as sshd makes it), its pipes for the channel.
 */
interface Local {
  runner: CommandRunner;
  /** The runner shell's pid. */
  pid: number;
  child: ChildProcess;
}

const root: NodeSpec = { name: 'n1', host: 'h', port: 22, user: 'root' };
const tmp = mkdtempSync(join(tmpdir(), 'faultline-runner-test-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

async function local(
  opts: {
    detached?: boolean;
    env?: NodeJS.ProcessEnv;
    sudo?: RunnerSudo;
    /**
     * Hand over the channel only once its shell has written to stderr, and emit that output at once:
     * as when the first bytes arrive in the same packet batch as the open confirmation.
     */
    earlyStderr?: boolean;
  } = {},
): Promise<Local> {
  let child: ChildProcess | undefined;
  const runner = await CommandRunner.start(
    {} as Client,
    (command, onStream) => {
      const c = spawn('sh', ['-c', command], {
        detached: opts.detached ?? true,
        env: opts.env ?? process.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      child = c;
      const stream = Object.assign(new EventEmitter(), {
        stderr: new EventEmitter(),
        write: (d: string) => c.stdin?.write(d),
        close: () => c.stdin?.end(),
      });
      c.stdout?.on('data', (d: Buffer) => stream.emit('data', d));
      c.on('close', () => stream.emit('close'));
      if (!opts.earlyStderr) {
        c.stderr?.on('data', (d: Buffer) => stream.stderr.emit('data', d));
        onStream(stream as unknown as ClientChannel);
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        c.stderr?.once('data', (first: Buffer) => {
          onStream(stream as unknown as ClientChannel);
          stream.stderr.emit('data', first);
          c.stderr?.on('data', (d: Buffer) => stream.stderr.emit('data', d));
          resolve();
        });
      });
    },
    opts.sudo,
  );
  if (!child?.pid) throw new Error('no child');
  return { runner, pid: child.pid, child };
}

const job = (command: string, timeoutMs = 10_000, opts: ExecOptions = {}): RunnerJob => ({
  script: remoteScript(command, opts),
  timeoutMs,
  argv: remoteArgv(root, command, opts, timeoutMs, false),
});

/**
 * A sleep nobody else runs, and whether any process still has it on its command line. Always six
 * decimals: a shorter one ("60.12301", or float noise as in "60.12300499999999") would be a prefix of
 * another test's marker, and that test's `pkill -f` would then signal this test's commands.
 */
let sleeps = 0;
const uniqueSleep = () => (60 + ((process.pid % 1000) * 1000 + (++sleeps % 1000)) / 1e6).toFixed(6);
const running = (pattern: string) => spawnSync('pgrep', ['-f', pattern]).status === 0;
async function until(ok: () => boolean, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (!ok()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}
const gone = (pattern: string, withinMs: number) => until(() => !running(pattern), withinMs);
const commandPath = (tool: string) =>
  spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
const watchdogOf = (pid: number) => `faultline-runner-watchdog ${pid} `;

test('the form of a command: a subshell unless it needs its own shell or the runner is slow', (t) => {
  const plain = job('cd /x && test -f y || echo "a>&b" 2>&1 | grep -c x');
  t.is(runnerForm(true, plain), 'subshell');
  t.is(runnerForm(false, plain), 'argv');
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  for (const own of ['echo $$', 'echo ${$}', 'echo $PPID', 'echo $!', 'sleep 1 &', 'a& b', 'x &>/dev/null'])
    t.is(runnerForm(true, job(own)), 'argv', own);
});

test('fast runner: output byte for byte, exit codes, stderr apart, framing that output cannot forge', async (t) => {
  const { runner } = await local();
  t.teardown(() => runner.close());
  t.true(runner.fast);
  const big = await runner.run(job('head -c 300000 /dev/zero | tr "\\0" x; printf "e1\\ne2" >&2; exit 5'), 0);
  t.is(big.code, 5);
  t.is(big.stdout, 'x'.repeat(300_000));
  t.is(big.stderr, 'e1\ne2');
  const lookalike = await runner.run(job('printf "S0\\nE0 1\\nM0 fast\\n"; printf "E0\\n" >&2'), 0);
  t.deepEqual([lookalike.stdout, lookalike.stderr, lookalike.code], ['S0\nE0 1\nM0 fast\n', 'E0\n', 0]);
  const hostile = ["it's", '$(id)', '`id`', 'a\nb', '中文😀', '--', '', '\\', '"'];
  const args = hostile.map((h) => `'${h.replaceAll("'", `'\\''`)}'`).join(' ');
  const echoed = await runner.run(job(`printf '%s\\0' ${args}`), 0);
  t.deepEqual(echoed.stdout.split('\0').slice(0, -1), hostile);
  const envCwd = await runner.run(
    job('printf "%s|%s" "$A" "$(pwd)"', 5000, { env: { A: "x'y" }, cwd: '/usr' }),
    0,
  );
  t.is(envCwd.stdout, "x'y|/usr");
  t.is((await runner.run(job('cat; echo done'), 0)).stdout, 'done\n', 'stdin is /dev/null');
  t.is((await runner.run(job('exit 7'), 0)).code, 7);
  t.is((await runner.run(job('echo still here'), 0)).stdout, 'still here\n', '`exit` ended only the command');
});

test('fast runner: nothing leaks from one command to the next, and a command sees none of the runner', async (t) => {
  const { runner } = await local();
  t.teardown(() => runner.close());
  const first = await runner.run(
    job('cd /; X=1; export Y=2; trap "echo bye" EXIT; umask 077; echo "[$fl_s]"'),
    0,
  );
  t.is(first.stdout, '[]\nbye\n');
  const next = await runner.run(job('echo "[$X][$Y][$fl_s][$fl_a]"; pwd; umask; trap'), 0);
  t.is(next.stdout, `[][][][]\n${process.cwd()}\n${umaskOf()}\n`);
  const fds = await runner.run(job('ls -l /proc/self/fd'), 0);
  for (const fd of ['6', '7', '8', '9']) t.notRegex(fds.stdout, new RegExp(` ${fd} -> `), fds.stdout);
  t.notRegex(fds.stdout, /faultline-runner/);
  // $$ is the command's own shell, as under `sh -c` (such scripts run as argv): killing it leaves the runner.
  const self = await runner.run(job('kill -TERM $$'), 0);
  t.is(self.code, 143);
  t.true(runner.usable);
  t.regex((await runner.run(job('echo $$'), 0)).stdout, /^\d+\n$/);
});

function umaskOf(): string {
  return spawnSync('sh', ['-c', 'umask'], { encoding: 'utf8' }).stdout.trim();
}

test('fast runner: a timed-out command is killed with its grandchildren, reported 124, and the runner goes on', async (t) => {
  const { runner, pid } = await local();
  t.teardown(() => runner.close());
  const marker = uniqueSleep();
  const start = Date.now();
  // `sh -c "sleep; :"` keeps the sleep a grandchild of the command's subshell (no `&`: the fast form).
  const out = await runner.run(job(`echo before; sh -c "sleep ${marker}; :"; echo after`, 400), 0);
  t.is(out.code, 124);
  t.is(out.stdout, 'before\n');
  t.is(out.stderr, '', 'no job report ("Terminated") from the runner shell');
  t.true(Date.now() - start < 2000, `${Date.now() - start} ms`);
  t.true(await gone(`sleep ${marker}`, 1000), 'the grandchild sleep is gone');
  t.true(runner.usable);
  t.is((await runner.run(job('echo next'), 0)).stdout, 'next\n');
  t.true(running(watchdogOf(pid)), 'the same runner and watchdog');
});

test('fast runner: a command that ignores TERM is killed with the runner after the grace, reported 137', async (t) => {
  const { runner, pid } = await local();
  t.teardown(() => runner.close());
  const marker = uniqueSleep();
  const start = Date.now();
  const out = await runner.run(job(`trap "" TERM; sleep ${marker}`, 300), 0);
  t.is(out.code, 137);
  t.true(Date.now() - start < 300 + 2000 + 1500, `${Date.now() - start} ms`);
  t.true(await gone(`sleep ${marker}`, 1000));
  t.false(runner.usable, 'the runner went with it');
  t.true(await gone(watchdogOf(pid), 2000), 'and so did its watchdog');
  await t.throwsAsync(runner.run(job('true'), 0), { instanceOf: RunnerLostError });
});

test('fast runner: commands ending right at their deadline are either in time or timed out, never out of step', async (t) => {
  const { runner } = await local();
  t.teardown(() => runner.close());
  const codes = new Set<number>();
  for (let i = 0; i < 30; i++) {
    const r = await runner.run(job(`sleep 0.05; echo ${i}`, 45 + (i % 8) * 5), 0);
    codes.add(r.code);
    if (r.code === 0) t.is(r.stdout, `${i}\n`);
    else t.is(r.code, 124);
    t.is((await runner.run(job(`echo check ${i}`), 0)).stdout, `check ${i}\n`);
  }
  t.log('codes seen', [...codes]);
});

/**
 * A timeout of a second or more (WATCH_POLL_S) does not wake the watchdog as the command starts: it reads
 * the start stamp the runner wrote when it next looks, at most a second later, so the deadline is the
 * stamp's, not the time it looked. A watchdog timing from when it looked would kill up to a second late.
 */
test('fast runner: a long timeout wakes no watchdog, and its deadline holds to the start stamp', async (t) => {
  const { runner } = await local();
  t.teardown(() => runner.close());
  // Quick commands with long timeouts: past the bell every 64 commands, none of them killed.
  for (let i = 0; i < 150; i++) t.is((await runner.run(job(`echo ${i}`, 2000), 0)).stdout, `${i}\n`);
  for (const idleMs of [0, 350, 700]) {
    await new Promise((r) => setTimeout(r, idleMs)); // a different phase of the watchdog's look each time
    const marker = uniqueSleep();
    const t0 = Date.now();
    const out = await runner.run(job(`sh -c "sleep ${marker}; :"`, 1000), 0);
    const took = Date.now() - t0;
    t.is(out.code, 124);
    t.true(took >= 1000, `killed after ${took} ms, before its deadline`);
    t.true(took < 1700, `killed after ${took} ms: the deadline was not kept to the stamp`);
    t.true(await gone(`sleep ${marker}`, 1000));
    t.is((await runner.run(job('echo next', 2000), 0)).stdout, 'next\n');
  }
  // A long command within its long timeout is left alone across several of the watchdog's looks.
  t.deepEqual(await runner.run(job('sleep 2.3; echo done', 3000), 0).then((r) => [r.code, r.stdout]), [
    0,
    'done\n',
  ]);
});

test('fast runner: a deadline passing while the runner is idle changes nothing', async (t) => {
  const { runner, pid } = await local();
  t.teardown(() => runner.close());
  t.is((await runner.run(job('echo quick', 200), 0)).stdout, 'quick\n');
  await new Promise((r) => setTimeout(r, 500)); // the watchdog's deadline for it passes: it checks, answers K
  for (const i of [1, 2, 3]) {
    const r = await runner.run(job(`echo ${i}`, 200), 0);
    t.deepEqual([r.stdout, r.code], [`${i}\n`, 0]);
  }
  t.true(running(watchdogOf(pid)));
});

test('fast runner: a background job keeps its own group (argv form), out of reach of a later timeout', async (t) => {
  const { runner } = await local();
  t.teardown(() => runner.close());
  const marker = uniqueSleep();
  t.teardown(() => void spawnSync('pkill', ['-f', `sleep ${marker}`]));
  await runner.run(job(`sleep ${marker} >/dev/null 2>&1 </dev/null &`), 0);
  t.is((await runner.run(job('sleep 30', 200), 0)).code, 124);
  t.true(running(`sleep ${marker}`), 'the earlier background job is untouched');
});

test('the node-side deadline holds when the control side is gone, and nothing is left behind', async (t) => {
  const { runner, pid, child } = await local();
  const marker = uniqueSleep();
  const lost = runner.run(job(`sh -c "sleep ${marker}; :"`, 600), 0);
  await new Promise((r) => setTimeout(r, 150));
  t.true(running(`sleep ${marker}`));
  // The connection drops: the runner's pipes close under it.
  for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
  await t.throwsAsync(lost);
  t.true(await gone(`sleep ${marker}`, 2000), 'killed at its deadline all the same');
  t.true(await gone(watchdogOf(pid), 2000), 'the watchdog exits');
  t.true(await until(() => !existsSync(`/proc/${pid}`), 2000), 'the runner exits');
  t.deepEqual(
    readdirSync(process.env.TMPDIR ?? '/tmp').filter((f) => f.startsWith('.faultline-runner-')),
    [],
    'no FIFO left',
  );
});

test('the deadline also holds for what a runner killed mid-command left running', async (t) => {
  const { runner, pid } = await local();
  const marker = uniqueSleep();
  const lost = runner.run(job(`sh -c "sleep ${marker}; :"`, 800), 0);
  await new Promise((r) => setTimeout(r, 150));
  process.kill(pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  t.true(running(`sleep ${marker}`), 'still within its time');
  t.true(await gone(`sleep ${marker}`, 3000), 'gone once its time is up');
  // The channel closes once the watchdog, holding its stdout for the markers, is gone too.
  await t.throwsAsync(lost, { instanceOf: RunnerLostError });
  t.true(await gone(watchdogOf(pid), 1000));
});

test('a runner closed while idle leaves no watchdog', async (t) => {
  const { runner, pid } = await local();
  t.true(running(watchdogOf(pid)));
  runner.close();
  t.true(await gone(watchdogOf(pid), 2000));
});

/** Output and exit code as `sh -c` gives them, a timed-out command reported 124 and gone, the runner still usable. */
async function outputExitCodeAndTimeout(t: ExecutionContext, runner: CommandRunner): Promise<void> {
  const out = await runner.run(job('echo out; echo err >&2; exit 4'), 0);
  t.deepEqual([out.stdout, out.stderr, out.code], ['out\n', 'err\n', 4]);
  const marker = uniqueSleep();
  t.is((await runner.run(job(`sh -c "sleep ${marker}; :"`, 300), 0)).code, 124);
  t.true(await gone(`sleep ${marker}`, 1000));
  t.is((await runner.run(job('echo next'), 0)).stdout, 'next\n');
}

test('a node whose sh is bash: the same fast runner', async (t) => {
  const bin = join(tmp, 'bash-as-sh');
  spawnSync('mkdir', ['-p', bin]);
  if (!existsSync(join(bin, 'sh'))) symlinkSync(commandPath('bash'), join(bin, 'sh'));
  const { runner } = await local({ env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  t.teardown(() => runner.close());
  t.true(runner.fast);
  await outputExitCodeAndTimeout(t, runner);
});

test('slow mode without bash: every command as `timeout … sh -c`, timeouts included', async (t) => {
  const bin = join(tmp, 'bin');
  spawnSync('mkdir', ['-p', bin]);
  for (const tool of ['sh', 'timeout', 'sleep', 'setsid', 'mkfifo', 'rm', 'cat', 'tr', 'head'])
    if (!existsSync(join(bin, tool)))
      symlinkSync(
        spawnSync('sh', ['-c', `command -v ${tool}`])
          .stdout.toString()
          .trim(),
        join(bin, tool),
      );
  const { runner } = await local({ env: { ...process.env, PATH: bin } });
  t.teardown(() => runner.close());
  t.false(runner.fast);
  await outputExitCodeAndTimeout(t, runner);
});

test('slow mode when the runner does not lead its own process group', async (t) => {
  const { runner } = await local({ detached: false });
  t.teardown(() => runner.close());
  t.false(runner.fast);
  t.is((await runner.run(job('echo $((6 * 7))'), 0)).stdout, '42\n');
  t.is((await runner.run(job('sleep 30', 300), 0)).code, 124);
});

/**
 * A stand-in for sudo on PATH, as sudo behaves without a terminal: `-n` refuses when a password is set,
 * `-S -p PROMPT` writes the prompt to stderr and reads one line of stdin per try (three tries), then
 * execs the command. Every line it read as a password is appended to $FAKE_SUDO_LOG, so a test sees
 * exactly what was offered to it as one.
 */
function fakeSudo(): string {
  const bin = join(tmp, 'fake-sudo-bin');
  spawnSync('mkdir', ['-p', bin]);
  const script = `#!/bin/bash
mode= prompt=
while [ $# -gt 0 ]; do
  case $1 in -S) mode=S ;; -n) mode=n ;; -p) prompt=$2; shift ;; --) shift; break ;; esac
  shift
done
if [ -n "$FAKE_SUDO_PASSWORD" ]; then
  if [ "$mode" = n ]; then echo 'sudo: a password is required' >&2; exit 1; fi
  for try in 1 2 3; do
    printf '%s' "$prompt" >&2
    IFS= read -r pw || exit 1
    printf '%s\\n' "$pw" >>"$FAKE_SUDO_LOG"
    [ "$pw" = "$FAKE_SUDO_PASSWORD" ] && exec "$@"
    echo 'Sorry, try again.' >&2
  done
  echo 'sudo: 3 incorrect password attempts' >&2
  exit 1
fi
exec "$@"
`;
  writeFileSync(join(bin, 'sudo'), script, { mode: 0o755 });
  return bin;
}

function sudoEnv(password: string | undefined, log: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${fakeSudo()}:${process.env.PATH}`,
    FAKE_SUDO_PASSWORD: password ?? '',
    FAKE_SUDO_LOG: log,
  };
}

test('root runner: sudo asked once for the runner, the password written only at its prompt', async (t) => {
  const log = join(tmp, `sudo-once-${process.pid}.log`);
  const env = sudoEnv('s3cret pw', log);
  const { runner } = await local({ env, sudo: { password: 's3cret pw' } });
  t.teardown(() => runner.close());
  t.true(runner.root);
  t.true(runner.fast, 'setsid under sudo: the runner leads its group, so the fast mode');
  for (let i = 0; i < 20; i++) t.is((await runner.run(job(`echo ${i}`), 0)).stdout, `${i}\n`);
  t.is(readFileSync(log, 'utf8'), 's3cret pw\n', 'one password read for 20 commands');
  // Timeouts work as in any fast runner: the watchdog signals the runner's own group.
  const marker = uniqueSleep();
  t.is((await runner.run(job(`sh -c "sleep ${marker}; :"`, 300), 0)).code, 124);
  t.true(await gone(`sleep ${marker}`, 1000));
  t.is((await runner.run(job('echo still'), 0)).stdout, 'still\n');
});

test('root runner: a prompt that arrives with the channel itself is answered', async (t) => {
  const log = join(tmp, `sudo-early-${process.pid}.log`);
  const { runner } = await local({
    env: sudoEnv('early pw', log),
    sudo: { password: 'early pw' },
    earlyStderr: true,
  });
  t.teardown(() => runner.close());
  t.is((await runner.run(job('echo in'), 0)).stdout, 'in\n');
  t.is(readFileSync(log, 'utf8'), 'early pw\n');
});

test('root runner: a refused password stops at the second prompt, nothing else read as a password', async (t) => {
  const log = join(tmp, `sudo-wrong-${process.pid}.log`);
  const env = sudoEnv('right', log);
  const err = await t.throwsAsync(local({ env, sudo: { password: 'wrong' } }), {
    instanceOf: RunnerSudoError,
  });
  t.regex(err?.message ?? '', /password was refused.*Sorry, try again/);
  t.notRegex(err?.message ?? '', /faultline-sudo-/, 'the prompt marker is not part of the message');
  t.is(readFileSync(log, 'utf8'), 'wrong\n', 'the bootstrap never reached sudo as a password');
});

test('root runner: sudo that does not ask never gets the password, and -n without one says why', async (t) => {
  const log = join(tmp, `sudo-nopw-${process.pid}.log`);
  const planted = join(tmp, `planted-${process.pid}`);
  // A password that would leave a file behind if a shell ever ran it as a command.
  const password = `touch ${planted}`;
  const { runner } = await local({ env: sudoEnv(undefined, log), sudo: { password } });
  t.teardown(() => runner.close());
  t.is((await runner.run(job('echo ok'), 0)).stdout, 'ok\n');
  t.false(existsSync(planted), 'the password was never written to the shell');
  t.false(existsSync(log), 'and never read as one');
  const refused = await t.throwsAsync(local({ env: sudoEnv('needed', log), sudo: {} }), {
    instanceOf: RunnerSudoError,
  });
  t.regex(refused?.message ?? '', /sudo exited.*a password is required/);
});
