import net from 'node:net';
import test from 'ava';
import { parseFlags } from '../../src/app/cli/commands/test-action.ts';
import { capabilitiesOf } from '../../src/core/database/capabilities.ts';
import { ClientOnlyRemote, endpointsFromList, reachEndpoint } from '../../src/lib/clusters/client-only.ts';
import { bindDatabase } from '../../src/lib/database-factory.ts';
import { databases } from '../../src/lib/databases/registry.ts';

/** Client-only runs: endpoints instead of nodes, no command on any node, only proxy faults. */

test('endpoints are host:port, named n1, n2 …', (t) => {
  t.deepEqual(endpointsFromList('127.0.0.1:6379, db.example:2379', '--nodes'), {
    n1: { host: '127.0.0.1', port: 6379 },
    n2: { host: 'db.example', port: 2379 },
  });
  t.throws(() => endpointsFromList('127.0.0.1', '--nodes'), { message: /is not host:port/ });
  t.throws(() => endpointsFromList('h:70000', '--nodes'), { message: /is not host:port/ });
});

test('the remote refuses every command, upload and download with the reason', async (t) => {
  const r = new ClientOnlyRemote({ n1: { host: '127.0.0.1', port: 6379 } });
  await t.throwsAsync(r.exec('n1', 'iptables -L'), {
    message: /n1: a client-only run has no SSH: cannot run `iptables -L`/,
  });
  await t.throwsAsync(r.download('n1', '/var/log/x', '/tmp/x'), { message: /cannot download \/var\/log\/x/ });
  t.is(r.node('n1').address, '127.0.0.1');
});

test('--no-ssh: --nodes are endpoints; node-side faults and SSH flags are refused', (t) => {
  const f = parseFlags({ ssh: false, nodes: '127.0.0.1:6379', db: 'redis', nemesis: 'proxy-*' });
  t.deepEqual(f.endpoints, { n1: { host: '127.0.0.1', port: 6379 } });
  t.is(f.faults.length, 8);
  t.throws(() => parseFlags({ ssh: false, nodes: '127.0.0.1:6379', db: 'redis', nemesis: 'partition' }), {
    message: /--no-ssh: partition act on the nodes/,
  });
  t.throws(() => parseFlags({ ssh: false, local: '3', db: 'redis' }), {
    message: /--no-ssh: --local needs SSH/,
  });
  t.throws(() => parseFlags({ ssh: false, db: 'redis' }), { message: /--nodes host:port/ });
});

test('the database someone else runs: its client address form, no capability, ready when reachable', async (t) => {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const endpoints = { n1: { host: '127.0.0.1', port } };
    const remote = new ClientOnlyRemote(endpoints);
    const sut = await bindDatabase({ db: 'etcd', workload: 'register', where: '--db', endpoints }, remote);
    const ctx = { remote, nodes: ['n1'] };
    t.is(sut.db.clientAddress(ctx, 'n1'), `http://127.0.0.1:${port}`);
    t.deepEqual(capabilitiesOf(sut.db), ['peer-address', 'versions'], 'nothing that acts on the nodes');
    await t.notThrowsAsync(sut.db.setup(ctx, 'n1'));
    await t.notThrowsAsync(sut.db.awaitReady(ctx, 2000));
    t.is(await reachEndpoint({ host: '127.0.0.1', port: 1 }, 500), 'connect ECONNREFUSED 127.0.0.1:1');
    t.truthy(databases.get('etcd'));
  } finally {
    server.close();
  }
});

test('heal after kill -9 of a client-only run: no SSH, the dead proxy process left nothing', async (t) => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { FaultLedger, readLedger } = await import('../../nemeses/ledger.ts');
  const { runHeal } = await import('../../src/app/cli/commands/heal-action.ts');
  const path = join(mkdtempSync(join(tmpdir(), 'fl-co-')), 'ledger.jsonl');
  const ledger = new FaultLedger(path);
  ledger.cluster(new ClientOnlyRemote({ n1: { host: '127.0.0.1', port: 6379 } }).nodes, { clientOnly: true });
  ledger.beforeInject({
    id: 'w1',
    spec: { kind: 'proxy', action: 'partition', targets: ['n1'] },
    nodes: ['n1'],
    injectedAt: new Date().toISOString(),
    // A pid beyond pid_max: the run that held the proxy is gone.
    undo: { pid: 2 ** 30, action: 'partition', params: {}, listeners: { n1: '127.0.0.1:1' } },
  });
  ledger.close();
  t.true(readLedger(path).clientOnly);
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((s: string) => out.push(s) > 0) as typeof process.stdout.write;
  try {
    t.is(await runHeal({ ledger: path }), 0);
  } finally {
    process.stdout.write = write;
  }
  t.regex(out.join(''), /client-only run \(no SSH\)\nhealed w1 \(proxy\)/);
  t.is(readLedger(path).unhealed.length, 0);
});

test('doctor --no-ssh: each endpoint reachable or named with the reason', async (t) => {
  const { checkEndpoints, renderEndpointTable } = await import('../../src/lib/clusters/client-only.ts');
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const rows = await checkEndpoints({
      n1: { host: '127.0.0.1', port },
      n2: { host: '127.0.0.1', port: 1 },
    });
    t.deepEqual(
      rows.map((r) => [r.node, r.reachable]),
      [
        ['n1', true],
        ['n2', false],
      ],
    );
    t.regex(renderEndpointTable(rows), /n2 +127\.0\.0\.1:1 +UNREACHABLE: connect ECONNREFUSED/);
    t.regex(renderEndpointTable(rows), /1 of 2 endpoint\(s\) unreachable/);
  } finally {
    server.close();
  }
});

test('an inventory with ssh: false is client-only: endpoints by node, anything else refused by name', async (t) => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { clientOnlyInventory } = await import('../../src/lib/clusters/client-only.ts');
  const dir = mkdtempSync(join(tmpdir(), 'fl-inv-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  t.deepEqual(
    clientOnlyInventory(
      file('ok.yaml', 'ssh: false\nnodes:\n  m1: 127.0.0.1:2379\n  m2: { endpoint: db.example:2380 }\n'),
    ),
    { m1: { host: '127.0.0.1', port: 2379 }, m2: { host: 'db.example', port: 2380 } },
  );
  t.is(clientOnlyInventory(file('ssh.yaml', 'nodes:\n  n1: { host: 10.0.0.1 }\n')), null);
  t.throws(
    () => clientOnlyInventory(file('user.yaml', 'ssh: false\nnodes:\n  m1: { endpoint: h:1, user: root }\n')),
    {
      message: /user\.yaml:3: nodes\.m1\.user: unknown field .*ssh: false/,
    },
  );
  t.throws(() => clientOnlyInventory(file('noport.yaml', 'ssh: false\nnodes:\n  m1: db.example\n')), {
    message: /noport.yaml: nodes.m1: "db.example" is not host:port/,
  });
  t.throws(() => clientOnlyInventory(file('empty.yaml', 'ssh: false\nnodes: {}\n')), {
    message: /empty\.yaml:2: nodes: .*at least one node/,
  });
  t.throws(
    () => clientOnlyInventory(file('num.yaml', 'ssh: false\nnodes:\n  m1: h:1\n  m2: { endpoint: 3 }\n')),
    {
      message: /num\.yaml:4: nodes\.m2: /,
    },
  );
});

test('run --no-ssh: flags, and a plan with node-side steps refused naming the scenario and step', async (t) => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { parseRunFlags } = await import('../../src/app/cli/commands/run-action.ts');
  const { runPlan } = await import('../../src/app/run/plan-run.ts');
  const o = parseRunFlags('plans/etcd-proxy.md', {
    ssh: false,
    nodes: '127.0.0.1:1,127.0.0.1:2,127.0.0.1:3',
  });
  t.deepEqual(o.endpoints?.n3, { host: '127.0.0.1', port: 3 });
  t.throws(() => parseRunFlags('p.md', { ssh: false, local: '3' }), {
    message: /--no-ssh: give the endpoints/,
  });
  t.throws(() => parseRunFlags('p.md', { ssh: false }), { message: /--nodes host:port/ });
  t.throws(() => parseRunFlags('p.md', { local: '3', nodes: 'a:1' }), {
    message: /--nodes goes with --no-ssh/,
  });
  const refused = {
    ...parseRunFlags('plans/etcd-register.md', { ssh: false, nodes: '127.0.0.1:1' }),
    print: () => {},
  };
  await t.throwsAsync(runPlan(refused), {
    message:
      /plans\/etcd-register.md: S1: nemesis step 1 \(kind: partition\) acts on the nodes; a client-only run/,
  });
  const dir = mkdtempSync(join(tmpdir(), 'fl-inv-'));
  writeFileSync(join(dir, 'm.yaml'), 'ssh: false\nnodes:\n  m1: 127.0.0.1:1\n');
  const viaInventory = {
    ...parseRunFlags('plans/etcd-register.md', { inventory: join(dir, 'm.yaml') }),
    print: () => {},
  };
  await t.throwsAsync(runPlan({ ...viaInventory, scenarios: ['S2'] }), {
    message: /S2: nemesis step 1 \(kind: clock, action: bump\) acts on the nodes/,
  });
});

test('plan check says per scenario whether it can run client-only', async (t) => {
  const { clientOnlyOf } = await import('../../src/app/cli/commands/plan-action.ts');
  const { loadPlan } = await import('../../src/app/plan/load.ts');
  const proxy = await loadPlan('plans/etcd-proxy.md');
  t.deepEqual(
    proxy.resolved.map((r) => [r.id, clientOnlyOf(r).ok]),
    [
      ['S1', true],
      ['S2', false],
      ['S3', false],
    ],
  );
  // The peer-link partition needs faultline to configure the members: not a client-only step.
  const s2 = proxy.resolved.find((r) => r.id === 'S2');
  t.deepEqual(s2 && clientOnlyOf(s2), {
    ok: false,
    why: "nemesis step 1 (kind: proxy, links: peers) needs the database's peer addresses configured on the nodes",
  });
  const register = await loadPlan('plans/etcd-register.md');
  const s3 = register.resolved.find((r) => r.id === 'S3');
  t.deepEqual(s3 && clientOnlyOf(s3), {
    ok: false,
    why: 'nemesis step 1 (kind: partition) acts on the nodes',
  });
});
