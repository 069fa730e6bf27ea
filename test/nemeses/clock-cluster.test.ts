import test from 'ava';
import { clockNemesis, installFaketimeWrapper } from '../../nemeses/clock.ts';
import { CapabilityMissingError } from '../../nemeses/types.ts';
import { withCluster } from '../helpers/cluster.ts';

const fx = withCluster(test, { nodes: 3, name: 'nem-clock' });
const REDIS_PORT = 16410;

async function waitUntil(pred: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

fx.test.serial('faketime bump moves Redis TIME by the delta; reset brings it back', async (t) => {
  const remote = await fx.remote();
  const w = await installFaketimeWrapper(remote, 'n1', { binary: '/usr/bin/redis-server', name: 'redis' });
  t.true(w.affectability.affectable, w.affectability.reason);
  // Debian's redis-server links jemalloc: the wrapper must route malloc to glibc for libfaketime 0.9.10.
  t.regex(w.affectability.mallocShim ?? '', /libc_malloc_debug/);
  await remote.exec(
    'n1',
    `${w.wrapperPath} --port ${REDIS_PORT} --save '' --appendonly no --daemonize yes --pidfile /tmp/nem-clock-redis.pid --logfile /tmp/nem-clock-redis.log`,
  );
  const timeCommand = `redis-cli -p ${REDIS_PORT} TIME`;
  await waitUntil(async () => (await remote.exec('n1', timeCommand, { check: false })).stdout.trim() !== '');
  const spec = {
    kind: 'clock',
    action: 'bump',
    targets: ['n1'],
    params: {
      mode: 'faketime',
      name: 'redis',
      binary: '/usr/bin/redis-server',
      timeCommand,
      deltaMs: 3_600_000,
    },
  };
  const rec = await clockNemesis.inject(remote, spec, 'c1');
  const ev = await clockNemesis.evidence(remote, rec);
  t.true(ev.landed, ev.reason);
  const db = ev.signals.find((s) => s.signal.startsWith('DB time'));
  t.truthy(db);
  t.true(Math.abs((db?.before as number) ?? 1e9) < 250, `before ${String(db?.before)}`);
  t.true(Math.abs((db?.during as number) - 3_600_000) < 250, `during ${String(db?.during)}`);
  await clockNemesis.heal(remote, rec);
  const after = await clockNemesis.evidenceAfterHeal?.(remote, rec);
  t.true(after?.landed, after?.reason);
  t.true((await clockNemesis.verifyClean(remote, 'n1')).clean);
});

fx.test.serial(
  'faketime strobe swings Redis TIME; the sweep stops the loop and resets the file',
  async (t) => {
    const remote = await fx.remote();
    const timeCommand = `redis-cli -p ${REDIS_PORT} TIME`;
    const spec = {
      kind: 'clock',
      action: 'strobe',
      targets: ['n1'],
      params: {
        name: 'redis',
        binary: '/usr/bin/redis-server',
        timeCommand,
        deltaMs: -120_000,
        periodMs: 300,
        durationMs: 60_000,
      },
    };
    const rec = await clockNemesis.inject(remote, spec, 'c2');
    const ev = await clockNemesis.evidence(remote, rec);
    t.true(ev.landed, ev.reason);
    // Abandoned (no heal): the sweep must find the loop and the offset file.
    const sweep = await clockNemesis.verifyClean(remote, 'n1');
    t.true(sweep.clean);
    t.true(
      sweep.fixed.some((f) => f.includes('strobe')),
      sweep.fixed.join('; '),
    );
    await new Promise((r) => setTimeout(r, 700));
    const after = await clockNemesis.evidenceAfterHeal?.(remote, rec);
    t.true(after?.landed, after?.reason);
  },
);

fx.test.serial('etcd (Go) under the wrapper is reported as not landed, with the reason', async (t) => {
  const remote = await fx.remote();
  const w = await installFaketimeWrapper(remote, 'n2', { binary: '/usr/bin/etcd', name: 'etcd' });
  t.false(w.affectability.affectable);
  t.regex(w.affectability.reason ?? '', /Go binary/);
  await remote.exec(
    'n2',
    `setsid ${w.wrapperPath} --data-dir /tmp/nem-clock-etcd-n2 --listen-client-urls http://127.0.0.1:23790 --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 </dev/null >/tmp/nem-clock-etcd.log 2>&1 &`,
  );
  const spec = {
    kind: 'clock',
    action: 'bump',
    targets: ['n2'],
    params: { name: 'etcd', binary: '/usr/bin/etcd', deltaMs: 60_000 },
  };
  const rec = await clockNemesis.inject(remote, spec, 'c3');
  const ev = await clockNemesis.evidence(remote, rec);
  t.false(ev.landed);
  t.regex(ev.reason ?? '', /n2: not landed: \/usr\/bin\/etcd is a Go binary/);
  await clockNemesis.heal(remote, rec);
  t.true((await clockNemesis.verifyClean(remote, 'n2')).clean);
});

fx.test.serial(
  'settime is refused on local-cluster nodes (shared kernel clock), before anything changes',
  async (t) => {
    const remote = await fx.remote();
    const caps = await clockNemesis.capabilities(remote, 'n3');
    const settime = caps.find((c) => c.name === 'settime');
    t.false(settime?.available);
    t.regex(settime?.reason ?? '', /shares the control host's kernel clock/);
    const err = await t.throwsAsync(
      clockNemesis.inject(
        remote,
        { kind: 'clock', action: 'bump', targets: ['n3'], params: { deltaMs: 5000 } },
        'c4',
      ),
    );
    t.true(err instanceof CapabilityMissingError);
    t.regex(err?.message ?? '', /^n3: settime unavailable: the node shares the control host's kernel clock/);
  },
);
