/**
 * Prints the ratio table README shows: every figure the benches last wrote (bench/results/*.json)
 * against its floor or anchor, with the committed baseline ratio beside it and the load average.
 *
 *   npm run bench:report [-- --results DIR] [--baseline FILE]
 */
import { existsSync } from 'node:fs';
import { baselinePath, readBaseline, readResults, resultsDir } from './figures.ts';

const i = process.argv.indexOf('--baseline');
const file = i >= 0 ? (process.argv[i + 1] as string) : baselinePath;
const baseline = existsSync(file) ? readBaseline(file) : null;
const dir = resultsDir();
const results = readResults(dir);
if (results.length === 0) {
  process.stderr.write(`bench:report: no results in ${dir}: run the benches first (scripts/bench-ci.sh)\n`);
  process.exit(254);
}
const rows = [
  '| figure | floor or anchor | CPU (figure / floor) | ratio CPU (baseline) | ratio wall | load average |',
  '|---|---|---|---|---|---|',
];
for (const r of results)
  for (const f of r.figures) {
    const base = baseline?.figures[f.id]?.ratio;
    rows.push(
      `| ${f.figure} (\`${f.id}\`) | ${f.floor} | ${f.cpuMs} / ${f.floorCpuMs} ms | ${f.ratio}×${base === undefined ? '' : ` (${base}×)`} | ${f.wallRatio}× | ${f.loadAverage.join(' → ')} |`,
    );
  }
for (const r of results)
  for (const s of r.skipped) rows.push(`| \`${s.id}\` | skipped: ${s.reason} | | | | |`);
process.stdout.write(`${rows.join('\n')}\n`);
