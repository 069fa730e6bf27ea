/**
 * bench:ssh — 1,000 `true` commands spread over the nodes of a local cluster, through faultline's pooled
 * ssh2 connections (command runners, then an exec channel per command as the baseline of the same
 * minute) versus one OpenSSH client process per command (what a shell-out control layer pays). All modes
 * run with the same concurrency. Prints commands/s, the ratio, p50/p99/p999 latency, the CPU time per
 * command of the control process and of the nodes (their sshd and everything it started), and the load
 * average at the start and end of every series.
 *
 *   npm run bench:ssh [-- --nodes 5 --count 1000 --concurrency 10 --runs 3 --busy-core --json]
 *
 * `--runs N` runs the command-runner series N times (fresh connections each) and reports every p99;
 * `--busy-core` keeps one core busy with a bounded shell loop for the whole bench (started and stopped
 * here); `--runners-only` skips the baselines; `--compare-src DIR` runs each runner series also with the
 * control code of another checkout (DIR/src/core/control/ssh-remote.ts), alternately, for an A/B under
 * the same load.
 *
 * Target: pooled ≥ 10× the spawn rate, pooled p99 < 20 ms in every run. Needs root (it builds a local
 * cluster).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { connectRemote } from '../src/core/control/ssh-remote.ts';
import { localClusterUnavailableReason } from '../src/lib/clusters/host-tools.ts';
import { localClusterDown, localClusterUp, nodeFsSource } from '../src/lib/clusters/local.ts';
import { clusterDir } from '../src/lib/clusters/state-dir.ts';

const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5' },
    count: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '10' },
    runs: { type: 'string', default: '1' },
    'busy-core': { type: 'boolean', default: false },
    'runners-only': { type: 'boolean', default: false },
    'compare-src': { type: 'string' },
    'max-seconds': { type: 'string', default: '120' },
    json: { type: 'boolean', default: false },
    'cluster-name': { type: 'string', default: 'bench-ssh' },
  },
});
const nodes = Number(args.nodes);
const count = Number(args.count);
const concurrency = Number(args.concurrency);
const runs = Math.max(1, Number(args.runs));
const maxMs = Number(args['max-seconds']) * 1000;

type Connect = typeof connectRemote;

/** The 1-, 5- and 15-minute load averages, two decimals. */
const loads = (): number[] => loadavg().map((x) => Number(x.toFixed(2)));

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
  /** Load averages (1, 5, 15 min) as the series started and as it ended. */
  loadStart: number[];
  loadEnd: number[];
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Run `count` jobs with `concurrency` in flight, stopping early at the time cap. */
async function drive(job: (i: number) => Promise<void>, n: number, width: number): Promise<ModeResult> {
  const latencies: number[] = [];
  const loadStart = loads();
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
    loadStart,
    loadEnd: loads(),
  };
}

/**
 * CPU time (ms) of the nodes' sshd listeners and everything they reaped: per-connection sshd processes,
 * runners, shells and commands count once their connection has closed and they were waited for.
 */
function nodeCpuMs(cluster: string, nodeNames: readonly string[]): number {
  const roots = nodeNames.map((n) => ` ${nodeFsSource('root', cluster, n)} `);
  const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const cpuTicks = (pid: string): number => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  };
  let ticks = 0;
  for (const line of execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n')) {
    const pid = line.trim().split(/\s+/)[0] as string;
    if (/^\s*\d+ unshare /.test(line)) {
      // A node with its own PID namespace and root: sshd is the child of `unshare --fork`, and PID 1
      // there, so it reaps everything on the node.
      if (!roots.some((r) => line.includes(r))) continue;
      const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ');
      for (const k of kids) if (k) ticks += cpuTicks(k);
    } else if (/sshd -D -f /.test(line) && line.includes(`${clusterDir(cluster)}/nodes/`)) {
      ticks += cpuTicks(pid); // sshd started with its config in the cluster's directory
    }
  }
  return (ticks * 1000) / ticksPerSecond;
}

/** One pooled mode on fresh connections, with the node CPU it cost (read after the connections end). */
async function pooledMode(
  cluster: Awaited<ReturnType<typeof localClusterUp>>,
  opts: { commandRunners?: number },
  n: number,
  width: number,
  connect: Connect = connectRemote,
): Promise<ModeResult> {
  const before = nodeCpuMs(
    cluster.name,
    cluster.nodes.map((x) => x.name),
  );
  const remote = await connect(cluster.nodes, { knownHostsFiles: [cluster.knownHostsPath], ...opts });
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
  return {
    ...r,
    nodeCpuMsPerCommand: Number(
      (
        (nodeCpuMs(
          cluster.name,
          cluster.nodes.map((x) => x.name),
        ) -
          before) /
        r.commands
      ).toFixed(2),
    ),
  };
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

/** CPU seconds of one process so far (user + system), or 0 once it is gone. */
function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (
      (Number(f[11]) + Number(f[12])) / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }))
    );
  } catch {
    return 0;
  }
}

/**
 * One core kept busy beside the bench: a shell loop under `timeout`, so it ends by itself even if this
 * process is killed; `stop` ends it sooner and says how much of a core it got.
 */
function startBusyCore(boundSeconds: number): { stop: () => { coreShare: number } } {
  // A session of its own (detached), as another program on the host would be: with the kernel's
  // scheduler autogroups a loop in the bench's own session would share the control process's CPU share.
  const child: ChildProcess = spawn('timeout', [String(boundSeconds), 'sh', '-c', 'while :; do :; done'], {
    stdio: 'ignore',
    detached: true,
  });
  const t0 = performance.now();
  const loopPid = (): number | undefined => {
    try {
      const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
      return kids ? Number(kids.split(' ')[0]) : undefined;
    } catch {
      return undefined;
    }
  };
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.once('exit', kill);
  return {
    stop: () => {
      const pid = loopPid();
      const cpu = pid ? processCpuSeconds(pid) : 0;
      kill();
      return { coreShare: Number((cpu / ((performance.now() - t0) / 1000)).toFixed(2)) };
    },
  };
}

/**
 * What ssh2 and a node's sshd agree on (key exchange, cipher and MAC each way), read from one extra
 * connection's handshake, and whether ssh2's optional native crypto binding and cpu-features are built
 * here: without AES-NI (as cpu-features reports it) ssh2 would put chacha20-poly1305 first.
 */
async function negotiated(cluster: Awaited<ReturnType<typeof localClusterUp>>): Promise<string> {
  const { Client } = await import('ssh2');
  const require = createRequire(import.meta.url);
  let binding = false;
  let aes: boolean | undefined;
  try {
    binding = (require('ssh2/lib/protocol/crypto.js') as { bindingAvailable: boolean }).bindingAvailable;
  } catch {}
  try {
    aes = (require('cpu-features') as () => { flags: { aes?: boolean } })().flags.aes;
  } catch {}
  const node = cluster.nodes[0] as (typeof cluster.nodes)[number];
  const algs = await new Promise<string>((resolveAlgs) => {
    const c = new Client();
    c.on('handshake', (n) => {
      // An AEAD cipher (AES-GCM, chacha20-poly1305) carries its own MAC: ssh2 reports none.
      const mac = (m: string) => m || 'implicit';
      resolveAlgs(
        `kex ${n.kex}, cipher ${n.cs.cipher} / ${n.sc.cipher}, MAC ${mac(n.cs.mac)} / ${mac(n.sc.mac)}`,
      );
      c.end();
    });
    c.on('error', (e) => resolveAlgs(`handshake failed: ${e.message}`));
    c.connect({
      host: node.host,
      port: node.port,
      username: node.user,
      privateKey: readFileSync(cluster.identityFile),
      hostVerifier: () => true, // the bench's own cluster, built a moment ago; only the algorithms matter
    });
  });
  return `${algs}; ssh2 native crypto binding ${binding ? 'built' : 'absent'}, cpu-features ${aes === undefined ? 'absent' : aes ? 'built (AES-NI)' : 'built (no AES-NI)'}`;
}

/** connectRemote of another checkout (`--compare-src`), for runs alternating with this one's. */
async function connectOf(dir: string): Promise<Connect> {
  const mod = (await import(pathToFileURL(resolve(dir, 'src/core/control/ssh-remote.ts')).href)) as {
    connectRemote: Connect;
  };
  return mod.connectRemote;
}

async function main(): Promise<void> {
  const reason = localClusterUnavailableReason();
  if (reason) {
    process.stderr.write(`bench:ssh: ${reason}\n`);
    process.exitCode = 1;
    return;
  }
  const name = args['cluster-name'];
  const compare = args['compare-src'] ? await connectOf(args['compare-src']) : undefined;
  const series = runs * (compare ? 2 : 1) + (args['runners-only'] ? 0 : 4);
  const busy = args['busy-core'] ? startBusyCore(Math.ceil((series * maxMs) / 1000) + 120) : undefined;
  await localClusterDown(name);
  const cluster = await localClusterUp({ nodes, name });
  try {
    const algorithms = await negotiated(cluster);
    if (busy) await sleep(1000); // the loop is running and the load average starts to show it
    const pooledRuns: ModeResult[] = [];
    const compareRuns: ModeResult[] = [];
    for (let r = 0; r < runs; r++) {
      // Alternate which goes first, so neither always meets the warmer (or the busier) minute.
      if (compare && r % 2 === 1)
        compareRuns.push(await pooledMode(cluster, {}, count, concurrency, compare));
      pooledRuns.push(await pooledMode(cluster, {}, count, concurrency));
      if (compare && r % 2 === 0)
        compareRuns.push(await pooledMode(cluster, {}, count, concurrency, compare));
    }
    const sortedByP99 = [...pooledRuns].sort((a, b) => a.p99Ms - b.p99Ms);
    const medianRun = sortedByP99[Math.floor((sortedByP99.length - 1) / 2)] as ModeResult;
    let baselines:
      | { pooledExec: ModeResult; sequential: ModeResult; spawned: ModeResult; ratio: number }
      | undefined;
    if (!args['runners-only']) {
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
      baselines = {
        pooledExec,
        sequential,
        spawned,
        ratio: Number((medianRun.perSecond / spawned.perSecond).toFixed(1)),
      };
    }
    const busyCore = busy?.stop();
    const allUnder = pooledRuns.every((x) => x.p99Ms < 20);
    const result = {
      bench: 'ssh',
      loadAverage: loads()[0],
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      nodes,
      concurrency,
      busyCore: busyCore ?? null,
      algorithms,
      pooled: medianRun,
      pooledRuns,
      ...(compare && { compareSrc: args['compare-src'], compareRuns }),
      ...(baselines && {
        pooledExecChannels: baselines.pooledExec,
        pooledSequential: baselines.sequential,
        spawnPerCommand: baselines.spawned,
        ratio: baselines.ratio,
        runnersVsExecChannels: {
          throughput: Number((medianRun.perSecond / baselines.pooledExec.perSecond).toFixed(2)),
          p99: Number((medianRun.p99Ms / baselines.pooledExec.p99Ms).toFixed(2)),
          cpuPerCommand: Number(
            (
              (medianRun.controlCpuMsPerCommand + (medianRun.nodeCpuMsPerCommand ?? 0)) /
              (baselines.pooledExec.controlCpuMsPerCommand + (baselines.pooledExec.nodeCpuMsPerCommand ?? 0))
            ).toFixed(2),
          ),
        },
      }),
      targets: { ratio: '>= 10', pooledP99Ms: '< 20 in every run' },
      met: {
        ...(baselines && { ratio: baselines.ratio >= 10 }),
        pooledP99: allUnder,
      },
    };
    if (args.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      const row = (label: string, r: ModeResult) =>
        `${label.padEnd(34)} ${String(r.commands).padStart(5)} cmds  ${r.perSecond.toFixed(1).padStart(8)} cmd/s  p50 ${r.p50Ms.toFixed(1).padStart(6)} ms  p99 ${r.p99Ms.toFixed(1).padStart(6)} ms  p999 ${r.p999Ms.toFixed(1).padStart(6)} ms  cpu/cmd control ${r.controlCpuMsPerCommand.toFixed(2)} ms${r.nodeCpuMsPerCommand === undefined ? '' : `, nodes ${r.nodeCpuMsPerCommand.toFixed(2)} ms`}  load ${r.loadStart[0]} → ${r.loadEnd[0]}`;
      const lines = [
        `bench:ssh — ${nodes} local nodes, \`true\`, concurrency ${concurrency}${busy ? ', one core kept busy by a shell loop' : ''}`,
      ];
      pooledRuns.forEach((r, i) => {
        lines.push(row(`faultline pooled (command runners)${runs > 1 ? ` #${i + 1}` : ''}`, r));
        const c = compareRuns[i];
        if (c) lines.push(row(`  --compare-src runners #${i + 1}`, c));
      });
      if (baselines) {
        lines.push(
          row('pooled, exec channel per command', baselines.pooledExec),
          row('faultline pooled, one at a time', baselines.sequential),
          row('OpenSSH client per command', baselines.spawned),
          `runners vs exec channels (same minute): throughput ×${result.runnersVsExecChannels?.throughput}, p99 ×${result.runnersVsExecChannels?.p99}, CPU per command (control + nodes) ×${result.runnersVsExecChannels?.cpuPerCommand}`,
          `ratio pooled/spawn: ${baselines.ratio}×  (target ≥ 10×: ${baselines.ratio >= 10 ? 'met' : 'NOT met'})`,
        );
      }
      if (busyCore) lines.push(`busy core: the loop had ${busyCore.coreShare} of a core`);
      lines.push(`negotiated: ${algorithms}`);
      lines.push(
        `pooled p99 (runners): ${pooledRuns.map((r) => r.p99Ms.toFixed(1)).join(', ')} ms${compare ? `; --compare-src: ${compareRuns.map((r) => r.p99Ms.toFixed(1)).join(', ')} ms` : ''}  (target < 20 ms in every run: ${allUnder ? 'met' : 'NOT met'})`,
        `peak RSS ${result.peakRssMb} MB; load average now ${loads().join(' ')} (1/5/15 min)`,
        '',
      );
      process.stdout.write(lines.join('\n'));
    }
  } finally {
    busy?.stop();
    await localClusterDown(name);
  }
}

await main();
