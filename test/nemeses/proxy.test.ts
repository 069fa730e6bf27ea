import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { readLedger } from '../../nemeses/ledger.ts';
import { FaultPlane } from '../../nemeses/plane.ts';
import { parseEndpoint, pointAt } from '../../nemeses/proxy/endpoint.ts';
import { ProxyHub, setActiveProxyHub } from '../../nemeses/proxy/hub.ts';
import { proxyNemesis } from '../../nemeses/proxy/nemesis.ts';
import { nemeses } from '../../nemeses/registry.ts';
import { parseFaults } from '../../nemeses/schedule.ts';
import type { FaultRecord, FaultSpec } from '../../nemeses/types.ts';
import type { Remote } from '../../src/core/control/types.ts';

/**
 * The proxy against a real loopback echo server and a client that keeps sending requests through it:
 * every fault must show on the proxy's counters and on the client, and be gone after heal.
 */

const remote = {
  nodes: [{ name: 'n1', host: '127.0.0.1', port: 22, user: 'root' }],
} as unknown as Remote;

async function echoServer(host = '127.0.0.1'): Promise<{ port: number; close: () => Promise<void> }> {
  const socks = new Set<net.Socket>();
  const server = net.createServer((s) => {
    socks.add(s);
    s.on('data', (b) => s.write(b));
    s.on('error', () => {});
    s.on('close', () => socks.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of socks) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * A client sending a 32-byte request and waiting for its echo, again and again; reconnects on any cut.
 * `from`: the local address it dials from (a member dialling a peer, as the proxy sees it).
 */
function loadClient(port: number, from?: string) {
  const stats = { ok: 0, errors: 0, stopped: false };
  const run = async () => {
    while (!stats.stopped) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect({ port, host: '127.0.0.1', ...(from && { localAddress: from }) });
        let got = 0;
        const timer = setTimeout(() => {
          s.destroy();
          resolve(false);
        }, 1500);
        const next = () => s.write(Buffer.alloc(32, 120));
        s.on('connect', next);
        s.on('data', (b) => {
          got += b.length;
          if (got >= 32) {
            got -= 32;
            stats.ok++;
            if (stats.stopped) {
              clearTimeout(timer);
              s.destroy();
              resolve(true);
            } else setTimeout(next, 15);
          }
        });
        s.on('error', () => {
          clearTimeout(timer);
          resolve(false);
        });
        s.on('close', () => {
          clearTimeout(timer);
          resolve(false);
        });
      });
      if (!ok) {
        stats.errors++;
        await sleep(20);
      }
    }
  };
  const done = run();
  return {
    stats,
    stop: async () => {
      stats.stopped = true;
      await done;
    },
  };
}

test('client addresses are pointed at the proxy with scheme and path kept', (t) => {
  t.deepEqual(parseEndpoint('http://10.213.0.2:2379'), { host: '10.213.0.2', port: 2379 });
  t.deepEqual(parseEndpoint('10.0.0.1:5432'), { host: '10.0.0.1', port: 5432 });
  t.is(parseEndpoint('no-port'), null);
  t.is(pointAt('redis://10.0.0.2:6379/0', { host: '127.0.0.1', port: 4000 }), 'redis://127.0.0.1:4000/0');
  t.is(pointAt('10.0.0.2:11211', { host: '127.0.0.1', port: 4001 }), '127.0.0.1:4001');
});

test('the proxy family parses, and plan steps take typed params with units', (t) => {
  t.true(parseFaults('proxy-*').length === 8);
  t.deepEqual(parseFaults('proxy-latency,partition'), ['proxy-latency', 'partition']);
  const step = nemeses.require('proxy', 'nemesis').step;
  const ok = step.safeParse({ kind: 'proxy', action: 'latency', params: { delay: '150ms', jitter: '10ms' } });
  t.true(ok.success);
  t.deepEqual((ok as { data?: { params: unknown } }).data?.params, { delayMs: 150, jitterMs: 10 });
  const bw = step.safeParse({ kind: 'proxy', action: 'bandwidth', params: { rate: '1mbit' } });
  t.deepEqual((bw as { data?: { params: unknown } }).data?.params, { bytesPerSecond: 125000 });
  t.false(step.safeParse({ kind: 'proxy', action: 'latency', params: { delay: 'soon' } }).success);
  t.false(step.safeParse({ kind: 'proxy', action: 'reset', params: { delayMs: 5 } }).success);
  t.false(step.safeParse({ kind: 'proxy', action: 'half-open', params: { direction: 'sideways' } }).success);
});

const CASES: Array<[string, Record<string, unknown>]> = [
  ['latency', { delayMs: 80, jitterMs: 10 }],
  ['bandwidth', { bytesPerSecond: 1000 }],
  ['blackhole', {}],
  ['reset', {}],
  ['half-open', { direction: 'upstream' }],
  ['half-open', { direction: 'downstream' }],
  ['slice', { sliceBytes: 4, sliceDelayMs: 10 }],
  ['timeout', { afterMs: 200 }],
  ['partition', {}],
];

for (const [action, params] of CASES)
  test.serial(
    `proxy ${action} ${JSON.stringify(params)}: lands on the counters and the client, heals`,
    async (t) => {
      const server = await echoServer();
      const hub = await ProxyHub.start({ n1: `tcp://127.0.0.1:${server.port}` });
      setActiveProxyHub(hub);
      const listen = hub.link('n1').listen.port;
      const client = loadClient(listen);
      try {
        await sleep(400); // a baseline of round trips
        const before = client.stats.ok;
        t.true(before > 3, 'the client is served through the proxy');
        const spec: FaultSpec = { kind: 'proxy', action, targets: ['n1'], params };
        const record = await proxyNemesis.inject(remote, spec, 'w1');
        const ev = await proxyNemesis.evidence(remote, record);
        t.true(ev.landed, ev.reason);
        t.truthy(ev.signals.find((s) => s.side === 'injector' && s.landed));
        t.truthy(ev.signals.find((s) => s.side === 'victim' && s.landed));
        await proxyNemesis.heal(remote, record);
        t.deepEqual(hub.inForce('w1'), []);
        const after = await proxyNemesis.evidenceAfterHeal?.(remote, record);
        t.true(after?.landed, after?.reason);
        const served = client.stats.ok;
        await sleep(300);
        t.true(client.stats.ok > served, 'served again after heal');
      } finally {
        await client.stop();
        await hub.close();
        setActiveProxyHub(null);
        await server.close();
      }
    },
  );

test.serial('without client traffic a proxy fault is not proven', async (t) => {
  const server = await echoServer();
  const hub = await ProxyHub.start({ n1: `127.0.0.1:${server.port}` });
  setActiveProxyHub(hub);
  try {
    const record = await proxyNemesis.inject(
      remote,
      { kind: 'proxy', action: 'blackhole', targets: ['n1'] },
      'w9',
    );
    const ev = await proxyNemesis.evidence(remote, record);
    t.false(ev.landed);
    t.regex(ev.reason ?? '', /unanswered/);
    await proxyNemesis.heal(remote, record);
  } finally {
    await hub.close();
    setActiveProxyHub(null);
    await server.close();
  }
});

test.serial('no proxy in the process: inject is refused before anything is recorded', async (t) => {
  setActiveProxyHub(null);
  await t.throwsAsync(
    proxyNemesis.inject(remote, { kind: 'proxy', action: 'reset', targets: ['n1'] }, 'w1'),
    {
      message: /no proxy in this run/,
    },
  );
});

test.serial('heal from the ledger: a dead process left nothing; a live one is named', async (t) => {
  const rec = (pid: number): FaultRecord => ({
    id: 'w3',
    spec: { kind: 'proxy', action: 'partition', targets: ['n1'] },
    nodes: ['n1'],
    injectedAt: new Date().toISOString(),
    undo: { pid, action: 'partition', params: {}, listeners: { n1: '127.0.0.1:1' } },
  });
  // A pid far beyond pid_max never names a live process.
  await t.notThrowsAsync(proxyNemesis.heal(remote, rec(2 ** 30)));
  await t.throwsAsync(proxyNemesis.heal(remote, rec(process.ppid)), { message: /still running/ });
  t.deepEqual((await proxyNemesis.verifyClean(remote, 'n1')).found, []);
});

test.serial('through the fault plane: the ledger holds the proxy and heal-all clears it', async (t) => {
  const server = await echoServer();
  const hub = await ProxyHub.start({ n1: `127.0.0.1:${server.port}` });
  setActiveProxyHub(hub);
  const client = loadClient(hub.link('n1').listen.port);
  const dir = mkdtempSync(join(tmpdir(), 'fl-proxy-'));
  const plane = new FaultPlane({ remote, ledgerPath: join(dir, 'ledger.jsonl') });
  try {
    await sleep(300);
    const done = await plane.invoke({ f: 'start-proxy', value: { action: 'reset', targets: ['n1'] } });
    t.is((done.value as { landed: boolean }).landed, true);
    const inForce = readLedger(join(dir, 'ledger.jsonl')).unhealed;
    t.is(inForce.length, 1);
    const undo = (inForce[0]?.undo ?? {}) as { pid?: number; listeners?: Record<string, string> };
    t.is(undo.pid, process.pid);
    t.deepEqual(undo.listeners, {
      n1: `127.0.0.1:${hub.link('n1').listen.port}`,
    });
    const report = await plane.healAll('used');
    t.true(report.clean);
    t.deepEqual(hub.inForce('w1'), []);
    t.is(readLedger(join(dir, 'ledger.jsonl')).unhealed.length, 0);
  } finally {
    plane.close();
    await client.stop();
    await hub.close();
    setActiveProxyHub(null);
    await server.close();
  }
});

/** The shipped proxy plan's text, and the errors plan check finds in a variant of it. */
async function proxyPlanChecker() {
  const { readFileSync } = await import('node:fs');
  const { checkPlan } = await import('../../src/app/plan/check-plan.ts');
  const { parsePlanText } = await import('../../src/app/plan/load.ts');
  const text = readFileSync('plans/etcd-proxy.md', 'utf8');
  const errors = (md: string) => checkPlan(parsePlanText(md, 'p.md')).filter((p) => p.severity === 'error');
  return { text, errors };
}

test('plan check: the shipped proxy plan passes; a client that finds its own addresses is refused', async (t) => {
  const { clients } = await import('../../src/lib/clients/registry.ts');
  const { text, errors } = await proxyPlanChecker();
  t.deepEqual(errors(text), []);
  if (!clients.has('discovering-test-client'))
    clients.register('discovering-test-client', {
      name: 'discovering-test-client',
      summary: 'a client that follows cluster gossip',
      workloads: ['multi-register'],
      hiddenRetries: false,
      create: () => {
        throw new Error('not used');
      },
    });
  const refused = errors(text.replaceAll('db: etcd\n', 'db: etcd\nclient: discovering-test-client\n'));
  t.true(refused.some((p) => /proxy step needs a client faultline can point at its proxy/.test(p.reason)));
});

test.serial(
  'partition of a client group from a node set: the group is cut, the others are served, heal',
  async (t) => {
    const { inClientThread, currentClientThread } = await import('../../src/core/util/client-thread.ts');
    const a = await echoServer();
    const b = await echoServer();
    const addresses = { n1: `127.0.0.1:${a.port}`, n2: `127.0.0.1:${b.port}` };
    const hub = await ProxyHub.start(addresses, '127.0.0.1', 4);
    setActiveProxyHub(hub);
    const remote2 = {
      nodes: ['n1', 'n2'].map((name) => ({ name, host: '127.0.0.1', port: 22, user: 'root' })),
    } as unknown as Remote;
    // Threads 0 and 2 open n1, threads 1 and 3 open n2, each resolving its address while open() runs.
    const portOf = (thread: number) => {
      const node = thread % 2 === 0 ? 'n1' : 'n2';
      const routed = inClientThread(thread, () =>
        hub.route(addresses[node as 'n1'], node, currentClientThread()),
      );
      return (parseEndpoint(routed) as { port: number }).port;
    };
    const clients = [0, 1, 2, 3].map((th) => loadClient(portOf(th)));
    const dir = mkdtempSync(join(tmpdir(), 'fl-proxy-group-'));
    const plane = new FaultPlane({ remote: remote2, ledgerPath: join(dir, 'ledger.jsonl') });
    try {
      await sleep(400);
      t.true(
        clients.every((c) => c.stats.ok > 3),
        'every client is served through its own listener',
      );
      // Group [0, 1] cut from both nodes: threads 2 and 3 must go on.
      const done = await plane.invoke({
        f: 'start-proxy',
        value: { action: 'partition', targets: ['n1', 'n2'], params: { clients: [0, 1] } },
      });
      const value = done.value as {
        landed: boolean;
        evidence?: { signals?: { signal: string; landed: boolean }[] };
      };
      t.true(value.landed, JSON.stringify(done.value));
      const record = plane.records.find((r) => r.id === 'w1');
      for (const sig of record?.evidence?.signals ?? [])
        t.log(`${sig.side} ${sig.signal}: ${String(sig.during)} landed=${sig.landed}`);
      const ledger = readLedger(join(dir, 'ledger.jsonl')).unhealed;
      t.deepEqual(((ledger[0]?.undo ?? {}) as { params?: unknown }).params, { clients: [0, 1] });
      // An echo the proxy passed before the cut may still sit in a socket buffer: let it arrive first.
      await sleep(200);
      const before = clients.map((c) => c.stats.ok);
      await sleep(500);
      t.is(clients[0]?.stats.ok, before[0], 'thread 0 is cut');
      t.is(clients[1]?.stats.ok, before[1], 'thread 1 is cut');
      t.true((clients[2]?.stats.ok ?? 0) > (before[2] ?? 0), 'thread 2 is spared');
      t.true((clients[3]?.stats.ok ?? 0) > (before[3] ?? 0), 'thread 3 is spared');
      const counters = hub.link('n1').counters.get('w1');
      t.true((counters?.bytesDropped ?? 0) + (counters?.connectionsHeld ?? 0) > 0);
      const report = await plane.healAll('used');
      t.true(report.clean);
      const healed = clients.map((c) => c.stats.ok);
      await sleep(2500); // a cut client waits out its 1.5 s timeout, then reconnects
      t.true(
        clients.every((c, i) => c.stats.ok > (healed[i] ?? 0)),
        'every client is served after heal',
      );
    } finally {
      plane.close();
      for (const c of clients) await c.stop();
      await hub.close();
      setActiveProxyHub(null);
      await a.close();
      await b.close();
    }
  },
);

test.serial('a client group the proxy cannot tell apart is refused before anything is applied', async (t) => {
  const server = await echoServer();
  const hub = await ProxyHub.start({ n1: `127.0.0.1:${server.port}` }, '127.0.0.1', 2);
  setActiveProxyHub(hub);
  try {
    const spec = (clients: number[]): FaultSpec => ({
      kind: 'proxy',
      action: 'partition',
      targets: ['n1'],
      params: { clients },
    });
    // Nobody was routed per thread: the client resolved its address once.
    await t.throwsAsync(proxyNemesis.inject(remote, spec([0]), 'w1'), { message: /once/ });
    hub.route(`127.0.0.1:${server.port}`, 'n1', 1);
    await t.throwsAsync(proxyNemesis.inject(remote, spec([5]), 'w1'), { message: /no client thread 5/ });
    await t.throwsAsync(proxyNemesis.inject(remote, spec([0]), 'w1'), { message: /no connection to n1/ });
    t.deepEqual(hub.inForce('w1'), []);
    const step = nemeses.require('proxy', 'nemesis').step;
    const ok = step.safeParse({ kind: 'proxy', action: 'partition', params: { clients: [3, 1, 3] } });
    t.deepEqual((ok as { data?: { params: unknown } }).data?.params, { clients: [1, 3] });
    t.false(step.safeParse({ kind: 'proxy', action: 'partition', params: { clients: [] } }).success);
    t.false(step.safeParse({ kind: 'proxy', action: 'partition', params: { clients: [-1] } }).success);
  } finally {
    await hub.close();
    setActiveProxyHub(null);
    await server.close();
  }
});

test.serial(
  'peer links: members dial each other through the proxy; a partition cuts one member both ways, the others go on; heal',
  async (t) => {
    // Three "members" on their own loopback addresses (the proxy tells who dialled by the source address).
    const ips = { n1: '127.0.0.11', n2: '127.0.0.12', n3: '127.0.0.13' };
    const servers = {
      n1: await echoServer(ips.n1),
      n2: await echoServer(ips.n2),
      n3: await echoServer(ips.n3),
    };
    const real = Object.fromEntries(
      Object.entries(servers).map(([n, sv]) => [n, `http://${ips[n as 'n1']}:${sv.port}`]),
    );
    const hub = ProxyHub.create();
    await hub.addPeers(real, '127.0.0.1', Object.fromEntries(Object.entries(ips).map(([n, ip]) => [ip, n])));
    setActiveProxyHub(hub);
    // Every member advertises its peer listener; each dials the others' advertised addresses.
    const advertised = Object.fromEntries(Object.entries(real).map(([n, a]) => [n, hub.peerRoute(a, n)]));
    t.regex(advertised.n1 as string, /^http:\/\/127\.0\.0\.1:\d+$/);
    t.is(
      hub.peerRoute('http://10.0.0.9:2380', 'n1'),
      'http://10.0.0.9:2380',
      'another address is left alone',
    );
    const flows = new Map<string, ReturnType<typeof loadClient>>();
    for (const from of ['n1', 'n2', 'n3'] as const)
      for (const to of ['n1', 'n2', 'n3'] as const)
        if (from !== to)
          flows.set(
            `${from}->${to}`,
            loadClient((parseEndpoint(advertised[to] as string) as { port: number }).port, ips[from]),
          );
    const ok = () => new Map([...flows].map(([k, f]) => [k, f.stats.ok]));
    const remote3 = {
      nodes: ['n1', 'n2', 'n3'].map((name) => ({ name, host: '127.0.0.1', port: 22, user: 'root' })),
    } as unknown as Remote;
    try {
      await sleep(400);
      for (const [k, n] of ok()) t.true(n > 3, `${k} is served through the proxy`);
      const spec: FaultSpec = {
        kind: 'proxy',
        action: 'partition',
        targets: ['n3'],
        params: { links: 'peers' },
      };
      const record = await proxyNemesis.inject(remote3, spec, 'w1');
      const undo = record.undo as {
        peerListeners?: Record<string, string>;
        peerUpstreams?: Record<string, string>;
      };
      t.deepEqual(
        Object.keys(undo.peerListeners ?? {}).sort(),
        ['n1', 'n2', 'n3'],
        'the ledger keeps every peer listener',
      );
      t.is(undo.peerUpstreams?.n3, `${ips.n3}:${servers.n3.port}`);
      // An echo the proxy passed before the cut may still sit in a socket buffer: let it arrive first.
      await sleep(200);
      const before = ok();
      await sleep(600);
      const during = ok();
      for (const k of ['n1->n3', 'n2->n3', 'n3->n1', 'n3->n2'])
        t.is(during.get(k), before.get(k), `${k} is cut`);
      for (const k of ['n1->n2', 'n2->n1'])
        t.true((during.get(k) ?? 0) > (before.get(k) ?? 0), `${k} goes on`);
      const into = hub.peerLink('n3').counters.get('w1');
      const out = ['n1', 'n2'].map((n) => hub.peerLink(n).counters.get('w1'));
      t.true((into?.bytesDropped ?? 0) + (into?.connectionsHeld ?? 0) > 0, 'dropped into n3');
      t.true(
        out.every((c) => (c?.bytesDropped ?? 0) + (c?.connectionsHeld ?? 0) > 0),
        'dropped out of n3',
      );
      await proxyNemesis.heal(remote3, record);
      t.deepEqual(hub.inForce('w1'), []);
      const after = await proxyNemesis.evidenceAfterHeal?.(remote3, record);
      t.true(after?.landed, JSON.stringify(after));
      t.regex(String(after?.signals[1]?.signal), /peer bytes between n3 and the other members after heal/);
      const healed = ok();
      await sleep(2500); // a cut flow waits out its 1.5 s timeout, then reconnects
      for (const [k, n] of ok()) t.true(n > (healed.get(k) ?? 0), `${k} is served after heal`);
    } finally {
      for (const f of flows.values()) await f.stop();
      await hub.close();
      setActiveProxyHub(null);
      for (const sv of Object.values(servers)) await sv.close();
    }
  },
);

test('peer links: a partition names clients or links: peers, not both; plan check and client-only runs refuse what cannot route peers', async (t) => {
  const step = nemeses.require('proxy', 'nemesis').step;
  const ok = step.safeParse({ kind: 'proxy', action: 'partition', params: { links: 'peers' } });
  t.deepEqual((ok as { data?: { params: unknown } }).data?.params, { links: 'peers' });
  const plain = step.safeParse({ kind: 'proxy', action: 'partition', params: { links: 'clients' } });
  t.deepEqual((plain as { data?: { params: unknown } }).data?.params, {});
  t.false(
    step.safeParse({ kind: 'proxy', action: 'partition', params: { links: 'peers', clients: [0] } }).success,
  );
  t.false(step.safeParse({ kind: 'proxy', action: 'latency', params: { links: 'peers' } }).success);
  const { clientOnlyRefusal } = await import('../../nemeses/registry.ts');
  t.is(
    clientOnlyRefusal([{ kind: 'proxy', action: 'partition', params: { links: 'peers' } }]),
    "nemesis step 1 (kind: proxy, links: peers) needs the database's peer addresses configured on the nodes",
  );
  t.is(clientOnlyRefusal([{ kind: 'proxy', action: 'partition', params: {} }]), null);
  const { text, errors } = await proxyPlanChecker();
  t.deepEqual(errors(text), []);
  // Redis does not let faultline choose its members' peer addresses.
  const redis = errors(
    text.replaceAll('db: etcd\n', 'db: redis\n').replaceAll('dbOptions: { serializableReads: true }\n', ''),
  );
  t.true(
    redis.some((p) => /does not let faultline choose its members' peer addresses/.test(p.reason)),
    JSON.stringify(redis),
  );
});
