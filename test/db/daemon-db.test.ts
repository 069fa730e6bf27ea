import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { ExecOptions, ExecResult, NodeSpec, Remote } from '../../src/core/control/types.ts';
import { capabilitiesOf } from '../../src/core/database/capabilities.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { DaemonDatabase, parseDaemonDescription } from '../../src/lib/databases/daemon-db.ts';
import { readDaemonDescription } from '../../src/lib/databases/daemon-file.ts';
import type { DbContext } from '../../src/lib/databases/types.ts';

/** A remote that records every command and answers "running" once the daemon was started. */
function recordingRemote(names: string[]): {
  remote: Remote;
  commands: { node: string; cmd: string; opts?: ExecOptions }[];
} {
  const commands: { node: string; cmd: string; opts?: ExecOptions }[] = [];
  const started = new Set<string>();
  const specs: NodeSpec[] = names.map((name, i) => ({
    name,
    host: `10.9.0.${i + 2}`,
    port: 22,
    user: 'root',
    labels: { cluster: 'lab' },
  }));
  const remote = {
    nodes: specs,
    node: (n: string) => specs.find((s) => s.name === n) as NodeSpec,
    async exec(node: string, cmd: string, opts?: ExecOptions): Promise<ExecResult> {
      commands.push({ node, cmd, ...(opts && { opts }) });
      if (cmd.includes('setsid')) started.add(node);
      const running = /test -n "\$p"$/.test(cmd) ? (started.has(node) ? 0 : 1) : 0;
      return { node, command: cmd, stdout: '', stderr: '', code: running, durationMs: 1 };
    },
  } as unknown as Remote;
  return { remote, commands };
}

/** A recording remote and a context whose members have hostnames (host-n1 …) the nodes report. */
function withMembers(names: string[]) {
  const { remote, commands } = recordingRemote(names);
  const ctx: DbContext = {
    remote,
    nodes: names,
    members: names.map((n, i) => ({ name: n, address: `10.9.0.${i + 2}`, hostname: `host-${n}` })),
  };
  return { remote, commands, ctx };
}

const description = {
  name: 'kv9',
  packages: ['memcached'],
  start: 'memcached -l {address} -p {port} --name={node} -c {peers}',
  port: 11211,
  ready: { command: 'check-ready {address} {dataDir}', timeout: '5s' },
  logs: ['{dataDir}/extra.log'],
  wipe: ['cache'],
  timeCommand: 'date +%s%N',
  client: 'kv9-text',
};

test('placeholders are substituted inside words and every word is shell-quoted', async (t) => {
  const d = parseDaemonDescription(description, 'kv9.yaml');
  const db = new DaemonDatabase(d);
  const { remote, commands } = recordingRemote(['n1', 'n2', 'n3']);
  const ctx: DbContext = { remote, nodes: ['n1', 'n2', 'n3'] };
  for (const n of ctx.nodes) await db.setup(ctx, n);
  const start = commands.find((c) => c.node === 'n2' && c.cmd.includes('setsid'))?.cmd ?? '';
  t.true(
    start.includes(
      'setsid memcached -l 10.9.0.3 -p 11211 --name=n2 -c 10.9.0.2,10.9.0.4 >>/var/lib/faultline/kv9/lab/n2/kv9.log',
    ),
    start,
  );
  t.true(start.includes('echo $! > /var/lib/faultline/kv9/lab/n2/kv9.pid'));
  t.is(db.clientAddress(ctx, 'n1'), '10.9.0.2:11211');
  t.is(db.dataDir(ctx, 'n1'), '/var/lib/faultline/kv9/lab/n1/data');
  t.deepEqual(db.logFiles(ctx, 'n1'), [
    '/var/lib/faultline/kv9/lab/n1/kv9.log',
    '/var/lib/faultline/kv9/lab/n1/data/extra.log',
  ]);
  t.is(db.clock.timeCommand, 'date +%s%N');
  await db.awaitReady(ctx, 10_000);
  t.true(
    commands.some(
      (c) =>
        c.cmd ===
        'cd /var/lib/faultline/kv9/lab/n1/data && check-ready 10.9.0.2 /var/lib/faultline/kv9/lab/n1/data',
    ),
  );
  await db.wipe(ctx, 'n1');
  t.true(commands.some((c) => c.cmd.startsWith('rm -rf /var/lib/faultline/kv9/lab/n1/data/cache &&')));
  // Every optional capability a described daemon gets.
  t.deepEqual(capabilitiesOf(db).sort(), ['clock', 'data-dir', 'install', 'logs', 'process', 'wipe']);
});

test('plan text stays data: shell syntax in a description is quoted, never run', async (t) => {
  const d = parseDaemonDescription(
    { ...description, start: 'sh -c $(reboot);rm -rf / `id` a|b {node}' },
    'evil.yaml',
  );
  const db = new DaemonDatabase(d);
  const { remote, commands } = recordingRemote(['n1']);
  await db.start({ remote, nodes: ['n1'] }, 'n1');
  const cmd = commands.find((c) => c.cmd.includes('setsid'))?.cmd ?? '';
  t.true(cmd.includes("setsid sh -c '$(reboot);rm' -rf / '`id`' 'a|b' n1 >>"), cmd);
  // The quoted words reach the program unchanged: a real shell gives back exactly these arguments.
  const argv = execFileSync(
    'sh',
    ['-c', `printf '%s\\n' ${cmd.slice(cmd.indexOf('setsid sh') + 7, cmd.indexOf(' >>'))}`],
    {
      encoding: 'utf8',
    },
  );
  t.deepEqual(argv.trim().split('\n'), ['sh', '-c', '$(reboot);rm', '-rf', '/', '`id`', 'a|b', 'n1']);
});

test('paths must stay inside the node directory; names, packages and placeholders are checked', (t) => {
  const outside = new DaemonDatabase(
    parseDaemonDescription({ ...description, logs: ['../../../etc/shadow'] }, 'x.yaml'),
  );
  const { remote } = recordingRemote(['n1']);
  t.throws(() => outside.logFiles({ remote, nodes: ['n1'] }, 'n1'), {
    instanceOf: UserError,
    message:
      /\.\.\/\.\.\/\.\.\/etc\/shadow is outside the node's directory \/var\/lib\/faultline\/kv9\/lab\/n1/,
  });
  const abs = new DaemonDatabase(parseDaemonDescription({ ...description, pidfile: '/run/x.pid' }, 'x.yaml'));
  t.throws(() => abs.process.pidFile({ remote, nodes: ['n1'] }, 'n1'), {
    message: /outside the node's directory/,
  });
  t.throws(() => parseDaemonDescription({ ...description, name: '../up' }, 'bad.yaml'), {
    message: /^bad\.yaml: name: lower-case letters/,
  });
  t.throws(() => parseDaemonDescription({ ...description, packages: ['x; rm -rf /'] }, 'bad.yaml'), {
    message: /packages\.0: a Debian package name/,
  });
  t.throws(() => parseDaemonDescription({ ...description, start: 'x {secret}' }, 'bad.yaml'), {
    message: /unknown placeholder \{secret\}/,
  });
  t.throws(() => parseDaemonDescription({ ...description, ready: { timeout: '30' } }, 'bad.yaml'), {
    message: /ready\.timeout: "30" has no unit; write 30s/,
  });
});

test('a YAML file describes a daemon; a broken one is file:line: field: reason', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-daemon-'));
  const ok = join(dir, 'kv9.yaml');
  writeFileSync(ok, 'name: kv9\npackages: [memcached]\nstart: memcached -p {port}\nport: 11211\n');
  t.like(readDaemonDescription(ok), { name: 'kv9', port: 11211, start: ['memcached', '-p', '{port}'] });
  const bad = join(dir, 'bad.yaml');
  // Each problem at its line: an unknown field, a bad value, a placeholder in a field split into words.
  writeFileSync(bad, 'name: kv9\nstart: memcached\nports: 1\n');
  t.throws(() => readDaemonDescription(bad), { message: `${bad}:3: ports: unknown field` });
  writeFileSync(bad, 'name: kv9\nstart: memcached\nready:\n  timeout: 5s\n  command: 3\n');
  t.throws(() => readDaemonDescription(bad), { message: new RegExp(`^${bad}:5: ready\\.command: `) });
  writeFileSync(bad, 'name: kv9\nenv:\n  A: x\nstart: memcached -p {secret}\n');
  t.throws(() => readDaemonDescription(bad), {
    message: new RegExp(`^${bad}:4: start: unknown placeholder`),
  });
});

test('config files, env, args with spaces, hostnames and form commands: templated, quoted, inside the node', async (t) => {
  const d = parseDaemonDescription(
    {
      name: 'brk',
      start: 'brokerd --config {dir}/brk.conf',
      args: ['--banner', 'hello world; $(id)', '--me={hostname}'],
      env: { BRK_NODENAME: 'brk@{hostname}', BRK_PEERS: '{peerHostnames}' },
      config: [
        {
          path: 'brk.conf',
          content: 'listen = {address}\nname = {node}@{hostname}\nseed = {primaryHostname}\n',
        },
        { path: 'cookie', content: 'SECRET', mode: '0400' },
      ],
      form: { on: 'joining', commands: ['brokerctl join brk@{primaryHostname}', 'brokerctl start'] },
      ready: { command: 'brokerctl ping', exitCode: 3, interval: '10ms', timeout: '2s' },
      port: 5672,
    },
    'brk.yaml',
  );
  const db = new DaemonDatabase(d);
  const { commands, ctx } = withMembers(['n1', 'n2', 'n3']);
  await db.setup(ctx, 'n2');
  const conf = commands.find((c) => c.cmd.includes('cat > /var/lib/faultline/brk/lab/n2/brk.conf'));
  t.is(conf?.opts?.stdin, 'listen = 10.9.0.3\nname = n2@host-n2\nseed = host-n1\n');
  const cookie = commands.find((c) => c.cmd.includes('/n2/cookie'));
  t.true(cookie?.cmd.endsWith('chmod 0400 /var/lib/faultline/brk/lab/n2/cookie'));
  const start = commands.find((c) => c.cmd.includes('setsid'))?.cmd ?? '';
  t.true(
    start.includes(
      "setsid env BRK_NODENAME=brk@host-n2 BRK_PEERS=host-n1,host-n3 brokerd --config /var/lib/faultline/brk/lab/n2/brk.conf --banner 'hello world; $(id)' --me=host-n2 >>",
    ),
    start,
  );
  t.truthy(db.form);
  t.is(db.form?.on, 'joining');
  await db.form?.run(ctx, 'n3', ctx.members ?? []);
  const form = commands.filter((c) => c.node === 'n3' && c.cmd.includes('brokerctl')).map((c) => c.cmd);
  t.deepEqual(form, [
    'export BRK_NODENAME=brk@host-n3 BRK_PEERS=host-n1,host-n2; cd /var/lib/faultline/brk/lab/n3/data && brokerctl join brk@host-n1',
    'export BRK_NODENAME=brk@host-n3 BRK_PEERS=host-n1,host-n2; cd /var/lib/faultline/brk/lab/n3/data && brokerctl start',
  ]);
  // A config path that climbs out of the node's directory is refused.
  const bad = new DaemonDatabase(
    parseDaemonDescription(
      { name: 'brk', start: 'brokerd', config: [{ path: '../../x', content: '' }] },
      'b.yaml',
    ),
  );
  await t.throwsAsync(bad.setup(ctx, 'n1'), {
    instanceOf: UserError,
    message: /outside the node's directory/,
  });
  t.throws(() => parseDaemonDescription({ name: 'x', start: 'x', args: ['{nope}'] }, 'x.yaml'), {
    message: /unknown placeholder \{nope\}/,
  });
});

test("config lines naming {peer…} repeat once per other node, {member…} once per node; {index} is the node's position", async (t) => {
  const d = parseDaemonDescription(
    {
      name: 'nts',
      start: 'ntsd -c {dir}/nts.conf',
      config: [
        {
          path: 'nts.conf',
          content:
            'listen: {address}:4222\nroutes: [\n  nats://{peer}:6222  # {peerNode} {peerHostname}\n]\nserver.{memberIndex}={member}:2888 {memberNode} {memberHostname}\n',
        },
        { path: 'data/myid', content: '{index}\n' },
      ],
    },
    'nts.yaml',
  );
  const db = new DaemonDatabase(d);
  const { commands, ctx } = withMembers(['n1', 'n2', 'n3']);
  await db.setup(ctx, 'n2');
  const conf = commands.find((c) => c.cmd.includes('cat > /var/lib/faultline/nts/lab/n2/nts.conf'));
  t.is(
    conf?.opts?.stdin,
    [
      'listen: 10.9.0.3:4222',
      'routes: [',
      '  nats://10.9.0.2:6222  # n1 host-n1',
      '  nats://10.9.0.4:6222  # n3 host-n3',
      ']',
      'server.1=10.9.0.2:2888 n1 host-n1',
      'server.2=10.9.0.3:2888 n2 host-n2',
      'server.3=10.9.0.4:2888 n3 host-n3',
      '',
    ].join('\n'),
  );
  const myid = commands.find((c) => c.cmd.includes('cat > /var/lib/faultline/nts/lab/n2/data/myid'));
  t.is(myid?.opts?.stdin, '2\n');
  // Repeating placeholders live in config content only, and one line repeats over one list.
  t.throws(() => parseDaemonDescription({ name: 'x', start: 'x --route={peer}' }, 'x.yaml'), {
    message: /\{peer\} repeats a line of a config file's content: it is not allowed elsewhere/,
  });
  t.throws(
    () =>
      parseDaemonDescription(
        { name: 'x', start: 'x', config: [{ path: 'c', content: '{peer} {member}' }] },
        'x.yaml',
      ),
    { message: /config\.0\.content: a line names both \{peer…\} and \{member…\} placeholders/ },
  );
});

test('ready: a command retried at its interval until it exits with the expected code', async (t) => {
  const d = parseDaemonDescription(
    { name: 'rdy', start: 'rdyd', ready: { command: 'probe', exitCode: 0, interval: '20ms', timeout: '3s' } },
    'r.yaml',
  );
  const db = new DaemonDatabase(d);
  const { remote } = recordingRemote(['n1']);
  let probes = 0;
  const exec = remote.exec.bind(remote);
  (remote as { exec: Remote['exec'] }).exec = async (node, cmd, opts) => {
    if (cmd.endsWith('probe')) {
      probes++;
      return { node, command: cmd, stdout: '', stderr: 'not yet', code: probes < 4 ? 69 : 0, durationMs: 1 };
    }
    return exec(node, cmd, opts);
  };
  const ctx: DbContext = { remote, nodes: ['n1'] };
  await db.setup(ctx, 'n1');
  await db.awaitReady(ctx, 5000);
  t.is(probes, 4);
});

test("a description's stopSignal is its process control's, and only a listed signal is taken", (t) => {
  const base = { name: 'pgd', start: 'postgres -D {dataDir}', port: 5432 };
  t.is(
    new DaemonDatabase(parseDaemonDescription({ ...base, stopSignal: 'INT' }, 'pgd.yaml')).process.stopSignal,
    'INT',
  );
  t.is(new DaemonDatabase(parseDaemonDescription(base, 'pgd.yaml')).process.stopSignal, undefined);
  t.throws(() => parseDaemonDescription({ ...base, stopSignal: 'KILL; rm -rf /' }, 'pgd.yaml'), {
    message: /pgd\.yaml: stopSignal/,
  });
});
