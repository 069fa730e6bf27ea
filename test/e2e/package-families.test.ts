import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { ensurePackages, nodePackageFamily } from '../../src/core/control/packages.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * The package layer on real nodes: a Debian node (family apt, detected from its /etc/os-release) and the
 * same node declared pre-provisioned (`packageFamily: none`): nothing is installed, and a binary the node
 * lacks is reported by name, by `faultline test` as by the layer itself. The other families' commands
 * are unit-tested (test/control/packages.test.ts): no dnf, apk or zypper node can run here.
 */
const fx = withCluster(test, { nodes: 1, name: 'pkg-families' });
const dir = mkdtempSync(join(tmpdir(), 'faultline-pkg-families-'));
const cli = (args: string[]) =>
  execa('node', ['bin/faultline.js', ...args], {
    reject: false,
    env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
  });

/** The cluster's inventory with `packageFamily: none` under defaults. */
function noneInventory(): string {
  const text = readFileSync(fx.cluster().inventoryPath, 'utf8').replace(
    /^defaults:\n/m,
    'defaults:\n  packageFamily: none\n',
  );
  const path = join(dir, 'none.yaml');
  writeFileSync(path, text);
  return path;
}

fx.test.serial('a Debian node: family apt from /etc/os-release, in doctor and in the layer', async (t) => {
  const remote = await fx.remote();
  t.is(await nodePackageFamily(remote, 'n1'), 'apt');
  const r = await cli(['doctor', '--inventory', fx.cluster().inventoryPath, '--json']);
  const report = JSON.parse(r.stdout) as {
    nodes: { checks: { item: string; value: string; detail?: string }[] }[];
  };
  const row = report.nodes[0]?.checks.find((c) => c.item === 'packages');
  t.is(row?.value, 'apt');
  t.regex(row?.detail ?? '', /detected from \/etc\/os-release \(ID=debian\)/);
});

fx.test.serial('apt installs a missing package for real, and finds it there afterwards', async (t) => {
  const remote = await fx.remote();
  // GNU hello: small, harmless, not something any other test needs. Namespace nodes have no route to a
  // mirror: the host fetches the .deb into its apt cache, which each node sees through its root layer
  // (and the install lands in that node's layer only, never on the host).
  const fetched = await execa(
    'apt-get',
    ['-o', 'DPkg::Lock::Timeout=900', 'install', '--download-only', '-y', '--no-install-recommends', 'hello'],
    { reject: false },
  );
  if (fetched.exitCode !== 0)
    return t.fail(`this host cannot fetch Debian's hello package: ${fetched.stderr}`);
  await remote.exec('n1', 'apt-get remove -y -o DPkg::Lock::Timeout=300 hello >/dev/null 2>&1 || true', {
    sudo: true,
  });
  const hostHas = async () => (await execa('dpkg', ['-s', 'hello'], { reject: false })).exitCode === 0;
  const hostHad = await hostHas();
  const started = Date.now();
  await ensurePackages(remote, 'n1', ['hello']);
  t.log(`apt-get install hello through the layer: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const r = await remote.exec('n1', 'dpkg -s hello >/dev/null && hello -g ok', { check: false });
  t.is(r.stdout.trim(), 'ok');
  t.is(await hostHas(), hostHad, 'the install stayed on the node: the host’s dpkg is as it was');
  await remote.exec('n1', 'apt-get remove -y -o DPkg::Lock::Timeout=300 hello >/dev/null', { sudo: true });
});

fx.test.serial(
  'packageFamily none: nothing installed; doctor says so; a missing binary is reported by name',
  async (t) => {
    const inv = noneInventory();
    const doc = await cli(['doctor', '--inventory', inv, '--json']);
    const report = JSON.parse(doc.stdout) as {
      nodes: { checks: { item: string; value: string; fix?: string }[] }[];
    };
    const rows = report.nodes[0]?.checks ?? [];
    t.is(rows.find((c) => c.item === 'packages')?.value, 'none');

    const { connectCluster } = await import('../../src/lib/clusters/connect-cluster.ts');
    const cluster = await connectCluster({ inventory: inv });
    try {
      const remote = cluster.remote;
      t.is(await nodePackageFamily(remote, 'n1'), 'none');
      // Present: verified, nothing run.
      await ensurePackages(remote, 'n1', ['etcd-server', 'redis-server', 'iptables']);
      await t.throwsAsync(ensurePackages(remote, 'n1', ['etcd-server', 'hello']), {
        message: 'n1: missing hello (packageFamily: none installs nothing)',
      });
      // Take etcdctl away on this node only (its own mount namespace): the node really lacks the binary.
      await remote.exec('n1', 'mount --bind /dev/null "$(command -v etcdctl)"', { sudo: true });
      try {
        await t.throwsAsync(ensurePackages(remote, 'n1', ['etcd-server', 'etcd-client']), {
          message: 'n1: missing etcd-client (binary etcdctl) (packageFamily: none installs nothing)',
        });
        const r = await cli([
          'test',
          '--inventory',
          inv,
          '--db',
          'etcd',
          '--time-limit',
          '2s',
          '--out',
          join(dir, 'runs'),
        ]);
        t.is(r.exitCode, 254, r.stderr);
        t.regex(
          r.stderr,
          /n1: missing etcd-client \(binary etcdctl\) \(packageFamily: none installs nothing\)/,
        );
        t.notRegex(r.stderr, /internal error/);
      } finally {
        await remote.exec('n1', 'umount "$(command -v etcdctl)" 2>/dev/null || umount /usr/bin/etcdctl', {
          sudo: true,
          check: false,
        });
      }
      t.is((await remote.exec('n1', 'test -x /usr/bin/etcdctl && echo back')).stdout.trim(), 'back');
    } finally {
      await cluster.close();
    }
  },
);
