import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import test, { type ExecutionContext } from 'ava';
import { execa, type ResultPromise } from 'execa';
import { listFaultlineStateScript } from '../../nemeses/commands/iptables.ts';
import { listFaultlineQdiscsScript } from '../../nemeses/commands/tc.ts';
import { sweepNodes } from '../../nemeses/heal.ts';
import { readLedger } from '../../nemeses/ledger.ts';
import { STATE_ROOT } from '../../nemeses/node-state.ts';
import type { Remote } from '../../src/core/control/types.ts';
import { type ClusterFixture, withCluster } from '../helpers/cluster.ts';

/**
 * Two local clusters on one host, with the same node names (n1, n2), faults in force on both. A run on
 * one is killed with SIGKILL mid-fault; `faultline heal` for that cluster (by its ledger, then by its
 * inventory) must repair every leftover of that cluster and leave the other's faults exactly in force:
 * iptables chains and tc qdiscs (per network namespace), a stopped process (per PID namespace), the
 * markers under /run/faultline/<cluster>/<node> (on each node's own root layer; keyed by cluster for
 * nodes that share a /run), a corrupted file's backup and a junk file filling a mount.
 */
const a = withCluster(test, { nodes: 2, name: 'sec-a' });
const b = withCluster(test, { nodes: 2, name: 'sec-b' });
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const holder = new URL('./fixtures/hold-specs.ts', import.meta.url).pathname;
const env = { FAULTLINE_FROM_SOURCE: '1' };

const VICTIM_PID = '/tmp/sec-victim.pid';
const FULL_DIR = '/tmp/sec-full';
const CORRUPT_DIR = '/tmp/sec-corrupt';

const SPECS = [
  { kind: 'partition', action: 'start', params: { topology: 'halves' } },
  { kind: 'packet', action: 'start', targets: ['n2'], params: { behaviors: { rate: '1mbit' } } },
  { kind: 'process', action: 'pause', targets: ['n1'], params: { pidFile: VICTIM_PID } },
  { kind: 'disk', action: 'disk-full', targets: ['n1'], params: { dir: FULL_DIR, leaveBytes: 65536 } },
  {
    kind: 'disk',
    action: 'corrupt',
    targets: ['n2'],
    params: { file: `${CORRUPT_DIR}/a.db`, mode: 'zero', bytes: 4096, backup: true },
  },
];

interface Prepared {
  victim: number;
  sha: string;
}

/** A victim process on n1, a small tmpfs on n1 to fill, a file on n2 to corrupt. */
async function prepare(remote: Remote): Promise<Prepared> {
  await remote.exec(
    'n1',
    `setsid sh -c 'sleep 600 & echo $! > ${VICTIM_PID}; wait' </dev/null >/dev/null 2>&1 &`,
  );
  await remote.exec('n1', `mkdir -p ${FULL_DIR} && mount -t tmpfs -o size=8m tmpfs ${FULL_DIR}`);
  await remote.exec('n2', `mkdir -p ${CORRUPT_DIR} && head -c 65536 /dev/urandom > ${CORRUPT_DIR}/a.db`);
  let victim = 0;
  for (let i = 0; i < 100 && victim <= 1; i++) {
    victim = Number.parseInt(
      (await remote.exec('n1', `cat ${VICTIM_PID} 2>/dev/null`, { check: false })).stdout,
      10,
    );
    if (!(victim > 1)) await new Promise((r) => setTimeout(r, 20));
  }
  if (!(victim > 1)) throw new Error('victim did not start');
  return { victim, sha: await sha(remote) };
}

const sha = async (remote: Remote): Promise<string> =>
  (await remote.exec('n2', `sha256sum ${CORRUPT_DIR}/a.db | cut -d' ' -f1`)).stdout.trim();

/** Start the holder on a cluster and wait until it reports every fault in force. */
async function hold(fx: ClusterFixture, ledger: string): Promise<{ child: ResultPromise; ids: string[] }> {
  // node itself (not npx → tsx → node): the signal must reach the process that holds the faults.
  const child = execa(
    process.execPath,
    ['--import', 'tsx', holder, fx.cluster().inventoryPath, ledger, JSON.stringify(SPECS)],
    { reject: false, env },
  );
  const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const ids = await new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('holder did not inject within 90 s')), 90_000);
    rl.on('line', (l) => {
      if (l.startsWith('{"injected"')) {
        clearTimeout(timer);
        resolve((JSON.parse(l) as { injected: string[] }).injected);
      }
    });
    child.then((r) => reject(new Error(`holder exited ${r.exitCode}: ${String(r.stderr)}`)), reject);
  });
  return { child, ids };
}

const lines = async (remote: Remote, node: string, cmd: string): Promise<string[]> =>
  (await remote.exec(node, cmd, { sudo: true, check: false })).stdout.split('\n').filter((l) => l.trim());

const procState = async (remote: Remote, pid: number): Promise<string> =>
  (await remote.exec('n1', `sed -n 's/^State:\\s*//p' /proc/${pid}/status`)).stdout.trim();

/** Every fault of SPECS still in force on the cluster, with its markers under /run/faultline/<name>/. */
async function assertInForce(t: ExecutionContext, remote: Remote, name: string, p: Prepared): Promise<void> {
  for (const node of ['n1', 'n2'])
    t.true(
      (await lines(remote, node, listFaultlineStateScript())).length > 0,
      `${name} ${node}: iptables chains`,
    );
  t.true((await lines(remote, 'n2', listFaultlineQdiscsScript())).length > 0, `${name} n2: tc root qdisc`);
  t.regex(await procState(remote, p.victim), /^T/, `${name} n1: victim stopped`);
  t.true(
    (await lines(remote, 'n1', `ls -A ${FULL_DIR} | grep -c faultline-junk`))[0] !== '0',
    `${name} n1: junk file`,
  );
  t.not(await sha(remote), p.sha, `${name} n2: file still corrupted`);
  for (const [node, area] of [
    ['n1', 'paused'],
    ['n1', 'junk'],
    ['n2', 'backups'],
  ] as const)
    t.true(
      (await lines(remote, node, `ls -A ${STATE_ROOT}/${name}/${node}/${area} 2>/dev/null`)).length > 0,
      `${name} ${node}: markers in ${STATE_ROOT}/${name}/${node}/${area}`,
    );
}

/** Nothing of SPECS left on the cluster, the victim running again, the file as before. */
async function assertClean(t: ExecutionContext, remote: Remote, name: string, p: Prepared): Promise<void> {
  for (const s of await sweepNodes(remote, ['n1', 'n2']))
    t.deepEqual(s.found, [], `${name} ${s.node} ${s.kind} left: ${s.found.join('; ')}`);
  t.regex(await procState(remote, p.victim), /^[SR]/, `${name} n1: victim running`);
  t.is(await sha(remote), p.sha, `${name} n2: file restored`);
  t.deepEqual(await lines(remote, 'n1', `ls -A ${FULL_DIR}`), [], `${name} n1: no junk`);
  for (const node of ['n1', 'n2'])
    t.deepEqual(
      await lines(remote, node, `find ${STATE_ROOT}/${name}/${node} -type f 2>/dev/null`),
      [],
      `${name} ${node}: no markers`,
    );
}

a.test.serial(
  'two clusters with faults in force: killing one run and healing it never touches the other',
  async (t) => {
    const [ra, rb] = [await a.remote(), await b.remote()];
    const [pa, pb] = [await prepare(ra), await prepare(rb)];
    const tmp = mkdtempSync(join(tmpdir(), 'sec-two-'));
    const [la, lb] = [join(tmp, 'a.jsonl'), join(tmp, 'b.jsonl')];
    const [ha, hb] = [await hold(a, la), await hold(b, lb)];
    t.teardown(() => {
      ha.child.kill('SIGKILL');
      hb.child.kill('SIGKILL');
    });
    await assertInForce(t, ra, a.cluster().name, pa);
    await assertInForce(t, rb, b.cluster().name, pb);

    // The run on sec-a dies mid-fault: nothing of it is healed.
    ha.child.kill('SIGKILL');
    await ha.child;
    t.deepEqual(
      readLedger(la)
        .unhealed.map((r) => r.id)
        .sort(),
      [...ha.ids].sort(),
    );
    await assertInForce(t, ra, a.cluster().name, pa);

    const byLedger = await execa('node', [bin, 'heal', '--ledger', la], { reject: false, env });
    t.is(byLedger.exitCode, 0, byLedger.stderr || byLedger.stdout);
    t.regex(byLedger.stdout, /all nodes clean/);
    t.deepEqual(readLedger(la).unhealed, []);
    await assertClean(t, ra, a.cluster().name, pa);
    await assertInForce(t, rb, b.cluster().name, pb);

    // A sweep of sec-a by its inventory (no ledger) also leaves sec-b alone.
    const bySweep = await execa('node', [bin, 'heal', '--inventory', a.cluster().inventoryPath], {
      reject: false,
      env,
    });
    t.is(bySweep.exitCode, 0, bySweep.stderr || bySweep.stdout);
    t.notRegex(bySweep.stdout, /fixed/);
    await assertInForce(t, rb, b.cluster().name, pb);

    // sec-b's own run still heals everything of its own on SIGTERM.
    hb.child.kill('SIGTERM');
    t.is((await hb.child).exitCode, 143);
    t.deepEqual(readLedger(lb).unhealed, []);
    await assertClean(t, rb, b.cluster().name, pb);
    await assertClean(t, ra, a.cluster().name, pa);
  },
);
