import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { fairnessChecker } from '../../checkers/catalogue/fairness.ts';
import { perfChecker } from '../../checkers/catalogue/perf.ts';
import { sloChecker } from '../../checkers/catalogue/slo.ts';
import { statsChecker } from '../../checkers/catalogue/stats.ts';
import { unhandledErrorsChecker } from '../../checkers/catalogue/unhandled-errors.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { H, run, types } from './build.ts';

test('stats: counts per f; an f that never succeeded makes it unknown', async (t) => {
  const h = new H()
    .call(0, 'read', null, 1)
    .invoke(0, 'write', 2)
    .fail(0, 'write', 2)
    .invoke(1, 'write', 3)
    .info(1, 'write', 3);
  const r = await run(statsChecker, h.ops(), {});
  t.is(r.valid, 'unknown');
  t.deepEqual(types(r), ['never-succeeded']);
  t.like(r.stats, { count: 3, ok: 1, fail: 1, info: 1 });
  t.is((await run(statsChecker, new H().call(0, 'read', null, 1).ops(), {})).valid, true);
});

test('unhandled-errors: info ops grouped by class, most frequent first; always valid', async (t) => {
  const h = new H()
    .invoke(0, 'write', 1)
    .info(0, 'write', 1, { error: 'timeout after 503ms' })
    .invoke(1, 'write', 2)
    .info(1, 'write', 2, { error: 'timeout after 1200ms' })
    .invoke(2, 'read')
    .info(2, 'read', null, { error: ['connection-refused', 'n1:2379'] });
  const r = await run(unhandledErrorsChecker, h.ops(), {});
  t.is(r.valid, true);
  const groups = r.stats.groups as { class: string; count: number }[];
  t.deepEqual(
    groups.map((g) => [g.class, g.count]),
    [
      ['timeout after Nms', 2],
      ['connection-refused', 1],
    ],
  );
});

/** Brute force nearest-rank percentile: sort, take the ceil(q·n)-th value. */
function bruteQuantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil(q * s.length)) - 1] as number;
}

function opsWithLatencies(latMs: number[], fs: string[]): Operation[] {
  return latMs.map((l, i) => ({
    id: i,
    process: i % 4,
    f: fs[i % fs.length] as string,
    type: 'ok',
    input: null,
    output: null,
    invokeIndex: 2 * i,
    completeIndex: 2 * i + 1,
    invokeTime: i * 1e8,
    completeTime: i * 1e8 + l * 1e6,
    node: `n${i % 3}`,
    key: undefined,
    error: null,
    faultEpoch: null,
    infoTime: null,
  }));
}

test('perf: percentiles overall and per f match a brute-force computation', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 300 }),
      async (lat) => {
        const ops = opsWithLatencies(lat, ['read', 'write']);
        const r = await run(perfChecker, ops, { plots: false });
        const overall = r.stats.latencyMs as Record<string, number>;
        for (const [name, q] of [
          ['p50', 0.5],
          ['p90', 0.9],
          ['p99', 0.99],
          ['p99.9', 0.999],
        ] as const) {
          t.is(overall[name], bruteQuantile(lat, q), name);
        }
        t.is(overall.max, Math.max(...lat));
        const reads = lat.filter((_, i) => i % 2 === 0);
        t.is(
          (r.stats.latencyMsByF as Record<string, Record<string, number>>).read?.p99,
          bruteQuantile(reads, 0.99),
        );
      },
    ),
    { numRuns: 50 },
  );
});

test('perf: latency is measured from the intended start, info ops count with their give-up time', async (t) => {
  const h = new H().invoke(0, 'read', null, { at: 0 }).ok(0, 'read', 1, { at: 5e6 });
  h.invoke(1, 'read', null, { at: 6e6 }).info(1, 'read', null, { at: 1006e6 });
  const r = await run(perfChecker, h.ops(), { plots: false });
  t.is((r.stats.latencyMs as Record<string, number>).max, 1000);
  t.is(r.stats.measured, 2);
});

test('perf: an op dispatched late by a stalled worker counts from its recorded intendedTime', async (t) => {
  // The generator meant the op to start at 0; a busy worker only sent it at 100 ms; it answered at 105 ms.
  const h = new H()
    .invoke(0, 'read', null, { at: 100e6, intendedTime: 0 } as never)
    .ok(0, 'read', 1, { at: 105e6 });
  const r = await run(perfChecker, h.ops(), { plots: false });
  t.is((r.stats.latencyMs as Record<string, number>).max, 105);
});

test('perf: per-window figures and SVG plots with fault windows shaded', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'perf-'));
  try {
    const h = new H();
    for (let i = 0; i < 30; i++) {
      if (i === 10)
        h.invoke('nemesis', 'start-partition', null, { at: i * 1e9 }).info(
          'nemesis',
          'start-partition',
          null,
          { at: i * 1e9 + 1 },
        );
      if (i === 20)
        h.invoke('nemesis', 'stop-partition', null, { at: i * 1e9 + 2 }).info(
          'nemesis',
          'stop-partition',
          null,
          { at: i * 1e9 + 3 },
        );
      h.invoke(0, 'write', i, { at: i * 1e9 + 10 }).ok(0, 'write', i, {
        at: i * 1e9 + 10 + (i >= 10 && i < 20 ? 500e6 : 5e6),
      });
    }
    const r = await run(perfChecker, h.ops(), { windowS: 10 }, { outDir: dir });
    const windows = r.stats.latencyMsByWindow as { start: number; p50: number }[];
    t.deepEqual(
      windows.map((w) => [w.start, Math.round(w.p50)]),
      [
        [0, 5],
        [10, 500],
        [20, 5],
      ],
    );
    t.deepEqual(
      (r.stats.faultWindows as { name: string; start: number; end: number }[]).map((w) => [
        w.name,
        Math.round(w.start),
        Math.round(w.end),
      ]),
      [['start-partition', 10, 20]],
    );
    t.is(r.artifacts?.length, 2);
    const svg = readFileSync(join(dir, 'latency.svg'), 'utf8');
    t.regex(svg, /^<svg/);
    t.regex(svg, /<title>start-partition<\/title>/);
    t.regex(readFileSync(join(dir, 'rate.svg'), 'utf8'), /write ok/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('slo maxOutageS: the longest stretch without an ok op, up to the end of the run', async (t) => {
  // 100 ops, one every 0.1 s, 10 ms each: ok until op 40 (4.0 s), then every op hangs for its
  // timeout and is info, as against a database that never serves again.
  const ops = opsWithLatencies(Array(100).fill(10), ['read']).map((op, i) =>
    i > 40 ? { ...op, type: 'info' as const, completeTime: null, infoTime: op.invokeTime + 5e9 } : op,
  );
  const dead = await run(sloChecker, ops, { maxOutageS: 3 });
  t.is(dead.valid, false, dead.evidence);
  t.deepEqual(types(dead), ['outage-exceeded']);
  t.regex(dead.evidence, /longest stretch without an ok op 10\.9 s \(4\.0–14\.9 s\) > 3 s/);
  // Serving again after 2 s of nothing: within 3 s.
  const back = opsWithLatencies(Array(100).fill(10), ['read']).map((op, i) =>
    i > 40 && i < 60 ? { ...op, type: 'fail' as const } : op,
  );
  t.is((await run(sloChecker, back, { maxOutageS: 3 })).valid, true);
  t.is((await run(sloChecker, back, { maxOutageS: 1.5 })).valid, false);
});

test('slo: thresholds over the whole window pass and fail; a short window is unknown', async (t) => {
  const ops = opsWithLatencies([10, 10, 10, 10, 200], ['read']);
  t.is((await run(sloChecker, ops, { p99Ms: 250, maxErrorRate: 0, minThroughput: 5 })).valid, true);
  const bad = await run(sloChecker, ops, { p99Ms: 100, minThroughput: 100 });
  t.is(bad.valid, false);
  t.deepEqual(types(bad), ['p99-exceeded', 'throughput-below-floor']);
  t.is((await run(sloChecker, ops, { p99Ms: 250, minDurationS: 60 })).valid, 'unknown');
  await t.throwsAsync(async () => run(sloChecker, ops, {}), {
    message: /needs a threshold fixed before the run/,
  });
});

test('fairness: per-node p99 ratio, throughput floor and errors', async (t) => {
  // Nodes n0, n1, n2 in turn; n2 is slow.
  const lat = Array.from({ length: 300 }, (_, i) => (i % 3 === 2 ? 100 : 10));
  const ops = opsWithLatencies(lat, ['read']);
  const fair = await run(fairnessChecker, ops, {
    worstP99Ratio: 1.01,
    minGroupThroughput: 1,
    errorFree: true,
  });
  t.is(fair.valid, true, fair.evidence);
  // Two slow ops, both on n2: n2's p99 is 1000 ms while the aggregate p99 stays at 10 ms.
  const slowOnly = opsWithLatencies(
    Array.from({ length: 300 }, (_, i) => (i === 296 || i === 299 ? 1000 : 10)),
    ['read'],
  );
  const unfair = await run(fairnessChecker, slowOnly, { worstP99Ratio: 1.5 });
  t.is(unfair.valid, false, unfair.evidence);
  t.deepEqual(types(unfair), ['p99-ratio']);
  const withError = ops.map((op, i) => (i === 4 ? { ...op, type: 'fail' as const } : op));
  t.deepEqual(types(await run(fairnessChecker, withError, { errorFree: true })), ['group-errors']);
});

test('fairness: repeat spread needs repeats; a single group is unknown', async (t) => {
  const ops = opsWithLatencies([10, 10, 10], ['read']);
  t.is((await run(fairnessChecker, ops, { maxRepeatSpread: 0.1 })).valid, 'unknown');
  t.is(
    (await run(fairnessChecker, ops, { maxRepeatSpread: 0.1, repeatValues: [100, 104, 102] })).valid,
    true,
  );
  t.is((await run(fairnessChecker, ops, { maxRepeatSpread: 0.1, repeatValues: [100, 150] })).valid, false);
  const oneNode = ops.map((op) => ({ ...op, node: 'n1' }));
  t.is((await run(fairnessChecker, oneNode, { worstP99Ratio: 2 })).valid, 'unknown');
});
