import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';

/**
 * `metrics/<S>.json`, one per scenario or arm: the primary run's figures (`summary`, `windows`, what RF9
 * and a nightly comparison read), every seed's own counts and figures (`perSeed`), and the counts over
 * every seed (`total`). The primary run is the failing seed's run when a seed failed, else the first
 * seed's. `faultline sessions merge` rewrites it from the shards' `perSeed` entries, so each entry carries
 * everything the file says about its seed.
 */

const latency = z.object({ p50: z.number().nullable(), p99: z.number().nullable() });
const phase = z.object({ seconds: z.number(), opsPerSec: z.number(), latencyMs: latency }).nullable();

/** What a nightly comparison reads: throughput and latency overall, without and with a fault active. */
export const figuresSchema = z.object({
  opsPerSec: z.number(),
  latencyMs: latency,
  healthy: phase,
  faulted: phase,
});
export type Figures = z.infer<typeof figuresSchema>;

export const seedMetricsSchema = z.object({
  seed: z.union([z.number(), z.string()]),
  /** The seed's run directory, relative to the session directory. */
  runDir: z.string().nullable(),
  summary: figuresSchema.extend({
    ops: z.number().int(),
    ok: z.number().int(),
    fail: z.number().int(),
    info: z.number().int(),
  }),
  /** Seconds the workload ran. */
  durationS: z.number().nonnegative(),
  baselineOpsPerSec: z.number().nullable(),
  afterHealOpsPerSec: z.number().nullable(),
  /** Per-window figures of this seed's run (what `windows` holds for the primary). */
  windows: z.array(z.unknown()).default([]),
});
export type SeedMetrics = z.infer<typeof seedMetricsSchema>;

export const metricsFileSchema = z.looseObject({
  scenario: z.string(),
  windowS: z.number(),
  baselineOpsPerSec: z.number().nullable(),
  afterHealOpsPerSec: z.number().nullable(),
  baselineHarness: z.string().optional(),
  baselineCapturedAt: z.string().optional(),
  /** Which seed the top-level figures (`summary`, `windows`) are from. */
  primarySeed: z.union([z.number(), z.string()]).nullable().optional(),
  summary: seedMetricsSchema.shape.summary,
  windows: z.array(z.unknown()),
  perSeed: z.array(seedMetricsSchema).default([]),
  total: z
    .object({
      seeds: z.number().int(),
      ops: z.number().int(),
      ok: z.number().int(),
      fail: z.number().int(),
      info: z.number().int(),
      seconds: z.number(),
      opsPerSec: z.number(),
    })
    .nullable()
    .default(null),
});
export type MetricsFile = z.infer<typeof metricsFileSchema>;

export function metricsPath(sessionDir: string, dirName: string): string {
  return join(sessionDir, 'metrics', `${dirName}.json`);
}

/** Counts over every seed: ops and their completions summed, ops/s over the seconds every seed ran. */
export function totalOf(perSeed: readonly SeedMetrics[]): MetricsFile['total'] {
  if (perSeed.length === 0) return null;
  const sum = (f: (s: SeedMetrics) => number) => perSeed.reduce((n, s) => n + f(s), 0);
  const seconds = sum((s) => s.durationS);
  const ops = sum((s) => s.summary.ops);
  return {
    seeds: perSeed.length,
    ops,
    ok: sum((s) => s.summary.ok),
    fail: sum((s) => s.summary.fail),
    info: sum((s) => s.summary.info),
    seconds,
    opsPerSec: seconds > 0 ? ops / seconds : 0,
  };
}

/** Writes the file from the primary seed and every seed (in seed order); returns its path. */
export function writeMetricsFile(
  path: string,
  head: { scenario: string; baselineHarness: string; baselineCapturedAt: string },
  primary: SeedMetrics,
  perSeed: readonly SeedMetrics[],
): string {
  const file: MetricsFile = {
    scenario: head.scenario,
    windowS: 2,
    baselineOpsPerSec: primary.baselineOpsPerSec,
    afterHealOpsPerSec: primary.afterHealOpsPerSec,
    baselineHarness: head.baselineHarness,
    baselineCapturedAt: head.baselineCapturedAt,
    primarySeed: primary.seed,
    summary: primary.summary,
    windows: primary.windows,
    perSeed: [...perSeed],
    total: totalOf(perSeed),
  };
  writeFileAtomicSync(path, `${JSON.stringify(file, null, 2)}\n`);
  return path;
}

/** The file, or null when it is absent or not one (a report still renders without it). */
export function readMetricsFile(path: string): MetricsFile | null {
  const r = metricsFileSchema.safeParse(readJsonOrNull(path));
  return r.success ? r.data : null;
}
