import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { clusterAddress, clusterSshPort } from '../../src/core/control/addresses.ts';
import { hostKeyPolicyFrom, remoteOptionsFor } from '../../src/core/control/connect.ts';
import { loadInventory, parseInventory } from '../../src/core/control/inventory.ts';
import type { NodeSpec } from '../../src/core/control/types.ts';
import { InputError, UserError } from '../../src/core/util/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'faultline-inv-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function fails(t: import('ava').ExecutionContext, text: string, line: number | null, pattern: RegExp) {
  const err = t.throws(() => parseInventory(text, 'nodes.yaml'), { instanceOf: InputError });
  t.is(err?.line, line, err?.message);
  t.regex(err?.message ?? '', pattern);
}

test('defaults, per-node overrides, host shorthand, relative paths and labels', (t) => {
  const inv = parseInventory(
    [
      'knownHosts: ./kh',
      'hostKeyCheck: accept-new',
      'defaults:',
      '  user: admin',
      '  identityFile: keys/id',
      '  sudoPasswordEnv: NODE_SUDO',
      '  labels: { rack: a }',
      'nodes:',
      '  n1: 10.0.0.11',
      '  n2: { host: 10.0.0.12, port: 2222, user: root, identityFile: ~/k2, labels: { rack: b } }',
      '  n3:',
      '    passwordEnv: N3_PW',
      '    sharedKernelClock: true',
    ].join('\n'),
    join(dir, 'nodes.yaml'),
  );
  t.is(inv.hostKeyCheck, 'accept-new');
  t.deepEqual(inv.knownHostsFiles, [join(dir, 'kh')]);
  const [n1, n2, n3] = inv.nodes;
  t.deepEqual(n1, {
    name: 'n1',
    host: '10.0.0.11',
    port: 22,
    user: 'admin',
    identityFile: join(dir, 'keys/id'),
    sudoPasswordEnv: 'NODE_SUDO',
    labels: { rack: 'a' },
  });
  t.is(n2?.port, 2222);
  t.is(n2?.user, 'root');
  t.is(n2?.identityFile, join(homedir(), 'k2'));
  t.deepEqual(n2?.labels, { rack: 'b' });
  t.is(n3?.host, 'n3', 'host defaults to the node name');
  t.is(n3?.passwordEnv, 'N3_PW');
  t.true(n3?.sharedKernelClock);
});

test('a literal password is refused at its line, pointing to passwordEnv', (t) => {
  fails(t, 'nodes:\n  n1:\n    host: a\n    password: hunter2\n', 4, /nodes\.n1\.password: .*passwordEnv/);
  fails(t, 'defaults:\n  sudoPassword: x\nnodes:\n  n1: a\n', 2, /sudoPasswordEnv/);
});

test('the message never echoes the secret', (t) => {
  const err = t.throws(() => parseInventory('nodes:\n  n1: { host: a, password: s3cr3t-value }\n', 'x.yaml'));
  t.false(err?.message.includes('s3cr3t-value'));
});

test('unknown fields, bad ports, bad env names and empty node lists name file:line', (t) => {
  fails(t, 'nodes:\n  n1:\n    host: a\n    hots: b\n', 4, /^nodes\.yaml:4: nodes\.n1\.hots: unknown field/);
  fails(t, 'nodes:\n  n1:\n    host: a\n    port: 70000\n', 4, /nodes\.n1\.port/);
  fails(t, 'defaults:\n  passwordEnv: "not a name"\nnodes:\n  n1: a\n', 2, /environment variable name/);
  fails(t, 'nodes: {}\n', 1, /no nodes/);
  fails(t, 'nodez:\n  n1: a\n', 1, /nodez: unknown field|nodes/);
});

test('YAML syntax errors and non-mapping documents are located', (t) => {
  fails(t, 'nodes:\n  n1: [a\n', 3, /YAML/);
  fails(t, '- a\n- b\n', 1, /mapping/);
  fails(t, 'nodes:\n  n1: a\n  n1: b\n', 3, /YAML/);
});

test('hosts resolve through an OpenSSH config named by the inventory', (t) => {
  writeFileSync(
    join(dir, 'ssh_config'),
    'Host db*\n  User ops\n  Port 2022\n  IdentityFile ~/.ssh/lab\nHost db1\n  HostName 10.1.0.1\n  ProxyJump bastion@jump.lab:22\n',
  );
  const inv = parseInventory(
    'sshConfig: ./ssh_config\nnodes:\n  n1: { host: db1 }\n  n2: { host: db2, user: root }\n',
    join(dir, 'i.yaml'),
  );
  t.like(inv.nodes[0], { host: '10.1.0.1', user: 'ops', port: 2022, proxyJump: 'bastion@jump.lab:22' });
  t.is(inv.nodes[0]?.identityFile, join(homedir(), '.ssh/lab'));
  t.like(inv.nodes[1], { host: 'db2', user: 'root', port: 2022 });
  fails(t, 'sshConfig: ./nope\nnodes:\n  n1: a\n', 1, /does not exist/);
});

test('loadInventory reports an unreadable file in one line', (t) => {
  const err = t.throws(() => loadInventory(join(dir, 'missing.yaml')), { instanceOf: UserError });
  t.regex(err?.message ?? '', /missing\.yaml: cannot read inventory \(ENOENT\)/);
});

test('host-key policy: CLI flags override the inventory, which overrides the strict default', (t) => {
  const inv = parseInventory(
    'hostKeyCheck: accept-new\nknownHosts: [./a, /abs/b]\nnodes:\n  n1: h\n',
    join(dir, 'p.yaml'),
  );
  t.is(hostKeyPolicyFrom({}), 'strict');
  t.is(hostKeyPolicyFrom({}, inv), 'accept-new');
  t.is(hostKeyPolicyFrom({ insecureSkipHostKeyCheck: true }, inv), 'insecure');
  t.is(hostKeyPolicyFrom({ acceptNewHostKeys: true }, { ...inv, hostKeyCheck: 'strict' }), 'accept-new');
  const opts = remoteOptionsFor(inv, { knownHosts: ['/extra'] });
  t.is(opts.hostKeyPolicy, 'accept-new');
  t.deepEqual(opts.knownHostsFiles, [
    join(homedir(), '.ssh', 'known_hosts'),
    join(dir, 'a'),
    '/abs/b',
    '/extra',
  ]);
});

test('a node has an SSH address and a cluster address; the cluster address falls back to the host', (t) => {
  const inv = parseInventory(
    [
      'nodes:',
      '  n1: 10.0.0.11',
      '  n2: { host: 127.0.0.1, port: 2201, address: 192.168.56.102 }',
      '  n3: { host: 127.0.0.1, port: 2202, address: 192.168.56.103, clusterSshPort: 2022 }',
    ].join('\n'),
    'nodes.yaml',
  );
  const [n1, n2, n3] = inv.nodes;
  t.is(clusterAddress(n1 as NodeSpec), '10.0.0.11');
  t.is(clusterSshPort(n1 as NodeSpec), 22);
  t.like(n2, { host: '127.0.0.1', port: 2201, address: '192.168.56.102' });
  t.is(clusterAddress(n2 as NodeSpec), '192.168.56.102');
  t.is(clusterSshPort(n2 as NodeSpec), 22, 'sshd at the cluster address is on 22, not the forward port');
  t.is(clusterSshPort(n3 as NodeSpec), 2022);
});

test('a cluster address under defaults is refused at its line', (t) => {
  fails(t, 'defaults:\n  address: 10.0.0.1\nnodes:\n  n1: a\n', 2, /belongs to one node/);
  fails(t, 'nodes:\n  n1: { host: a, address: "bad address" }\n', 2, /IP address or host name/);
});
