import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseInventory } from '../../src/core/control/inventory.ts';
import { InputError } from '../../src/core/util/errors.ts';
import { importVagrant, parseVagrantSshConfig } from '../../src/lib/clusters/vagrant.ts';

/**
 * Recorded `vagrant ssh-config` output (Vagrant 2.4 with VirtualBox: NAT-forwarded ports, per-machine
 * keys, and the ssh-rsa re-enabling lines newer Vagrant prints). Vagrant itself cannot run on the CI host.
 */
const block = (name: string, port: number) => `Host ${name}
  HostName 127.0.0.1
  User vagrant
  Port ${port}
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  PasswordAuthentication no
  IdentityFile "/home/me/faultline/vagrant/.vagrant/machines/${name}/virtualbox/private_key"
  IdentitiesOnly yes
  LogLevel FATAL
  PubkeyAcceptedKeyTypes +ssh-rsa
  HostKeyAlgorithms +ssh-rsa
`;
const RECORDED = ['n1', 'n2', 'n3', 'n4', 'n5'].map((n, i) => block(n, i === 0 ? 2222 : 2199 + i)).join('\n');

const dir = mkdtempSync(join(tmpdir(), 'faultline-vagrant-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

test('five machines become five nodes with forwarded ports, keys and private addresses', (t) => {
  const nodes = parseVagrantSshConfig(RECORDED, 'recorded');
  t.deepEqual(
    nodes.map((n) => [n.name, n.host, n.port, n.user]),
    [
      ['n1', '127.0.0.1', 2222, 'vagrant'],
      ['n2', '127.0.0.1', 2200, 'vagrant'],
      ['n3', '127.0.0.1', 2201, 'vagrant'],
      ['n4', '127.0.0.1', 2202, 'vagrant'],
      ['n5', '127.0.0.1', 2203, 'vagrant'],
    ],
  );
  t.is(nodes[2]?.identityFile, '/home/me/faultline/vagrant/.vagrant/machines/n3/virtualbox/private_key');
  t.is(nodes[4]?.address, '192.168.56.105');
  t.is(nodes[4]?.clusterSshPort, 22);
  t.false(nodes[0]?.sharedKernelClock);
});

test('the written inventory loads back through the inventory loader', async (t) => {
  const recorded = join(dir, 'ssh-config.txt');
  writeFileSync(recorded, RECORDED);
  const { inventoryPath } = await importVagrant({ dir, sshConfigFile: recorded, out: join(dir, 'inv.yaml') });
  const inv = parseInventory(readFileSync(inventoryPath, 'utf8'), inventoryPath);
  t.is(inv.nodes.length, 5);
  t.is(inv.hostKeyCheck, 'accept-new');
  t.like(inv.nodes[1], {
    name: 'n2',
    host: '127.0.0.1',
    port: 2200,
    user: 'vagrant',
    address: '192.168.56.102',
    clusterSshPort: 22,
  });
});

test('the CLI writes the inventory from recorded output', (t) => {
  const recorded = join(dir, 'ssh-config-cli.txt');
  writeFileSync(recorded, RECORDED);
  const out = join(dir, 'cli-inv.yaml');
  const printed = execFileSync(
    'node',
    ['bin/faultline.js', 'cluster', 'vagrant', '--dir', dir, '--ssh-config', recorded, '--out', out],
    { encoding: 'utf8', env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' } },
  );
  t.is(printed.trim(), out);
  t.regex(readFileSync(out, 'utf8'), /address: 192\.168\.56\.101/);
});

test('malformed output is refused with file:line', (t) => {
  t.throws(() => parseVagrantSshConfig('', 'empty'), { instanceOf: InputError, message: /no `Host` blocks/ });
  const noPort = 'Host n1\n  HostName 127.0.0.1\n  User vagrant\n  IdentityFile /k\n';
  t.throws(() => parseVagrantSshConfig(noPort, 'rec'), {
    instanceOf: InputError,
    message: 'rec:1: Host n1: no Port (vagrant ssh-config always prints one)',
  });
  t.throws(() => parseVagrantSshConfig('Host n1\n  Port\n', 'rec'), {
    instanceOf: InputError,
    message: /rec:2: Port: keyword has no value/,
  });
});
