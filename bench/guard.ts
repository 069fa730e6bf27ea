/**
 * The regression guard: compares the ratios the benches just wrote (bench/results/*.json, see
 * ./figures.ts) with the committed baseline (bench/baseline.json) and fails when one is more than the
 * baseline's tolerance (30 %) worse, or when a baseline figure was not measured and its bench named no
 * reason. Ratios, not times: each is a figure over a floor measured alternately in the same run, so a
 * loaded host stretches both and the guard does not fail because the host is busy.
 *
 *   npm run bench:guard [-- --results DIR] [--baseline FILE]
 *   npm run bench:guard -- --update      write this run's ratios as the new baseline (after a change
 *                                        that is meant to cost more, say why in the commit)
 *
 * Exit 0: every figure within tolerance; 1: a figure is worse or missing; 254: bad input.
 */
import { writeFileSync } from 'node:fs';
import { type Baseline, baselinePath, judge, readBaseline, readResults, resultsDir } from './figures.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dir = resultsDir();
const file = arg('--baseline') ?? baselinePath;
let baseline: Baseline;
let results: ReturnType<typeof readResults>;
try {
  baseline = readBaseline(file);
  results = readResults(dir);
} catch (err) {
  process.stderr.write(`bench:guard: ${(err as Error).message}\n`);
  process.exit(254);
}
if (results.length === 0) {
  process.stderr.write(`bench:guard: no results in ${dir}: run the benches first (scripts/bench-ci.sh)\n`);
  process.exit(254);
}

if (process.argv.includes('--update')) {
  const figures: Baseline['figures'] = {};
  for (const r of results)
    for (const f of r.figures)
      figures[f.id] = {
        ratio: f.ratio,
        figure: f.figure,
        floor: f.floor,
        measured: `${r.at}, load ${f.loadAverage.join('→')}`,
      };
  writeFileSync(file, `${JSON.stringify({ tolerance: baseline.tolerance, figures }, null, 2)}\n`);
  process.stdout.write(`bench:guard: wrote ${Object.keys(figures).length} ratios to ${file}\n`);
  process.exit(0);
}

const verdicts = judge(baseline, results);
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)} %`;
for (const v of verdicts) {
  const detail =
    v.status === 'missing'
      ? 'not measured in this run'
      : v.status === 'skipped'
        ? `skipped: ${v.reason}`
        : `${v.ratio}× against baseline ${v.baseline}× (${pct(v.change ?? 0)})`;
  process.stdout.write(
    `${v.status === 'ok' || v.status === 'skipped' ? '  ' : '✗ '}${v.id.padEnd(40)} ${v.status.padEnd(7)} ${detail}\n`,
  );
}
const failed = verdicts.filter((v) => v.status === 'worse' || v.status === 'missing');
process.stdout.write(
  failed.length === 0
    ? `bench:guard: ${verdicts.length} ratios within ${pct(baseline.tolerance)} of the baseline\n`
    : `bench:guard: ${failed.length} of ${verdicts.length} ratios worse than the baseline by more than ${pct(baseline.tolerance)} or not measured\n`,
);
process.exit(failed.length === 0 ? 0 : 1);
