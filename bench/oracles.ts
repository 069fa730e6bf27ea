/**
 * `npm run bench:oracles [-- --ops N] [--only a,b] [--json]`
 *
 * Runs every catalogue checker on a generated history of N ops (default 1M) and of N/4, each in its
 * own child process so peak RSS is the checker's own. Prints seconds for the check alone (generation
 * excluded), the 1M/250k time ratio (≈4 means linear) and peak RSS. Target (issue 5): ≤ 2 s per 1M ops.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findChecker } from '../checkers/registry.ts';
import { GENERATORS } from './oracles-gen.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

interface One {
  checker: string;
  ops: number;
  seconds: number;
  /** User + system CPU of the whole process during the check (GC threads included). */
  cpuSeconds: number;
  peakRssMb: number;
  valid: unknown;
  shape: string;
}

async function runOne(name: string, n: number): Promise<One> {
  const gen = GENERATORS[name];
  const entry = findChecker(name.replace('+svg', ''));
  if (!gen || !entry) throw new Error(`no generator or checker for ${name}`);
  const { checker } = await entry.load();
  const { ops, options, shape } = gen(n);
  const outDir = name.endsWith('+svg') ? mkdtempSync(join(tmpdir(), 'bench-oracles-')) : undefined;
  try {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await (checker as { check(o: unknown, p: unknown, c: unknown): unknown }).check(ops, options, {
      outDir,
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(c0);
    return {
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      checker: name,
      ops: ops.length,
      seconds,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      valid: (r as { valid: unknown }).valid,
      shape,
    };
  } finally {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--child')) {
  const r = await runOne(arg('--child') as string, Number(arg('--ops')));
  process.stdout.write(`${JSON.stringify(r)}\n`);
} else {
  const n = Number(arg('--ops') ?? 1_000_000);
  const only = arg('--only')?.split(',');
  const names = Object.keys(GENERATORS).filter((k) => !only || only.includes(k));
  const self = fileURLToPath(import.meta.url);
  const rows: { checker: string; shape: string; valid: unknown; small: One; big: One; ratio: number }[] = [];
  for (const name of names) {
    const child = (ops: number) =>
      JSON.parse(
        execFileSync(
          process.execPath,
          ['--import', 'tsx', '--max-old-space-size=8192', self, '--child', name, '--ops', String(ops)],
          {
            encoding: 'utf8',
          },
        ),
      ) as One;
    const small = child(Math.floor(n / 4));
    const big = child(n);
    rows.push({
      checker: name,
      shape: big.shape,
      valid: big.valid,
      small,
      big,
      ratio: big.seconds / Math.max(small.seconds, 1e-6),
    });
    if (!process.argv.includes('--json')) {
      process.stdout.write(
        `${name.padEnd(24)} ${big.seconds.toFixed(3).padStart(7)} s (cpu ${big.cpuSeconds.toFixed(3)} s) / ${(big.ops / 1e6).toFixed(2)}M ops  ` +
          `(${(small.ops / 1e3).toFixed(0)}k: ${small.seconds.toFixed(3)} s, ×${(big.seconds / Math.max(small.seconds, 1e-6)).toFixed(1)})  ` +
          `peak RSS ${big.peakRssMb.toFixed(0)} MB  valid=${String(big.valid)}  [${big.shape}]\n`,
      );
    }
  }
  const worst = rows.reduce((m, r) => Math.max(m, (r.big.seconds * 1e6) / r.big.ops), 0);
  if (process.argv.includes('--json')) {
    process.stdout.write(
      `${JSON.stringify({ ops: n, worstSecondsPer1M: worst, loadAverage: loadavg()[0], cores: availableParallelism(), results: rows })}\n`,
    );
  } else {
    process.stdout.write(
      `worst: ${worst.toFixed(3)} s per 1M ops (target ≤ 2 s); load average at the end ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores\n`,
    );
  }
}
