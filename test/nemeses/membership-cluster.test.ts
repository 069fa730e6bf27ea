import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { FaultPlane } from '../../nemeses/plane.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import { daemonRunning } from '../../src/lib/databases/daemon.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { EtcdHttp } from '../../src/lib/databases/etcd-http.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * Membership faults on etcd (Jepsen's membership nemesis): a member is removed through `etcdctl member
 * remove` and proven gone from a peer's member list; the database's own start does not bring a removed
 * member back; the heal adds it back and it runs again as a member. A run killed with a member removed
 * is repaired by `faultline heal --ledger`.
 */
const fx = withCluster(test, { nodes: 3, name: 'hard-member' });
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

async function members(url: string): Promise<string[]> {
  return (await new EtcdHttp(url).members(AbortSignal.timeout(5000))).map((m) => m.name).sort();
}

async function etcdCluster() {
  const remote = await fx.remote();
  const nodes = remote.nodes.map((n) => n.name);
  const db = new EtcdDb();
  const ctx = { remote, nodes };
  await Promise.all(nodes.map((n) => db.teardown(ctx, n)));
  await Promise.all(nodes.map((n) => db.setup(ctx, n)));
  await db.awaitReady(ctx, 60_000);
  return { remote, nodes, db, ctx };
}

fx.test.serial(
  'remove a member and add it back: evidence from the member list, heal restores it',
  async (t) => {
    const { db, ctx } = await etcdCluster();
    t.teardown(() => Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n))).then(() => undefined));
    const dir = mkdtempSync(join(tmpdir(), 'hard-member-'));
    const plane = new FaultPlane({
      remote: ctx.remote,
      ledgerPath: join(dir, 'ledger.jsonl'),
      sut: { db, ctx },
    });
    t.teardown(() => plane.close());
    const n1 = db.clientAddress(ctx, 'n1');
    t.deepEqual(await members(n1), ['n1', 'n2', 'n3']);

    const shrink = await plane.invoke({ f: 'shrink', value: { targets: ['n2'] } });
    const record = plane.records[0] as FaultRecord;
    t.true((shrink.value as { landed: boolean }).landed, JSON.stringify(record.evidence));
    const injector = record.evidence?.signals.find((s) => s.side === 'injector');
    const victim = record.evidence?.signals.find((s) => s.side === 'victim');
    t.regex(String(injector?.during), /exit 0: Member [0-9a-f]+ removed from cluster/);
    t.is(victim?.before, 'n1 n2 n3');
    t.is(victim?.during, 'n1 n3');
    t.deepEqual(await members(n1), ['n1', 'n3']);
    // The removed member is stopped, and the database's own start (a kill window's end) leaves it down.
    await db.start(ctx, 'n2');
    t.false(await daemonRunning(ctx.remote, 'n2', db.pidFile(ctx, 'n2'), 'etcd'));

    const grow = await plane.invoke({ f: 'grow', value: { targets: 'all' } });
    t.deepEqual((grow.value as { healed: string[] }).healed, [record.id], String(grow.error));
    t.true(record.afterHeal?.landed, record.afterHeal?.reason);
    t.is(record.evidence?.signals.find((s) => s.side === 'victim')?.after, 'n1 n2 n3');
    t.deepEqual(await members(n1), ['n1', 'n2', 'n3']);
    // The member added back serves: a write through it is read back through another member.
    await new EtcdHttp(db.clientAddress(ctx, 'n2')).put('hard-member', 'back', AbortSignal.timeout(10_000));
    const read = await new EtcdHttp(db.clientAddress(ctx, 'n3')).get('hard-member', {
      signal: AbortSignal.timeout(10_000),
    });
    t.is(read.kv?.value, 'back');
    const heal = await plane.healAll();
    t.true(heal.clean, JSON.stringify(heal.sweep));
  },
);

fx.test.serial('a run killed with a member removed is repaired by faultline heal --ledger', async (t) => {
  const { db, ctx } = await etcdCluster();
  t.teardown(() => Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n))).then(() => undefined));
  const dir = mkdtempSync(join(tmpdir(), 'hard-member-'));
  const ledgerPath = join(dir, 'ledger.jsonl');
  const plane = new FaultPlane({
    remote: ctx.remote,
    ledgerPath,
    sut: { db, ctx },
    reach: { inventory: fx.cluster().inventoryPath, knownHostsFiles: [fx.cluster().knownHostsPath] },
  });
  const shrink = await plane.invoke({ f: 'shrink', value: { targets: ['n3'] } });
  t.true((shrink.value as { landed: boolean }).landed);
  plane.close(); // the run dies here: nothing healed
  t.deepEqual(await members(db.clientAddress(ctx, 'n1')), ['n1', 'n2']);
  const r = await execa(process.execPath, [bin, 'heal', '--ledger', ledgerPath, '--json'], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout) as { faults: { id: string; healed: boolean }[] };
  t.deepEqual(report.faults, [{ id: 'w1', kind: 'membership', healed: true }]);
  t.deepEqual(await members(db.clientAddress(ctx, 'n1')), ['n1', 'n2', 'n3']);
});
