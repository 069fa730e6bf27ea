/**
 * bench:runner
 *  1. the interpreter's own throughput and per-op overhead: an in-process no-op client, 100 processes,
 *     10 s, history streamed to disk through the history writer (target ≥ 50k ops/s);
 *  2. a real 5-node local etcd (network-namespace cluster `bench-runner`, needs root): register ops
 *     (read/write/cas, closed loop, 10 clients) for --etcd-seconds: ops/s and p50/p99 latency.
 *     Skipped with a reason when a local cluster cannot be built here, or with --no-etcd.
 *
 * Flags: --seconds N (10), --concurrency N (100), --etcd-seconds N (10), --no-etcd, --json.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHistorySink } from '../src/app/test/history-sink.ts';
import { Interpreter } from '../src/app/test/interpreter.ts';
import { clients, Rng, repeat, SECOND, timeLimit } from '../src/core/generator/index.ts';
import { NoopClient } from '../src/lib/clients/noop.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const seconds = flag('seconds', 10);
const concurrency = flag('concurrency', 100);
const json = args.includes('--json');
const etcdSeconds = flag('etcd-seconds', 10);

async function inProcess(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-bench-runner-'));
  try {
    const path = join(dir, 'history.jsonl');
    const sink = await openHistorySink(path);
    const gen = clients(
      timeLimit(
        seconds * SECOND,
        repeat((ctx) => ({ f: 'write', value: ctx.rng.int(1000) })),
      ),
    );
    const interp = new Interpreter({
      generator: gen,
      concurrency,
      nodes: ['n1', 'n2', 'n3', 'n4', 'n5'],
      client: new NoopClient(),
      sink,
      rng: new Rng(1),
      opTimeoutMs: 5000,
    });
    const t0 = process.hrtime.bigint();
    const stats = await interp.run();
    await sink.close();
    const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    const size = (await stat(path)).size;
    const opsPerSec = stats.invoked / elapsed;
    return {
      client: 'noop (in-process)',
      concurrency,
      seconds: Number(elapsed.toFixed(2)),
      ops: stats.invoked,
      opsPerSec: Math.round(opsPerSec),
      perOpOverheadUs: Number((1e6 / opsPerSec).toFixed(2)),
      historyBytes: size,
      target: '>= 50000 ops/s',
      meetsTarget: opsPerSec >= 50_000,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Register ops against a real local etcd; latency from invoke to completion, per completed op. */
async function realEtcd(): Promise<Record<string, unknown>> {
  const { localClusterUnavailableReason } = await import('../src/lib/clusters/host-tools.ts');
  const reason = localClusterUnavailableReason();
  if (reason) return { skipped: reason };
  const { localClusterDown, localClusterUp } = await import('../src/lib/clusters/local.ts');
  const { loadInventory } = await import('../src/core/control/inventory.ts');
  const { connectRemote } = await import('../src/core/control/ssh-remote.ts');
  const { EtcdDb } = await import('../src/lib/databases/etcd.ts');
  const { EtcdClient } = await import('../src/lib/clients/etcd.ts');
  const { registerWorkload } = await import('../src/lib/workloads/register.ts');
  const name = 'bench-runner';
  await localClusterDown(name);
  const cluster = await localClusterUp({ nodes: 5, name });
  const inv = loadInventory(cluster.inventoryPath);
  const remote = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles });
  const nodes = remote.nodes.map((n) => n.name);
  const ctx = { remote, nodes };
  const db = new EtcdDb();
  try {
    await Promise.all(nodes.map((n) => db.teardown(ctx, n)));
    await Promise.all(nodes.map((n) => db.setup(ctx, n)));
    await db.awaitReady(ctx, 60_000);
    const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress(ctx, n)]));
    const invokeAt = new Map<unknown, number>();
    const latencies: number[] = [];
    let ok = 0;
    const sink = {
      append(ev: { type: string; process: unknown; time: number }) {
        if (ev.type === 'invoke') invokeAt.set(ev.process, ev.time);
        else {
          const t0 = invokeAt.get(ev.process);
          if (t0 !== undefined) latencies.push(ev.time - t0);
          if (ev.type === 'ok') ok++;
        }
      },
      close: async () => {},
    };
    const interp = new Interpreter({
      generator: clients(
        timeLimit(etcdSeconds * SECOND, registerWorkload({ nodes, concurrency: 10 }).generator()),
      ),
      concurrency: 10,
      nodes,
      client: new EtcdClient({ workload: 'register', urls }),
      sink,
      rng: new Rng(1),
      opTimeoutMs: 5000,
    });
    const t0 = process.hrtime.bigint();
    const stats = await interp.run();
    const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    latencies.sort((a, b) => a - b);
    const q = (p: number) =>
      Number(
        ((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) / 1e6).toFixed(2),
      );
    return {
      client: 'etcd v3 JSON gateway (register: read/write/cas)',
      nodes: 5,
      concurrency: 10,
      seconds: Number(elapsed.toFixed(2)),
      ops: stats.invoked,
      ok,
      opsPerSec: Math.round(stats.invoked / elapsed),
      p50Ms: q(0.5),
      p99Ms: q(0.99),
    };
  } finally {
    await Promise.all(nodes.map((n) => db.teardown(ctx, n).catch(() => {})));
    await remote.close();
    await localClusterDown(name);
  }
}

const results: Record<string, unknown> = { inProcess: await inProcess() };
if (!args.includes('--no-etcd')) results.etcd = await realEtcd();
results.peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
if (json) console.log(JSON.stringify(results));
else {
  for (const [name, r] of Object.entries(results)) {
    if (typeof r !== 'object' || r === null) {
      console.log(`${name}: ${r}`);
      continue;
    }
    console.log(`${name}:`);
    for (const [k, v] of Object.entries(r as Record<string, unknown>)) console.log(`  ${k.padEnd(16)} ${v}`);
  }
}
