import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { FaultRecord } from '../../nemeses/types.ts';
import { runTest, type TestRunOptions } from '../../src/app/test/test-run.ts';
import { EtcdClient } from '../../src/lib/clients/etcd.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * etcd on a 5-node local cluster under real faults (iptables partitions, SIGKILL by pidfile). Kept short
 * for CI; the serializable-reads case tries up to 3 seeds of 60 s and stops at the first violation.
 */
const fx = withCluster(test, { nodes: 5, name: 'e2e-etcd-faults' });

async function run(workload: string, o: Partial<TestRunOptions> & { serializableReads?: boolean }) {
  const remote = await fx.remote();
  const nodes = remote.nodes.map((n) => n.name);
  const db = new EtcdDb();
  const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress({ remote, nodes }, n)]));
  const outDir = mkdtempSync(join(tmpdir(), `faultline-e2e-${workload}-`));
  return runTest({
    remote,
    db,
    makeClient: (opts) =>
      new EtcdClient({ workload, urls, serializableReads: o.serializableReads === true, ...opts }),
    workload,
    faults: [],
    nemesisIntervalS: 4,
    nemesisDelayS: 2,
    timeLimitS: 20,
    concurrency: 10,
    rate: 100,
    seed: 1,
    outDir,
    opTimeoutMs: 3000,
    recoveryS: 3,
    ...o,
  });
}

fx.test.serial(
  'etcd register under partitions and kills: linearizable, every fault landed and healed',
  async (t) => {
    // Registers on independent keys, as Jepsen's etcd register test does: on one key, the ops left open by
    // timeouts under kills and partitions can make the search run out of budget (unknown), not fail.
    const r = await run('multi-register', { faults: ['partition', 'kill'], seed: 5 });
    const byName = Object.fromEntries(r.results.map((c) => [c.checker, c]));
    t.is(byName.linearizable?.valid, true, byName.linearizable?.evidence);
    t.is(byName.faults?.valid, true, byName.faults?.evidence);
    const faults = JSON.parse(readFileSync(join(r.runDir, 'faults.json'), 'utf8')) as FaultRecord[];
    t.true(faults.length >= 2, `${faults.length} faults`);
    t.true(new Set(faults.map((f) => f.spec.kind)).size === 2, 'both partitions and kills ran');
    for (const f of faults) {
      t.true(f.evidence?.landed, `${f.id} ${f.spec.kind}: ${f.evidence?.reason ?? ''}`);
      t.true((f.evidence?.signals.length ?? 0) > 0, `${f.id} has landing signals`);
      t.truthy(f.healedAt);
    }
    // client events during a fault carry its window id
    const lines = readFileSync(join(r.runDir, 'history.jsonl'), 'utf8').trim().split('\n');
    const windows = new Set(lines.flatMap((l) => (JSON.parse(l).faultEpoch as string[] | null) ?? []));
    for (const f of faults) t.true(windows.has(f.id), `events stamped with ${f.id}`);
    t.is(r.valid, true);
  },
);

fx.test.serial(
  'etcd with --serializable-reads, partitions isolating the leader: a stale read is found',
  async (t) => {
    // Independent keys (checked per key, so each search is small and decided): each key's group of threads
    // has one client on every node, so one of them reads from the isolated old leader.
    const seen: string[] = [];
    for (const seed of [1, 2, 3]) {
      const r = await run('multi-register', {
        faults: ['partition'],
        faultTargets: { partition: ['primaries'] },
        serializableReads: true,
        timeLimitS: 60,
        nemesisIntervalS: 5,
        seed,
      });
      const lin = r.results.find((c) => c.checker === 'linearizable');
      seen.push(`seed ${seed}: ${lin?.valid} (${lin?.evidence})`);
      t.log(seen.at(-1));
      if (lin?.valid === false) {
        t.is(r.valid, false);
        t.true(lin.anomalies.length > 0);
        return;
      }
    }
    t.fail(`no violation in 3 seeds: ${seen.join('; ')}`);
  },
);

fx.test.serial('etcd list-append under partitions: Elle finds no anomaly', async (t) => {
  const r = await run('list-append', { faults: ['partition'], seed: 3 });
  const elle = r.results.find((c) => c.checker === 'elle');
  t.is(elle?.valid, true, elle?.evidence);
  t.true((elle?.stats.opsConsumed ?? 0) > 300);
  t.is(r.results.find((c) => c.checker === 'faults')?.valid, true);
});
