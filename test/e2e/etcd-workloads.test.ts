import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { runTest } from '../../src/app/test/test-run.ts';
import { EtcdClient } from '../../src/lib/clients/etcd.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * Real runs on a 5-node local cluster without faults: each workload against etcd must come out valid from
 * its own checker, with the workload having done real work. Kept short for CI (5 s per workload).
 */
const fx = withCluster(test, { nodes: 5, name: 'e2e-etcd-wl' });

fx.test.serial(
  'faultline test CLI: etcd register, no faults → linearizable valid, exit 0, run directory complete',
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'faultline-e2e-cli-'));
    const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
    const r = await execa(
      'node',
      [
        bin,
        'test',
        '--db',
        'etcd',
        '--workload',
        'register',
        '--inventory',
        fx.cluster().inventoryPath,
        '--time-limit',
        '5s',
        '--concurrency',
        '1n',
        '--rate',
        '50',
        '--seed',
        '3',
        '--recovery',
        '0s',
        '--out',
        out,
      ],
      { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
    );
    t.is(r.exitCode, 0, r.stderr.slice(-2000));
    t.regex(r.stdout, /linearizable\s+valid/);
    t.regex(r.stdout, /verdict: valid/);
    // the store layout `run` uses too: <root>/<db>-<workload>/<UTC>/ and a `latest` link
    const dir = join(out, 'etcd-register', 'latest');
    for (const f of [
      'history.jsonl',
      'schedule.json',
      'results.json',
      'test.json',
      'n1/etcd.log',
      'logs/control.log',
      'logs/control.debug.jsonl',
      'logs/ssh/n1.commands.jsonl',
    ])
      t.true(existsSync(join(dir, f)), `${f} in the run directory`);
    t.regex(readFileSync(join(dir, 'logs/control.log'), 'utf8'), /verdict: valid/);
    const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { valid: unknown };
    t.is(results.valid, true);
  },
);

for (const workload of ['multi-register', 'list-append', 'bank', 'set', 'counter']) {
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
    const checkerOf: Record<string, string> = {
      'multi-register': 'linearizable',
      'list-append': 'elle',
      bank: 'bank',
      set: 'set-full',
      counter: 'counter',
    };
    const main = checkerOf[workload] as string;
    t.truthy(byName[main], `${main} ran`);
    t.is(byName[main]?.valid, true, byName[main]?.evidence);
    t.true((byName[main]?.stats.opsConsumed ?? 0) > 50, 'the checker consumed the run');
    t.is(byName.workload?.valid, true);
    t.is(r.valid, true);
    t.true(r.stats.ok >= 25, `${r.stats.ok} ok ops`);
  });
}
