/**
 * `npm run fuzz [-- --count N] [-- --seconds S] [-- --seed X] [-- --class NAME]`: the abuse suite's input
 * classes (./fixtures/fuzz-classes.ts, the same as test/security/fuzz.test.ts runs in CI with a fixed
 * seed and 1,000 cases per class) for longer. Rounds of 1,000 cases per class, each round a new seed,
 * until N cases per class ran or S seconds passed (default: 10,000 per class, no time limit). Prints
 * each class's counts, and every failing case with the seed and case number that reproduce it; exits 1
 * when any case crashed, hung, gave an error not naming its file, wrote outside its sandbox or ran a
 * command.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FUZZ_CLASSES, fuzzClass, type Tally } from './fixtures/fuzz-classes.ts';
import { FuzzRunner } from './fixtures/fuzz-runner.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '0' },
    seed: { type: 'string' },
    class: { type: 'string', multiple: true },
  },
});
const count = Number(values.count);
const seconds = Number(values.seconds);
if (!Number.isSafeInteger(count) || count <= 0 || !Number.isFinite(seconds) || seconds < 0) {
  process.stderr.write('fuzz: --count must be a positive integer and --seconds a non-negative number\n');
  process.exit(254);
}
const classes = values.class ? FUZZ_CLASSES.filter((c) => values.class?.includes(c.name)) : FUZZ_CLASSES;
if (classes.length === 0) {
  process.stderr.write(`fuzz: --class is one of: ${FUZZ_CLASSES.map((c) => c.name).join(', ')}\n`);
  process.exit(254);
}
const deadline = seconds > 0 ? Date.now() + seconds * 1000 : undefined;
let seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const ROUND = 1000;
const dir = mkdtempSync(join(tmpdir(), 'fl-fuzz-'));
const runners = [new FuzzRunner(), new FuzzRunner()];
const totals = new Map<string, Tally>(
  classes.map((c) => [c.name, { cls: c.name, cases: 0, handled: 0, crashes: [] }]),
);
const started = Date.now();
let round = 0;
try {
  while (
    [...totals.values()].some((t) => t.cases < count) &&
    (deadline === undefined || Date.now() < deadline)
  ) {
    const roundSeed = seed++;
    await Promise.all(
      classes.map(async (cls, k) => {
        const total = totals.get(cls.name) as Tally;
        const n = Math.min(ROUND, count - total.cases);
        if (n <= 0) return;
        const sandbox = join(dir, `r${round}-c${k}`);
        mkdirSync(sandbox);
        const r = await fuzzClass(runners[k % runners.length] as FuzzRunner, cls, {
          count: n,
          seed: roundSeed,
          sandbox,
          deadline,
        });
        total.cases += r.cases;
        total.handled += r.handled;
        total.crashes.push(...r.crashes);
        rmSync(sandbox, { recursive: true, force: true });
      }),
    );
    round++;
  }
} finally {
  await Promise.all(runners.map((r) => r.close()));
  rmSync(dir, { recursive: true, force: true });
}
let failed = 0;
for (const t of totals.values()) {
  process.stdout.write(
    `${t.cls.padEnd(28)} ${String(t.cases).padStart(8)} cases  ${String(t.handled).padStart(8)} handled  ${t.crashes.length} failed\n`,
  );
  for (const c of t.crashes.slice(0, 20)) process.stdout.write(`  ${c}\n`);
  failed += t.crashes.length;
}
process.stdout.write(
  `${round} rounds from seed ${seed - round} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
process.exit(failed > 0 ? 1 : 0);
