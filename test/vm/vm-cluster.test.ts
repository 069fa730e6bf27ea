import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { clockNemesis } from '../../nemeses/clock.ts';
import type { Behaviors } from '../../nemeses/commands/tc.ts';
import { diskNemesis } from '../../nemeses/disk.ts';
import { packetNemesis } from '../../nemeses/packet.ts';
import type { FaultEvidence, FaultRecord, FaultSpec, Nemesis } from '../../nemeses/types.ts';
import { shellQuote } from '../../src/core/control/quote.ts';
import type { Remote } from '../../src/core/control/types.ts';
import { clusterDir } from '../../src/lib/clusters/state-dir.ts';
import { DATA_DEVICE } from '../../src/lib/clusters/vm-guest.ts';
import { qemuPids } from '../../src/lib/clusters/vm-qemu.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { RedisDb } from '../../src/lib/databases/redis.ts';
import { withVmCluster } from './fixture.ts';

/**
 * The VM cluster end to end (npm run test:vm): a 3-VM cluster boots; etcd installs through the apt
 * proxy and forms a cluster; netem, dm-flakey and settime faults land with injector and victim evidence
 * and heal clean; the demo plan's clock scenario reaches a real verdict; `cluster down --all` leaves no
 * qemu, tap, bridge or lock. Serial: one emulated cluster on a small host. Figures go to the test log.
 */
const NAME = 'vm-suite';
const fx = withVmCluster(test, { name: NAME, nodes: 3 });
const ROOT = join(import.meta.dirname, '..', '..');
const etcd = new EtcdDb();
const NODES = ['n1', 'n2', 'n3'];

const faultline = (args: string[], timeoutMs: number) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin', 'faultline.js'), ...args],
      { env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' }, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });

/** Inject, prove, heal, prove the heal, sweep: returns the evidence and inject→landed ms. */
async function faultRound(
  t: ExecutionContext,
  remote: Remote,
  nemesis: Nemesis,
  spec: FaultSpec,
  id: string,
): Promise<{ evidence: FaultEvidence; landedMs: number; record: FaultRecord }> {
  const t0 = Date.now();
  const record = await nemesis.inject(remote, spec, id);
  let evidence: FaultEvidence;
  try {
    evidence = await nemesis.evidence(remote, record);
  } finally {
    await nemesis.heal(remote, record);
  }
  const landedMs = Date.now() - t0;
  t.log(
    `${id} ${spec.kind} ${spec.action}: landed=${evidence.landed} in ${landedMs} ms ${evidence.reason ?? ''}`,
  );
  for (const s of evidence.signals)
    t.log(
      `  ${s.side} ${s.node} ${s.signal}: ${JSON.stringify(s.before)} → ${JSON.stringify(s.during)} ${s.landed ? '✓' : '✗'} ${s.note ?? ''}`,
    );
  if (nemesis.evidenceAfterHeal) {
    const after = await nemesis.evidenceAfterHeal(remote, record);
    t.true(after.landed, `healed: ${after.reason ?? ''} ${JSON.stringify(after.signals)}`);
  }
  for (const node of NODES) {
    const clean = await nemesis.verifyClean(remote, node);
    t.true(clean.clean && clean.found.length === 0, `${node} clean after heal: ${JSON.stringify(clean)}`);
  }
  return { evidence, landedMs, record };
}

fx.test.serial('a 3-VM cluster: own kernels, strict host keys, no route off the bridge', async (t) => {
  const r = fx.report();
  t.log(
    `accelerator ${r.accel.accel} (${r.accel.reason}); image ${r.image.key} build ${r.image.buildSeconds} s`,
  );
  for (const [n, ms] of Object.entries(r.bootToSshMs))
    t.log(`${n}: boot-to-SSH ${(ms / 1000).toFixed(1)} s, memory ${JSON.stringify(r.memory[n])}`);
  const remote = await fx.remote();
  const hostBoot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const boots = await Promise.all(
    NODES.map(async (n) => (await remote.exec(n, 'cat /proc/sys/kernel/random/boot_id')).stdout.trim()),
  );
  t.is(new Set([hostBoot, ...boots]).size, 4, 'every node runs its own kernel');
  const inv = readFileSync(r.cluster.inventoryPath, 'utf8');
  t.regex(inv, /sharedKernelClock: false/);
  t.regex(inv, /(host|address): 10\.\d+\.\d+\.11/);
  const route = await remote.exec('n1', 'ip route get 192.0.2.1 2>&1; true');
  t.regex(route.stdout, /unreachable/i, 'no default route: the VMs reach nothing beyond the bridge');
  for (const n of NODES) {
    const mods = await remote.exec(
      n,
      'grep -E "^(sch_netem|dm_flakey) " /proc/modules | cut -d" " -f1 | sort',
    );
    t.deepEqual(mods.stdout.trim().split('\n'), ['dm_flakey', 'sch_netem']);
    t.is(
      (await remote.exec(n, `findmnt -n -o SOURCE /var/lib/faultline`)).stdout.trim(),
      `/dev/mapper/${DATA_DEVICE}`,
    );
  }
  const ntp = await remote.exec('n1', 'ls /lib/systemd/system | grep -E "timesyncd|chrony|ntp" || true');
  t.is(ntp.stdout.trim(), '', 'no time synchronisation service');
  const status = await faultline(['cluster', 'status', '--name', NAME], 120_000);
  t.is(status.code, 0, status.stdout + status.stderr);
  t.regex(status.stdout, /healthy/);
});

fx.test.serial('the apt proxy serves the host sources only', async (t) => {
  const remote = await fx.remote();
  const bridge = fx.report().cluster.subnet.replace(/0\/24$/, '1');
  const ask = (url: string) =>
    remote.exec(
      'n1',
      `bash -c ${shellQuote(`exec 3<>/dev/tcp/${bridge}/3142; printf 'GET ${url} HTTP/1.0\\r\\n\\r\\n' >&3; head -1 <&3`)}`,
      { timeoutMs: 30_000 },
    );
  t.regex(
    (await ask('http://example.invalid/x')).stdout,
    / 403 /,
    'a host the apt sources do not name is refused',
  );
  t.regex((await ask('/relative')).stdout, / 400 /);
});

let formationMs = 0;
fx.test.serial('etcd installs through the apt proxy and forms a 3-member cluster', async (t) => {
  const remote = await fx.remote();
  const ctx = { remote, nodes: NODES };
  const t0 = Date.now();
  await Promise.all(NODES.map((n) => etcd.install(ctx, n)));
  const installMs = Date.now() - t0;
  const t1 = Date.now();
  await Promise.all(NODES.map((n) => etcd.setup(ctx, n)));
  await etcd.awaitReady(ctx, 180_000);
  formationMs = Date.now() - t1;
  t.log(
    `etcd: apt install on 3 VMs ${(installMs / 1000).toFixed(1)} s, cluster formation ${(formationMs / 1000).toFixed(1)} s`,
  );
  const proxyLog = readFileSync(join(clusterDir(NAME), 'apt-proxy.log'), 'utf8');
  t.regex(proxyLog, /(hit|fetch) .*etcd-server/, 'etcd-server came through the cluster apt proxy');
  let leaders: string[] = [];
  for (let i = 0; i < 10 && leaders.length === 0; i++) leaders = await etcd.primaries(ctx);
  t.is(leaders.length, 1, 'one leader');
});

fx.test.serial('Redis installs through the apt proxy and replicates between two VMs', async (t) => {
  const remote = await fx.remote();
  const redis = new RedisDb();
  const ctx = { remote, nodes: ['n1', 'n2'] };
  const t0 = Date.now();
  try {
    await Promise.all(ctx.nodes.map((n) => redis.install(ctx, n)));
    await Promise.all(ctx.nodes.map((n) => redis.setup(ctx, n)));
    await redis.awaitReady(ctx, 120_000);
    t.log(`redis: install and start on 2 VMs ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await remote.exec('n1', 'redis-cli -h 127.0.0.1 SET fl-vm ok');
    let seen = '';
    for (let i = 0; i < 20 && seen !== 'ok'; i++) {
      seen = (await remote.exec('n2', 'redis-cli -h 127.0.0.1 GET fl-vm')).stdout.trim();
      if (seen !== 'ok') await new Promise((r) => setTimeout(r, 500));
    }
    t.is(seen, 'ok', 'the replica on n2 serves the write made on n1');
  } finally {
    await Promise.all(ctx.nodes.map((n) => redis.teardown(ctx, n)));
  }
});

const netemCases: Array<[string, Behaviors]> = [
  ['delay', { delay: { timeMs: 100, jitterMs: 10 } }],
  ['loss', { loss: { percent: 40 } }],
  ['duplicate', { duplicate: { percent: 60 } }],
  ['corrupt', { corrupt: { percent: 40 } }],
  ['reorder', { delay: { timeMs: 100 }, reorder: { percent: 50 } }],
  ['rate', { rate: '1mbit' }],
];
for (const [label, behaviors] of netemCases) {
  fx.test.serial(`netem ${label} lands (tc -s counters, victim ping) and heals clean`, async (t) => {
    const remote = await fx.remote();
    const { evidence } = await faultRound(
      t,
      remote,
      packetNemesis,
      { kind: 'packet', action: 'start', targets: ['n1'], params: { behaviors } },
      `vm-netem-${label}`,
    );
    t.true(evidence.landed, evidence.reason ?? '');
    t.true(evidence.signals.some((s) => s.side === 'injector' && /tc -s qdisc/.test(s.signal) && s.landed));
    t.true(evidence.signals.some((s) => s.side === 'victim' && /ping/.test(s.signal) && s.landed));
    const qdisc = await remote.exec('n1', 'tc qdisc show dev eth0');
    t.notRegex(qdisc.stdout, /netem|fa1:/, 'the shaping is gone after heal');
  });
}

fx.test.serial('settime bump and strobe move a node clock and etcd’s own time, and reset', async (t) => {
  const remote = await fx.remote();
  const params = { mode: 'settime', deltaMs: 300_000, timeCommand: etcd.clock.timeCommand };
  const bump = await faultRound(
    t,
    remote,
    clockNemesis,
    { kind: 'clock', action: 'bump', targets: ['n2'], params },
    'vm-clock-bump',
  );
  t.true(bump.evidence.landed, bump.evidence.reason ?? '');
  t.true(
    bump.evidence.signals.some((s) => /DB time/.test(s.signal) && s.landed),
    'etcd’s Date header moved too',
  );
  t.true(
    bump.evidence.signals.some((s) => s.side === 'injector' && s.landed),
    'the injector saw its shift',
  );
  const strobe = await faultRound(
    t,
    remote,
    clockNemesis,
    {
      kind: 'clock',
      action: 'strobe',
      targets: ['n3'],
      params: { mode: 'settime', deltaMs: 60_000, periodMs: 1000, durationMs: 30_000 },
    },
    'vm-clock-strobe',
  );
  t.true(strobe.evidence.landed, strobe.evidence.reason ?? '');
});

fx.test.serial(
  'dm-flakey under etcd’s data directory: dmsetup status and I/O errors, then the linear table back',
  async (t) => {
    const remote = await fx.remote();
    const { evidence } = await faultRound(
      t,
      remote,
      diskNemesis,
      {
        kind: 'disk',
        action: 'flakey',
        targets: ['n3'],
        params: { device: DATA_DEVICE, mode: 'error_writes' },
      },
      'vm-flakey',
    );
    t.true(evidence.landed, evidence.reason ?? '');
    t.true(evidence.signals.some((s) => s.side === 'victim' && /write err/.test(String(s.during))));
    const table = await remote.exec('n3', `dmsetup table ${DATA_DEVICE}`);
    t.regex(table.stdout, / linear /, 'healed: the linear table is back');
    const write = await remote.exec(
      'n3',
      'echo ok > /var/lib/faultline/.after-heal && sync && cat /var/lib/faultline/.after-heal',
    );
    t.is(write.stdout.trim(), 'ok', 'the data filesystem takes writes again');
  },
);

fx.test.serial('the demo plan’s clock scenario (S2) reaches a real verdict on VMs', async (t) => {
  const remote = await fx.remote();
  await Promise.all(NODES.map((n) => etcd.teardown({ remote, nodes: NODES }, n)));
  const out = mkdtempSync(join(tmpdir(), 'faultline-vm-s2-'));
  const r = await faultline(
    [
      '--log-level',
      'warn',
      'run',
      join(ROOT, 'plans', 'etcd-register.md'),
      '--inventory',
      fx.report().cluster.inventoryPath,
      '--scenario',
      'S2',
      '--tier',
      'smoke',
      '--seed',
      '7',
      '--install',
      '--yes',
      '--max-reduction-runs',
      '1',
      '--deadline',
      '12m',
      '--out',
      out,
    ],
    15 * 60_000,
  );
  t.log(r.stdout.slice(-3000));
  const row = /^S2 +(\S+)/m.exec(r.stdout)?.[1] ?? '';
  t.log(`S2 verdict: ${row} (exit ${r.code})`);
  // A real verdict: the fault landed and the oracle decided, PASS or FAIL — never PARTIAL, INCONCLUSIVE
  // or NOT-RUN. The plan expects PASS-smoke on a cluster with its own clocks, so the run exits 0.
  t.regex(row, /^(PASS|FAIL)-/, `a real verdict, not ${row}: ${r.stderr.slice(-2000)}`);
  t.is(r.code, 0, `S2 meets the plan's expectation on own-clock nodes: ${row}`);
});

fx.test.serial('cluster down --all leaves no qemu process, tap, bridge or image lock', async (t) => {
  const r = await faultline(['cluster', 'down', '--all'], 120_000);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, new RegExp(`${NAME}: removed 3 qemu processes`));
  t.deepEqual(qemuPids(`faultline-vm/${NAME}/`), []);
  const links = await new Promise<string>((res) =>
    execFile('ip', ['-o', 'link', 'show'], (_e, so) => res(String(so))),
  );
  const state = fx.stateDir;
  t.false(existsSync(join(state, 'clusters', NAME)));
  for (const tap of ['flt', 'flb'])
    t.notRegex(
      links,
      new RegExp(`${tap}${(await import('../../src/lib/clusters/local-names.ts')).clusterId(NAME)}`),
    );
  const { imageLockPath } = await import('../../src/lib/clusters/vm-image.ts');
  t.false(existsSync(imageLockPath()));
  t.log(`3-VM etcd cluster formation took ${(formationMs / 1000).toFixed(1)} s`);
});
