import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { diskNemesis } from '../../nemeses/disk.ts';
import type { FaultSpec } from '../../nemeses/types.ts';
import {
  DEFAULT_NODE_DATA_BYTES,
  DEFAULT_NODE_ROOT_BYTES,
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
 * are size-limited tmpfs filesystems inside the node's mount namespace, and everything else it writes
 * (a package install into /usr, /etc, /var, /opt) lands in its own copy-on-write layer over the host's
 * root filesystem. A disk fault cannot reach a host path whatever names it, disk-full works out of the
 * box and fills only the node's filesystem, an install is seen by that node only, and `cluster down`
 * leaves no mount and no data anywhere.
 */
const MiB = 1024 ** 2;
const fx = withCluster(test, { nodes: 2, name: 'node-fs', dataBytes: 64 * MiB, rootBytes: 128 * MiB });
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
    for (const node of ['n1', 'n2']) {
      const fs = await remote.exec(node, 'df --output=source,fstype / /dev/shm | tail -n +2');
      t.deepEqual(
        fs.stdout
          .trim()
          .split('\n')
          .map((l) => l.trim().split(/\s+/)),
        [
          [nodeFsSource('overlay', name, node), 'overlay'],
          [nodeFsSource('shm', name, node), 'tmpfs'],
        ],
        'the node’s root is its own copy-on-write view of the host’s, and /dev/shm its own',
      );
    }
    const hosts = await remote.exec('n1', 'echo 10.0.0.1 x >> /etc/hosts', { check: false });
    t.not(hosts.code, 0, 'the cluster’s /etc/hosts, shared by every node, is read-only on a node');
    const rootSize = await remote.exec('n1', 'df -B1 --output=size / | tail -1');
    t.is(Number(rootSize.stdout.trim()), 128 * MiB, 'the root layer is bounded by --root-size');
  },
);

const PROBE = 'faultline-node-fs-probe';

/**
 * A tiny Debian package built here (no mirror needed) with files under /usr/local, /etc and /opt; its
 * preinst marks that dpkg is running (holding the node's dpkg lock) and sleeps $PROBE_SLEEP seconds.
 */
async function probeDeb(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'fl-probe-deb-'));
  const put = (path: string, text: string, mode = 0o644) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
    chmodSync(join(dir, path), mode);
  };
  put(
    'DEBIAN/control',
    `Package: ${PROBE}\nVersion: 1.0\nArchitecture: all\nMaintainer: faultline <probe@example.invalid>\nDescription: probe\n`,
  );
  put('DEBIAN/preinst', '#!/bin/sh\ntouch /tmp/probe-preinst\nsleep "$PROBE_SLEEP"\n', 0o755);
  put(`usr/local/bin/${PROBE}`, '#!/bin/sh\necho probe\n', 0o755);
  put(`etc/${PROBE}.conf`, 'installed=1\n');
  put(`opt/${PROBE}/data`, 'probe data\n');
  const deb = `${dir}.deb`;
  await execa('dpkg-deb', ['--build', '--root-owner-group', dir, deb]);
  rmSync(dir, { recursive: true, force: true });
  return deb;
}

fx.test.serial(
  'a package or file installed on a node lands in its own root layer: the host and the peer see nothing',
  async (t) => {
    const remote = await fx.remote();
    // Host files a node overwrites: the node sees its own copy, the host and the peer the original.
    const canaries = [
      `/etc/${PROBE}-canary`,
      `/usr/local/share/${PROBE}-canary`,
      `/opt/${PROBE}-canary/file`,
    ];
    t.teardown(() => {
      for (const c of canaries) rmSync(c, { force: true });
      rmSync(dirname(canaries[2] as string), { recursive: true, force: true });
    });
    for (const c of canaries) {
      mkdirSync(dirname(c), { recursive: true });
      writeFileSync(c, `host original ${c}\n`);
    }
    const hostHashes = () => [...canaries, '/var/lib/dpkg/status'].map(sha);
    const before = hostHashes();
    const deb = await probeDeb();
    t.teardown(() => rmSync(deb, { force: true }));
    for (const node of ['n1', 'n2']) await remote.upload(node, deb, '/tmp/probe.deb');

    await remote.exec(
      'n1',
      [
        'PROBE_SLEEP=0 dpkg -i /tmp/probe.deb >/dev/null',
        ...canaries.map((c) => `echo node-written > ${c}`),
        // A tarball install into /usr/local and /opt, as a database's own installer would do.
        'mkdir -p /tmp/tb/bin && echo tool > /tmp/tb/bin/probe-tool && tar -C /tmp/tb -cf /tmp/tb.tar bin',
        'tar -C /usr/local -xf /tmp/tb.tar && mkdir -p /opt/probe-tb && tar -C /opt/probe-tb -xf /tmp/tb.tar',
      ].join(' && '),
    );
    t.is(
      (await remote.exec('n1', `${PROBE} && dpkg -s ${PROBE} | grep Status`)).stdout,
      'probe\nStatus: install ok installed\n',
    );
    t.is((await remote.exec('n1', `cat ${canaries.join(' ')}`)).stdout, 'node-written\n'.repeat(3));

    const installed = [
      `/usr/local/bin/${PROBE}`,
      `/etc/${PROBE}.conf`,
      `/opt/${PROBE}/data`,
      '/usr/local/bin/probe-tool',
      '/opt/probe-tb/bin/probe-tool',
    ];
    for (const p of installed) t.false(existsSync(p), `the host has no ${p}`);
    t.deepEqual(hostHashes(), before, 'every host file the node wrote is unchanged, dpkg’s status too');
    const onHost = await execa('dpkg', ['-s', PROBE], { reject: false });
    t.not(onHost.exitCode, 0, 'the host’s dpkg does not know the package');

    const peer = await remote.exec(
      'n2',
      `for p in ${installed.join(' ')}; do test -e "$p" && echo "$p"; done; dpkg -s ${PROBE} >/dev/null 2>&1 && echo installed; cat ${canaries.join(' ')}`,
      { check: false },
    );
    t.is(
      peer.stdout,
      canaries.map((c) => `host original ${c}\n`).join(''),
      'the peer sees the host’s files only',
    );
  },
);

fx.test.serial('each node has its own dpkg database and lock: installs on two nodes at once', async (t) => {
  const remote = await fx.remote();
  // n1 holds its dpkg lock for 4 s (inside the preinst); n2 installs meanwhile. With one shared lock,
  // n2's dpkg would stop at once: "dpkg frontend lock was locked by another process".
  await remote.exec('n1', `rm -f /tmp/probe-preinst; dpkg -r ${PROBE} >/dev/null 2>&1 || true`);
  await remote.exec('n2', `rm -f /tmp/probe-preinst; dpkg -r ${PROBE} >/dev/null 2>&1 || true`);
  const slow = remote.exec('n1', 'PROBE_SLEEP=4 dpkg -i /tmp/probe.deb', { check: false });
  await remote.exec(
    'n1',
    'for i in $(seq 100); do test -e /tmp/probe-preinst && exit 0; sleep 0.05; done; exit 1',
  );
  const started = Date.now();
  const fast = await remote.exec('n2', 'PROBE_SLEEP=0 dpkg -i /tmp/probe.deb', { check: false });
  const fastMs = Date.now() - started;
  const n1 = await slow;
  t.is(fast.code, 0, fast.stderr);
  t.is(n1.code, 0, n1.stderr);
  t.true(fastMs < 3500, `n2 installed in ${fastMs} ms while n1's dpkg held its own lock`);
  t.is(
    (await remote.exec('n1', `dpkg -s ${PROBE} | grep Status`)).stdout.trim(),
    'Status: install ok installed',
  );
});

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
  const c = await localClusterUp({ nodes: 2, name, dataBytes: 32 * MiB, rootBytes: 64 * MiB });
  const kinds = ['data', 'tmp', 'shm', 'overlay'] as const;
  const sources = ['n1', 'n2'].flatMap((n) => kinds.map((k) => nodeFsSource(k, name, n)));
  try {
    for (const s of sources) t.true(mountsNamed([s]).length > 0, `${s} is mounted while the node is up`);
    const { loadInventory } = await import('../../src/core/control/inventory.ts');
    const { connectRemote } = await import('../../src/core/control/ssh-remote.ts');
    const inv = loadInventory(c.inventoryPath);
    const remote = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles });
    await remote.exec(
      'n1',
      'mkdir -p /var/lib/faultline/etcd && head -c 4194304 /dev/urandom > /var/lib/faultline/etcd/wal && head -c 4194304 /dev/urandom > /usr/local/bin/fl-down-probe',
    );
    await remote.close();
  } finally {
    await localClusterDown(name);
  }
  // The namespace's last process is gone, so its mounts (and the data in them) are too.
  for (let i = 0; i < 40 && mountsNamed(sources).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(mountsNamed(sources), [], 'no process on this host sees a node filesystem');
  t.false(existsSync('/usr/local/bin/fl-down-probe'), 'what the node installed never reached the host');
  t.false(existsSync(clusterDir(name)), 'the cluster’s state directory is gone');
});

test.serial('a cluster from before per-node filesystems is rebuilt, not reused, by --local', async (t) => {
  if (fx.skipReason) return t.pass(`skipped: ${fx.skipReason}`);
  const name = `${prefix}node-fs-old`;
  await localClusterDown(name);
  await localClusterUp({ nodes: 1, name });
  try {
    const statePath = join(clusterDir(name), 'state.json');
    // What older faultlines wrote: the same state without dataBytes (node data on the host's disk), or
    // without rootBytes (nodes writing through to the host's root filesystem).
    for (const field of ['dataBytes', 'rootBytes']) {
      const { [field]: _, ...old } = JSON.parse(readFileSync(statePath, 'utf8'));
      writeFileSync(statePath, JSON.stringify(old));
      const again = await ensureLocalCluster(name, 1);
      t.true(again.created, `rebuilt (no ${field})`);
      t.is(readClusterState(name)?.dataBytes, DEFAULT_NODE_DATA_BYTES);
      t.is(readClusterState(name)?.rootBytes, DEFAULT_NODE_ROOT_BYTES);
    }
    t.true((await ensureLocalCluster(name, 1)).created === false, 'and reused from then on');
  } finally {
    await localClusterDown(name);
  }
});
