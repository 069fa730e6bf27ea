/**
 * bench:nemesis — inject → landed and heal times on a real 5-node local cluster (root needed), for a
 * halves partition and for a pause. "Landed" means the nemesis's own evidence says so (DROP counters > 0
 * and a cut TCP connect; /proc State T), so the figure includes proving it, not just issuing it.
 * Target: inject → landed < 250 ms. `--json` prints one JSON object.
 */

import { partitionNemesis } from '../nemeses/partition.ts';
import { processNemesis } from '../nemeses/process.ts';
import type { FaultSpec, Nemesis } from '../nemeses/types.ts';
import { loadInventory } from '../src/core/control/inventory.ts';
import { connectRemote } from '../src/core/control/ssh-remote.ts';
import { localClusterDown, localClusterUp } from '../src/lib/clusters/local.ts';

const NAME = 'nem-bench';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const json = process.argv.includes('--json');

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
  return {
    p50: Math.round(q(0.5)),
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
    await remote.exec(
      'n1',
      `setsid sh -c 'sleep 3600 & echo $! > /tmp/bench-victim.pid; wait' </dev/null >/dev/null 2>&1 &`,
    );
    await new Promise((r) => setTimeout(r, 300));
    const cases: Array<{ name: string; nemesis: Nemesis; spec: FaultSpec }> = [
      {
        name: 'partition-halves-5',
        nemesis: partitionNemesis,
        spec: { kind: 'partition', action: 'start', params: { topology: 'halves' } },
      },
      {
        name: 'pause',
        nemesis: processNemesis,
        spec: {
          kind: 'process',
          action: 'pause',
          targets: ['n1'],
          params: { pidFile: '/tmp/bench-victim.pid' },
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
        landed.push(t1 - t0);
        heal.push(t2 - t1);
      }
      result[c.name] = { injectToLandedMs: stats(landed), healMs: stats(heal) };
      if (!json) {
        const l = stats(landed);
        const h = stats(heal);
        process.stdout.write(
          `${c.name.padEnd(20)} inject→landed p50 ${l.p50} ms (min ${l.min}, max ${l.max})   heal p50 ${h.p50} ms (max ${h.max})   ${l.p50 < 250 ? 'within' : 'OVER'} the 250 ms target\n`,
        );
      }
    }
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    if (json) process.stdout.write(`${JSON.stringify({ ...result, peakRssMb })}\n`);
    else process.stdout.write(`peak RSS ${peakRssMb} MB\n`);
  } finally {
    await remote.close();
    await localClusterDown(NAME);
  }
}

await main();
