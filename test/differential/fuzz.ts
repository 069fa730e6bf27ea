/**
 * `npm run fuzz:oracles [-- --count N] [-- --seconds S] [-- --seed X]`: the differential tests without the
 * CI's fixed seeds and sizes. Rounds of 1,000 histories per case (every linearizability model, every
 * catalogue checker on random and on correct-system histories) run until N histories in all were compared
 * or S seconds passed (default: 1,000,000 histories, no time limit). The first disagreement stops the run
 * and prints the shrunk history (exit 1). Prints the counts per case at the end.
 */
import { parseArgs } from 'node:util';
import { CATALOGUE_CASES, catalogueDifferential } from './catalogue.ts';
import { caseLabel, LINEARIZABILITY_CASES, linearizabilityDifferential } from './differential.ts';
import { elleDifferential } from './elle.ts';
import { elleRwDifferential } from './elle-rw.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '0' },
    seed: { type: 'string' },
  },
});
const count = Number(values.count);
const seconds = Number(values.seconds);
if (!Number.isSafeInteger(count) || count <= 0 || !Number.isFinite(seconds) || seconds < 0) {
  process.stderr.write(
    'fuzz:oracles: --count must be a positive integer and --seconds a non-negative number\n',
  );
  process.exit(254);
}
const deadline = seconds > 0 ? Date.now() + seconds * 1000 : Number.POSITIVE_INFINITY;
let seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const started = Date.now();
const ROUND = 1000;

const jobs: { label: string; run: (seed: number) => Promise<{ histories: number }> }[] = [
  ...LINEARIZABILITY_CASES.map((c) => ({
    label: `linearizable ${caseLabel(c)}`,
    run: (s: number) => linearizabilityDifferential(c, ROUND, s),
  })),
  ...CATALOGUE_CASES.flatMap((c) => [
    {
      label: `${c.label ?? c.checker} (reference)`,
      run: (s: number) => catalogueDifferential(c, ROUND, s, false),
    },
    {
      label: `${c.label ?? c.checker} (correct system)`,
      run: (s: number) => catalogueDifferential(c, ROUND, s, true),
    },
  ]),
  { label: 'elle list-append (brute force)', run: (s: number) => elleDifferential(ROUND / 4, s) },
  { label: 'elle rw-register (brute force)', run: (s: number) => elleRwDifferential(ROUND / 4, s) },
];
const counts = new Map<string, number>();
let total = 0;
process.stdout.write(
  `fuzz:oracles: first seed ${seed}, up to ${count} histories${seconds ? ` or ${seconds} s` : ''}\n`,
);
try {
  while (total < count && Date.now() < deadline) {
    for (const job of jobs) {
      const s = seed++;
      const { histories } = await job.run(s);
      counts.set(job.label, (counts.get(job.label) ?? 0) + histories);
      total += histories;
      if (total >= count || Date.now() >= deadline) break;
    }
  }
} catch (err) {
  process.stdout.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
for (const [label, n] of counts) process.stdout.write(`  ${label}: ${n}\n`);
process.stdout.write(
  `fuzz:oracles: ${total} histories in ${((Date.now() - started) / 1000).toFixed(1)} s, ${process.exitCode === 1 ? 'a disagreement (above)' : 'no disagreement'}\n`,
);
