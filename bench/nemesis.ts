/**
 * bench:nemesis — inject → landed and heal times on a real 5-node local cluster (root needed), for every
 * action that lands on this kind of node: partitions (halves, asymmetric, grudge), packet loss (netem,
 * or its iptables-statistic substitute), kill / terminate / pause / restart of a stand-in process, and
 * disk-full / corrupt on a small tmpfs. "Landed" means the nemesis's own evidence says so (DROP
 * counters > 0 and a cut TCP connect; /proc State T; a new pid …), so the figure includes proving it,
 * not just issuing it. Target: inject → landed < 250 ms. `--json` prints one JSON object.
 * BENCH_ROUNDS (default 5) rounds per action; BENCH_CLUSTER names the cluster (default nem-bench).
 */

import { diskNemesis } from '../nemeses/disk.ts';
import { packetNemesis } from '../nemeses/packet.ts';
import { partitionNemesis } from '../nemeses/partition.ts';
import { processNemesis } from '../nemeses/process.ts';
import type { FaultSpec, Nemesis } from '../nemeses/types.ts';
import { loadInventory } from '../src/core/control/inventory.ts';
import { connectRemote } from '../src/core/control/ssh-remote.ts';
import { localClusterDown, localClusterUp } from '../src/lib/clusters/local.ts';

const NAME = process.env.BENCH_CLUSTER ?? 'nem-bench';
const VICTIM = `sleep 3600 & echo $! > /tmp/bench-victim.pid; wait`;
const DISK = '/tmp/bench-nemesis-disk';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const json = process.argv.includes('--json');

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
  return {
    p50: Math.round(q(0.5)),
    p99: Math.round(q(0.99)),
    max: Math.round(s[s.length - 1] as number),
    min: Math.round(s[0] as number),
  };
}

async function main(): Promise<void> {
  await localClusterDown(NAME);
  const cluster = await localClusterUp({ nodes: 5, name: NAME });
  const inv = loadInventory(cluster.inventoryPath);
  const remote = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles });
  try {
    const startVictim = () =>
      remote
        .exec('n1', `setsid sh -c '${VICTIM}' </dev/null >/dev/null 2>&1 &`)
        .then(() => new Promise((r) => setTimeout(r, 300)));
    await startVictim();
    await remote.exec(
      'n2',
      `mkdir -p ${DISK} && (mountpoint -q ${DISK} || mount -t tmpfs -o size=8m tmpfs ${DISK}) && head -c 65536 /dev/urandom > ${DISK}/victim`,
    );
    // After a kill or terminate heals (the stand-in started again), wait until its new pid is written.
    const victimRunning = async () => {
      for (let i = 0; i < 100; i++) {
        const r = await remote.exec('n1', 'kill -0 "$(cat /tmp/bench-victim.pid)" && echo up', {
          check: false,
        });
        if (r.stdout.includes('up')) return;
        await new Promise((res) => setTimeout(res, 30));
      }
      throw new Error('the stand-in process did not come back');
    };
    const proc = (action: string) => ({
      name: action,
      nemesis: processNemesis as Nemesis,
      spec: {
        kind: 'process',
        action,
        targets: ['n1'],
        params: { pidFile: '/tmp/bench-victim.pid', startCommand: VICTIM },
      },
    });
    const cases: Array<{ name: string; nemesis: Nemesis; spec: FaultSpec }> = [
      {
        name: 'partition-halves-5',
        nemesis: partitionNemesis,
        spec: { kind: 'partition', action: 'start', params: { topology: 'halves' } },
      },
      {
        name: 'partition-asymmetric',
        nemesis: partitionNemesis,
        spec: {
          kind: 'partition',
          action: 'start',
          params: { topology: 'asymmetric', from: ['n1', 'n2'], to: ['n3', 'n4', 'n5'] },
        },
      },
      {
        name: 'partition-grudge',
        nemesis: partitionNemesis,
        spec: { kind: 'partition', action: 'start', params: { topology: 'grudge', grudge: { n1: ['n2'] } } },
      },
      {
        name: 'packet-loss',
        nemesis: packetNemesis,
        spec: {
          kind: 'packet',
          action: 'start',
          targets: ['n1'],
          params: { behaviors: { loss: { percent: 50 } } },
        },
      },
      proc('pause'),
      // kill / terminate heal through the stand-in's start command, which writes its pidfile again.
      proc('kill'),
      proc('terminate'),
      proc('restart'),
      {
        name: 'disk-full',
        nemesis: diskNemesis,
        spec: { kind: 'disk', action: 'disk-full', targets: ['n2'], params: { dir: DISK } },
      },
      {
        name: 'corrupt',
        nemesis: diskNemesis,
        spec: {
          kind: 'disk',
          action: 'corrupt',
          targets: ['n2'],
          params: { file: `${DISK}/victim`, backup: true },
        },
      },
    ];
    const result: Record<string, unknown> = { rounds: ROUNDS, targetMs: 250 };
    for (const c of cases) {
      const landed: number[] = [];
      const heal: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = performance.now();
        const rec = await c.nemesis.inject(remote, c.spec, `b${i}`);
        const ev = await c.nemesis.evidence(remote, rec);
        const t1 = performance.now();
        if (!ev.landed) throw new Error(`${c.name}: not landed: ${ev.reason}`);
        await c.nemesis.heal(remote, rec);
        const t2 = performance.now();
        if (c.nemesis === processNemesis) await victimRunning();
        landed.push(t1 - t0);
        heal.push(t2 - t1);
      }
      result[c.name] = { injectToLandedMs: stats(landed), healMs: stats(heal) };
      if (!json) {
        const l = stats(landed);
        const h = stats(heal);
        process.stdout.write(
          `${c.name.padEnd(22)} inject→landed p50 ${l.p50} ms p99 ${l.p99} ms (min ${l.min})   heal p50 ${h.p50} ms p99 ${h.p99} ms   ${l.p50 < 250 ? 'within' : 'OVER'} the 250 ms target\n`,
        );
      }
    }
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    if (json) process.stdout.write(`${JSON.stringify({ ...result, peakRssMb })}\n`);
    else process.stdout.write(`peak RSS ${peakRssMb} MB\n`);
  } finally {
    await remote.exec('n2', `umount ${DISK}; rmdir ${DISK}`, { check: false }).catch(() => undefined);
    await remote.close();
    await localClusterDown(NAME);
  }
}

await main();
