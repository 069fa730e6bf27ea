import { join } from 'node:path';
import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import { makeOutputDir, writeFileAtomic } from '../../src/core/util/atomic-write.ts';
import { bandLabel, type FaultBand, faultBands } from '../fault-bands.ts';
import type { CheckContext, Checker } from '../types.ts';
import { fmt, isClient, parseOptions, result } from './common.ts';
import { endTime, F64Buffer, type LatencySummary, runSpan, startTime, summarise } from './latency.ts';
import { type Band, color, renderChart, type Series } from './svg.ts';

/**
 * Jepsen's `perf`, without gnuplot: latency percentiles (p50/p90/p99/p99.9/max, nearest rank) overall,
 * per f and per time bucket, measured from the recorded intended start (see latency.ts); throughput per
 * bucket and outcome; and, when the context has an output directory, `latency.svg` and `rate.svg` with
 * each fault window shaded once and labelled with what it did (from the context's fault windows, the
 * history's nemesis ops, or the `faults` option, in seconds since the run started). Buckets are sized
 * to the run (at least ~24 per run) unless `windowS` fixes them. Times are seconds since the run
 * started. Informational: valid unless there was nothing to measure.
 */
export const perfOptionsSchema = z.strictObject({
  /** Bucket width for percentiles and rates; default: a 1-2-5 width giving at least ~24 buckets. */
  windowS: z.number().positive().optional(),
  plots: z.boolean().default(true),
  faults: z.array(z.strictObject({ name: z.string(), start: z.number(), end: z.number() })).optional(),
  /** Cap on dots in the latency scatter (the percentile lines always use every op). */
  maxDots: z.number().int().nonnegative().default(4000),
});
export type PerfOptions = z.input<typeof perfOptionsSchema>;

const SCOPE =
  'Measures, does not judge: slow or unavailable periods only fail through slo/fairness thresholds; ops never completed (still open) have no latency and are only counted.';

function ms(s: LatencySummary): string {
  return `p50 ${s.p50.toFixed(1)} / p99 ${s.p99.toFixed(1)} / max ${s.max.toFixed(1)} ms`;
}

/** The widest 1-2-5 bucket (in seconds) that still gives `min` buckets over `spanS`. */
export function bucketSeconds(spanS: number, min = 24): number {
  const raw = Math.max(spanS, 1e-3) / min;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [5, 2, 1].map((k) => k * mag).find((x) => x <= raw) ?? mag;
  return Number(step.toPrecision(6));
}

const OUTCOME_COLOURS: Record<string, string[]> = {
  ok: ['#2e7d32', '#66bb6a', '#1b5e20'],
  fail: ['#c62828', '#ef5350', '#8e0000'],
  info: ['#ef6c00', '#ffa726', '#b53d00'],
};

async function writePlots(
  outDir: string,
  ops: readonly Operation[],
  bucketS: number,
  perFWindow: Map<string, Map<number, LatencySummary>>,
  perBucket: Map<string, Map<number, number>>,
  faults: readonly FaultBand[],
  maxDots: number,
): Promise<string[]> {
  makeOutputDir(outDir);
  const bands: Band[] = faults.map((w) => ({
    label: bandLabel(w),
    start: w.start / 1e9,
    end: w.end / 1e9,
    landed: w.landed,
  }));
  const mid = (b: number) => (b + 0.5) * bucketS;
  const series: Series[] = [];
  let ci = 0;
  for (const [f, wins] of perFWindow) {
    const last = Math.max(...wins.keys());
    const at = (b: number, q: 'p50' | 'p99'): [number, number | null] => [mid(b), wins.get(b)?.[q] ?? null];
    const buckets = Array.from({ length: last + 1 }, (_, b) => b);
    series.push({
      name: `${f} p50`,
      color: color(ci),
      kind: 'line',
      points: buckets.map((b) => at(b, 'p50')),
    });
    series.push({
      name: `${f} p99`,
      color: color(ci),
      kind: 'line',
      dashed: true,
      points: buckets.map((b) => at(b, 'p99')),
    });
    ci++;
  }
  // Raw latencies, thinned to `maxDots` (every k-th op) so outliers stay visible and the file small.
  const client = ops.filter((op) => isClient(op) && endTime(op) !== null);
  const stride = maxDots === 0 ? Number.POSITIVE_INFINITY : Math.max(1, Math.ceil(client.length / maxDots));
  const dots: Record<string, [number, number][]> = { ok: [], fail: [], info: [] };
  for (let i = 0; i < client.length; i += stride) {
    const op = client[i] as Operation;
    (dots[op.type] as [number, number][]).push([
      op.invokeTime / 1e9,
      ((endTime(op) as number) - startTime(op)) / 1e6,
    ]);
  }
  for (const t of ['ok', 'fail', 'info']) {
    if ((dots[t] as [number, number][]).length > 0) {
      series.push({
        name: `${t} op${stride > 1 ? ` (1 in ${stride})` : ''}`,
        color: (OUTCOME_COLOURS[t] as string[])[1] as string,
        kind: 'dots',
        points: dots[t] as [number, number][],
      });
    }
  }
  const latency = renderChart({
    title: 'Latency',
    subtitle: `p50 (solid) and p99 (dashed) per ${bucketS} s bucket, from each op's intended start; dots: single ops`,
    xLabel: 'time since the run started (s)',
    yLabel: 'latency (ms)',
    series,
    bands,
    logY: true,
  });
  const rateSeries: Series[] = [];
  const seen = new Map<string, number>();
  // Every series over the same buckets: a bucket with no completion of that kind is a real zero.
  const last = Math.max(0, ...[...perBucket.values()].flatMap((c) => [...c.keys()]));
  for (const [name, counts] of [...perBucket].sort((a, b) => a[0].localeCompare(b[0]))) {
    const outcome = name.split(' ').at(-1) as string;
    const k = seen.get(outcome) ?? 0;
    seen.set(outcome, k + 1);
    rateSeries.push({
      name,
      color: (OUTCOME_COLOURS[outcome] ?? PALETTE_FALLBACK)[k % 3] as string,
      kind: 'line',
      dashed: k > 0,
      points: Array.from({ length: last + 1 }, (_, b) => [mid(b), (counts.get(b) ?? 0) / bucketS]),
    });
  }
  const rate = renderChart({
    title: 'Throughput by outcome',
    subtitle: `completions per second, per ${bucketS} s bucket, by f and outcome (ok / fail / info)`,
    xLabel: 'time since the run started (s)',
    yLabel: 'ops/s',
    series: rateSeries,
    bands,
  });
  const files = [join(outDir, 'latency.svg'), join(outDir, 'rate.svg')];
  await writeFileAtomic(files[0] as string, latency);
  await writeFileAtomic(files[1] as string, rate);
  return files;
}

const PALETTE_FALLBACK = ['#555', '#888', '#333'];

export const perfChecker: Checker<PerfOptions> = {
  name: 'perf',
  async check(ops: readonly Operation[], rawOptions: PerfOptions, ctx?: CheckContext) {
    const o = parseOptions('perf', perfOptionsSchema, rawOptions);
    const span = runSpan(ops);
    if (span === null) {
      return result('perf', 'unknown', 'perf: no client ops to measure', SCOPE, [], { opsConsumed: 0 });
    }
    const spanS = (span.end - span.start) / 1e9;
    // Buckets on the run's clock (history times are ns since the run started), sized to the run.
    const bucketS = o.windowS ?? bucketSeconds(span.end / 1e9 - Math.min(span.start, 0) / 1e9);
    const bucketNs = bucketS * 1e9;
    const all = new F64Buffer();
    const byF = new Map<string, F64Buffer>();
    const byWindow = new Map<number, F64Buffer>();
    const byFWindow = new Map<string, Map<number, F64Buffer>>();
    const perBucket = new Map<string, Map<number, number>>();
    const okBySecond: number[] = [];
    let consumed = 0;
    let measured = 0;
    const push = <K>(m: Map<K, F64Buffer>, k: K, v: number) => {
      let b = m.get(k);
      if (b === undefined) {
        b = new F64Buffer();
        m.set(k, b);
      }
      b.push(v);
    };
    for (const op of ops) {
      if (!isClient(op)) continue;
      consumed++;
      const e = endTime(op);
      if (e === null) continue;
      measured++;
      const lat = (e - startTime(op)) / 1e6;
      all.push(lat);
      push(byF, op.f, lat);
      const w = Math.floor(op.invokeTime / bucketNs);
      push(byWindow, w, lat);
      let fw = byFWindow.get(op.f);
      if (fw === undefined) {
        fw = new Map();
        byFWindow.set(op.f, fw);
      }
      push(fw, w, lat);
      // Throughput counts completions in the bucket they completed in, per f and outcome.
      const rateKey = `${op.f} ${op.type}`;
      let counts = perBucket.get(rateKey);
      if (counts === undefined) {
        counts = new Map();
        perBucket.set(rateKey, counts);
      }
      const b = Math.floor(e / bucketNs);
      counts.set(b, (counts.get(b) ?? 0) + 1);
      if (op.type === 'ok') {
        const sec = Math.max(0, Math.floor(e / 1e9));
        okBySecond[sec] = (okBySecond[sec] ?? 0) + 1;
      }
    }
    if (measured === 0) {
      return result('perf', 'unknown', `perf: ${fmt(consumed)} client ops, none completed`, SCOPE, [], {
        opsConsumed: consumed,
      });
    }
    const overall = summarise(all.view());
    const perF = Object.fromEntries([...byF].map(([f, b]) => [f, summarise(b.view())]));
    const windows = [...byWindow]
      .sort((a, b) => a[0] - b[0])
      .map(([w, b]) => ({ start: w * bucketS, end: (w + 1) * bucketS, ...summarise(b.view()) }));
    const perFWindow = new Map<string, Map<number, LatencySummary>>();
    for (const [f, m] of byFWindow)
      perFWindow.set(f, new Map([...m].map(([w, b]) => [w, summarise(b.view())])));
    let okTotal = 0;
    for (const c of okBySecond) okTotal += c ?? 0;
    const faults: readonly FaultBand[] = o.faults
      ? o.faults.map((w) => ({
          id: w.name,
          kind: '',
          what: '',
          start: w.start * 1e9,
          end: w.end * 1e9,
          healed: true,
          landed: true,
        }))
      : (ctx?.faults ?? faultBands(ops));
    let artifacts: string[] = [];
    if (o.plots && ctx?.outDir) {
      artifacts = await writePlots(ctx.outDir, ops, bucketS, perFWindow, perBucket, faults, o.maxDots);
    }
    return result(
      'perf',
      true,
      `perf: ${fmt(measured)} completed of ${fmt(consumed)} client ops over ${spanS.toFixed(1)} s, ${ms(overall)}, ${(okTotal / Math.max(spanS, 1e-9)).toFixed(1)} ok/s, ${faults.length} fault windows`,
      SCOPE,
      [],
      {
        opsConsumed: consumed,
        measured,
        spanSeconds: spanS,
        latencyMs: overall,
        latencyMsByF: perF,
        windowSeconds: bucketS,
        latencyMsByWindow: windows,
        throughput: {
          okPerSecond: okTotal / Math.max(spanS, 1e-9),
          okBySecond: Array.from(okBySecond, (c) => c ?? 0),
        },
        faultWindows: faults.map((w) => ({
          name: w.id,
          what: bandLabel(w),
          start: w.start / 1e9,
          end: w.end / 1e9,
        })),
      },
      { artifacts },
    );
  },
};
