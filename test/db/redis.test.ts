import test from 'ava';
import { signalTreeCommand } from '../../src/core/control/process-tree.ts';
import { RedisClient } from '../../src/lib/clients/redis.ts';
import type { ClientOp } from '../../src/lib/clients/types.ts';
import { RedisDb } from '../../src/lib/databases/redis.ts';
import type { DbContext } from '../../src/lib/databases/types.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'db-redis' });
const signal = new AbortController().signal;
const op = (f: string, value: unknown, extra: Partial<ClientOp> = {}): ClientOp => ({
  f,
  value,
  process: 0,
  node: 'n1',
  ...extra,
});

fx.test.serial(
  'redis: primary + replicas; replicas serve what the primary wrote; failover promotes a replica',
  async (t) => {
    const remote = await fx.remote();
    const ctx: DbContext = { remote, nodes: remote.nodes.map((n) => n.name) };
    const db = new RedisDb();
    try {
      await Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n)));
      await Promise.all(ctx.nodes.map((n) => db.install(ctx, n)));
      await Promise.all(ctx.nodes.map((n) => db.setup(ctx, n)));
      await db.awaitReady(ctx, 60_000);
      t.deepEqual(await db.primaries(ctx), ['n1']);

      const proto = new RedisClient({ workload: 'register', db, ctx, readFromReplicas: true });
      const onN1 = await proto.open('n1');
      const onN3 = await proto.open('n3');
      t.is((await onN3.invoke(op('write', 7, { key: 'r' }), { signal })).type, 'ok');
      t.is((await onN1.invoke(op('cas', [7, 8], { key: 'r' }), { signal })).type, 'ok');
      t.is((await onN1.invoke(op('cas', [7, 9], { key: 'r' }), { signal })).type, 'fail');
      // replication is asynchronous: poll (bounded) until the replica has it
      let seen: unknown;
      for (let i = 0; i < 50 && seen !== 8; i++) {
        seen = (await onN3.invoke(op('read', null, { key: 'r' }), { signal })).value;
        if (seen !== 8) await new Promise((r) => setTimeout(r, 50));
      }
      t.is(seen, 8);

      const la = new RedisClient({ workload: 'list-append', db, ctx });
      const c = await la.open('n2');
      t.deepEqual(
        await c.invoke(
          op('txn', [
            ['append', 1, 1],
            ['r', 1, null],
            ['r', 2, null],
          ]),
          { signal },
        ),
        {
          type: 'ok',
          value: [
            ['append', 1, 1],
            ['r', 1, [1]],
            ['r', 2, []],
          ],
        },
      );

      // Paused as the process nemesis pauses it: the server and every process it started.
      const signal1 = (sig: 'STOP' | 'CONT') =>
        remote.exec('n1', signalTreeCommand(db.pidFile(ctx, 'n1'), 'redis-server', sig), { sudo: true });
      await signal1('STOP');
      const next = await db.failover(ctx, 'n2');
      t.is(next, 'n2');
      t.true((await db.primaries(ctx)).includes('n2'));
      // writes now go to n2 (the old primary is paused and would hang)
      t.is((await onN3.invoke(op('write', 10, { key: 'r' }), { signal })).type, 'ok');
      await signal1('CONT');
      for (const cl of [onN1, onN3, c]) await cl.close();
    } finally {
      await Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n).catch(() => {})));
    }
  },
);
