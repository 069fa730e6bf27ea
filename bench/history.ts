/**
 * `npm run bench:history [-- --events N] [--sync-every N] [--buffered] [--json]`
 *
 * Writes N history events (default 1M) through HistoryWriter with batched fsync, as a recorder would
 * (appending in bursts and yielding to the event loop), then streams them back with the JSONL reader.
 * Prints events/s for both and the process's peak RSS; then converts the file to Jepsen EDN and
 * times the streaming EDN reader on it. Events are written to the kernel as they are appended (the
 * recorder's write-before-ack); `--buffered` writes them with each batch instead, for comparison. Targets (issue 2): ≥ 500k events/s written,
 * ≥ 1M events/s read, peak RSS < 200 MB whatever N.
 */
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HistoryEvent } from '../src/core/history/event.ts';
import { eventToEdn } from '../src/core/history/jepsen.ts';
import { readEventBatches } from '../src/core/history/read.ts';
import { HistoryWriter } from '../src/core/history/writer.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i === -1) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} needs a positive number`);
  return v;
}

const events = arg('--events', 1_000_000);
const syncEvery = arg('--sync-every', 1000);
const syncIntervalMs = arg('--sync-interval-ms', 100);
const json = process.argv.includes('--json');
const writeThrough = !process.argv.includes('--buffered');
const withEdn = !process.argv.includes('--no-edn');
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-history-'));
const file = join(dir, 'history.jsonl');
const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
const fs = ['read', 'write', 'cas'];

try {
  // Write: 32 client processes, each op an invoke then its completion, as a register workload records.
  let fsyncs = 0;
  const writer = await HistoryWriter.open(file, {
    syncEvery,
    syncIntervalMs,
    writeThrough,
    onSynced: () => fsyncs++,
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < events; ) {
    const burstEnd = Math.min(events, i + 1000);
    for (; i < burstEnd; i++) {
      const op = i >> 1;
      const f = fs[op % 3]!;
      const ev: Omit<HistoryEvent, 'index'> = {
        type: i % 2 === 0 ? 'invoke' : op % 7 === 0 ? 'fail' : 'ok',
        f,
        value: f === 'cas' ? [op % 5, (op + 1) % 5] : f === 'write' ? op % 100 : i % 2 ? op % 100 : null,
        process: op % 32,
        time: i * 1237,
        node: nodes[op % 5]!,
        key: `k${op % 10}`,
        faultEpoch: op % 50 < 10 ? ['partition-1'] : null,
      };
      writer.record(ev);
    }
    // Yield to the event loop as a recorder does between client completions; wait if the disk lags.
    if (writer.needsDrain) await writer.drain();
    else await new Promise((r) => setImmediate(r));
  }
  await writer.close();
  const writeMs = performance.now() - t0;
  const writeCpu = process.cpuUsage(cpu0);
  const bytes = statSync(file).size;
  const rssAfterWrite = peakRssMb();

  // Read: the streaming reader, batch by batch, validating every event.
  const cpu1 = process.cpuUsage();
  const t1 = performance.now();
  let read = 0;
  for await (const batch of readEventBatches(file, { format: 'jsonl' })) read += batch.length;
  const readMs = performance.now() - t1;
  const readCpu = process.cpuUsage(cpu1);
  const cpuSec = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
  if (read !== events) throw new Error(`read ${read} events, wrote ${events}`);

  // EDN: the same history as Jepsen op maps, streamed back through the EDN reader (catches
  // regressions like a per-string scan to the end of the file).
  let ednBytes = 0;
  let ednMs = Number.NaN;
  let ednCpu: NodeJS.CpuUsage = { user: Number.NaN, system: 0 };
  if (withEdn) {
    const ednFile = join(dir, 'history.edn');
    const out = createWriteStream(ednFile);
    for await (const batch of readEventBatches(file, { format: 'jsonl' })) {
      let chunk = '';
      for (const ev of batch) chunk += `${eventToEdn(ev)}\n`;
      if (!out.write(chunk)) await once(out, 'drain');
    }
    await new Promise<void>((r) => out.end(r));
    rmSync(file); // keep the disk footprint to one copy on big runs
    ednBytes = statSync(ednFile).size;
    const cpu2 = process.cpuUsage();
    const t2 = performance.now();
    let ednRead = 0;
    for await (const batch of readEventBatches(ednFile, { format: 'edn' })) ednRead += batch.length;
    ednMs = performance.now() - t2;
    ednCpu = process.cpuUsage(cpu2);
    if (ednRead !== events) throw new Error(`read ${ednRead} EDN events, wrote ${events}`);
  }

  const figures = {
    events,
    bytes,
    syncEvery,
    syncIntervalMs,
    fsyncs,
    writeEventsPerSec: Math.round(events / (writeMs / 1000)),
    readEventsPerSec: Math.round(events / (readMs / 1000)),
    writeMs: Math.round(writeMs),
    readMs: Math.round(readMs),
    // Per CPU-second of this process: what the code costs, apart from disk waits and a busy machine.
    writeEventsPerCpuSec: Math.round(events / cpuSec(writeCpu)),
    readEventsPerCpuSec: Math.round(events / cpuSec(readCpu)),
    ednBytes,
    ednReadEventsPerSec: withEdn ? Math.round(events / (ednMs / 1000)) : null,
    ednReadMBPerSec: withEdn ? Number((ednBytes / 1e6 / (ednMs / 1000)).toFixed(1)) : null,
    ednReadEventsPerCpuSec: withEdn ? Math.round(events / cpuSec(ednCpu)) : null,
    loadAverage1m: Number(loadavg()[0]!.toFixed(2)),
    cpus: availableParallelism(),
    peakRssMbAfterWrite: Math.round(rssAfterWrite),
    peakRssMb: Math.round(peakRssMb()),
    targets: { writeEventsPerSec: 500_000, readEventsPerSec: 1_000_000, peakRssMb: 200 },
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } else {
    const k = (n: number | null) => (n === null ? 'n/a' : `${(n / 1000).toFixed(0)}k`);
    process.stdout.write(
      `${[
        `history bench: ${events} events, ${(bytes / 1e6).toFixed(1)} MB JSONL`,
        `  write  ${k(figures.writeEventsPerSec)} events/s  (${figures.writeMs} ms, ${fsyncs} fsyncs, batch ${syncEvery} / ${syncIntervalMs} ms, ${writeThrough ? 'written per event' : 'buffered'}; target ≥ 500k)`,
        `  read   ${k(figures.readEventsPerSec)} events/s  (${figures.readMs} ms, streaming, validated; target ≥ 1000k)`,
        withEdn
          ? `  EDN    ${k(figures.ednReadEventsPerSec)} events/s, ${figures.ednReadMBPerSec} MB/s  (${(ednBytes / 1e6).toFixed(1)} MB of Jepsen op maps, streamed)`
          : '  EDN    skipped (--no-edn)',
        `  per CPU-second: write ${k(figures.writeEventsPerCpuSec)}, read ${k(figures.readEventsPerCpuSec)}, EDN ${k(figures.ednReadEventsPerCpuSec)} (load average ${figures.loadAverage1m} on ${figures.cpus} CPUs)`,
        `  peak RSS ${figures.peakRssMb} MB (after write ${figures.peakRssMbAfterWrite} MB; target < 200)`,
      ].join('\n')}\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
