import test from 'ava';
import { EtcdClient } from '../../src/lib/clients/etcd.ts';
import type { Client, ClientOp } from '../../src/lib/clients/types.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import type { DbContext } from '../../src/lib/databases/types.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'db-etcd-client' });
const db = new EtcdDb();
let ctx: DbContext;
let ready: Promise<void> | undefined;

/** Brings etcd up once, from inside the first test (the cluster fixture's hook has run by then). */
function etcdUp(): Promise<void> {
  ready ??= (async () => {
    const remote = await fx.remote();
    ctx = { remote, nodes: remote.nodes.map((n) => n.name) };
    await Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n)));
    await Promise.all(ctx.nodes.map((n) => db.setup(ctx, n)));
    await db.awaitReady(ctx, 60_000);
  })();
  return ready;
}

fx.test.after.always(async () => {
  if (ctx) await Promise.all(ctx.nodes.map((n) => db.teardown(ctx, n).catch(() => {})));
});

const signal = new AbortController().signal;

async function clientFor(workload: string, extra: Record<string, unknown> = {}): Promise<[Client, Client]> {
  await etcdUp();
  const urls = Object.fromEntries(ctx.nodes.map((n) => [n, db.clientAddress(ctx, n)]));
  const proto = new EtcdClient({ workload, urls, prefix: `/t/${workload}/${Math.random()}`, ...extra });
  const a = await proto.open('n1');
  const b = await proto.open('n2');
  await a.setup();
  return [a, b];
}

const op = (f: string, value: unknown, extra: Partial<ClientOp> = {}): ClientOp => ({
  f,
  value,
  process: 0,
  node: 'n1',
  ...extra,
});

fx.test.serial(
  'register: read of an unset key is null; write then read on another node; cas ok and cas fail',
  async (t) => {
    const [a, b] = await clientFor('register');
    t.deepEqual(await a.invoke(op('read', null, { key: 'r' }), { signal }), { type: 'ok', value: null });
    t.is((await a.invoke(op('write', 3, { key: 'r' }), { signal })).type, 'ok');
    t.deepEqual(await b.invoke(op('read', null, { key: 'r' }), { signal }), { type: 'ok', value: 3 });
    t.is((await b.invoke(op('cas', [3, 4], { key: 'r' }), { signal })).type, 'ok');
    const mismatch = await a.invoke(op('cas', [3, 1], { key: 'r' }), { signal });
    t.is(mismatch.type, 'fail');
    t.deepEqual(await a.invoke(op('read', null, { key: 'r' }), { signal }), { type: 'ok', value: 4 });
  },
);

fx.test.serial('set and counter: guarded read-modify-write never loses a concurrent update', async (t) => {
  const [a, b] = await clientFor('set');
  await Promise.all(Array.from({ length: 20 }, (_v, i) => (i % 2 ? a : b).invoke(op('add', i), { signal })));
  t.deepEqual(await a.invoke(op('read', null), { signal }), {
    type: 'ok',
    value: Array.from({ length: 20 }, (_v, i) => i),
  });
  const [c, d] = await clientFor('counter');
  const results = await Promise.all(
    Array.from({ length: 20 }, (_v, i) => (i % 2 ? c : d).invoke(op('add', 1), { signal })),
  );
  const oks = results.filter((r) => r.type === 'ok').length;
  t.deepEqual(await c.invoke(op('read', null), { signal }), { type: 'ok', value: oks });
});

fx.test.serial(
  'list-append: appends and reads in one txn; reads see earlier appends of the same txn',
  async (t) => {
    const [a, b] = await clientFor('list-append');
    const r1 = await a.invoke(
      op('txn', [
        ['append', 1, 1],
        ['r', 1, null],
        ['append', 2, 1],
      ]),
      { signal },
    );
    t.deepEqual(r1, {
      type: 'ok',
      value: [
        ['append', 1, 1],
        ['r', 1, [1]],
        ['append', 2, 1],
      ],
    });
    await b.invoke(op('txn', [['append', 1, 2]]), { signal });
    t.deepEqual(
      await b.invoke(
        op('txn', [
          ['r', 1, null],
          ['r', 2, null],
          ['r', 3, null],
        ]),
        { signal },
      ),
      {
        type: 'ok',
        value: [
          ['r', 1, [1, 2]],
          ['r', 2, [1]],
          ['r', 3, []],
        ],
      },
    );
  },
);

fx.test.serial('bank: transfers keep the total; overdraft is a definite fail', async (t) => {
  const accounts = ['0', '1', '2'];
  const [a, b] = await clientFor('bank', { accounts, totalBalance: 10 });
  await b.setup(); // a second setup must not reset balances
  t.is((await a.invoke(op('transfer', { from: '0', to: '1', amount: 4 }), { signal })).type, 'ok');
  t.is((await b.invoke(op('transfer', { from: '1', to: '2', amount: 9 }), { signal })).type, 'fail');
  t.deepEqual(await b.invoke(op('read', null), { signal }), {
    type: 'ok',
    value: { '0': 6, '1': 4, '2': 0 },
  });
});

fx.test.serial(
  'a member that is down: writes fail definitely (connection refused), reads fail',
  async (t) => {
    const [a] = await clientFor('register');
    await db.process.kill(ctx, 'n1');
    try {
      const w = await a.invoke(op('write', 1, { key: 'r' }), { signal });
      t.is(w.type, 'fail');
      t.regex(String(w.error), /ECONNREFUSED/);
      t.is((await a.invoke(op('read', null, { key: 'r' }), { signal })).type, 'fail');
    } finally {
      await db.start(ctx, 'n1');
      await db.awaitReady(ctx, 30_000);
    }
  },
);
