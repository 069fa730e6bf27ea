/**
 * bench:proxy — what faultline's TCP proxy costs on the clients' path, on loopback only: the latency it
 * adds per request (p50 / p99, proxied minus direct) at 1k and 10k requests/s (open loop, 64-byte
 * requests echoed back, 20 connections), and its throughput ceiling: the proxy's own CPU time per request
 * under a closed loop (64 connections, each sending its next request when the reply arrives), turned into
 * the request rate that would take one whole core. The closed-loop rate itself is bounded by the load
 * process as much as by the proxy, so it is printed but is not the ceiling. The proxy runs alone in this process with no fault
 * in force; the echo server and the clients run in a child process (bench/proxy-load.mjs), so both the
 * direct and the proxied figures carry the same load-side cost. In a real run the proxy shares the
 * control process with the clients, so these figures are a floor.
 *
 * BENCH_SECONDS (default 3) per measurement; `--json` prints one JSON object.
 */

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ProxyHub } from '../nemeses/proxy/hub.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const json = process.argv.includes('--json');

interface LoadResult {
  lat: number[];
  sent: number;
  done: number;
  elapsedMs: number;
}

function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
}

const ms = (us: number) => Math.round(us) / 1000;

async function main(): Promise<void> {
  const child = fork(fileURLToPath(new URL('./proxy-load.mjs', import.meta.url)), [], { stdio: 'inherit' });
  const messages: Array<(m: Record<string, unknown>) => void> = [];
  child.on('message', (m) => messages.shift()?.(m as Record<string, unknown>));
  const next = () => new Promise<Record<string, unknown>>((r) => messages.push(r));
  const echoPort = (await next()).echoPort as number;
  const hub = await ProxyHub.start({ echo: `127.0.0.1:${echoPort}` });
  const proxyPort = hub.link('echo').listen.port;
  /** The proxy's own CPU per request (this process does nothing else), in µs. */
  let cpuPerRequestUs = Number.NaN;
  const load = async (o: Record<string, unknown>): Promise<LoadResult> => {
    const reply = next();
    const cpu0 = process.cpuUsage();
    child.send({ durationMs: SECONDS * 1000, ...o });
    const r = (await reply).result as LoadResult;
    const cpu = process.cpuUsage(cpu0);
    if (o.port === proxyPort) cpuPerRequestUs = (cpu.user + cpu.system) / Math.max(1, r.done);
    return r;
  };
  const out: Record<string, unknown> = {};
  try {
    for (const rate of [1000, 10_000]) {
      const direct = await load({ port: echoPort, mode: 'rate', rate, conns: 20 });
      const proxied = await load({ port: proxyPort, mode: 'rate', rate, conns: 20 });
      const row = (r: LoadResult) => ({
        p50ms: ms(quantile(r.lat, 0.5)),
        p99ms: ms(quantile(r.lat, 0.99)),
        achievedPerS: Math.round((r.done / r.elapsedMs) * 1000),
        unanswered: r.sent - r.done,
      });
      const d = row(direct);
      const p = row(proxied);
      out[`${rate}/s`] = {
        direct: d,
        proxied: p,
        proxyCpuPerRequestUs: Math.round(cpuPerRequestUs * 10) / 10,
        addedP50ms: Math.round((p.p50ms - d.p50ms) * 1000) / 1000,
        addedP99ms: Math.round((p.p99ms - d.p99ms) * 1000) / 1000,
      };
    }
    const ceiling = async (port: number) => {
      const r = await load({ port, mode: 'closed', conns: 64 });
      return {
        requestsPerS: Math.round((r.done / r.elapsedMs) * 1000),
        p50ms: ms(quantile(r.lat, 0.5)),
        ...(port === proxyPort && {
          proxyCpuPerRequestUs: Math.round(cpuPerRequestUs * 10) / 10,
          // One core spent entirely on the proxy: the rate at which it becomes the bottleneck.
          proxyCeilingPerCore: Math.round(1e6 / cpuPerRequestUs),
        }),
      };
    };
    out.ceiling = { direct: await ceiling(echoPort), proxied: await ceiling(proxyPort) };
    out.seconds = SECONDS;
    out.cores = (await import('node:os')).availableParallelism();
    out.loadavg = (await import('node:os')).loadavg().map((x) => Math.round(x * 100) / 100);
  } finally {
    await hub.close();
    child.send('exit');
  }
  if (json) {
    console.log(JSON.stringify(out));
    return;
  }
  for (const rate of ['1000/s', '10000/s']) {
    const r = out[rate] as {
      direct: { p50ms: number; p99ms: number; achievedPerS: number };
      proxied: { p50ms: number; p99ms: number; achievedPerS: number };
      addedP50ms: number;
      addedP99ms: number;
      proxyCpuPerRequestUs: number;
    };
    console.log(
      `${rate.padEnd(8)} direct p50 ${r.direct.p50ms} ms p99 ${r.direct.p99ms} ms (${r.direct.achievedPerS}/s) | proxied p50 ${r.proxied.p50ms} ms p99 ${r.proxied.p99ms} ms (${r.proxied.achievedPerS}/s) | added p50 ${r.addedP50ms} ms, p99 ${r.addedP99ms} ms | proxy CPU ${r.proxyCpuPerRequestUs} µs/request`,
    );
  }
  const c = out.ceiling as {
    direct: { requestsPerS: number; p50ms: number };
    proxied: {
      requestsPerS: number;
      p50ms: number;
      proxyCpuPerRequestUs: number;
      proxyCeilingPerCore: number;
    };
  };
  console.log(
    `closed loop, 64 connections: direct ${c.direct.requestsPerS} req/s (p50 ${c.direct.p50ms} ms) | proxied ${c.proxied.requestsPerS} req/s (p50 ${c.proxied.p50ms} ms), proxy CPU ${c.proxied.proxyCpuPerRequestUs} µs/request`,
  );
  console.log(
    `proxy ceiling ≈ ${c.proxied.proxyCeilingPerCore} req/s per core it has to itself (1 s of CPU / its CPU per request under the closed loop)`,
  );
  console.log(`${SECONDS}s per measurement, ${String(out.cores)} cores, load average ${String(out.loadavg)}`);
}

await main();
