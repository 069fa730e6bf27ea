import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EtcdClient } from '../../src/client/etcd.ts';
import { EtcdDb } from '../../src/db/etcd.ts';
import { runTest } from '../../src/run/test-run.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * Real runs on a 5-node local cluster without faults: each workload against etcd must come out valid from
 * its own checker, with the workload having done real work. Kept short for CI (5 s per workload).
 */
const fx = withCluster(test, { nodes: 5, name: 'e2e-etcd-wl' });

for (const workload of ['list-append', 'bank', 'set', 'counter']) {
  fx.test.serial(`etcd ${workload}, no faults: valid, checked by the workload's checker`, async (t) => {
    const remote = await fx.remote();
    const nodes = remote.nodes.map((n) => n.name);
    const db = new EtcdDb();
    const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress({ remote, nodes }, n)]));
    const out = mkdtempSync(join(tmpdir(), `faultline-e2e-${workload}-`));
    const r = await runTest({
      remote,
      db,
      makeClient: (opts) => new EtcdClient({ workload, urls, ...opts }),
      workload,
      faults: [],
      nemesisIntervalS: 5,
      timeLimitS: 5,
      concurrency: 5,
      rate: 50,
      seed: 7,
      outDir: out,
      opTimeoutMs: 3000,
      recoveryS: 0,
    });
    const byName = Object.fromEntries(r.results.map((c) => [c.checker, c]));
    const main = { 'list-append': 'elle', bank: 'bank', set: 'set-full', counter: 'counter' }[
      workload
    ] as string;
    t.truthy(byName[main], `${main} ran`);
    t.is(byName[main]?.valid, true, byName[main]?.evidence);
    t.true((byName[main]?.stats.opsConsumed ?? 0) > 50, 'the checker consumed the run');
    t.is(byName.workload?.valid, true);
    t.is(r.valid, true);
    t.true(r.stats.ok > 100);
  });
}
