/**
 * `faultline check` through the command line against its floor, in the same run:
 *
 * - the floor: reading the same JSONL file and `JSON.parse`-ing it line by line in plain Node
 *   (./floor-jsonl.mjs), what any checker of that file must at least pay;
 * - the figure: `faultline check FILE` from the built package (what an installed `faultline` runs),
 *   start-up, reading, pairing, checking and printing included;
 * - for the linearizable case also the bench's own figure for the same file (bench:linearizability's
 *   sized case: read, pair and check in-process, start-up excluded), so the CLI/bench gap is a ratio.
 *
 * Cases: a cas-register history of `--ops` ops (10 processes, 10 % info writes, values 0..4; the file
 * bench:linearizability streams) checked with `--checker linearizable`, and a list-append history of
 * `--txns` transactions (snapshot-isolation simulator, concurrency 10; the file bench:elle
 * `--from-file` writes) checked with `--checker elle`. Figure and floor run alternately, `--samples`
 * pairs after one warm-up of each; every ratio is the median of the per-pair ratios. CPU time is the
 * child's user + system (all threads), wall time what a user waits for.
 *
 *   npm run build && npm run bench:cli [-- --ops 1e6] [--txns 1e6] [--samples 3] [--no-elle] [--json]
 *   npm run bench:cli -- --ci     short version for the regression guard (100k ops, 100k txns)
 *
 * Results go to bench/results/cli.json (--results DIR), the form bench/guard.ts compares.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Figure, measurePair, type Timing, timeCommand, writeResults } from './figures.ts';
import type { GeneratedCase } from './linearizability-generated.ts';
import { historyFile } from './linearizability-generated.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name} needs a positive integer`);
  return v;
}

const ci = process.argv.includes('--ci');
const ops = arg('--ops', ci ? 100_000 : 1_000_000);
const txns = arg('--txns', ci ? 100_000 : 1_000_000);
const samples = arg('--samples', 3);
const json = process.argv.includes('--json');
const withElle = !process.argv.includes('--no-elle');

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'faultline.js');
const floorScript = join(root, 'bench', 'floor-jsonl.mjs');
if (!existsSync(join(root, 'dist', 'src', 'app', 'cli', 'main.js'))) {
  process.stderr.write('bench:cli measures the built package: run `npm run build` first\n');
  process.exit(254);
}
// The built package, as installed: no tsx, no inherited flags.
const env = { ...process.env };
delete env.FAULTLINE_FROM_SOURCE;
delete env.NODE_OPTIONS;

const size = (n: number) => (n % 1_000_000 === 0 ? `${n / 1_000_000}M` : `${n / 1000}k`);
const floorName = 'read + JSON.parse line by line (plain Node, same file)';
const expectExit = (id: string, code: number) => (t: Timing, which: 'figure' | 'floor') => {
  const want = which === 'figure' ? code : 0;
  if (t.status !== want)
    throw new Error(`${id} (${which}): exit ${t.status}, expected ${want}: ${t.stderr.trim()}`);
};

const figures: Figure[] = [];
/** `faultline check FILE …` from the built package. */
const cliCheck = (file: string, checkerArgs: string[]) => () =>
  timeCommand(process.execPath, [bin, 'check', file, ...checkerArgs], env);
/** The CLI against the floor on the same file. */
const againstFloor = (id: string, figure: string, file: string, checkerArgs: string[], exit: number) =>
  measurePair(
    { id, figure, floor: floorName, samples },
    cliCheck(file, checkerArgs),
    () => timeCommand(process.execPath, [floorScript, file], env),
    expectExit(id, exit),
  );

// Linearizable: the register history bench:linearizability checks (generated once, kept in tmpdir).
const linFile = await historyFile(ops, 'jsonl');
const linId = `cli.check-linearizable-${size(ops)}`;
const linArgs = ['--checker', 'linearizable', '--model', 'cas-register'];
const linFigure = `faultline check, ${size(ops)}-op cas-register JSONL, linearizable`;
figures.push(againstFloor(linId, linFigure, linFile, linArgs, 0));

// The same file in the bench's own process (read + pair + check, no start-up, no printing).
const generated = fileURLToPath(new URL('./linearizability-generated.ts', import.meta.url));
const benchFigure = (): Timing => {
  const out = spawnSync(
    process.execPath,
    ['--import', 'tsx', generated, '--case', 'sized', String(ops), 'jsonl'],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  if (out.status !== 0) return { wallMs: 0, cpuMs: 0, status: out.status ?? -1, stderr: out.stderr };
  const g = JSON.parse(out.stdout) as GeneratedCase;
  return { wallMs: g.wallSeconds * 1000, cpuMs: g.cpuSeconds * 1000, status: 0, stderr: '' };
};
figures.push(
  measurePair(
    {
      id: `${linId}-vs-bench`,
      figure: linFigure,
      floor: 'the same read + pair + check in the bench process (bench:linearizability)',
      samples,
    },
    cliCheck(linFile, linArgs),
    benchFigure,
    expectExit(`${linId}-vs-bench`, 0),
  ),
);

// Elle list-append: the simulator's snapshot-isolation history has anomalies, so the CLI exits 1.
if (withElle) {
  const elleFile = join(tmpdir(), `faultline-bench-cli-elle-${process.pid}-${txns}.jsonl`);
  const gen = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'bench', 'elle.ts'), '--generate', String(txns), '10', elleFile],
    { encoding: 'utf8' },
  );
  if (gen.status !== 0) throw new Error(`generating ${elleFile} failed: ${gen.stderr}`);
  try {
    figures.push(
      againstFloor(
        `cli.check-elle-${size(txns)}`,
        `faultline check, ${size(txns)}-txn list-append JSONL, elle`,
        elleFile,
        ['--checker', 'elle', '--workload', 'list-append'],
        1,
      ),
    );
  } finally {
    rmSync(elleFile, { force: true });
  }
}

const file = writeResults({ bench: 'cli', mode: ci ? 'ci' : 'full', figures, skipped: [] });
if (json) process.stdout.write(`${JSON.stringify(figures)}\n`);
else {
  for (const f of figures) {
    process.stdout.write(
      `${f.id.padEnd(34)} cpu ${String(f.cpuMs).padStart(8)} ms / floor ${String(f.floorCpuMs).padStart(8)} ms = ${f.ratio.toFixed(2)}×   ` +
        `wall ${String(f.wallMs).padStart(8)} / ${String(f.floorWallMs).padStart(8)} ms = ${f.wallRatio.toFixed(2)}×   load ${f.loadAverage.join(' → ')}\n`,
    );
  }
  process.stdout.write(`results: ${file}\n`);
}
