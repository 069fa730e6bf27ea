/**
 * bench:startup — how long `faultline` takes to start and answer on a small history, from the built
 * package (dist/, what `npm install faultline` runs: no TypeScript transpiling), next to bare `node -e 0`.
 *
 *   npm run build && npm run bench:startup [-- --runs 10 --json --keep-extra-ca-certs]
 *
 * Each command runs `--runs` times after one warm-up (the page cache holds the files, as it does for a CI
 * job checking many keys). Wall time is measured around the child; CPU time (user + system) is the
 * child's own, read from bash's `times` (so a loaded machine, where wall time stretches, still compares).
 * Peak RSS comes from one extra run with a preload that reports `process.resourceUsage().maxRSS` at exit.
 * Target (issue 22): `check` and `history stats` ≤ 100 ms on a quiet machine.
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

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    'keep-extra-ca-certs': { type: 'boolean', default: false },
  },
});
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs needs a positive integer');

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
  name: string;
  argv: string[];
  expectExit: number;
}

const subjects: Subject[] = [
  { name: 'node -e 0', argv: ['-e', '0'], expectExit: 0 },
  { name: 'faultline --version', argv: [bin, '--version'], expectExit: 0 },
  {
    name: 'faultline check (linearizable)',
    argv: [bin, 'check', history, '--checker', 'linearizable', '--model', 'cas-register'],
    expectExit: 0,
  },
  { name: 'faultline history stats', argv: [bin, 'history', 'stats', history], expectExit: 0 },
];

/** Runs node with argv under bash, returning wall ms and the child's CPU ms (bash `times`). */
function runOnce(argv: string[], env: NodeJS.ProcessEnv): { wallMs: number; cpuMs: number; status: number } {
  const script = '"$@" >/dev/null 2>&1; rc=$?; times; exit $rc';
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', script, 'bench', process.execPath, ...argv], { env, encoding: 'utf8' });
  const wallMs = performance.now() - t0;
  // `times` prints the shell's own user/sys, then its children's: "0m0.081s 0m0.012s".
  const children = r.stdout.trim().split('\n').at(-1) ?? '';
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { wallMs, cpuMs: ((secs[0] ?? 0) + (secs[1] ?? 0)) * 1000, status: r.status ?? -1 };
}

function peakRssMb(argv: string[], env: NodeJS.ProcessEnv): number {
  const r = spawnSync(process.execPath, ['--import', rssProbe, ...argv], { env, encoding: 'utf8' });
  const m = /PEAK_RSS_KB (\d+)/.exec(r.stderr);
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const env = { ...process.env };
delete env.FAULTLINE_FROM_SOURCE;
delete env.NODE_OPTIONS;
const extraCaCerts = env.NODE_EXTRA_CA_CERTS;
if (!args['keep-extra-ca-certs']) delete env.NODE_EXTRA_CA_CERTS;

/** Median wall/CPU of `node -e 0` in `e`. */
function bareNode(e: NodeJS.ProcessEnv): { wallMs: number; cpuMs: number } {
  runOnce(['-e', '0'], e);
  const rs = Array.from({ length: runs }, () => runOnce(['-e', '0'], e));
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
const results = [];
try {
  for (const s of subjects) {
    const warm = runOnce(s.argv, env);
    if (warm.status !== s.expectExit) {
      throw new Error(`${s.name}: exit ${warm.status}, expected ${s.expectExit}`);
    }
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const r = runOnce(s.argv, env);
      wall.push(r.wallMs);
      cpu.push(r.cpuMs);
    }
    results.push({
      command: s.name,
      wallMsMedian: Math.round(median(wall)),
      wallMsMin: Math.round(Math.min(...wall)),
      cpuMsMedian: Math.round(median(cpu)),
      peakRssMb: peakRssMb(s.argv, env),
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const loadAfter = loadavg()[0] ?? 0;
const caKept = extraCaCerts !== undefined && args['keep-extra-ca-certs'];
const base = results[0];
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version as string;

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
      targetMs: 100,
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
    const over = base && r !== base ? `  (+${r.wallMsMedian - base.wallMsMedian} ms wall over node)` : '';
    process.stdout.write(
      `${r.command.padEnd(32)} wall ${String(r.wallMsMedian).padStart(5)} ms (min ${String(r.wallMsMin).padStart(4)})  cpu ${String(r.cpuMsMedian).padStart(5)} ms  peak RSS ${String(r.peakRssMb).padStart(4)} MB${over}\n`,
    );
  }
  process.stdout.write(
    'target: check and history stats ≤ 100 ms wall on a quiet machine; on a loaded one compare cpu to node -e 0\n',
  );
}
