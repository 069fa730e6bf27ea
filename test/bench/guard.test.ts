import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import {
  type Baseline,
  baselinePath,
  type Figure,
  judge,
  measurePair,
  type Results,
  readBaseline,
} from '../../bench/figures.ts';

/**
 * The regression guard (bench/guard.ts) must fail on a ratio more than the tolerance worse than the
 * baseline and on a baseline figure no bench measured, and pass ratios within it: fed made-up results
 * here, since the benches themselves run only in CI (scripts/bench-ci.sh).
 */
const figure = (id: string, ratio: number): Figure => ({
  id,
  figure: `figure ${id}`,
  floor: 'floor',
  cpuMs: ratio * 100,
  floorCpuMs: 100,
  wallMs: ratio * 100,
  floorWallMs: 100,
  ratio,
  wallRatio: ratio,
  samples: 3,
  loadAverage: [5, 5],
});
const results = (figures: Figure[], skipped: Results['skipped'] = []): Results => ({
  bench: 'b',
  mode: 'ci',
  at: '2026-01-01T00:00:00Z',
  node: 'v20',
  figures,
  skipped,
});
const baseline: Baseline = {
  tolerance: 0.3,
  figures: {
    'b.a': { ratio: 2, figure: 'a', floor: 'f', measured: 'then' },
    'b.b': { ratio: 1.5, figure: 'b', floor: 'f', measured: 'then' },
  },
};

test('judge: within 30 % passes, more than 30 % worse fails, better passes', (t) => {
  const v = judge(baseline, [results([figure('b.a', 2.59), figure('b.b', 1.0)])]);
  t.deepEqual(
    v.map((x) => x.status),
    ['ok', 'ok'],
  );
  const worse = judge(baseline, [results([figure('b.a', 2.61), figure('b.b', 1.5)])]);
  t.deepEqual(
    worse.map((x) => x.status),
    ['worse', 'ok'],
  );
  t.is(worse[0]?.change, 0.305);
});

test('judge: a baseline figure nobody measured fails, one skipped with a reason does not', (t) => {
  t.deepEqual(
    judge(baseline, [results([figure('b.a', 2)])]).map((x) => x.status),
    ['ok', 'missing'],
  );
  const v = judge(baseline, [results([figure('b.a', 2)], [{ id: 'b.b', reason: 'Go is not installed' }])]);
  t.is(v[1]?.status, 'skipped');
  t.is(v[1]?.reason, 'Go is not installed');
});

test('measurePair keeps the median of per-pair ratios, so one slow outlier does not move it', (t) => {
  const figureTimes = [999, 200, 210, 5000, 190]; // warm-up first, then one outlier
  const floorTimes = [999, 100, 100, 100, 100];
  let i = 0;
  let j = 0;
  const f = measurePair(
    { id: 'x', figure: 'x', floor: 'y', samples: 4 },
    () => ({ wallMs: figureTimes[i] as number, cpuMs: figureTimes[i++] as number, status: 0, stderr: '' }),
    () => ({ wallMs: floorTimes[j] as number, cpuMs: floorTimes[j++] as number, status: 0, stderr: '' }),
  );
  t.is(f.ratio, 2.05);
  t.throws(() =>
    measurePair(
      { id: 'x', figure: 'x', floor: 'y', samples: 2 },
      () => f as never,
      () => f as never,
    ),
  );
});

test('the committed baseline is well formed and its tolerance is 30 %', (t) => {
  const b = readBaseline(baselinePath);
  t.is(b.tolerance, 0.3);
  t.true(Object.keys(b.figures).length >= 5);
});

const guard = join(process.cwd(), 'bench', 'guard.ts');
const runGuard = (dir: string, baselineFile: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', guard, '--results', dir, '--baseline', baselineFile], {
    encoding: 'utf8',
  });

/** A temporary baseline (the one above) and an empty results directory, removed after the test. */
function guardDir(t: ExecutionContext): { baselineFile: string; res: string } {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-guard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const baselineFile = join(dir, 'baseline.json');
  writeFileSync(baselineFile, JSON.stringify(baseline));
  const res = join(dir, 'results');
  mkdirSync(res);
  return { baselineFile, res };
}

test('bench/guard.ts exits 1 on a worse ratio, 0 within tolerance, 254 on a malformed results file', (t) => {
  const { baselineFile, res } = guardDir(t);
  writeFileSync(join(res, 'b.json'), JSON.stringify(results([figure('b.a', 2.1), figure('b.b', 1.6)])));
  const ok = runGuard(res, baselineFile);
  t.is(ok.status, 0, ok.stdout + ok.stderr);
  writeFileSync(join(res, 'b.json'), JSON.stringify(results([figure('b.a', 2.8), figure('b.b', 1.6)])));
  const bad = runGuard(res, baselineFile);
  t.is(bad.status, 1, bad.stdout + bad.stderr);
  t.regex(bad.stdout, /b\.a\s+worse\s+2\.8× against baseline 2× \(\+40 %\)/);
  writeFileSync(join(res, 'b.json'), '{"bench": 3}');
  const malformed = runGuard(res, baselineFile);
  t.is(malformed.status, 254);
  t.regex(malformed.stderr, /b\.json: not a bench results file/);
});

test('bench/guard.ts --update writes the run as the baseline, which then passes', (t) => {
  const { baselineFile, res } = guardDir(t);
  writeFileSync(join(res, 'b.json'), JSON.stringify(results([figure('b.a', 3), figure('b.b', 3)])));
  t.is(runGuard(res, baselineFile).status, 1);
  execFileSync(process.execPath, [
    '--import',
    'tsx',
    guard,
    '--results',
    res,
    '--baseline',
    baselineFile,
    '--update',
  ]);
  t.is(JSON.parse(readFileSync(baselineFile, 'utf8')).figures['b.a'].ratio, 3);
  t.is(runGuard(res, baselineFile).status, 0);
});
