import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { connectCluster } from '../../src/lib/clusters/connect-cluster.ts';
import { localClusterUnavailableReason } from '../../src/lib/clusters/host-tools.ts';
import { localClusterDown, localClusterStatus, localClusterUp } from '../../src/lib/clusters/local.ts';
import { bridgeName, clusterId } from '../../src/lib/clusters/local-names.ts';
import { clusterDir, subnetClaimsDir } from '../../src/lib/clusters/state-dir.ts';

const reason = localClusterUnavailableReason();
const t_ = reason ? test.serial.skip : test.serial;
const title = (s: string) => (reason ? `${s} (skipped: ${reason})` : s);
const A = 'ctl-life-a';
const B = 'ctl-life-b';

test.after.always(async () => {
  if (reason) return;
  await localClusterDown(A);
  await localClusterDown(B);
});

/** Everything on the host that still belongs to cluster `name`. */
function leftovers(name: string): string[] {
  const found: string[] = [];
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  for (const line of netns.split('\n'))
    if (line.startsWith(`${name}-n`)) found.push(`netns ${line.split(' ')[0]}`);
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
  for (const line of links.split('\n'))
    if (line.includes(clusterId(name))) found.push(`link ${line.split(':')[1]?.trim()}`);
  const dir = clusterDir(name);
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes(`${dir}/`)) found.push(`process ${pid} ${cmd.replaceAll('\0', ' ').slice(0, 80)}`);
    } catch {}
  }
  if (existsSync(dir)) found.push(`dir ${dir}`);
  return found;
}

t_(title('two clusters coexist on separate bridges and subnets and cannot reach each other'), async (t) => {
  await localClusterDown(A);
  await localClusterDown(B);
  const a = await localClusterUp({ nodes: 2, name: A });
  const b = await localClusterUp({ nodes: 2, name: B });
  t.not(a.subnet, b.subnet);
  t.not(bridgeName(A), bridgeName(B));
  const status = await localClusterStatus(A);
  t.true(status.healthy);
  t.deepEqual(
    status.nodes.map((n) => [n.name, n.netns, n.sshd]),
    [
      ['n1', true, true],
      ['n2', true, true],
    ],
  );
  const connected = await connectCluster({ inventory: a.inventoryPath });
  const { remote } = connected;
  try {
    const bHost = b.nodes[0]?.host ?? '';
    const cross = await remote.exec('n1', `timeout 2 bash -c '</dev/tcp/${bHost}/22'`, { check: false });
    t.not(cross.code, 0, 'a node of A reached a node of B');
    const same = await remote.exec('n1', `timeout 2 bash -c '</dev/tcp/${a.nodes[1]?.host}/22'`, {
      check: false,
    });
    t.is(same.code, 0, 'nodes of one cluster reach each other');
  } finally {
    await connected.close();
  }
  const clash = await t.throwsAsync(localClusterUp({ nodes: 1, name: A }));
  t.regex(clash?.message ?? '', /already exists/);
  const subnetTaken = await t.throwsAsync(localClusterUp({ nodes: 1, name: 'ctl-life-c', subnet: a.subnet }));
  t.regex(subnetTaken?.message ?? '', /in use|claimed/);
  t.false(existsSync(clusterDir('ctl-life-c')), 'a failed up cleans up after itself');
});

t_(
  title('cluster down leaves no namespace, link, bridge, sshd, key or claim behind, and is idempotent'),
  async (t) => {
    t.true(leftovers(A).length > 0, 'cluster A exists before down');
    const state = JSON.parse(readFileSync(join(clusterDir(A), 'state.json'), 'utf8')) as { prefix: string };
    const first = await localClusterDown(A);
    t.true(first.existed);
    t.is(first.removedNetns.length, 2);
    t.deepEqual(leftovers(A), []);
    t.false(existsSync(join(subnetClaimsDir(), state.prefix)));
    const second = await localClusterDown(A);
    t.false(second.existed);
    t.deepEqual(leftovers(B).length > 0, true, 'cluster B untouched');
  },
);

t_(title('cluster down works after a crash that lost the state file'), async (t) => {
  // Simulate a control node that died mid-run: the state file is gone, namespaces and sshd remain.
  rmSync(join(clusterDir(B), 'state.json'));
  t.true(leftovers(B).some((l) => l.startsWith('netns')));
  const r = await localClusterDown(B);
  t.true(r.existed);
  t.deepEqual(leftovers(B), []);
});

t_(title('the CLI builds, reports and removes a cluster; bad input exits 254'), (t) => {
  const name = 'ctl-life-cli';
  const cli = (...args: string[]) =>
    spawnSync('node', ['bin/faultline.js', ...args], {
      encoding: 'utf8',
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1', FAULTLINE_LOG_LEVEL: 'warn' },
    });
  try {
    const up = cli('cluster', 'up', '--nodes', '2', '--name', name);
    t.is(up.status, 0, up.stderr);
    t.is(up.stdout.trim(), join(clusterDir(name), 'inventory.yaml'));
    const status = cli('cluster', 'status', '--name', name, '--json');
    t.is(status.status, 0, status.stderr);
    t.true((JSON.parse(status.stdout) as { healthy: boolean }).healthy);
    const doctor = cli('doctor', '--inventory', up.stdout.trim(), '--json');
    t.is(doctor.status, 0, doctor.stderr);
    t.true((JSON.parse(doctor.stdout) as { ok: boolean }).ok);
    const bad = cli('cluster', 'up', '--nodes', '2', '--name', 'Bad Name');
    t.is(bad.status, 254);
    t.regex(bad.stderr, /cluster name "Bad Name" cannot be used in a path/);
    const down = cli('cluster', 'down', '--name', name);
    t.is(down.status, 0, down.stderr);
    t.deepEqual(leftovers(name), []);
    t.regex(cli('cluster', 'down', '--name', name).stdout, /nothing to remove/);
  } finally {
    cli('cluster', 'down', '--name', name);
  }
});
