import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { allowProxyCommands } from '../../src/core/control/command-fields.ts';
import { parseInventory } from '../../src/core/control/inventory.ts';
import {
  concreteHosts,
  jumpHostsFor,
  loadSshConfig,
  openSshClient,
  parseJumpChain,
  parseSshConfig,
  resolveSshHost,
  resolveWithOpenSsh,
} from '../../src/core/control/ssh-config.ts';
import { proxyCommandLine, routeOf } from '../../src/core/control/ssh-connection.ts';
import { InputError } from '../../src/core/util/errors.ts';

// These tests exercise ProxyCommand itself: the operator's --allow-proxy-command, given.
allowProxyCommands();

const dir = mkdtempSync(join(tmpdir(), 'faultline-sshcfg-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const ssh = openSshClient();
/** Tests of OpenSSH's resolution need an ssh client (CI installs openssh-client). */
const withSsh = ssh ? test : test.skip;

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const PLAIN = `
# global options come first and apply to everyone
IdentitiesOnly yes

Host n? !n9
    HostName 10.0.0.%h
    user   admin
Host n1
    HostName=192.168.1.1
    Port = 2201
    IdentityFile "~/keys/with space/id"
Host n*
    User ignored-because-first-wins
    Port 2222
    ProxyJump jump@bastion:2222
Host cmd
    ProxyCommand ssh -W %h:%p gateway-%n
    ProxyJump ignored-because-proxycommand-came-first
Host *
    IdentityFile ~/.ssh/id_default
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
`;

test('hand parser: first value wins across matching blocks; quotes, =, %h and ~ are understood', (t) => {
  const cfg = parseSshConfig(PLAIN, 'cfg');
  const n1 = resolveSshHost(cfg, 'n1');
  // HostName from `Host n? !n9` came first and uses %h = the alias.
  t.is(n1.hostName, '10.0.0.n1');
  t.is(n1.user, 'admin');
  t.is(n1.port, 2201);
  t.is(n1.identityFile, `${homedir()}/keys/with space/id`);
  t.is(n1.proxyJump, 'jump@bastion:2222');
  t.is(n1.strictHostKeyChecking, 'no');
  t.is(n1.userKnownHostsFile, '/dev/null');
  const n9 = resolveSshHost(cfg, 'n9');
  t.is(n9.hostName, 'n9');
  t.is(n9.user, 'ignored-because-first-wins');
  const other = resolveSshHost(cfg, 'db');
  t.is(other.hostName, 'db');
  t.is(other.user, undefined);
  t.is(other.identityFile, `${homedir()}/.ssh/id_default`);
  t.deepEqual(concreteHosts(cfg), ['n1', 'cmd']);
  // ProxyCommand is kept as written (the rest of the line), %n expanded now, %h %p at connect time.
  const cmd = resolveSshHost(cfg, 'cmd');
  t.is(cmd.proxyCommand, 'ssh -W %h:%p gateway-cmd');
  t.is(cmd.proxyJump, undefined);
  t.is(
    proxyCommandLine(cmd.proxyCommand ?? '', { host: '10.1.1.1', port: 22, user: 'u' }),
    'ssh -W 10.1.1.1:22 gateway-cmd',
  );
});

test('hand parser refuses what it cannot honour, naming file:line', (t) => {
  const include = parseSshConfig('Host a\n  User x\nInclude other.conf\n', 'cfg');
  const e1 = t.throws(() => resolveSshHost(include, 'a'), { instanceOf: InputError });
  t.is(e1?.line, 3);
  t.regex(
    e1?.message ?? '',
    /^cfg:3: Include: cannot be honoured without OpenSSH's own resolution \(ssh -G\)/,
  );
  const match = parseSshConfig('Host a\n  User x\nMatch host b\n  User y\n', 'cfg');
  t.regex(t.throws(() => resolveSshHost(match, 'a'))?.message ?? '', /^cfg:3: Match: /);
  const canon = parseSshConfig('Host a\n  CanonicalizeHostname yes\n', 'cfg');
  t.regex(t.throws(() => resolveSshHost(canon, 'a'))?.message ?? '', /^cfg:2: Host a: canonicalizehostname/);
  t.notThrows(() => resolveSshHost(parseSshConfig('Host a\n  CanonicalizeHostname no\n', 'cfg'), 'a'));
  const bind = parseSshConfig('Host a\n  BindAddress 10.0.0.1\n', 'cfg');
  t.regex(
    t.throws(() => resolveSshHost(bind, 'a'))?.message ?? '',
    /bindaddress: is not supported by faultline's SSH client/,
  );
  const token = parseSshConfig('Host a\n  IdentityFile ~/.ssh/%C\n', 'cfg');
  t.regex(t.throws(() => resolveSshHost(token, 'a'))?.message ?? '', /token %C is not supported/);
  // Malformed files.
  const e2 = t.throws(() => parseSshConfig('Host a\n  HostName\n', 'cfg'), { instanceOf: InputError });
  t.is(e2?.message, 'cfg:2: HostName: keyword has no value');
  t.is(
    t.throws(() => parseSshConfig('Host a\n  IdentityFile "/x\n', 'cfg'))?.message,
    'cfg:2: unterminated double quote',
  );
  const port = parseSshConfig('Host a\n  Port eighty\n', 'cfg');
  t.is(t.throws(() => resolveSshHost(port, 'a'))?.message, 'cfg:2: Port: invalid port "eighty"');
});

test('ProxyJump chains: OpenSSH syntax, hops resolved through the config, first hop reached its own way', (t) => {
  t.deepEqual(parseJumpChain('a, ops@b:2200,ssh://c@[fe80::1]:23,[::1]'), [
    { host: 'a' },
    { user: 'ops', host: 'b', port: 2200 },
    { user: 'c', host: 'fe80::1', port: 23 },
    { host: '::1' },
  ]);
  t.throws(() => parseJumpChain('a,,b'), { message: /empty hop/ });
  const cfg = parseSshConfig(
    [
      'Host edge',
      '  HostName 10.0.0.1',
      '  User edgeuser',
      '  ProxyCommand connect-edge %h',
      'Host inner',
      '  HostName 10.0.0.2',
      '  Port 2022',
      '  IdentityFile /keys/inner',
      '  ProxyJump never-used-for-a-later-hop',
    ].join('\n'),
    'cfg',
  );
  const resolver = { file: 'cfg', via: 'parser' as const, resolve: (a: string) => resolveSshHost(cfg, a) };
  t.deepEqual(jumpHostsFor('edge,root@inner', resolver, 'nodeuser'), [
    { alias: 'edge', host: '10.0.0.1', port: 22, user: 'edgeuser', proxyCommand: 'connect-edge %h' },
    { alias: 'inner', host: '10.0.0.2', port: 2022, user: 'root', identityFile: '/keys/inner' },
  ]);
  // Without a config a chain is taken as written; hops with no user log in as the node's user.
  const legs = routeOf({ name: 'n5', host: '10.0.0.5', port: 22, user: 'admin', proxyJump: 'a,b@c:2' });
  t.deepEqual(
    legs.map((l) => `${l.user}@${l.host}:${l.port}`),
    ['admin@a:22', 'b@c:2', 'admin@10.0.0.5:22'],
  );
});

const INCLUDED = `
Host n1
  HostName 10.9.0.1
  User ops
Host bastion
  HostName 10.9.0.100
  User jumper
  IdentityFile %d/.ssh/jump_%r
`;

function includeConfig(): string {
  const inc = file('included.conf', INCLUDED);
  return file(
    'main.conf',
    `Include ${inc}
Host n2
  HostName %h.lab.example
  Port 2222
  ProxyJump bastion,relay@10.9.0.101:2200
Match host n3
  User matched
  ProxyCommand ssh -W %h:%p bastion
Host n*
  User fallback
`,
  );
}

withSsh('ssh -G: Include, Match and tokens are applied; only what the file sets is reported', (t) => {
  const cfg = includeConfig();
  const n1 = resolveWithOpenSsh(ssh as string, cfg, 'n1');
  t.like(n1, { hostName: '10.9.0.1', user: 'ops' });
  t.is(n1.port, undefined, 'OpenSSH’s default port is not reported as set');
  t.is(n1.identityFile, undefined, 'default identity files are not reported as set');
  const n2 = resolveWithOpenSsh(ssh as string, cfg, 'n2');
  t.like(n2, {
    hostName: 'n2.lab.example',
    port: 2222,
    user: 'fallback',
    proxyJump: 'bastion,relay@[10.9.0.101]:2200', // OpenSSH brackets addresses
  });
  const n3 = resolveWithOpenSsh(ssh as string, cfg, 'n3');
  t.like(n3, { hostName: 'n3', user: 'matched', proxyCommand: 'ssh -W %h:%p bastion' });
  const bastion = resolveWithOpenSsh(ssh as string, cfg, 'bastion');
  t.is(bastion.identityFile, `${homedir()}/.ssh/jump_jumper`);
  // The hand parser refuses the same file rather than resolving n1 to the wrong address.
  const viaParser = loadSshConfig(cfg, { ssh: null });
  t.is(viaParser.via, 'parser');
  t.throws(() => viaParser.resolve('n1'), { message: /main\.conf:1: Include: cannot be honoured/ });
  t.is(loadSshConfig(cfg).via, 'openssh');
});

withSsh('ssh -G and the hand parser agree on a file the parser can read', (t) => {
  const cfg = file('plain.conf', PLAIN);
  const parsed = loadSshConfig(cfg, { ssh: null });
  const viaSsh = loadSshConfig(cfg, { ssh });
  for (const alias of ['n1', 'n2', 'n9', 'db', 'cmd']) {
    const a = parsed.resolve(alias);
    const b = viaSsh.resolve(alias);
    // OpenSSH prints HostName after %h expansion and lower-cases nothing here: the same host either way.
    t.deepEqual({ ...b, userKnownHostsFile: undefined }, { ...a, userKnownHostsFile: undefined }, alias);
  }
});

withSsh(
  'an inventory through ssh_config: jump hosts resolved by alias, OpenSSH errors name file:line',
  (t) => {
    const cfg = includeConfig();
    const inv = parseInventory(
      [
        `sshConfig: ${cfg}`,
        'defaults: { user: deploy, port: 2200 }',
        'nodes:',
        '  n1: {}',
        '  n2: {}',
        '  n3: {}',
        '  n4: { host: 10.9.0.4, proxyJump: "bastion" }',
      ].join('\n'),
      join(dir, 'inv.yaml'),
    );
    const [n1, n2, n3, n4] = inv.nodes;
    // The file's User wins over the inventory defaults; OpenSSH's default port does not.
    t.like(n1, { host: '10.9.0.1', user: 'ops', port: 2200 });
    t.like(n2, { host: 'n2.lab.example', port: 2222, user: 'fallback' });
    t.deepEqual(n2?.jumpHosts, [
      {
        alias: 'bastion',
        host: '10.9.0.100',
        port: 22,
        user: 'jumper',
        identityFile: `${homedir()}/.ssh/jump_jumper`,
      },
      { alias: '10.9.0.101', host: '10.9.0.101', port: 2200, user: 'relay' },
    ]);
    t.like(n3, { user: 'matched', proxyCommand: 'ssh -W %h:%p bastion' });
    t.is(n3?.jumpHosts, undefined);
    t.is(n4?.jumpHosts?.[0]?.host, '10.9.0.100', 'an inventory ProxyJump resolves through the config too');
    const bad = file('bad.conf', 'Host a\n  HostName 10.0.0.1\n  NoSuchOption yes\n');
    const e = t.throws(() => parseInventory(`sshConfig: ${bad}\nnodes:\n  a: {}\n`, join(dir, 'inv2.yaml')), {
      instanceOf: InputError,
    });
    t.regex(e?.message ?? '', /bad\.conf:3: Bad configuration option: nosuchoption/);
    const both = t.throws(
      () =>
        parseInventory('nodes:\n  a: { proxyJump: b, proxyCommand: "nc %h %p" }\n', join(dir, 'inv3.yaml')),
      { instanceOf: InputError },
    );
    t.regex(
      both?.message ?? '',
      /inv3\.yaml:2: nodes\.a\.proxyCommand: give proxyJump or proxyCommand, not both/,
    );
  },
);

withSsh('a config setting OpenSSH’s own default for User counts as not set (documented)', (t) => {
  const me = userInfo().username;
  const cfg = file('same-user.conf', `Host a\n  User ${me}\n`);
  t.is(resolveWithOpenSsh(ssh as string, cfg, 'a').user, undefined);
  const other = file('other-user.conf', `Host a\n  User ${me}x\n`);
  t.is(resolveWithOpenSsh(ssh as string, other, 'a').user, `${me}x`);
});

withSsh('faultline exits 254 naming the ssh_config line when OpenSSH rejects it', async (t) => {
  const bad = file('cli-bad.conf', 'Host a\n  Bogus 1\n');
  const inv = file('cli-inv.yaml', `sshConfig: ${bad}\nnodes:\n  a: {}\n`);
  const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
  const r = await execa('node', [bin, 'doctor', '--inventory', inv], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stderr, /cli-bad\.conf:2: Bad configuration option: bogus/);
  // Without an ssh client (FAULTLINE_SSH=none) the hand parser refuses an Include, also exit 254.
  const include = file('inc.conf', 'Include x\n');
  const noSsh = await execa(
    'node',
    [bin, 'doctor', '--inventory', file('cli-inv2.yaml', `sshConfig: ${include}\nnodes:\n  a: {}\n`)],
    {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1', FAULTLINE_SSH: 'none' },
    },
  );
  t.is(noSsh.exitCode, 254, noSsh.stderr);
  t.regex(noSsh.stderr, /inc\.conf:1: Include: cannot be honoured without OpenSSH/);
});
