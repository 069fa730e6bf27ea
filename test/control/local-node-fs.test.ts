import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { diskNemesis } from '../../nemeses/disk.ts';
import type { FaultSpec } from '../../nemeses/types.ts';
import {
  DEFAULT_NODE_DATA_BYTES,
  ensureLocalCluster,
  localClusterDown,
  localClusterUp,
  nodeFsSource,
  readClusterState,
} from '../../src/lib/clusters/local.ts';
import { clusterDir } from '../../src/lib/clusters/state-dir.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * A local-cluster node's writable places are its own: /var/lib/faultline (every database's data) and /tmp
 * are size-limited tmpfs filesystems inside the node's mount namespace. A disk fault cannot reach a host
 * path whatever names it, disk-full works out of the box and fills only the node's filesystem, and
 * `cluster down` leaves no mount and no data anywhere.
 */
const MiB = 1024 ** 2;
const fx = withCluster(test, { nodes: 2, name: 'node-fs', dataBytes: 64 * MiB });
const prefix = process.env.FAULTLINE_TEST_CLUSTER_PREFIX ?? '';

/** Every mountinfo line of every process on this host naming one of these sources. */
function mountsNamed(sources: readonly string[]): string[] {
  const hits = new Set<string>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    for (const line of text.split('\n')) if (sources.some((s) => line.includes(` ${s} `))) hits.add(line);
  }
  return [...hits];
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

fx.test.serial(
  'each node has its own bounded /var/lib/faultline and /tmp, out of the host’s sight',
  async (t) => {
    const remote = await fx.remote();
    const name = fx.cluster().name;
    for (const node of ['n1', 'n2']) {
      const fs = await remote.exec(
        node,
        'findmnt -n -o SOURCE,FSTYPE,SIZE /var/lib/faultline; findmnt -n -o SOURCE,FSTYPE,SIZE /tmp',
      );
      t.deepEqual(
        fs.stdout
          .trim()
          .split('\n')
          .map((l) => l.trim().split(/\s+/)),
        [
          [nodeFsSource('data', name, node), 'tmpfs', '64M'],
          [nodeFsSource('tmp', name, node), 'tmpfs', '64M'],
        ],
      );
      await remote.exec(node, `echo ${node} > /var/lib/faultline/whoami && echo ${node} > /tmp/whoami`);
    }
    t.is(
      (await remote.exec('n1', 'cat /var/lib/faultline/whoami /tmp/whoami')).stdout,
      'n1\nn1\n',
      'one node never sees another’s',
    );
    t.false(existsSync('/var/lib/faultline/whoami'), 'the host never sees a node’s data');
    const keys = await remote.exec('n1', `ls ${clusterDir(name)}/id_ed25519`, { check: false });
    t.not(keys.code, 0, 'the cluster’s private key on the host is out of the node’s sight');
  },
);

fx.test.serial('a disk fault on a local node cannot touch a host path, however it is named', async (t) => {
  const remote = await fx.remote();
  // /var/tmp is the host's (seen by the node too): the canary lives there.
  const hostDir = mkdtempSync('/var/tmp/fl-canary-');
  t.teardown(() => rmSync(hostDir, { recursive: true, force: true }));
  const canary = join(hostDir, 'host-file');
  writeFileSync(canary, 'precious host data '.repeat(100));
  const before = sha(canary);
  await remote.exec('n1', `mkdir -p /var/lib/faultline/t && ln -sfn ${hostDir} /var/lib/faultline/t/escape`);
  const attempts: FaultSpec[] = [
    { kind: 'disk', action: 'corrupt', targets: ['n1'], params: { file: canary, mode: 'zero', bytes: 64 } },
    {
      kind: 'disk',
      action: 'corrupt',
      targets: ['n1'],
      params: { files: { n1: '/var/lib/faultline/t/escape/host-file' }, mode: 'truncate' },
    },
    {
      kind: 'disk',
      action: 'corrupt',
      targets: ['n1'],
      params: { dir: '/var/lib/faultline/t/escape', mode: 'bitflip' },
    },
    { kind: 'disk', action: 'disk-full', targets: ['n1'], params: { dir: hostDir } },
    {
      kind: 'disk',
      action: 'disk-full',
      targets: ['n1'],
      params: { dir: '/var/lib/faultline/../../../var/tmp' },
    },
  ];
  for (const [i, spec] of attempts.entries())
    await t.throwsAsync(diskNemesis.inject(remote, spec, `h${i}`), {
      message: /outside the node's own filesystems \/var\/lib\/faultline, \/tmp: refused/,
    });
  t.is(sha(canary), before, 'the host file is untouched');
  t.deepEqual(readdirSync(hostDir), ['host-file'], 'no junk file, no backup next to it');
});

fx.test.serial('disk-full works out of the box and fills only the node’s own filesystem', async (t) => {
  const remote = await fx.remote();
  const free = async (node: string, dir: string) =>
    Number((await remote.exec(node, `df -B1 --output=avail ${dir} | tail -1`)).stdout.trim());
  const hostFree = () => statfsSync('/').bavail * statfsSync('/').bsize;
  await remote.exec('n1', 'mkdir -p /var/lib/faultline/db');
  const n2Before = await free('n2', '/var/lib/faultline');
  const hostBefore = hostFree();
  const spec: FaultSpec = {
    kind: 'disk',
    action: 'disk-full',
    targets: ['n1'],
    params: { dir: '/var/lib/faultline/db' },
  };
  const record = await diskNemesis.inject(remote, spec, 'full1');
  try {
    const ev = await diskNemesis.evidence(remote, record);
    t.true(ev.landed, ev.reason);
    t.true((await free('n1', '/var/lib/faultline')) <= 65536 + MiB, 'n1’s data filesystem is full');
    const write = await remote.exec('n1', 'head -c 2097152 /dev/zero > /var/lib/faultline/db/more', {
      check: false,
    });
    t.not(write.code, 0, 'a write there fails (ENOSPC)');
    t.regex(write.stderr, /No space left/);
    t.true(Math.abs((await free('n2', '/var/lib/faultline')) - n2Before) < MiB, 'n2 is untouched');
    // ~64 MiB went into n1's tmpfs; the host's disk did not lose it (other work may write meanwhile).
    t.true(hostBefore - hostFree() < 48 * MiB, `host free space fell by ${hostBefore - hostFree()} bytes`);
  } finally {
    await diskNemesis.heal(remote, record);
  }
  t.true((await free('n1', '/var/lib/faultline')) > 60 * MiB, 'heal gave the space back');
  t.true((await diskNemesis.verifyClean(remote, 'n1')).clean);
});

test.serial('cluster down leaves no mount, no data and no state behind', async (t) => {
  if (fx.skipReason) return t.pass(`skipped: ${fx.skipReason}`);
  const name = `${prefix}node-fs-down`;
  await localClusterDown(name);
  const c = await localClusterUp({ nodes: 2, name, dataBytes: 32 * MiB });
  const sources = ['n1', 'n2'].flatMap((n) => [nodeFsSource('data', name, n), nodeFsSource('tmp', name, n)]);
  try {
    t.is(mountsNamed(sources).length, 4, 'two filesystems per node while up');
    const { loadInventory } = await import('../../src/core/control/inventory.ts');
    const { connectRemote } = await import('../../src/core/control/ssh-remote.ts');
    const inv = loadInventory(c.inventoryPath);
    const remote = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles });
    await remote.exec(
      'n1',
      'mkdir -p /var/lib/faultline/etcd && head -c 4194304 /dev/urandom > /var/lib/faultline/etcd/wal',
    );
    await remote.close();
  } finally {
    await localClusterDown(name);
  }
  // The namespace's last process is gone, so its mounts (and the data in them) are too.
  for (let i = 0; i < 40 && mountsNamed(sources).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(mountsNamed(sources), [], 'no process on this host sees a node filesystem');
  t.false(existsSync(clusterDir(name)), 'the cluster’s state directory is gone');
});

test.serial('a cluster from before per-node filesystems is rebuilt, not reused, by --local', async (t) => {
  if (fx.skipReason) return t.pass(`skipped: ${fx.skipReason}`);
  const name = `${prefix}node-fs-old`;
  await localClusterDown(name);
  await localClusterUp({ nodes: 1, name });
  try {
    // What an older faultline wrote: the same state without dataBytes.
    const statePath = join(clusterDir(name), 'state.json');
    const { dataBytes: _, ...old } = JSON.parse(readFileSync(statePath, 'utf8'));
    writeFileSync(statePath, JSON.stringify(old));
    const again = await ensureLocalCluster(name, 1);
    t.true(again.created, 'rebuilt');
    t.is(readClusterState(name)?.dataBytes, DEFAULT_NODE_DATA_BYTES);
    t.true((await ensureLocalCluster(name, 1)).created === false, 'and reused from then on');
  } finally {
    await localClusterDown(name);
  }
});
