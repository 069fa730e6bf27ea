/**
 * Linearizability checker benchmark on Porcupine's reference histories (shared/fixtures/porcupine).
 *
 * For each of the 109 files: load and pair once (not timed), then time `checkOperations` (encoding,
 * partitioning, search). Three passes over all files in one process (the first includes JIT warm-up);
 * per-file figures are medians of the passes, the total is the median pass total. Verdicts are compared
 * with expected.json on every pass. The Go figure is the median total of Porcupine's
 * CheckEventsTimeout measured on the same kind of machine (go-baseline.json, reference/porcupine.md §5).
 *
 * Then generated cas-register histories (./linearizability-generated.ts): the two hard 10k-op cases
 * (valid, and with a stale read; 10 s budget) and, with `--sizes`, histories of those sizes streamed
 * from JSONL (and Porcupine's etcd log format with `--etcd`), with the growth between sizes.
 *
 * With `--built`, the fixtures pass runs once more from the built package (`npm run build` first) in a
 * plain Node child process without tsx (./linearizability-built.mjs): the checker's own footprint,
 * with the RSS before any history is loaded next to the peak.
 *
 *   npm run bench:linearizability [-- --json] [--runs N] [--workers N] [--sizes 1e5,1e6,1e7] [--etcd]
 *                                    [--no-fixtures] [--no-hard] [--built] [--results DIR]
 *   npm run bench:linearizability -- --ci --no-hard     short version for the regression guard
 *   FAULTLINE_PORCUPINE_SRC=DIR npm run bench:linearizability -- --go --no-hard
 *       Go Porcupine (./go-porcupine.ts) one pass beside each of faultline's, alternating, same files
 *
 * With ≥ 3 passes the fixtures pass is also written to bench/results/linearizability.json for
 * bench/guard.ts: the check's CPU time over an anchor measured before each pass in the same process,
 * reading and pairing the same files again (so the ratio hardly moves with the host's load).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { checkOperations } from '../checkers/linearizability/check.ts';
import { createModel, type ModelOptions } from '../checkers/linearizability/models/index.ts';
import type { Operation } from '../src/core/history/operation.ts';
import { fixturesAbsence } from '../test/helpers/fixtures.ts';
import {
  loadFixtureOps,
  porcupineDir,
  porcupineFixtures,
} from '../test/linearizability/porcupine-fixtures.ts';
import { median, writeResults } from './figures.ts';
import { type GoPass, goPorcupine } from './go-porcupine.ts';
import { type GeneratedCase, runGeneratedCases } from './linearizability-generated.ts';

/** Porcupine's median check total over the 109 files on this machine kind (reference/porcupine.md §5). */
const GO_TOTAL_MS = 786;
const TARGET_C50_MS = 500;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const json = process.argv.includes('--json');
// --ci: 8 passes, the first a warm-up left out of the guarded ratios (JIT and GC settle in it).
const runs = Math.max(1, Number(arg('--runs') ?? (process.argv.includes('--ci') ? 8 : 3)));
const workers = Number(arg('--workers') ?? 0);
const sizes = (arg('--sizes') ?? '')
  .split(',')
  .filter((x) => x.length > 0)
  .map((x) => {
    const n = Number(x);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--sizes: ${x} is not a positive integer`);
    return n;
  });
// Porcupine's histories are a reference corpus outside the repository: without them (a plain clone)
// the fixtures pass is left out, said once; FAULTLINE_REQUIRE_FIXTURES=1 makes that an error.
const fixturesWanted = !process.argv.includes('--no-fixtures');
if (fixturesWanted && fixturesAbsence) {
  if (process.env.FAULTLINE_REQUIRE_FIXTURES === '1') {
    console.error(`bench: FAULTLINE_REQUIRE_FIXTURES=1 and ${fixturesAbsence}`);
    process.exit(1);
  }
  console.log(`bench: the Porcupine fixtures pass is skipped: ${fixturesAbsence}`);
}
const withFixtures = fixturesWanted && !fixturesAbsence;
const withHard = !process.argv.includes('--no-hard');

const goFiles = withFixtures
  ? (
      JSON.parse(readFileSync(join(porcupineDir, 'go-baseline.json'), 'utf8')) as {
        files: Record<string, { checkMs: number }>;
      }
    ).files
  : {};

// RSS of this process before any history is loaded (Node, tsx and the modules): the checker's own
// footprint is the peak minus this.
const baselineRssMb = process.memoryUsage().rss / 1024 / 1024;
const fixtures = withFixtures ? porcupineFixtures() : [];
const loaded: {
  path: string;
  model: string;
  options: ModelOptions;
  ops: Operation[];
  expected: boolean;
}[] = [];
const parseStart = performance.now();
for (const f of fixtures)
  loaded.push({
    path: f.path,
    model: f.model,
    options: f.options,
    ops: await loadFixtureOps(f),
    expected: f.linearizable,
  });
const parseMs = performance.now() - parseStart;
const loadedRssMb = process.memoryUsage().rss / 1024 / 1024;

const perFile = new Map<string, { ms: number[]; valid: unknown; mismatch: boolean }>();
const passTotals: number[] = [];
// CPU time of the process during the checks: less sensitive than wall time when the machine is shared
// (it still includes GC helper threads).
const passCpuTotals: number[] = [];
// The anchor, measured before each pass in the same process: reading and pairing the same 109 files
// again (faultline's own reader; the Go checker is not run here). The guard compares check / anchor.
const ANCHOR_ROUNDS = 3;
const anchorCpuTotals: number[] = [];
const anchorWallTotals: number[] = [];
// Go Porcupine (--go): one pass of its harness beside each of faultline's, alternating which goes first.
const go = withFixtures && process.argv.includes('--go') ? goPorcupine(porcupineDir) : null;
if (go && 'skipped' in go) console.log(`bench: Go Porcupine is skipped: ${go.skipped}`);
const goPasses: GoPass[] = [];
const goPass = () => {
  if (go && 'run' in go) goPasses.push(go.run());
};
const loadBefore = loadavg()[0] ?? 0;
for (let pass = 0; pass < runs; pass++) {
  if (pass % 2 === 0) goPass();
  // Three rounds, averaged: one round (~100 ms) moved by ±25 % with the collector's timing.
  const a0 = process.cpuUsage();
  const aw = performance.now();
  for (let round = 0; round < ANCHOR_ROUNDS; round++) for (const f of fixtures) await loadFixtureOps(f);
  anchorWallTotals.push((performance.now() - aw) / ANCHOR_ROUNDS);
  const a = process.cpuUsage(a0);
  anchorCpuTotals.push((a.user + a.system) / 1000 / ANCHOR_ROUNDS);
  let total = 0;
  const cpu0 = process.cpuUsage();
  for (const h of loaded) {
    const model = createModel(h.model, h.options);
    if (!model) throw new Error(`unknown model ${h.model}`);
    const t0 = performance.now();
    const outcome = await checkOperations(model, h.ops, { workers });
    const ms = performance.now() - t0;
    total += ms;
    const rec = perFile.get(h.path) ?? { ms: [], valid: outcome.valid, mismatch: false };
    rec.ms.push(ms);
    rec.valid = outcome.valid;
    if (outcome.valid !== h.expected) rec.mismatch = true;
    perFile.set(h.path, rec);
  }
  passTotals.push(total);
  const cpu = process.cpuUsage(cpu0);
  passCpuTotals.push((cpu.user + cpu.system) / 1000);
  if (pass % 2 === 1) goPass();
}
const goMismatches = [...new Set(goPasses.flatMap((p) => p.mismatches))];

const totalMs = median(passTotals);
const loadAfter = loadavg()[0] ?? 0;
if (withFixtures && runs >= 3) {
  const round = (x: number, d = 1) => Number(x.toFixed(d));
  // Per-pass ratios over the passes after the first (a warm-up) when at least 3 remain.
  const from = runs >= 4 ? 1 : 0;
  const ratioOf = (xs: number[], ys: number[]) =>
    round(median(xs.slice(from).map((x, i) => x / (ys[i + from] as number))), 3);
  writeResults(
    {
      bench: 'linearizability',
      mode: process.argv.includes('--ci') ? 'ci' : 'full',
      figures: [
        {
          id: 'linearizability.fixtures',
          figure: `check of Porcupine's ${loaded.length} histories (one pass)`,
          floor: 'reading and pairing the same files (same process, before each pass)',
          cpuMs: round(median(passCpuTotals)),
          floorCpuMs: round(median(anchorCpuTotals)),
          wallMs: round(totalMs),
          floorWallMs: round(median(anchorWallTotals)),
          ratio: ratioOf(passCpuTotals, anchorCpuTotals),
          wallRatio: ratioOf(passTotals, anchorWallTotals),
          samples: runs - from,
          loadAverage: [round(loadBefore, 2), round(loadAfter, 2)],
        },
        ...(goPasses.length === runs
          ? [
              {
                id: 'linearizability.vs-go',
                figure: `check of Porcupine's ${loaded.length} histories (one pass)`,
                floor: 'Go Porcupine, the same files, passes alternating (harness bench/go-porcupine)',
                cpuMs: round(median(passCpuTotals)),
                floorCpuMs: round(median(goPasses.map((p) => p.cpuMs))),
                wallMs: round(totalMs),
                floorWallMs: round(median(goPasses.map((p) => p.wallMs))),
                ratio: ratioOf(
                  passCpuTotals,
                  goPasses.map((p) => p.cpuMs),
                ),
                wallRatio: ratioOf(
                  passTotals,
                  goPasses.map((p) => p.wallMs),
                ),
                samples: runs - from,
                loadAverage: [round(loadBefore, 2), round(loadAfter, 2)] as [number, number],
              },
            ]
          : []),
      ],
      skipped: go && 'skipped' in go ? [{ id: 'linearizability.vs-go', reason: go.skipped }] : [],
    },
    ...(arg('--results') ? [arg('--results') as string] : []),
  );
}
const files: Record<string, { ms: number; valid: unknown; goMs?: number }> = {};
for (const [path, rec] of perFile) {
  files[path] = { ms: Number(median(rec.ms).toFixed(3)), valid: rec.valid, goMs: goFiles[path]?.checkMs };
}
const mismatches = [...perFile].filter(([, r]) => r.mismatch).map(([p]) => p);
const peakRssMb = process.resourceUsage().maxRSS / 1024;
const c50 = ['kv/c50-ok.txt', 'kv/c50-bad.txt'].map((p) => ({ path: p, ms: files[p]?.ms ?? Number.NaN }));

interface BuiltPass {
  baselineRssMb: number;
  loadedRssMb: number;
  peakRssMb: number;
  cpuMsPerPass: number;
  mismatches: string[];
}

/** The fixtures pass from dist/ in a plain Node child (see the header). */
function builtPass(): BuiltPass {
  const script = fileURLToPath(new URL('./linearizability-built.mjs', import.meta.url));
  if (!existsSync(fileURLToPath(new URL('../dist/checkers/linearizability/check.js', import.meta.url))))
    throw new Error('--built: dist/ is missing; run npm run build first');
  const out = spawnSync(process.execPath, [script], {
    input: JSON.stringify({ fixtures, runs }),
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (out.status !== 0) throw new Error(`--built: the child failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as BuiltPass;
}
const built = withFixtures && process.argv.includes('--built') ? builtPass() : null;

const generated: GeneratedCase[] = await runGeneratedCases(sizes, process.argv.includes('--etcd'), withHard);
/** Time ratios between consecutive sizes: wall, and CPU (steadier than wall on a shared machine). */
const growth: Record<string, number> = {};
const cpuGrowth: Record<string, number> = {};
const rssGrowth: Record<string, number> = {};
for (const format of ['jsonl', 'porcupine-etcd']) {
  const rows = generated.filter((g) => g.format === format).sort((a, b) => a.ops - b.ops);
  for (let k = 1; k < rows.length; k++) {
    const a = rows[k - 1] as GeneratedCase;
    const b = rows[k] as GeneratedCase;
    growth[`${format} ${a.ops}→${b.ops}`] = Number((b.wallSeconds / a.wallSeconds).toFixed(2));
    cpuGrowth[`${format} ${a.ops}→${b.ops}`] = Number((b.cpuSeconds / a.cpuSeconds).toFixed(2));
    rssGrowth[`${format} ${a.ops}→${b.ops}`] = Number((b.peakRssMB / a.peakRssMB).toFixed(2));
  }
}

if (json) {
  process.stdout.write(
    `${JSON.stringify({
      generated,
      growth,
      cpuGrowth,
      rssGrowth,
      totalMs: Number(totalMs.toFixed(1)),
      goTotalMs: GO_TOTAL_MS,
      ratio: Number((totalMs / GO_TOTAL_MS).toFixed(3)),
      runs,
      passTotalsMs: passTotals.map((t) => Number(t.toFixed(1))),
      cpuTotalMs: Number(median(passCpuTotals).toFixed(1)),
      loadAverage: Number(loadBefore.toFixed(2)),
      parseMs: Number(parseMs.toFixed(1)),
      peakRssMb: Number(peakRssMb.toFixed(1)),
      baselineRssMb: Number(baselineRssMb.toFixed(1)),
      built,
      loadedRssMb: Number(loadedRssMb.toFixed(1)),
      mismatches,
      files,
    })}\n`,
  );
} else {
  if (loaded.length > 0) printFixtures();
  for (const g of generated) {
    console.log(
      `${g.name.padEnd(26)} ${String(g.valid).padEnd(7)} read+pair ${g.readSeconds.toFixed(2).padStart(6)} s (cpu ${g.readCpuSeconds.toFixed(2)} s)  check ${g.checkSeconds.toFixed(2).padStart(6)} s (cpu ${g.checkCpuSeconds.toFixed(2)} s)  ` +
        `wall ${g.wallSeconds.toFixed(2).padStart(6)} s  cpu ${g.cpuSeconds.toFixed(2).padStart(6)} s  peak RSS ${String(g.peakRssMB).padStart(5)} MB  cache ${g.cacheEntries}`,
    );
  }
  if (Object.keys(growth).length > 0) {
    console.log(`growth (wall): ${JSON.stringify(growth)}`);
    console.log(`growth (cpu):  ${JSON.stringify(cpuGrowth)}`);
    console.log(`growth (peak RSS): ${JSON.stringify(rssGrowth)}`);
  }
  console.log(`1-minute load average at start: ${loadBefore.toFixed(2)}`);
}

function printFixtures(): void {
  const slow = Object.entries(files)
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 12);
  console.log(`linearizability: ${loaded.length} Porcupine histories, ${runs} passes, workers=${workers}`);
  console.log('slowest files (median ms, Go median ms):');
  for (const [p, r] of slow) {
    console.log(
      `  ${p.padEnd(22)} ${r.ms.toFixed(2).padStart(8)}  go ${String(r.goMs ?? '?').padStart(8)}  ${r.valid}`,
    );
  }
  console.log(
    `pass totals: ${passTotals.map((t) => t.toFixed(1)).join(', ')} ms (parse, not timed: ${parseMs.toFixed(0)} ms)`,
  );
  console.log(
    `total (median pass): ${totalMs.toFixed(1)} ms; Go ${GO_TOTAL_MS} ms; ratio ${(totalMs / GO_TOTAL_MS).toFixed(3)} (target <= 1)`,
  );
  if (goPasses.length > 0) {
    const ratios = passCpuTotals.map((c, i) => c / (goPasses[i] as GoPass).cpuMs);
    console.log(
      `Go Porcupine in this run (${go && 'version' in go ? go.version : ''}), passes alternating: CPU ${goPasses.map((p) => p.cpuMs.toFixed(0)).join(', ')} ms, wall ${goPasses.map((p) => p.wallMs.toFixed(0)).join(', ')} ms; ` +
        `faultline / Go by CPU ${ratios.map((r) => r.toFixed(3)).join(', ')} (median ${median(ratios).toFixed(3)}; target <= 0.25)` +
        (goMismatches.length > 0 ? `; GO VERDICT MISMATCHES: ${goMismatches.join(', ')}` : ''),
    );
  }
  for (const c of c50) console.log(`${c.path}: ${c.ms.toFixed(1)} ms (target <= ${TARGET_C50_MS})`);
  console.log(`process CPU during the checks (median pass): ${median(passCpuTotals).toFixed(1)} ms`);
  console.log(
    `peak RSS: ${peakRssMb.toFixed(1)} MB (before loading the histories ${baselineRssMb.toFixed(1)} MB, ` +
      `histories loaded ${loadedRssMb.toFixed(1)} MB); 1-minute load average at start: ${loadBefore.toFixed(2)}`,
  );
  if (built) {
    console.log(
      `from dist/ in plain Node: peak RSS ${built.peakRssMb} MB (before loading the histories ${built.baselineRssMb} MB, ` +
        `histories loaded ${built.loadedRssMb} MB); process CPU per pass ${built.cpuMsPerPass} ms` +
        (built.mismatches.length > 0 ? `; VERDICT MISMATCHES: ${built.mismatches.join(', ')}` : ''),
    );
  }
  console.log(
    mismatches.length === 0
      ? 'verdicts: all match expected.json'
      : `VERDICT MISMATCHES: ${mismatches.join(', ')}`,
  );
}
if (mismatches.length > 0 || (built?.mismatches.length ?? 0) > 0 || goMismatches.length > 0)
  process.exitCode = 1;
