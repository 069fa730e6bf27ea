import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  RemoteAuthError,
  RemoteChannelError,
  RemoteCommandError,
  RemoteConnectError,
  RemoteHostKeyError,
  RemoteTimeoutError,
} from '../../src/core/control/connection-errors.ts';
import { runDoctor } from '../../src/core/control/node-doctor.ts';
import { shellJoin, shellQuote } from '../../src/core/control/quote.ts';
import { connectRemote } from '../../src/core/control/ssh-remote.ts';
import type { NodeSpec } from '../../src/core/control/types.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'ctl-basic' });
const tmp = mkdtempSync(join(tmpdir(), 'faultline-ctl-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

const node = (name: string): NodeSpec => {
  const n = fx.cluster().nodes.find((x) => x.name === name);
  if (!n) throw new Error(`no ${name}`);
  return n;
};

fx.test(
  'every node answers in parallel with its own hostname, and names resolve on every node',
  async (t) => {
    const r = await fx.remote();
    const results = await r.onNodes(['n1', 'n2', 'n3'], (n) => r.exec(n, 'hostname'));
    t.true(results.every((x) => x.ok));
    t.deepEqual(
      results.map((x) => x.value?.stdout.trim()),
      ['n1', 'n2', 'n3'],
    );
    const resolved = await r.exec('n1', 'getent hosts n3');
    t.is(resolved.stdout.split(/\s+/)[0], node('n3').host);
  },
);

fx.test('a process started on n1 is invisible from n2, and pkill on n2 cannot touch it', async (t) => {
  const r = await fx.remote();
  const seconds = 300_000 + process.pid; // a sleep nobody else runs
  // `[s]leep` matches the sleep but not the shell running pgrep, whose command line holds the pattern.
  const pattern = shellQuote(`[s]leep ${seconds}`);
  await r.exec('n1', `setsid sleep ${seconds} >/dev/null 2>&1 </dev/null &`);
  t.teardown(() => r.exec('n1', `pkill -f ${pattern}`, { check: false }).then(() => undefined));
  t.is((await r.exec('n1', `pgrep -f ${pattern}`, { check: false })).code, 0, 'visible on its own node');
  t.is((await r.exec('n2', `pgrep -f ${pattern}`, { check: false })).code, 1, 'invisible from n2');
  await r.exec('n2', `pkill -9 -f ${pattern}`, { check: false });
  t.is((await r.exec('n1', `pgrep -f ${pattern}`, { check: false })).code, 0, 'survives pkill on n2');
  // Each node's PID 1 is its own sshd.
  t.is((await r.exec('n2', 'cat /proc/1/comm')).stdout.trim(), 'sshd');
});

fx.test('upload and download round-trip bytes exactly', async (t) => {
  const r = await fx.remote();
  const data = Buffer.concat([
    Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    randomBytes(3 * 1024 * 1024 + 17),
  ]);
  const local = join(tmp, 'payload.bin');
  writeFileSync(local, data);
  const remotePath = `/tmp/faultline-payload-${process.pid}.bin`;
  await r.upload('n2', local, remotePath);
  const sum = await r.exec('n2', `sha256sum ${remotePath}`);
  t.is(sum.stdout.split(' ')[0], createHash('sha256').update(data).digest('hex'));
  const back = join(tmp, 'back.bin');
  await r.download('n2', remotePath, back);
  t.true(readFileSync(back).equals(data));
  // Each node has its own /tmp: the file is not on n1.
  t.is((await r.exec('n1', `test -e ${remotePath}`, { check: false })).code, 1);
});

fx.test('sudo transfers go through a temporary file into root-owned places and back', async (t) => {
  const r = await fx.remote();
  const data = randomBytes(200_000);
  const local = join(tmp, 'sudo-payload.bin');
  writeFileSync(local, data);
  const dest = `/root/faultline-sudo-${process.pid}.bin`;
  await r.upload('n1', local, dest, { sudo: true });
  t.is((await r.exec('n1', `stat -c %U ${dest}`, { sudo: true })).stdout.trim(), 'root');
  const back = join(tmp, 'sudo-back.bin');
  await r.download('n1', dest, back, { sudo: true });
  t.true(readFileSync(back).equals(data));
  const leftovers = await r.exec('n1', 'ls -a /tmp | grep -c faultline-transfer', { check: false });
  t.is(leftovers.stdout.trim(), '0', 'temporary files are removed');
  await t.throwsAsync(r.download('n1', '/root/does-not-exist', back, { sudo: true }), {
    instanceOf: RemoteCommandError,
  });
});

fx.test('a command past its timeout is killed on the node, not just abandoned', async (t) => {
  const r = await fx.remote();
  const marker = 60 + (process.pid % 1000) / 1000; // a unique sleep argument to look for
  const start = Date.now();
  const err = await t.throwsAsync(r.exec('n1', `sleep ${marker}`, { timeoutMs: 1000 }), {
    instanceOf: RemoteTimeoutError,
  });
  t.true(Date.now() - start < 4000, `returned after ${Date.now() - start} ms`);
  t.is(err?.node, 'n1');
  const left = await r.exec('n1', `pgrep -f ${shellQuote(`[s]leep ${marker}`)}`, { check: false });
  t.is(left.code, 1, `still running on the node: ${left.stdout}`);
});

fx.test('stdin, env and cwd reach the command; hostile arguments arrive intact', async (t) => {
  const r = await fx.remote();
  const stdin = Buffer.from([0, 1, 2, 255, 10, 13]);
  const cat = await r.exec('n3', 'od -An -tx1 | tr -d " \\n"', { stdin });
  t.is(cat.stdout, '000102ff0a0d');
  const env = await r.exec('n3', 'printf %s "$FL_X"', { env: { FL_X: `a'b "c" $(nope) \`x\`` } });
  t.is(env.stdout, `a'b "c" $(nope) \`x\``);
  t.is((await r.exec('n3', 'pwd', { cwd: '/usr/share' })).stdout.trim(), '/usr/share');
  const hostile = ["it's", '$(id)', '`id`', 'a\nb', '中文😀', '--', ''];
  const echoed = await r.exec('n3', shellJoin(['printf', '%s\\0', ...hostile]));
  t.deepEqual(echoed.stdout.split('\0').slice(0, -1), hostile);
});

fx.test('a non-zero exit is a typed error with the stderr tail, or a result with check:false', async (t) => {
  const r = await fx.remote();
  const err = await t.throwsAsync(r.exec('n1', 'echo first >&2; echo "disk on fire" >&2; exit 3'), {
    instanceOf: RemoteCommandError,
  });
  t.is(err?.code, 3);
  t.regex(err?.message ?? '', /^n1: exit 3: .* — first \| disk on fire$/);
  const res = await r.exec('n1', 'exit 7', { check: false });
  t.is(res.code, 7);
});

fx.test('many concurrent commands on one node stay under MaxSessions (channel semaphore)', async (t) => {
  const r = await fx.remote();
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) => r.exec('n2', `sleep 0.1; echo ${i}`)),
  );
  t.deepEqual(
    results.map((x) => Number(x.stdout)),
    Array.from({ length: 40 }, (_, i) => i),
  );
});

/**
 * The pid of the sshd process serving the connection a command came in on: the nearest sshd above it
 * (above `timeout`, and above the command runner when one ran it).
 */
const servingSshd =
  'p=$PPID; while [ "$(ps -o comm= -p "$p")" != sshd ]; do p=$(ps -o ppid= -p "$p" | tr -d " "); done; echo "$p"';

fx.test('a dropped connection is reopened on the next command', async (t) => {
  const r = await fx.connect();
  t.is((await r.exec('n1', 'echo before')).stdout.trim(), 'before');
  // Kill the sshd process serving this very connection (the nearest sshd above the command).
  await t.throwsAsync(r.exec('n1', `kill -9 "$(${servingSshd})"; sleep 5`), {
    instanceOf: RemoteChannelError,
  });
  t.is((await r.exec('n1', 'echo after')).stdout.trim(), 'after');
  await r.close();
});

fx.test('keepalive notices a silent server; the command goes through on a fresh connection', async (t) => {
  const r = await fx.connect({ keepaliveIntervalMs: 250, keepaliveCountMax: 2 });
  const admin = await fx.connect();
  const session = (await r.exec('n2', servingSshd)).stdout.trim();
  t.regex(session, /^\d+$/);
  // Freeze the sshd process serving r's connection: TCP stays up but nothing answers.
  await admin.exec('n2', `kill -STOP ${session}`);
  t.teardown(() => admin.exec('n2', `kill -KILL ${session}`, { check: false }).then(() => undefined));
  const start = Date.now();
  const res = await r.exec('n2', 'hostname', { timeoutMs: 10_000 });
  t.is(res.stdout.trim(), 'n2');
  t.true(Date.now() - start < 8000, `${Date.now() - start} ms`);
});

fx.test('every command is logged per node with exit code and duration; secrets are masked', async (t) => {
  const secret = `pw-${randomBytes(6).toString('hex')}`;
  process.env.FL_TEST_SSH_PW = secret;
  const logDir = join(tmp, 'logs');
  const spec = { ...node('n1'), passwordEnv: 'FL_TEST_SSH_PW' };
  const r = await connectRemote([spec], { knownHostsFiles: [fx.cluster().knownHostsPath], logDir });
  const res = await r.exec('n1', `echo ${secret}`);
  t.is(res.stdout.trim(), '***');
  await r.exec('n1', 'exit 2', { check: false });
  await r.close();
  const text = readFileSync(join(logDir, 'n1.commands.jsonl'), 'utf8');
  t.false(text.includes(secret));
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.is(lines.length, 2);
  t.like(lines[0], { node: 'n1', code: 0, command: 'echo ***', outcome: 'ok' });
  t.like(lines[1], { node: 'n1', code: 2, outcome: 'nonzero' });
  t.is(typeof lines[1]?.durationMs, 'number');
});

fx.test('a wrong key fails fast with RemoteAuthError', async (t) => {
  const key = join(tmp, 'wrong_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const start = Date.now();
  const err = await t.throwsAsync(
    connectRemote([{ ...node('n2'), identityFile: key }], { knownHostsFiles: [fx.cluster().knownHostsPath] }),
    { instanceOf: RemoteAuthError },
  );
  // Generous (a loaded 2-core host needs seconds for a handshake): it only rules out waiting for a timeout.
  t.true(Date.now() - start < 15_000, `${Date.now() - start} ms`);
  t.regex(err?.message ?? '', /^n2: authentication failed/);
  t.false(err?.message.includes('PRIVATE KEY') ?? true);
});

fx.test('unreachable nodes fail fast with RemoteConnectError', async (t) => {
  let start = Date.now();
  // A closed port on loopback: refused immediately, retried with backoff, then reported.
  await t.throwsAsync(
    connectRemote(
      [{ name: 'ghost', host: '127.0.0.1', port: 1, user: 'root', identityFile: fx.cluster().identityFile }],
      {
        connectAttempts: 3,
      },
    ),
    { instanceOf: RemoteConnectError, message: /^ghost: cannot connect to 127\.0\.0\.1:1: ECONNREFUSED/ },
  );
  t.true(Date.now() - start < 3000, `${Date.now() - start} ms`);
  // An unused address inside the cluster's own subnet: nobody answers.
  const prefix = node('n1').host.split('.').slice(0, 3).join('.');
  start = Date.now();
  await t.throwsAsync(
    connectRemote([{ ...node('n1'), name: 'void', host: `${prefix}.250` }], {
      connectAttempts: 1,
      connectTimeoutMs: 1500,
    }),
    { instanceOf: RemoteConnectError },
  );
  t.true(Date.now() - start < 5000, `${Date.now() - start} ms`);
});

fx.test(
  'host keys: strict refuses unknown, accept-new records then verifies, changed keys are refused',
  async (t) => {
    const spec = node('n3');
    const accepted = join(tmp, 'accepted_known_hosts');
    const empty = join(tmp, 'empty_known_hosts');
    writeFileSync(empty, '');
    const strictUnknown = await t.throwsAsync(
      connectRemote([spec], { knownHostsFiles: [empty], acceptedKnownHostsFile: accepted }),
      { instanceOf: RemoteHostKeyError },
    );
    t.is(strictUnknown?.kind, 'unknown');
    t.regex(strictUnknown?.message ?? '', /accept-new-host-keys/);

    const tofu = await connectRemote([spec], {
      knownHostsFiles: [empty],
      acceptedKnownHostsFile: accepted,
      hostKeyPolicy: 'accept-new',
    });
    await tofu.close();
    t.regex(readFileSync(accepted, 'utf8'), new RegExp(`^${spec.host.replaceAll('.', '\\.')} ssh-ed25519 `));
    const again = await connectRemote([spec], { knownHostsFiles: [empty], acceptedKnownHostsFile: accepted });
    t.is((await again.exec('n3', 'hostname')).stdout.trim(), 'n3');
    await again.close();

    const other = join(tmp, 'other_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const forged = join(tmp, 'forged_known_hosts');
    writeFileSync(
      forged,
      `${spec.host} ${readFileSync(`${other}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\n`,
    );
    const changed = await t.throwsAsync(
      connectRemote([spec], {
        knownHostsFiles: [forged],
        acceptedKnownHostsFile: join(tmp, 'unused'),
        hostKeyPolicy: 'accept-new',
      }),
      { instanceOf: RemoteHostKeyError },
    );
    t.is(changed?.kind, 'changed');

    const insecure = await connectRemote([spec], { knownHostsFiles: [forged], hostKeyPolicy: 'insecure' });
    t.is((await insecure.exec('n3', 'hostname')).stdout.trim(), 'n3');
    await insecure.close();
  },
);

fx.test('ProxyJump: n3 reached through n1', async (t) => {
  const jumpVia = node('n1');
  const r = await connectRemote([{ ...node('n3'), proxyJump: `root@${jumpVia.host}:22` }], {
    knownHostsFiles: [fx.cluster().knownHostsPath],
  });
  const who = await r.exec('n3', 'hostname; echo "$SSH_CLIENT"');
  const [host, client] = who.stdout.trim().split('\n');
  t.is(host, 'n3');
  t.is(client?.split(' ')[0], jumpVia.host, 'the connection came from n1');
  await r.close();
});

fx.test(
  'doctor reports the shared kernel clock and, exactly when the host lacks it, missing netem',
  async (t) => {
    const r = await fx.remote();
    const report = await runDoctor(r);
    t.true(report.ok);
    // The host's own answer, measured independently on a throwaway veth pair in a scratch namespace.
    const ns = `fl-doctor-probe-${process.pid}`;
    execFileSync('ip', ['netns', 'add', ns]);
    let hostHasNetem: boolean;
    try {
      execFileSync('ip', ['-n', ns, 'link', 'add', 'name', 'flpa', 'type', 'veth', 'peer', 'name', 'flpb']);
      hostHasNetem = (() => {
        try {
          execFileSync(
            'ip',
            ['netns', 'exec', ns, 'tc', 'qdisc', 'add', 'dev', 'flpa', 'root', 'netem', 'delay', '1ms'],
            {
              stdio: 'ignore',
            },
          );
          return true;
        } catch {
          return false;
        }
      })();
    } finally {
      execFileSync('ip', ['netns', 'del', ns]);
    }
    for (const n of report.nodes) {
      const get = (item: string) => n.checks.find((c) => c.item === item);
      t.is(get('own clock')?.status, 'warn', n.node);
      t.regex(get('own clock')?.detail ?? '', /same kernel as the control host/);
      t.is(get('netem')?.status, hostHasNetem ? 'ok' : 'missing', n.node);
      if (!hostHasNetem) t.regex(get('netem')?.fix ?? '', /modprobe sch_netem/);
      t.is(get('ssh')?.status, 'ok');
      t.is(get('sudo')?.value, 'root');
    }
  },
);

fx.test(
  'the command runner keeps bytes, streams, exit codes and timeouts as an exec channel does',
  async (t) => {
    const viaRunner = await fx.connect();
    const viaExec = await fx.connect({ commandRunners: 0 });
    t.teardown(() => Promise.all([viaRunner.close(), viaExec.close()]).then(() => undefined));
    const parentOf = 'ps -o ppid= -p "$PPID" | tr -d " "'; // the process that started `timeout`
    for (const r of [viaRunner, viaExec]) {
      // 300 kB with no trailing newline crosses many SSH packets; stderr is kept apart.
      const big = await r.exec('n1', 'head -c 300000 /dev/zero | tr "\\0" x; printf "e1\\ne2" >&2; exit 5', {
        check: false,
      });
      t.is(big.code, 5);
      t.is(big.stdout, 'x'.repeat(300_000));
      t.is(big.stderr, 'e1\ne2');
      const lookalike = await r.exec('n1', 'printf "S0\\nE0 1\\n"; printf "E0\\n" >&2');
      t.is(lookalike.stdout, 'S0\nE0 1\n');
      t.is(lookalike.stderr, 'E0\n');
      t.is((await r.exec('n1', 'kill -TERM $$', { check: false })).code, 143);
      // stdin is empty for the command either way, never the runner's script.
      t.is((await r.exec('n1', 'cat; echo done')).stdout, 'done\n');
      await t.throwsAsync(r.exec('n1', 'sleep 30', { timeoutMs: 500 }), { instanceOf: RemoteTimeoutError });
      t.is((await r.exec('n1', 'echo next')).stdout, 'next\n');
    }
    // Consecutive commands share one long-lived runner (a shell under sshd); without runners `timeout`
    // is started by sshd's session process itself.
    const a = await viaRunner.exec('n2', parentOf);
    const b = await viaRunner.exec('n2', parentOf);
    t.is(a.stdout, b.stdout);
    const starter = (r: typeof viaRunner) => r.exec('n2', `ps -o comm= -p "$(${parentOf})"`);
    t.is((await starter(viaRunner)).stdout.trim(), 'sh');
    t.is((await starter(viaExec)).stdout.trim(), 'sshd');
  },
);

fx.test(
  "a command waits for its connection's busy runner, and opens an exec channel once the wait is over",
  async (t) => {
    // Who started the command's shell: the runner (`sh`, its pid), or `timeout` (an exec channel).
    const starter = 'read -r a b c p rest </proc/self/stat; echo "$(cat /proc/$p/comm) $p"';
    const waiting = await fx.connect({ commandRunners: 1, runnerWaitMs: 60_000 });
    const hurried = await fx.connect({ commandRunners: 1, runnerWaitMs: 50 });
    t.teardown(() => Promise.all([waiting.close(), hurried.close()]).then(() => undefined));
    const [runner] = (await waiting.exec('n3', starter)).stdout.trim().split(' ');
    t.is(runner, 'sh');
    // The one runner is busy for 1.5 s: the next command waits for it rather than opening a channel.
    const busy = waiting.exec('n3', `sleep 1.5; ${starter}`);
    await new Promise((res) => setTimeout(res, 200));
    const queued = await waiting.exec('n3', starter);
    const first = await busy;
    t.is(queued.stdout, first.stdout, 'the same runner, after the busy command');
    t.true(queued.durationMs > 1000, `waited ${Math.round(queued.durationMs)} ms`);
    // With a short wait, the command runs beside the busy runner on an exec channel.
    await hurried.exec('n3', 'true');
    const stuck = hurried.exec('n3', `sleep 1.5; ${starter}`);
    await new Promise((res) => setTimeout(res, 200));
    const beside = await hurried.exec('n3', starter);
    t.regex(beside.stdout, /^timeout /, 'an exec channel: `timeout … sh -c` under sshd');
    t.true(beside.durationMs < 1000, `${Math.round(beside.durationMs)} ms`);
    t.regex((await stuck).stdout, /^sh /);
  },
);

fx.test(
  'fast runner on a node: a subshell of the runner under its watchdog; the deadline holds on the node',
  async (t) => {
    const r = await fx.connect();
    const admin = await fx.connect({ commandRunners: 0 });
    t.teardown(() => Promise.all([r.close(), admin.close()]).then(() => undefined));
    // The parent of the command's own process, read without naming $PPID (which would select `argv`).
    const parent = 'read -r a b c p rest </proc/self/stat; echo "$p $(cat /proc/$p/comm)"';
    const [runnerPid, comm] = (await r.exec('n2', parent)).stdout.trim().split(' ');
    t.is(comm, 'sh', 'forked by the runner itself: no timeout, no sh -c');
    const watchdog = `pgrep -f ${shellQuote(`[f]aultline-runner-watchdog ${runnerPid} `)}`;
    t.is((await admin.exec('n2', watchdog, { check: false })).code, 0, 'its watchdog runs');

    const marker = `${61 + (process.pid % 1000) / 1000}`;
    const sleeping = `pgrep -f ${shellQuote(`[s]leep ${marker}`)}`;
    await t.throwsAsync(r.exec('n2', `sh -c "sleep ${marker}; :"`, { timeoutMs: 500 }), {
      instanceOf: RemoteTimeoutError,
    });
    t.is((await admin.exec('n2', sleeping, { check: false })).code, 1, 'the grandchild was killed');
    t.is((await r.exec('n2', parent)).stdout.split(' ')[0], runnerPid, 'the same runner goes on');

    // The connection drops mid-command (its sshd session killed): the node still keeps the deadline.
    const lost = r.exec('n2', `sh -c "sleep ${marker}; :"`, { timeoutMs: 2500 });
    await new Promise((res) => setTimeout(res, 300));
    await admin.exec('n2', `kill -9 "$(ps -o ppid= -p ${runnerPid})"`);
    await t.throwsAsync(lost, { instanceOf: RemoteChannelError });
    t.is((await admin.exec('n2', sleeping, { check: false })).code, 0, 'running until its deadline');
    const gone = `i=0; while ${sleeping} >/dev/null && [ $i -lt 60 ]; do sleep 0.1; i=$((i+1)); done; ${sleeping}`;
    t.is((await admin.exec('n2', gone, { check: false })).code, 1, 'killed at its deadline');
    const left = `i=0; while ${watchdog} >/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; ${watchdog}`;
    t.is((await admin.exec('n2', left, { check: false })).code, 1, 'the watchdog is gone with its runner');
  },
);
