import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { sweepNodes } from '../../nemeses/heal.ts';
import { readLedger } from '../../nemeses/ledger.ts';
import { partitionNemesis } from '../../nemeses/partition.ts';
import { probeConnect } from '../../nemeses/probe.ts';
import { processNemesis } from '../../nemeses/process.ts';
import { withCluster } from '../helpers/cluster.ts';
import { startFaultHolder } from './fixtures/start-holder.ts';

const fx = withCluster(test, { nodes: 5, name: 'nem-heal' });
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const victimPid = '/tmp/nem-heal-victim-n1.pid';

async function startVictim(): Promise<number> {
  const remote = await fx.remote();
  await remote.exec(
    'n1',
    // The pidfile of an earlier victim must not be read back as this one's.
    `rm -f ${victimPid}; setsid sh -c 'sleep 600 & echo $! > ${victimPid}; wait' </dev/null >/dev/null 2>&1 &`,
  );
  for (let i = 0; i < 100; i++) {
    const pid = Number.parseInt(
      (await remote.exec('n1', `cat ${victimPid} 2>/dev/null`, { check: false })).stdout,
      10,
    );
    if (pid > 1) return pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('victim did not start');
}

/** Start the holder and wait until it reports every fault in force. */
const holdFaults = (ledger: string, extra: string[] = []) =>
  startFaultHolder(fx.cluster().inventoryPath, ledger, victimPid, { extra });

async function assertPartitioned(t: import('ava').ExecutionContext, pid: number): Promise<void> {
  const remote = await fx.remote();
  const cut = await probeConnect(remote, 'n1', 'n4', remote.node('n4').host, remote.node('n4').port, 150);
  t.is(cut.outcome, 'timeout', 'n1 → n4 should be cut while the holder runs');
  const state = (await remote.exec('n1', `sed -n 's/^State:\\s*//p' /proc/${pid}/status`)).stdout;
  t.regex(state, /^T/);
}

async function assertClean(t: import('ava').ExecutionContext, pid: number): Promise<void> {
  const remote = await fx.remote();
  const ok = await probeConnect(remote, 'n1', 'n4', remote.node('n4').host, remote.node('n4').port, 2000);
  t.is(ok.outcome, 'connected');
  const state = (await remote.exec('n1', `sed -n 's/^State:\\s*//p' /proc/${pid}/status`)).stdout;
  t.regex(state, /^[SR]/);
  const sweep = await sweepNodes(
    remote,
    remote.nodes.map((n) => n.name),
  );
  for (const s of sweep) t.deepEqual(s.found, [], `${s.node} ${s.kind} left: ${s.found.join('; ')}`);
}

fx.test.serial('kill -9 mid-partition, then `faultline heal --ledger` leaves every node clean', async (t) => {
  const pid = await startVictim();
  const ledger = join(mkdtempSync(join(tmpdir(), 'nem-heal-')), 'ledger.jsonl');
  const { child, ids } = await holdFaults(ledger);
  await assertPartitioned(t, pid);
  child.kill('SIGKILL');
  await child;
  t.deepEqual(
    readLedger(ledger)
      .unhealed.map((r) => r.id)
      .sort(),
    [...ids].sort(),
  );
  const r = await execa('node', [bin, 'heal', '--ledger', ledger], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, 0, r.stderr || r.stdout);
  t.regex(r.stdout, /healed w1 \(partition\)/);
  t.regex(r.stdout, /healed w2 \(process\)/);
  t.regex(r.stdout, /all nodes clean/);
  t.deepEqual(readLedger(ledger).unhealed, []);
  await assertClean(t, pid);
});

fx.test.serial('SIGTERM heals before exit (143); an uncaught error heals before exit (255)', async (t) => {
  const pid = await startVictim();
  const ledger = join(mkdtempSync(join(tmpdir(), 'nem-heal-')), 'ledger.jsonl');
  const held = await holdFaults(ledger);
  await assertPartitioned(t, pid);
  held.child.kill('SIGTERM');
  const res = await held.child;
  t.is(res.exitCode, 143, String(res.stderr));
  t.deepEqual(readLedger(ledger).unhealed, []);
  await assertClean(t, pid);

  const ledger2 = join(mkdtempSync(join(tmpdir(), 'nem-heal-')), 'ledger.jsonl');
  const thrown = await holdFaults(ledger2, ['--throw']);
  const res2 = await thrown.child;
  t.is(res2.exitCode, 255);
  t.regex(String(res2.stderr), /uncaught error: boom/);
  t.deepEqual(readLedger(ledger2).unhealed, []);
  await assertClean(t, pid);
});

fx.test.serial('`faultline heal --inventory` sweeps leftovers no ledger knows about', async (t) => {
  const remote = await fx.remote();
  const pid = await startVictim();
  // Faults applied without a ledger (as if the ledger file were lost).
  await partitionNemesis.inject(
    remote,
    { kind: 'partition', action: 'start', params: { topology: 'one', node: 'n2' } },
    'x1',
  );
  await processNemesis.inject(
    remote,
    { kind: 'process', action: 'pause', targets: ['n1'], params: { pidFile: victimPid } },
    'x2',
  );
  const r = await execa('node', [bin, 'heal', '--inventory', fx.cluster().inventoryPath], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, 0, r.stderr || r.stdout);
  t.regex(r.stdout, /n2: clean/);
  t.regex(r.stdout, /fixed partition: iptables: emptied, unlinked and deleted FAULTLINE chains/);
  t.regex(r.stdout, /fixed process: continued pid \d+/);
  await assertClean(t, pid);
});

test('heal without --ledger or --inventory is a usage error (254)', async (t) => {
  const r = await execa('node', [bin, 'heal'], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
  t.is(r.exitCode, 254);
  t.regex(r.stderr, /give --ledger FILE and\/or --inventory FILE/);
});
