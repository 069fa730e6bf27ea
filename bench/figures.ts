/**
 * Figures as ratios to a floor measured in the same run, the form the regression guard compares.
 *
 * A loaded host (the normal state of shared CI) stretches every time, but it stretches a figure and
 * its floor alike when both are measured alternately in one run; their ratio moves far less than
 * either time. So each bench that takes part in the guard measures its figure and a floor (the least
 * the same work can cost: reading and parsing the same file, starting bare Node) in alternation, keeps
 * the median of the per-pair ratios (≥ 3 pairs) and writes them here with the load average.
 *
 * `bench/guard.ts` compares these ratios with the committed `bench/baseline.json`;
 * `bench/report.ts` prints them as the table README shows.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** One figure against its floor (or anchor). Times in ms; `ratio` is figure / floor (lower is better). */
export const figureSchema = z.object({
  /** Stable key, e.g. `cli.check-linearizable-100k`: the baseline is keyed by it. */
  id: z.string().min(1),
  figure: z.string().min(1),
  floor: z.string().min(1),
  /** Median CPU time (user + system, all threads) of the figure and of the floor. */
  cpuMs: z.number().nonnegative(),
  floorCpuMs: z.number().nonnegative(),
  /** Median wall times. */
  wallMs: z.number().nonnegative(),
  floorWallMs: z.number().nonnegative(),
  /** Median of the per-pair CPU ratios: the guarded number (CPU time depends least on other load). */
  ratio: z.number().positive(),
  /** Median of the per-pair wall ratios: what a user waits for, reported beside it. */
  wallRatio: z.number().positive(),
  samples: z.number().int().positive(),
  /** 1-minute load average when the figure's runs started and ended. */
  loadAverage: z.tuple([z.number(), z.number()]),
});
export type Figure = z.infer<typeof figureSchema>;

export const resultsSchema = z.object({
  bench: z.string(),
  mode: z.enum(['ci', 'full']),
  at: z.string(),
  node: z.string(),
  figures: z.array(figureSchema),
  /** Figures this run could not measure, each with the reason (Go absent, fixtures absent…). */
  skipped: z.array(z.object({ id: z.string(), reason: z.string() })).default([]),
});
export type Results = z.infer<typeof resultsSchema>;

export const baselineSchema = z.object({
  /** How much worse than the baseline a ratio may get before the guard fails (0.3 = 30 %). */
  tolerance: z.number().positive(),
  figures: z.record(
    z.string(),
    z.object({ ratio: z.number().positive(), figure: z.string(), floor: z.string(), measured: z.string() }),
  ),
});
export type Baseline = z.infer<typeof baselineSchema>;

const root = fileURLToPath(new URL('..', import.meta.url));
export const baselinePath = join(root, 'bench', 'baseline.json');

/** Where results are written: `--results DIR`, else `$FAULTLINE_BENCH_RESULTS`, else bench/results/. */
export function resultsDir(argv: string[] = process.argv): string {
  const i = argv.indexOf('--results');
  if (i >= 0 && argv[i + 1]) return argv[i + 1] as string;
  return process.env.FAULTLINE_BENCH_RESULTS ?? join(root, 'bench', 'results');
}

export const median = (xs: number[]): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

export interface Timing {
  wallMs: number;
  cpuMs: number;
  status: number;
  stderr: string;
}

/**
 * Runs `command args` under bash and returns its wall time and its CPU time (user + system of the
 * child and its threads, read from bash's `times`, so it compares across loads). Output is discarded.
 */
export function timeCommand(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Timing {
  const script = '"$@" >/dev/null 2>"$ERR"; rc=$?; times; exit $rc';
  const errFile = join(
    process.env.TMPDIR ?? '/tmp',
    `faultline-bench-${process.pid}-${Math.random().toString(36).slice(2)}.err`,
  );
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', script, 'bench', command, ...args], {
    env: { ...env, ERR: errFile },
    encoding: 'utf8',
  });
  const wallMs = performance.now() - t0;
  let stderr = '';
  try {
    stderr = readFileSync(errFile, 'utf8');
  } catch {}
  spawnSync('rm', ['-f', errFile]);
  // `times` prints the shell's own user/sys, then its children's: "0m0.081s 0m0.012s".
  const children = r.stdout.trim().split('\n').at(-1) ?? '';
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { wallMs, cpuMs: ((secs[0] ?? 0) + (secs[1] ?? 0)) * 1000, status: r.status ?? -1, stderr };
}

/**
 * Measures `figure` and `floor` alternately `samples` times (after one warm-up of each, not counted)
 * and returns the figure with the medians and the median per-pair ratios. The order alternates so a
 * change of load hits both sides alike. `check` rejects a run (wrong exit, wrong output).
 */
export function measurePair(
  spec: { id: string; figure: string; floor: string; samples: number },
  figure: () => Timing,
  floor: () => Timing,
  check: (t: Timing, which: 'figure' | 'floor') => void = (t, which) => {
    if (t.status !== 0) throw new Error(`${spec.id} (${which}): exit ${t.status}: ${t.stderr.trim()}`);
  },
): Figure {
  if (spec.samples < 3) throw new Error(`${spec.id}: medians need at least 3 samples`);
  const load0 = loadavg()[0] ?? 0;
  check(figure(), 'figure');
  check(floor(), 'floor');
  const f: Timing[] = [];
  const b: Timing[] = [];
  for (let i = 0; i < spec.samples; i++) {
    let a: Timing;
    let c: Timing;
    if (i % 2 === 0) {
      a = figure();
      c = floor();
    } else {
      c = floor();
      a = figure();
    }
    check(a, 'figure');
    check(c, 'floor');
    f.push(a);
    b.push(c);
  }
  const ratios = f.map((t, i) => t.cpuMs / Math.max(1, (b[i] as Timing).cpuMs));
  const wallRatios = f.map((t, i) => t.wallMs / Math.max(1, (b[i] as Timing).wallMs));
  const round = (x: number, d = 1) => Number(x.toFixed(d));
  return {
    id: spec.id,
    figure: spec.figure,
    floor: spec.floor,
    cpuMs: round(median(f.map((t) => t.cpuMs))),
    floorCpuMs: round(median(b.map((t) => t.cpuMs))),
    wallMs: round(median(f.map((t) => t.wallMs))),
    floorWallMs: round(median(b.map((t) => t.wallMs))),
    ratio: round(median(ratios), 3),
    wallRatio: round(median(wallRatios), 3),
    samples: spec.samples,
    loadAverage: [round(load0, 2), round(loadavg()[0] ?? 0, 2)],
  };
}

/** Writes one bench's results to `<dir>/<bench>.json` and returns the path. */
export function writeResults(results: Omit<Results, 'at' | 'node'>, dir = resultsDir()): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${results.bench}.json`);
  const full: Results = { ...results, at: new Date().toISOString(), node: process.version };
  writeFileSync(file, `${JSON.stringify(full, null, 2)}\n`);
  return file;
}

/** Every results file in `dir` (one per bench), validated: a malformed file is an error naming it. */
export function readResults(dir: string): Results[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.sort().map((n) => {
    const file = join(dir, n);
    const parsed = resultsSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (!parsed.success)
      throw new Error(`${file}: not a bench results file: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  });
}

export function readBaseline(file = baselinePath): Baseline {
  const parsed = baselineSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: not a bench baseline: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

export interface Verdict {
  id: string;
  baseline: number;
  ratio: number | null;
  /** ratio / baseline − 1: +0.3 is 30 % worse. */
  change: number | null;
  status: 'ok' | 'worse' | 'missing' | 'skipped';
  reason?: string;
}

/**
 * Judges each baseline figure against this run's: `worse` when its ratio is more than `tolerance`
 * above the baseline's, `missing` when no bench wrote it (a bench that stopped running must not pass
 * silently), `skipped` when its bench named why it could not measure it.
 */
export function judge(baseline: Baseline, results: Results[]): Verdict[] {
  const byId = new Map(results.flatMap((r) => r.figures.map((f) => [f.id, f] as const)));
  const skipped = new Map(results.flatMap((r) => r.skipped.map((s) => [s.id, s.reason] as const)));
  return Object.entries(baseline.figures).map(([id, b]) => {
    const f = byId.get(id);
    if (!f) {
      const reason = skipped.get(id);
      return reason === undefined
        ? { id, baseline: b.ratio, ratio: null, change: null, status: 'missing' }
        : { id, baseline: b.ratio, ratio: null, change: null, status: 'skipped', reason };
    }
    const change = f.ratio / b.ratio - 1;
    return {
      id,
      baseline: b.ratio,
      ratio: f.ratio,
      change: Number(change.toFixed(3)),
      status: change > baseline.tolerance ? 'worse' : 'ok',
    };
  });
}
