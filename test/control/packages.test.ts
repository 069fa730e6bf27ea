import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadInventory } from '../../src/core/control/inventory.ts';
import {
  describeMissing,
  ensurePackages,
  familyFromOsRelease,
  familyPackages,
  installCommand,
  installHint,
  missingCommand,
  PACKAGES,
  parseOsRelease,
} from '../../src/core/control/packages.ts';
import type { Remote } from '../../src/core/control/types.ts';

/** The package layer's pure parts: os-release detection, name maps, command construction per family. */

const os = (text: string) => familyFromOsRelease(parseOsRelease(text));

test('families from /etc/os-release: ID first, then ID_LIKE; quotes stripped; unknown is null', (t) => {
  t.is(os('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'), 'apt');
  t.is(os('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"'), 'apt');
  t.is(os('ID=linuxmint\nID_LIKE="ubuntu debian"'), 'apt');
  t.is(os('ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.3"'), 'dnf');
  t.is(os('ID="almalinux"\nID_LIKE="rhel centos fedora"\nVERSION_ID="8.9"'), 'dnf');
  t.is(os('ID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.4"'), 'dnf');
  t.is(os('ID="centos"\nID_LIKE="rhel fedora"\nVERSION_ID="7"'), 'yum');
  t.is(os('ID=fedora\nVERSION_ID=40'), 'dnf');
  t.is(os('ID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"'), 'dnf');
  t.is(os('ID=alpine\nVERSION_ID=3.20.0'), 'apk');
  t.is(os('ID="opensuse-leap"\nID_LIKE="suse opensuse"\nVERSION_ID="15.6"'), 'zypper');
  t.is(os('ID="sles"\nID_LIKE="suse"\nVERSION_ID="15.5"'), 'zypper');
  t.is(os('ID=opensuse-tumbleweed\nID_LIKE="opensuse suse"'), 'zypper');
  t.is(os('ID=someos\nID_LIKE=debian'), 'apt', 'an unknown ID falls back to ID_LIKE');
  t.is(os('ID=arch'), null);
  t.is(os(''), null);
});

test('name maps: Debian names to every family; unknown names pass through; a family without one is named', (t) => {
  const names = [
    'iptables',
    'iproute2',
    'libfaketime',
    'faketime',
    'dmsetup',
    'fuse3',
    'etcd-server',
    'etcd-client',
  ];
  t.deepEqual(familyPackages('apt', names).packages, names);
  t.deepEqual(familyPackages('dnf', names), {
    packages: ['iptables', 'iproute', 'iproute-tc', 'libfaketime', 'device-mapper', 'fuse3', 'etcd'],
    unmapped: [],
  });
  t.deepEqual(familyPackages('yum', ['iproute2']).packages, ['iproute', 'iproute-tc'], 'yum uses dnf names');
  t.deepEqual(familyPackages('apk', ['iproute2', 'etcd-client', 'redis-tools', 'dmsetup']).packages, [
    'iproute2',
    'etcd-ctl',
    'redis',
    'device-mapper',
  ]);
  t.deepEqual(familyPackages('zypper', ['redis-server', 'redis-tools', 'etcd-client']).packages, [
    'redis',
    'etcdctl',
  ]);
  t.deepEqual(familyPackages('apk', ['python3-fusepy']), { packages: [], unmapped: ['python3-fusepy'] });
  t.deepEqual(familyPackages('dnf', ['my-own-db']).packages, ['my-own-db']);
  // Everything faultline itself needs has a way to be verified and a name in every family (or says not).
  for (const [name, e] of Object.entries(PACKAGES)) t.true(!!(e.binaries || e.test), `${name} is verifiable`);
});

test('install commands per family: non-interactive, every package shell-quoted', (t) => {
  t.is(
    installCommand('apt', ['iptables', 'iproute2']),
    'DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends iptables iproute2',
  );
  t.is(installCommand('dnf', ['iproute', 'iproute-tc']), 'dnf install -y iproute iproute-tc');
  t.is(installCommand('yum', ['iptables']), 'yum install -y iptables');
  t.is(installCommand('apk', ['iproute2']), 'apk add --no-cache iproute2');
  t.is(installCommand('zypper', ['fuse3']), 'zypper --non-interactive install --no-recommends fuse3');
  t.is(installCommand('dnf', ["x'; rm -rf /"]), `dnf install -y 'x'\\''; rm -rf /'`);
});

test("doctor's fixes in the node's family; none says to put it on the image", (t) => {
  t.is(installHint('apt', ['iptables']), 'apt-get install -y iptables');
  t.is(installHint(null, ['iptables']), 'apt-get install -y iptables', 'unknown: the Debian form');
  t.is(installHint('dnf', ['iproute2']), 'dnf install -y iproute iproute-tc');
  t.is(installHint('apk', ['python3-fusepy']), 'no apk package known for python3-fusepy');
  t.is(
    installHint('zypper', ['libfaketime']),
    'zypper --non-interactive install --no-recommends libfaketime',
  );
  t.regex(
    installHint('none', ['dmsetup']),
    /^pre-provisioned node \(packageFamily: none\): put dmsetup on the image$/,
  );
});

test('verification: binaries, file tests, or the family package database for names it does not know', (t) => {
  const cmd = missingCommand('apt', ['iproute2', 'libfaketime', 'my-db']);
  t.true(cmd.includes('command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1; } || echo iproute2'));
  t.true(cmd.includes('libfaketime.so.1'));
  t.true(cmd.includes('dpkg -s my-db'));
  t.true(missingCommand('dnf', ['my-db']).includes('rpm -q my-db'));
  t.true(missingCommand('apk', ['my-db']).includes('apk info -e my-db'));
  t.true(missingCommand('none', ['my-db']).includes('dpkg -s my-db || rpm -q my-db || apk info -e my-db'));
  t.is(
    describeMissing(['etcd-client', 'libfaketime', 'my-db']),
    'missing etcd-client (binary etcdctl), libfaketime (clock faults on a shared kernel), my-db',
  );
});

test('inventory: packageFamily per node or in defaults, strict (a family faultline does not know is refused)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-pkg-inv-'));
  const file = join(dir, 'nodes.yaml');
  writeFileSync(
    file,
    'defaults:\n  packageFamily: none\nnodes:\n  n1: 10.0.0.1\n  n2:\n    host: 10.0.0.2\n    packageFamily: dnf\n',
  );
  const inv = loadInventory(file);
  t.deepEqual(
    inv.nodes.map((n) => n.packageFamily),
    ['none', 'dnf'],
  );
  writeFileSync(file, 'nodes:\n  n1:\n    host: 10.0.0.1\n    packageFamily: pacman\n');
  const err = t.throws(() => loadInventory(file));
  t.regex(err?.message ?? '', /nodes\.yaml:4.*packageFamily/);
});

test('apt install on a node without package lists fetches them once and tries again', async (t) => {
  // A node as a box or cloud image ships it: no /var/lib/apt/lists, so the first install cannot find
  // etcd-server; after `apt-get update` it can.
  const calls: string[] = [];
  let lists = false;
  let installed = false;
  const spec = { name: 'n1', host: 'h', port: 22, user: 'vagrant', packageFamily: 'apt' as const };
  const remote = {
    node: () => spec,
    exec: async (_node: string, cmd: string) => {
      calls.push(cmd.includes('command -v') ? 'check' : cmd.split(' ').slice(0, 2).join(' '));
      if (cmd.includes('command -v'))
        return { code: 0, stdout: installed ? '' : 'etcd-server\n', stderr: '' };
      if (cmd.startsWith('apt-get update')) {
        lists = true;
        return { code: 0, stdout: '', stderr: '' };
      }
      if (!lists) throw new Error('exit 100: E: Unable to locate package etcd-server');
      installed = true;
      return { code: 0, stdout: '', stderr: '' };
    },
  } as unknown as Remote;
  await ensurePackages(remote, 'n1', ['etcd-server']);
  t.true(installed);
  t.deepEqual(calls, [
    'check',
    'DEBIAN_FRONTEND=noninteractive apt-get',
    'apt-get update',
    'DEBIAN_FRONTEND=noninteractive apt-get',
    'check',
  ]);
  // A failure after the update is the real error, reported as is.
  lists = false;
  installed = false;
  const failing = {
    ...remote,
    node: () => spec,
    exec: async (_n: string, cmd: string) => {
      if (cmd.includes('command -v')) return { code: 0, stdout: 'etcd-server\n', stderr: '' };
      if (cmd.startsWith('apt-get update')) return { code: 0, stdout: '', stderr: '' };
      throw new Error('exit 100: E: Unable to locate package etcd-server');
    },
  } as unknown as Remote;
  await t.throwsAsync(ensurePackages(failing, 'n1', ['etcd-server']), { message: /Unable to locate/ });
  // A node that cannot fetch the lists (no route to a mirror) reports the install's error, not the update's.
  const offline = {
    ...remote,
    node: () => spec,
    exec: async (_n: string, cmd: string) => {
      if (cmd.includes('command -v')) return { code: 0, stdout: 'etcd-server\n', stderr: '' };
      if (cmd.startsWith('apt-get update')) throw new Error('exit 100: W: Failed to fetch: no route');
      throw new Error('exit 100: E: Unable to locate package etcd-server');
    },
  } as unknown as Remote;
  await t.throwsAsync(ensurePackages(offline, 'n1', ['etcd-server']), { message: /Unable to locate/ });
});
