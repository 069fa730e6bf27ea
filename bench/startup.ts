/**
 * bench:startup — how long `faultline` takes to start and answer on a small history, from the built
 * package (dist/, what `npm install faultline` runs: no TypeScript transpiling), next to bare `node -e 0`.
 *
 *   npm run build && npm run bench:startup [-- --runs 10 --json --keep-extra-ca-certs]
 *   npm run bench:startup -- --ci     short version for the regression guard (9 pairs)
 *
 * Each command runs `--runs` times after one warm-up, alternately with `node -e 0` (its floor: the ratio
 * of the two, written to bench/results/startup.json for bench/guard.ts, hardly moves with the load) (the page cache holds the files, as it does for a CI
 * job checking many keys). Wall time is measured around the child; CPU time (user + system) is the
 * child's own, read from bash's `times` (so a loaded machine, where wall time stretches, still compares).
 * Peak RSS comes from one extra run with a preload that reports `process.resourceUsage().maxRSS` at exit.
 * Target: `check`, `history stats` and `--help` ≤ `node -e 0` + 40 ms, measured in the same run.
 *
 * NODE_EXTRA_CA_CERTS makes every node process read and parse that certificate file at start-up (tens
 * of ms, before any of faultline's code runs). The bench says whether it is set, measures `node -e 0`
 * with and without it, and measures the commands without it unless `--keep-extra-ca-certs` is given.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Figure, measurePair, median, timeCommand, writeResults } from './figures.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    ci: { type: 'boolean', default: false },
    results: { type: 'string' },
    json: { type: 'boolean', default: false },
    'keep-extra-ca-certs': { type: 'boolean', default: false },
  },
});
const runs = args.ci && !process.argv.includes('--runs') ? 9 : Number(args.runs);
if (!Number.isInteger(runs) || runs < 3) throw new Error('--runs needs an integer ≥ 3 (medians)');

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'faultline.js');
if (!existsSync(join(root, 'dist', 'src', 'app', 'cli', 'main.js'))) {
  process.stderr.write('bench:startup measures the built package: run `npm run build` first\n');
  process.exit(254);
}

const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-startup-'));

/** A small valid cas-register history: 50 ops over 5 processes, one key. */
function writeHistory(file: string): void {
  const lines: string[] = [];
  let index = 0;
  let value = 0;
  for (let op = 0; op < 50; op++) {
    const process = op % 5;
    const f = op % 3 === 0 ? 'write' : op % 3 === 1 ? 'read' : 'cas';
    const invokeValue = f === 'write' ? op : f === 'cas' ? [value, op] : null;
    const okValue = f === 'read' ? value : invokeValue;
    if (f !== 'read') value = op;
    for (const [type, v] of [
      ['invoke', invokeValue],
      ['ok', okValue],
    ] as const) {
      lines.push(
        JSON.stringify({
          index,
          type,
          f,
          value: v,
          process,
          time: index * 1000,
          node: 'n1',
          faultEpoch: null,
        }),
      );
      index++;
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

const history = join(dir, 'history.jsonl');
writeHistory(history);
const rssProbe = join(dir, 'rss-probe.mjs');
writeFileSync(
  rssProbe,
  "process.on('exit', () => process.stderr.write('\\nPEAK_RSS_KB ' + process.resourceUsage().maxRSS + '\\n'));\n",
);

interface Subject {
  id: string;
  name: string;
  argv: string[];
  expectExit: number;
  /** The program run (node unless said). */
  command?: string;
}

const subjects: Subject[] = [
  { id: 'startup.version', name: 'faultline --version', argv: [bin, '--version'], expectExit: 0 },
  { id: 'startup.help', name: 'faultline --help', argv: [bin, '--help'], expectExit: 0 },
  {
    id: 'startup.check',
    name: 'faultline check (linearizable)',
    argv: [bin, 'check', history, '--checker', 'linearizable', '--model', 'cas-register'],
    expectExit: 0,
  },
  {
    id: 'startup.history-stats',
    name: 'faultline history stats',
    argv: [bin, 'history', 'stats', history],
    expectExit: 0,
  },
];
// `npx faultline` as users type it: npm's own start-up comes first (not in the CI form: it measures npm).
const npxBin = join(root, 'node_modules', '.bin', 'faultline');
if (!args.ci) {
  if (existsSync(npxBin))
    subjects.push({
      id: 'startup.npx-version',
      name: 'npx faultline --version',
      command: 'npx',
      argv: ['--no-install', 'faultline', '--version'],
      expectExit: 0,
    });
  else process.stdout.write(`npx faultline is not measured: ${npxBin} is absent (npm ci links it)\n`);
}

function peakRssMb(argv: string[], env: NodeJS.ProcessEnv): number {
  const r = spawnSync(process.execPath, ['--import', rssProbe, ...argv], { env, encoding: 'utf8' });
  const m = /PEAK_RSS_KB (\d+)/.exec(r.stderr);
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

const env = { ...process.env };
delete env.FAULTLINE_FROM_SOURCE;
delete env.NODE_OPTIONS;
const extraCaCerts = env.NODE_EXTRA_CA_CERTS;
if (!args['keep-extra-ca-certs']) delete env.NODE_EXTRA_CA_CERTS;
const node = (argv: string[], e: NodeJS.ProcessEnv) => timeCommand(process.execPath, argv, e);

/** Median wall/CPU of `node -e 0` in `e`. */
function bareNode(e: NodeJS.ProcessEnv): { wallMs: number; cpuMs: number } {
  node(['-e', '0'], e);
  const rs = Array.from({ length: runs }, () => node(['-e', '0'], e));
  return {
    wallMs: Math.round(median(rs.map((r) => r.wallMs))),
    cpuMs: Math.round(median(rs.map((r) => r.cpuMs))),
  };
}

const loadBefore = loadavg()[0] ?? 0;
// The certificate file's own cost, measured only when it is set (both runs otherwise equal).
const caCerts =
  extraCaCerts === undefined
    ? null
    : {
        with: bareNode({ ...env, NODE_EXTRA_CA_CERTS: extraCaCerts }),
        without: bareNode((({ NODE_EXTRA_CA_CERTS: _, ...rest }) => rest)(env)),
      };
// Each command alternately with `node -e 0` (its floor), so both see the same load.
const figures: Figure[] = [];
const results = [];
try {
  for (const s of subjects) {
    const f = measurePair(
      {
        id: s.id,
        figure: `${s.name} (start-up, built package)`,
        floor: 'node -e 0 (same run)',
        samples: runs,
      },
      () => (s.command ? timeCommand(s.command, s.argv, env) : node(s.argv, env)),
      () => node(['-e', '0'], env),
      (t, which) => {
        const want = which === 'figure' ? s.expectExit : 0;
        if (t.status !== want)
          throw new Error(`${s.name}: exit ${t.status}, expected ${want}: ${t.stderr.trim()}`);
      },
    );
    figures.push(f);
    results.push({
      command: s.name,
      wallMsMedian: Math.round(f.wallMs),
      cpuMsMedian: Math.round(f.cpuMs),
      nodeWallMsMedian: Math.round(f.floorWallMs),
      nodeCpuMsMedian: Math.round(f.floorCpuMs),
      peakRssMb: s.command ? Number.NaN : peakRssMb(s.argv, env),
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const loadAfter = loadavg()[0] ?? 0;
const caKept = extraCaCerts !== undefined && args['keep-extra-ca-certs'];
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version as string;
const resultsFile = writeResults(
  { bench: 'startup', mode: args.ci ? 'ci' : 'full', figures, skipped: [] },
  ...(args.results ? [args.results] : []),
);

if (args.json) {
  process.stdout.write(
    `${JSON.stringify({
      bench: 'startup',
      version,
      node: process.version,
      runs,
      load: [loadBefore, loadAfter],
      nodeExtraCaCerts: { set: extraCaCerts !== undefined, keptForCommands: caKept, cost: caCerts },
      results,
      targetOverNodeMs: 40,
    })}\n`,
  );
} else {
  process.stdout.write(
    `bench:startup — ${runs} runs each after a warm-up, node ${process.version}, load ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}\n`,
  );
  process.stdout.write(
    caCerts === null
      ? 'NODE_EXTRA_CA_CERTS: not set\n'
      : `NODE_EXTRA_CA_CERTS: set; node -e 0 takes ${caCerts.with.wallMs} ms wall / ${caCerts.with.cpuMs} ms cpu with it, ${caCerts.without.wallMs} / ${caCerts.without.cpuMs} without (+${caCerts.with.wallMs - caCerts.without.wallMs} ms wall); commands below measured ${caKept ? 'WITH it (--keep-extra-ca-certs)' : 'without it'}\n`,
  );
  for (const r of results) {
    process.stdout.write(
      `${r.command.padEnd(32)} wall ${String(r.wallMsMedian).padStart(5)} ms  cpu ${String(r.cpuMsMedian).padStart(5)} ms  peak RSS ${(Number.isNaN(r.peakRssMb) ? '-' : String(r.peakRssMb)).padStart(4)} MB  ` +
        `node -e 0 (alternately) ${r.nodeWallMsMedian} / ${r.nodeCpuMsMedian} ms: +${r.wallMsMedian - r.nodeWallMsMedian} ms wall, +${r.cpuMsMedian - r.nodeCpuMsMedian} ms cpu\n`,
    );
  }
  process.stdout.write('target: check, history stats and --help ≤ node -e 0 + 40 ms (same run)\n');
  process.stdout.write(`results: ${resultsFile}\n`);
}
