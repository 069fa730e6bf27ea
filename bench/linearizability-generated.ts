/**
 * Generated cas-register histories for bench:linearizability, each case in its own child process so
 * its peak RSS is its own:
 *
 * - sized cases (`--sizes 1e5,1e6,1e7`): one register, 10 processes, 10% info writes, values 0..4
 *   (Jepsen's `(rand-int 5)`), written once to a JSONL file (and a Porcupine etcd log with `--etcd`)
 *   in the temporary directory; the child streams the file, pairs the events and checks them;
 * - hard cases: 10k ops, 20 processes, 10% info writes, unique values, valid and with one injected
 *   stale read, generated in memory; only the check is timed. Budget 10 s: `unknown` means not decided.
 *
 * Each case prints wall time, the process's CPU time (all threads: on a shared machine it is steadier
 * than wall time) and peak RSS.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPrepared } from '../checkers/linearizability/check.ts';
import {
  generateCasRegisterEvents,
  generateCasRegisterHistory,
} from '../checkers/linearizability/generate.ts';
import type { AnyModel } from '../checkers/linearizability/model.ts';
import { createModel } from '../checkers/linearizability/models/index.ts';
import {
  HistoryPreparer,
  type PreparedHistory,
  prepareHistory,
} from '../checkers/linearizability/prepare.ts';
import type { HistoryEvent } from '../src/core/history/event.ts';
import { Pairer, pairEvents } from '../src/core/history/pair.ts';
import { readEventBatches } from '../src/core/history/read.ts';

export interface GeneratedCase {
  name: string;
  ops: number;
  format: 'jsonl' | 'porcupine-etcd' | 'memory';
  /** Reading and pairing the file (0 for in-memory cases). */
  readSeconds: number;
  checkSeconds: number;
  /** CPU time (all threads) of reading and pairing, and of the check. */
  readCpuSeconds: number;
  checkCpuSeconds: number;
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMB: number;
  valid: unknown;
  cacheEntries: number;
}

const SIZED = { processes: 10, infoRate: 0.1, values: 5, seed: 11 };
const HARD = { ops: 10_000, processes: 20, infoRate: 0.1, values: 0, seed: 7 };
export const HARD_BUDGET_MS = 10_000;

/** One event as a line of Porcupine's etcd log format (what the Go harness reads). */
export function etcdLine(ev: HistoryEvent): string {
  const v = ev.value;
  const text =
    v === null
      ? 'nil'
      : Array.isArray(v)
        ? `[${v.map((x) => (x === null ? 'nil' : x)).join(' ')}]`
        : String(v);
  return `INFO  jepsen.util - ${ev.process}\t:${ev.type}\t:${ev.f}\t${text}\n`;
}

/** Write the sized history once (kept in the temporary directory for later runs). */
export async function historyFile(ops: number, format: 'jsonl' | 'porcupine-etcd'): Promise<string> {
  const file = join(
    tmpdir(),
    `faultline-bench-lin-${ops}-p${SIZED.processes}-i${SIZED.infoRate}-v${SIZED.values}-s${SIZED.seed}.${format === 'jsonl' ? 'jsonl' : 'log'}`,
  );
  if (existsSync(file)) return file;
  const partial = `${file}.${process.pid}.tmp`;
  const out = createWriteStream(partial);
  for (const batch of generateCasRegisterEvents({ ops, ...SIZED })) {
    let text = '';
    for (const ev of batch) text += format === 'jsonl' ? `${JSON.stringify(ev)}\n` : etcdLine(ev);
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  renameSync(partial, file);
  return file;
}

/**
 * A history file read and prepared as `faultline check` does: streamed, events paired and each op
 * encoded as it closes; neither events nor Operation objects are kept.
 */
export async function streamPrepared(
  file: string,
  format: 'jsonl' | 'porcupine-etcd',
  model: AnyModel,
): Promise<PreparedHistory> {
  const pairer = new Pairer(false);
  const preparer = new HistoryPreparer(model);
  pairer.onClosed = (op) => preparer.add(op);
  for await (const batch of readEventBatches(file, { format, parallel: true }))
    for (const ev of batch) pairer.push(ev);
  pairer.finish();
  return preparer.finish();
}

async function runCase(kind: string, ops: number, format: string): Promise<GeneratedCase> {
  const model = createModel('cas-register');
  if (!model) throw new Error('cas-register');
  let cpu0 = process.cpuUsage();
  let prepared: PreparedHistory;
  let name: string;
  let readSeconds = 0;
  let timeoutMs = 0;
  if (kind === 'sized') {
    const file = await historyFile(ops, format as 'jsonl' | 'porcupine-etcd');
    cpu0 = process.cpuUsage();
    const tRead = performance.now();
    prepared = await streamPrepared(file, format as 'jsonl' | 'porcupine-etcd', model);
    readSeconds = (performance.now() - tRead) / 1000;
    name = `${format} ${ops}`;
  } else {
    prepared = prepareHistory(
      model,
      pairEvents(generateCasRegisterHistory({ ...HARD, staleRead: kind === 'stale' })).ops,
    );
    name = `hard 10k ${kind}`;
    timeoutMs = HARD_BUDGET_MS;
    cpu0 = process.cpuUsage();
  }
  const cpuRead = process.cpuUsage(cpu0);
  const tCheck = performance.now();
  const outcome = await checkPrepared(model, prepared, { timeoutMs, workers: 0 });
  const checkSeconds = (performance.now() - tCheck) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    name,
    ops,
    format: kind === 'sized' ? (format as 'jsonl' | 'porcupine-etcd') : 'memory',
    readSeconds,
    checkSeconds,
    readCpuSeconds: (cpuRead.user + cpuRead.system) / 1e6,
    checkCpuSeconds: (cpu.user + cpu.system - cpuRead.user - cpuRead.system) / 1e6,
    wallSeconds: readSeconds + checkSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    valid: outcome.valid,
    cacheEntries: outcome.partitions.reduce((n, p) => n + p.cacheSize, 0),
  };
}

/** Prepare the history files in this process (not timed), then run each case in a child. */
export async function runGeneratedCases(
  sizes: number[],
  etcd: boolean,
  hard: boolean,
): Promise<GeneratedCase[]> {
  const cases: [string, number, string][] = [];
  if (hard) cases.push(['valid', HARD.ops, 'memory'], ['stale', HARD.ops, 'memory']);
  for (const n of sizes) {
    cases.push(['sized', n, 'jsonl']);
    if (etcd) cases.push(['sized', n, 'porcupine-etcd']);
  }
  for (const [kind, n, format] of cases) if (kind === 'sized') await historyFile(n, format as 'jsonl');
  const self = fileURLToPath(import.meta.url);
  const results: GeneratedCase[] = [];
  for (const [kind, n, format] of cases) {
    const out = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--max-old-space-size=8192', self, '--case', kind, String(n), format],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
    );
    if (out.status !== 0) throw new Error(`case ${kind} ${n} ${format} failed: ${out.stderr}`);
    results.push(JSON.parse(out.stdout) as GeneratedCase);
  }
  return results;
}

const i = process.argv.indexOf('--case');
if (i >= 0 && process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind, n, format] = process.argv.slice(i + 1);
  process.stdout.write(JSON.stringify(await runCase(kind as string, Number(n), format as string)));
}
