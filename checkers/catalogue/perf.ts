import { join } from 'node:path';
import { z } from 'zod';
import type { Operation } from '../../src/core/history/operation.ts';
import { makeOutputDir, writeFileAtomic } from '../../src/core/util/atomic-write.ts';
import type { CheckContext, Checker } from '../types.ts';
import { fmt, isClient, parseOptions, result } from './common.ts';
import {
  endTime,
  F64Buffer,
  type FaultWindow,
  faultWindows,
  type LatencySummary,
  runSpan,
  startTime,
  summarise,
} from './latency.ts';
import { color, renderChart, type Series } from './svg.ts';

/**
 * Jepsen's `perf`, without gnuplot: latency percentiles (p50/p90/p99/p99.9/max, nearest rank) overall,
 * per f and per time window, measured from the recorded intended start (see latency.ts); throughput per
 * second; and, when the context has an output directory, `latency.svg` and `rate.svg` with fault windows
 * shaded (from nemesis ops, fault epochs, or the `faults` option, in seconds since the run started).
 * Informational: valid unless there was nothing to measure.
 */
export const perfOptionsSchema = z.strictObject({
  windowS: z.number().positive().default(10),
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

async function writePlots(
  outDir: string,
  ops: readonly Operation[],
  start: number,
  windowNs: number,
  perFWindow: Map<string, Map<number, LatencySummary>>,
  perSecond: Map<string, Int32Array>,
  faults: FaultWindow[],
  maxDots: number,
): Promise<string[]> {
  makeOutputDir(outDir);
  const bands = faults.map((w) => ({
    label: w.name,
    start: (w.start - start) / 1e9,
    end: (w.end - start) / 1e9,
  }));
  const series: Series[] = [];
  let ci = 0;
  for (const [f, wins] of perFWindow) {
    const sorted = [...wins].sort((a, b) => a[0] - b[0]);
    const mid = (w: number) => ((w + 0.5) * windowNs) / 1e9;
    series.push({
      name: `${f} p50`,
      color: color(ci),
      kind: 'line',
      points: sorted.map(([w, s]) => [mid(w), s.p50]),
    });
    series.push({
      name: `${f} p99`,
      color: color(ci + 1),
      kind: 'line',
      points: sorted.map(([w, s]) => [mid(w), s.p99]),
    });
    ci += 2;
  }
  // A thinned scatter of raw latencies: every k-th client op keeps the picture of outliers readable.
  const client = ops.filter((op) => isClient(op) && endTime(op) !== null);
  const stride = maxDots === 0 ? Number.POSITIVE_INFINITY : Math.max(1, Math.ceil(client.length / maxDots));
  const dots: Record<string, [number, number][]> = { ok: [], fail: [], info: [] };
  for (let i = 0; i < client.length; i += stride) {
    const op = client[i] as Operation;
    (dots[op.type] as [number, number][]).push([
      (op.invokeTime - start) / 1e9,
      ((endTime(op) as number) - startTime(op)) / 1e6,
    ]);
  }
  const dotColors: Record<string, string> = { ok: '#7fbf7f', fail: '#e07070', info: '#e0b050' };
  for (const t of ['ok', 'fail', 'info']) {
    if ((dots[t] as [number, number][]).length > 0) {
      series.push({
        name: `${t} (sampled)`,
        color: dotColors[t] as string,
        kind: 'dots',
        points: dots[t] as [number, number][],
      });
    }
  }
  const latency = renderChart({
    title: 'Latency (from intended start)',
    xLabel: 'time since run start (s)',
    yLabel: 'latency (ms)',
    series,
    bands,
    logY: true,
  });
  const rateSeries: Series[] = [];
  let ri = 0;
  for (const [name, counts] of perSecond) {
    rateSeries.push({
      name,
      color: color(ri++),
      kind: 'line',
      points: Array.from(counts, (c, s) => [s + 0.5, c]),
    });
  }
  const rate = renderChart({
    title: 'Throughput',
    xLabel: 'time since run start (s)',
    yLabel: 'ops/s',
    series: rateSeries,
    bands,
  });
  const files = [join(outDir, 'latency.svg'), join(outDir, 'rate.svg')];
  await writeFileAtomic(files[0] as string, latency);
  await writeFileAtomic(files[1] as string, rate);
  return files;
}

export const perfChecker: Checker<PerfOptions> = {
  name: 'perf',
  async check(ops: readonly Operation[], rawOptions: PerfOptions, ctx?: CheckContext) {
    const o = parseOptions('perf', perfOptionsSchema, rawOptions);
    const span = runSpan(ops);
    if (span === null) {
      return result('perf', 'unknown', 'perf: no client ops to measure', SCOPE, [], { opsConsumed: 0 });
    }
    const windowNs = o.windowS * 1e9;
    const all = new F64Buffer();
    const byF = new Map<string, F64Buffer>();
    const byWindow = new Map<number, F64Buffer>();
    const byFWindow = new Map<string, Map<number, F64Buffer>>();
    const seconds = Math.max(1, Math.ceil((span.end - span.start) / 1e9));
    const perSecond = new Map<string, Int32Array>();
    let consumed = 0;
    let measured = 0;
    for (const op of ops) {
      if (!isClient(op)) continue;
      consumed++;
      const e = endTime(op);
      if (e === null) continue;
      measured++;
      const lat = (e - startTime(op)) / 1e6;
      all.push(lat);
      let f = byF.get(op.f);
      if (f === undefined) {
        f = new F64Buffer();
        byF.set(op.f, f);
      }
      f.push(lat);
      const w = Math.floor((op.invokeTime - span.start) / windowNs);
      let wb = byWindow.get(w);
      if (wb === undefined) {
        wb = new F64Buffer();
        byWindow.set(w, wb);
      }
      wb.push(lat);
      let fw = byFWindow.get(op.f);
      if (fw === undefined) {
        fw = new Map();
        byFWindow.set(op.f, fw);
      }
      let fwb = fw.get(w);
      if (fwb === undefined) {
        fwb = new F64Buffer();
        fw.set(w, fwb);
      }
      fwb.push(lat);
      // Throughput counts completions in the second they completed.
      const rateKey = op.type === 'ok' ? `${op.f} ok` : `${op.f} ${op.type}`;
      let counts = perSecond.get(rateKey);
      if (counts === undefined) {
        counts = new Int32Array(seconds + 1);
        perSecond.set(rateKey, counts);
      }
      const sec = Math.min(seconds, Math.max(0, Math.floor((e - span.start) / 1e9)));
      counts[sec] = (counts[sec] as number) + 1;
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
      .map(([w, b]) => ({ start: w * o.windowS, end: (w + 1) * o.windowS, ...summarise(b.view()) }));
    const perFWindow = new Map<string, Map<number, LatencySummary>>();
    for (const [f, m] of byFWindow)
      perFWindow.set(f, new Map([...m].map(([w, b]) => [w, summarise(b.view())])));
    const okPerSecond = new Int32Array(seconds + 1);
    for (const [k, c] of perSecond)
      if (k.endsWith(' ok'))
        for (let i = 0; i < c.length; i++) okPerSecond[i] = (okPerSecond[i] as number) + (c[i] as number);
    const spanS = (span.end - span.start) / 1e9;
    let okTotal = 0;
    for (const c of okPerSecond) okTotal += c;
    const faults: FaultWindow[] = o.faults
      ? o.faults.map((w) => ({
          name: w.name,
          start: span.start + w.start * 1e9,
          end: span.start + w.end * 1e9,
        }))
      : faultWindows(ops, span);
    let artifacts: string[] = [];
    if (o.plots && ctx?.outDir) {
      artifacts = await writePlots(
        ctx.outDir,
        ops,
        span.start,
        windowNs,
        perFWindow,
        perSecond,
        faults,
        o.maxDots,
      );
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
        windowSeconds: o.windowS,
        latencyMsByWindow: windows,
        throughput: { okPerSecond: okTotal / Math.max(spanS, 1e-9), okBySecond: Array.from(okPerSecond) },
        faultWindows: faults.map((w) => ({
          name: w.name,
          start: (w.start - span.start) / 1e9,
          end: (w.end - span.start) / 1e9,
        })),
      },
      { artifacts },
    );
  },
};
