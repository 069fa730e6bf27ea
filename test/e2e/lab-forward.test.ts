import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { partitionNemesis } from '../../nemeses/partition.ts';
import { probeConnect } from '../../nemeses/probe.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import { runTest } from '../../src/app/test/test-run.ts';
import { clusterAddress } from '../../src/core/control/addresses.ts';
import { loadInventory } from '../../src/core/control/inventory.ts';
import { EtcdClient } from '../../src/lib/clients/etcd.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * The lab-like local cluster (`cluster up --ssh-via-forward`): SSH goes through one 127.0.0.1 port forward
 * per node, as through Vagrant's NAT, while peers, clients, partitions and probes must use the namespace
 * addresses. From inside a node 127.0.0.1 is the node itself, so anything still using the SSH address for
 * cluster traffic breaks here.
 */
const fx = withCluster(test, { nodes: 5, name: 'lab-e2e-fwd', sshViaForward: true });

fx.test.serial('the inventory splits SSH addresses (forwards) from cluster addresses', (t) => {
  const inv = loadInventory(fx.cluster().inventoryPath);
  const ports = new Set(inv.nodes.map((n) => n.port));
  t.is(ports.size, inv.nodes.length, 'one forward per node');
  for (const n of inv.nodes) {
    t.is(n.host, '127.0.0.1');
    t.regex(clusterAddress(n), /^10\.\d+\.\d+\.\d+$/);
    t.is(n.clusterSshPort, 22);
  }
  const status = execFileSync(
    'node',
    ['bin/faultline.js', 'cluster', 'status', '--name', fx.cluster().name],
    {
      encoding: 'utf8',
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
    },
  );
  t.regex(status, /healthy/);
  t.regex(status, /ssh 127\.0\.0\.1:\d+/);
});

fx.test.serial(
  'a partition cuts cluster traffic on the namespace addresses while SSH keeps working',
  async (t) => {
    const remote = await fx.remote();
    const spec = {
      kind: 'partition',
      action: 'start',
      targets: ['n1'],
      params: { topology: 'one', node: 'n1' },
    };
    const record = await partitionNemesis.inject(remote, spec, 'w1');
    try {
      const rules = record.undo.rules as Record<string, string[]>;
      const others = ['n2', 'n3', 'n4', 'n5'].map((n) => clusterAddress(remote.node(n)));
      t.deepEqual(
        [...(rules.n1 ?? [])].sort(),
        [...others].sort(),
        'n1 drops the other nodes by cluster address',
      );
      const ev = await partitionNemesis.evidence(remote, record);
      t.true(ev.landed, ev.reason);
      t.true(
        ev.signals.some((s) => s.side === 'injector' && (s.during as number) > 0),
        'DROP counters rose',
      );
      const cut = await probeConnect(remote, 'n2', 'n1', clusterAddress(remote.node('n1')), 22, 300);
      t.is(cut.outcome, 'timeout', 'n2 cannot reach n1 on its cluster address');
      const ssh = await remote.exec('n1', 'hostname');
      t.is(ssh.stdout.trim(), 'n1', 'SSH through the forward still works');
    } finally {
      await partitionNemesis.heal(remote, record);
    }
    const after = await probeConnect(remote, 'n2', 'n1', clusterAddress(remote.node('n1')), 22, 2000);
    t.is(after.outcome, 'connected');
  },
);

fx.test.serial('etcd under partitions and kills passes with SSH through forwards', async (t) => {
  const remote = await fx.remote();
  const nodes = remote.nodes.map((n) => n.name);
  const db = new EtcdDb();
  const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress({ remote, nodes }, n)]));
  for (const [n, url] of Object.entries(urls)) t.is(url, `http://${clusterAddress(remote.node(n))}:2379`);
  const started = Date.now();
  const r = await runTest({
    remote,
    db,
    makeClient: (opts) => new EtcdClient({ workload: 'multi-register', urls, ...opts }),
    workload: 'multi-register',
    faults: ['partition', 'kill'],
    nemesisIntervalS: 4,
    nemesisDelayS: 2,
    timeLimitS: 20,
    concurrency: 10,
    rate: 100,
    seed: 5,
    outDir: mkdtempSync(join(tmpdir(), 'faultline-lab-fwd-')),
    opTimeoutMs: 3000,
    recoveryS: 3,
  });
  t.log(`etcd run through forwards: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const byName = Object.fromEntries(r.results.map((c) => [c.checker, c]));
  t.is(byName.linearizable?.valid, true, byName.linearizable?.evidence);
  t.is(byName.faults?.valid, true, byName.faults?.evidence);
  const faults = JSON.parse(readFileSync(join(r.runDir, 'faults.json'), 'utf8')) as FaultRecord[];
  t.true(new Set(faults.map((f) => f.spec.kind)).size === 2, 'both partitions and kills ran');
  for (const f of faults) t.true(f.evidence?.landed, `${f.id} ${f.spec.kind}: ${f.evidence?.reason ?? ''}`);
  const partitions = faults.filter((f) => f.spec.kind === 'partition');
  const cut = new Set(
    partitions.flatMap((f) => Object.values((f.undo.rules ?? {}) as Record<string, string[]>).flat()),
  );
  for (const a of cut) t.regex(a, /^10\./, 'partitions drop cluster addresses, never 127.0.0.1');
  t.is(r.valid, true);
});
