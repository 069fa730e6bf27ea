import test from 'ava';
import { signalTreeCommand } from '../../src/core/control/process-tree.ts';
import { daemonRunning } from '../../src/lib/databases/daemon.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { EtcdHttp } from '../../src/lib/databases/etcd-http.ts';
import type { DbContext } from '../../src/lib/databases/types.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'db-etcd' });

fx.test.serial(
  'etcd: 3 members come up, serve, report one leader; kill/start and pause/resume by pidfile',
  async (t) => {
    const remote = await fx.remote();
    const ctx: DbContext = { remote, nodes: remote.nodes.map((n) => n.name) };
    const db = new EtcdDb();
    try {
      await Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n)));
      await Promise.all(ctx.nodes.map((n) => db.install(ctx, n)));
      await Promise.all(ctx.nodes.map((n) => db.setup(ctx, n)));
      await db.awaitReady(ctx, 60_000);

      const n1 = new EtcdHttp(db.clientAddress(ctx, 'n1'));
      const n2 = new EtcdHttp(db.clientAddress(ctx, 'n2'));
      await n1.put('k', '"v1"');
      t.is((await n2.get('k')).kv?.value, '"v1"');
      const cas = await n1.txn(
        [{ key: 'k', target: 'VALUE', value: '"v1"' }],
        [{ put: { key: 'k', value: '"v2"' } }],
      );
      t.true(cas.succeeded);
      const casFail = await n1.txn(
        [{ key: 'k', target: 'VALUE', value: '"nope"' }],
        [{ put: { key: 'k', value: '"v3"' } }],
      );
      t.false(casFail.succeeded);

      const leaders = await db.primaries(ctx);
      t.is(leaders.length, 1);
      const leader = leaders[0] as string;
      t.true(ctx.nodes.includes(leader));

      await db.process.kill(ctx, leader);
      t.false(await daemonRunning(remote, leader, db.pidFile(ctx, leader), 'etcd'));
      let after: string[] = [];
      for (let i = 0; i < 60 && (after.length === 0 || after[0] === leader); i++) {
        await new Promise((r) => setTimeout(r, 250));
        after = await db.primaries(ctx);
      }
      t.is(after.length, 1);
      t.not(after[0], leader, 'a new leader was elected after the kill');
      await db.start(ctx, leader);
      await db.awaitReady(ctx, 30_000);
      t.is((await new EtcdHttp(db.clientAddress(ctx, leader)).get('k')).kv?.value, '"v2"');

      const victim = ctx.nodes.find((n) => n !== after[0]) as string;
      const signal = (sig: 'STOP' | 'CONT') =>
        remote.exec(victim, signalTreeCommand(db.pidFile(ctx, victim), 'etcd', sig), { sudo: true });
      await signal('STOP');
      const state = await remote.exec(
        victim,
        `cat /proc/$(cat ${db.pidFile(ctx, victim)})/status | grep State`,
      );
      t.regex(state.stdout, /T \(stopped\)/);
      await signal('CONT');
      const state2 = await remote.exec(
        victim,
        `cat /proc/$(cat ${db.pidFile(ctx, victim)})/status | grep State`,
      );
      t.notRegex(state2.stdout, /stopped/);
    } finally {
      await Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n).catch(() => {})));
    }
  },
);
