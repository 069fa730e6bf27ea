/**
 * bench:ssh — 1,000 `true` commands spread over the nodes of a local cluster, through faultline's pooled
 * ssh2 connections (command runners, then an exec channel per command as the baseline of the same
 * minute) versus one OpenSSH client process per command (what a shell-out control layer pays). All modes
 * run with the same concurrency. Prints commands/s, the ratio, p50/p99/p999 latency, and the CPU time per
 * command of the control process and of the nodes (their sshd and everything it started).
 *
 *   npm run bench:ssh [-- --nodes 5 --count 1000 --concurrency 10 --cluster-name bench-ssh --json]
 *
 * Target: pooled ≥ 10× the spawn rate, pooled p99 < 20 ms. Needs root (it builds a local cluster).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectRemote } from '../src/core/control/ssh-remote.ts';
import { localClusterUnavailableReason } from '../src/lib/clusters/host-tools.ts';
import { localClusterDown, localClusterUp } from '../src/lib/clusters/local.ts';
import { clusterDir } from '../src/lib/clusters/state-dir.ts';

const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5' },
    count: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '10' },
    'max-seconds': { type: 'string', default: '120' },
    json: { type: 'boolean', default: false },
    'cluster-name': { type: 'string', default: 'bench-ssh' },
  },
});
const nodes = Number(args.nodes);
const count = Number(args.count);
const concurrency = Number(args.concurrency);
const maxMs = Number(args['max-seconds']) * 1000;

interface ModeResult {
  commands: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** CPU time of this (control) process while the mode ran: user + system, all threads. */
  cpuSeconds: number;
  /** Control CPU ms per command. */
  controlCpuMsPerCommand: number;
  /** Node CPU ms per command (sshd and its children on every node), when measured. */
  nodeCpuMsPerCommand?: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Run `count` jobs with `concurrency` in flight, stopping early at the time cap. */
async function drive(job: (i: number) => Promise<void>, n: number, width: number): Promise<ModeResult> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  const worker = async () => {
    while (next < n && performance.now() - start < maxMs) {
      const i = next++;
      const t0 = performance.now();
      await job(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return {
    commands: latencies.length,
    seconds: Number(seconds.toFixed(3)),
    perSecond: Number((latencies.length / seconds).toFixed(1)),
    p50Ms: Number(quantile(latencies, 0.5).toFixed(2)),
    p99Ms: Number(quantile(latencies, 0.99).toFixed(2)),
    p999Ms: Number(quantile(latencies, 0.999).toFixed(2)),
    cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(3)),
    controlCpuMsPerCommand: Number(
      ((cpu.user + cpu.system) / 1e3 / Math.max(1, latencies.length)).toFixed(2),
    ),
  };
}

/**
 * CPU time (ms) of the nodes' sshd listeners and everything they reaped: per-connection sshd processes,
 * runners, shells and commands count once their connection has closed and they were waited for.
 */
function nodeCpuMs(cluster: string): number {
  const marker = `${clusterDir(cluster)}/nodes/`;
  const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  let ticks = 0;
  for (const line of execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n')) {
    if (!line.includes(marker) || !/sshd -D -f /.test(line)) continue;
    const stat = readFileSync(`/proc/${line.trim().split(/\s+/)[0]}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return (ticks * 1000) / ticksPerSecond;
}

/** One pooled mode on fresh connections, with the node CPU it cost (read after the connections end). */
async function pooledMode(
  cluster: Awaited<ReturnType<typeof localClusterUp>>,
  opts: { commandRunners?: number },
  n: number,
  width: number,
): Promise<ModeResult> {
  const before = nodeCpuMs(cluster.name);
  const remote = await connectRemote(cluster.nodes, { knownHostsFiles: [cluster.knownHostsPath], ...opts });
  const names = cluster.nodes.map((x) => x.name);
  // Warm up: first commands on each connection pay for process caches on the node.
  await Promise.all(names.map((x) => remote.exec(x, 'true')));
  const r = await drive(
    async (i) => {
      await remote.exec(names[i % names.length] as string, 'true');
    },
    n,
    width,
  );
  await remote.close();
  await sleep(2500); // connections end, their sshd processes exit and are reaped
  return { ...r, nodeCpuMsPerCommand: Number(((nodeCpuMs(cluster.name) - before) / r.commands).toFixed(2)) };
}

function sshOnce(host: string, identity: string, knownHosts: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'ssh',
      [
        '-i',
        identity,
        '-o',
        `UserKnownHostsFile=${knownHosts}`,
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        'BatchMode=yes',
        '-o',
        'ControlMaster=no',
        '-o',
        'ControlPath=none',
        `root@${host}`,
        'true',
      ],
      { stdio: 'ignore' },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ssh ${host} exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const reason = localClusterUnavailableReason();
  if (reason) {
    process.stderr.write(`bench:ssh: ${reason}\n`);
    process.exitCode = 1;
    return;
  }
  const name = args['cluster-name'];
  await localClusterDown(name);
  const cluster = await localClusterUp({ nodes, name });
  try {
    const pooled = await pooledMode(cluster, {}, count, concurrency);
    // The same minute's baseline: an exec channel (a new session on the node) per command.
    const pooledExec = await pooledMode(cluster, { commandRunners: 0 }, count, concurrency);
    const sequential = await pooledMode(cluster, {}, Math.min(count, 300), 1);
    const spawned = await drive(
      (i) => {
        const n = cluster.nodes[i % cluster.nodes.length];
        if (!n) throw new Error('no node');
        return sshOnce(n.host, cluster.identityFile, cluster.knownHostsPath);
      },
      count,
      concurrency,
    );
    const ratio = Number((pooled.perSecond / spawned.perSecond).toFixed(1));
    const result = {
      bench: 'ssh',
      loadAverage: Number((loadavg()[0] ?? 0).toFixed(2)),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      nodes,
      concurrency,
      pooled,
      pooledExecChannels: pooledExec,
      pooledSequential: sequential,
      spawnPerCommand: spawned,
      ratio,
      runnersVsExecChannels: {
        throughput: Number((pooled.perSecond / pooledExec.perSecond).toFixed(2)),
        p99: Number((pooled.p99Ms / pooledExec.p99Ms).toFixed(2)),
        cpuPerCommand: Number(
          (
            (pooled.controlCpuMsPerCommand + (pooled.nodeCpuMsPerCommand ?? 0)) /
            (pooledExec.controlCpuMsPerCommand + (pooledExec.nodeCpuMsPerCommand ?? 0))
          ).toFixed(2),
        ),
      },
      targets: { ratio: '>= 10', pooledP99Ms: '< 20' },
      met: { ratio: ratio >= 10, pooledP99: pooled.p99Ms < 20 },
    };
    if (args.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      const row = (label: string, r: ModeResult) =>
        `${label.padEnd(34)} ${String(r.commands).padStart(5)} cmds  ${r.perSecond.toFixed(1).padStart(8)} cmd/s  p50 ${r.p50Ms.toFixed(1).padStart(6)} ms  p99 ${r.p99Ms.toFixed(1).padStart(6)} ms  p999 ${r.p999Ms.toFixed(1).padStart(6)} ms  cpu/cmd control ${r.controlCpuMsPerCommand.toFixed(2)} ms${r.nodeCpuMsPerCommand === undefined ? '' : `, nodes ${r.nodeCpuMsPerCommand.toFixed(2)} ms`}`;
      process.stdout.write(
        [
          `bench:ssh — ${nodes} local nodes, \`true\`, concurrency ${concurrency}`,
          row('faultline pooled (command runners)', pooled),
          row('pooled, exec channel per command', pooledExec),
          row('faultline pooled, one at a time', sequential),
          row('OpenSSH client per command', spawned),
          `runners vs exec channels (same minute): throughput ×${result.runnersVsExecChannels.throughput}, p99 ×${result.runnersVsExecChannels.p99}, CPU per command (control + nodes) ×${result.runnersVsExecChannels.cpuPerCommand}`,
          `peak RSS ${result.peakRssMb} MB; 1-minute load average ${result.loadAverage}`,
          `ratio pooled/spawn: ${ratio}×  (target ≥ 10×: ${result.met.ratio ? 'met' : 'NOT met'}; pooled p99 < 20 ms: ${result.met.pooledP99 ? 'met' : 'NOT met'})`,
          '',
        ].join('\n'),
      );
    }
  } finally {
    await localClusterDown(name);
  }
}

await main();
