/**
 * bench:runner — the interpreter's own throughput and per-op overhead: an in-process no-op client,
 * 100 processes, 10 s, history streamed to disk (target ≥ 50k ops/s)..
 *
 * Flags: --seconds N (default 10), --concurrency N (default 100), --json.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NoopClient } from '../src/client/noop.ts';
import { clients, Rng, repeat, SECOND, timeLimit } from '../src/generator/index.ts';
import { openHistorySink } from '../src/run/history-sink.ts';
import { Interpreter } from '../src/run/interpreter.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const seconds = flag('seconds', 10);
const concurrency = flag('concurrency', 100);
const json = args.includes('--json');

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

const results: Record<string, unknown> = { inProcess: await inProcess() };
if (json) console.log(JSON.stringify(results));
else {
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name}:`);
    for (const [k, v] of Object.entries(r as Record<string, unknown>)) console.log(`  ${k.padEnd(16)} ${v}`);
  }
}
