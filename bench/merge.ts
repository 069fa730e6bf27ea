import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePlanText } from '../src/app/plan/load.ts';
import { assignShards, unitsOf } from '../src/app/run/shards.ts';
import { writeShard } from '../test/helpers/shard-sessions.ts';

/**
 * `npm run bench:merge [-- --shards 3,10,100 --seeds 40 --json]`: `faultline sessions merge` over N
 * recorded shard sessions (no cluster: each shard's session.json, plan copy and metrics, as the merge
 * tests write them) of plans/etcd-register.md with its hardening tier widened to S seeds per scenario
 * (3 × S units). Prints, per N: the wall time of the merge command (a fresh process, start-up included),
 * the merged session's size, the longest and shortest shard budget, and the command line's length (the
 * shard directories are its arguments). Nothing runs on a cluster; the shards' histories are not
 * generated, so the copy cost measured is the session files', not a real night's artifacts.
 */
const repo = fileURLToPath(new URL('../', import.meta.url));
const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
};
const counts = arg('shards', '3,10,100').split(',').map(Number);
const seeds = Number(arg('seeds', '40'));
const json = process.argv.includes('--json');

const root = mkdtempSync(join(tmpdir(), 'fl-bench-merge-'));
const planPath = join(root, 'plan.md');
writeFileSync(
  planPath,
  readFileSync(join(repo, 'plans/etcd-register.md'), 'utf8')
    .replace(/(hardening: \{[^}]*seeds: )3/g, `$1${seeds}`)
    .replace(/× 3 seeds/g, `× ${seeds} seeds`),
);
const plan = parsePlanText(readFileSync(planPath, 'utf8'), planPath);
const units = unitsOf(
  plan.resolved.filter((r) => r.parentId === null),
  'hardening',
  7,
);
const results: Record<string, unknown>[] = [];
try {
  for (const n of counts) {
    const dir = join(root, `n${n}`);
    const dirs = Array.from({ length: n }, (_, k) =>
      writeShard(dir, k + 1, n, {
        plan,
        planPath,
        tier: 'hardening',
        units,
        fails: (row, seed) => row === 'S3' && seed === 7 + seeds - 1,
      }),
    );
    const owner = assignShards(units, n);
    const load = Array.from({ length: n }, (_, k) =>
      units.reduce((s, u, i) => s + (owner[i] === k + 1 ? u.costS : 0), 0),
    );
    const args = [
      join(repo, 'bin/faultline.js'),
      'sessions',
      'merge',
      ...dirs,
      '--out',
      join(dir, 'merged'),
      '--json',
    ];
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, {
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const wallS = (performance.now() - t0) / 1000;
    const out = r.stdout ? (JSON.parse(r.stdout) as { sessionDir: string; verdict: string }) : null;
    const du = out
      ? spawnSync('du', ['-sk', out.sessionDir], { encoding: 'utf8' }).stdout.split('\t')[0]
      : '0';
    results.push({
      shards: n,
      units: units.length,
      exitCode: r.status,
      verdict: out?.verdict ?? null,
      mergeWallS: Number(wallS.toFixed(2)),
      mergedKiB: Number(du),
      longestShardS: Math.max(...load),
      shortestShardS: Math.min(...load),
      commandLineBytes: args.join(' ').length,
      stderr: r.status === 254 ? r.stderr.trim() : undefined,
    });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const la = loadavg().map((x) => x.toFixed(1));
if (json) console.log(JSON.stringify({ loadavg: la, results }));
else {
  console.log(
    `plan: etcd-register at hardening, ${seeds} seeds per scenario: ${units.length} units; load average ${la.join(' ')}`,
  );
  for (const x of results)
    console.log(
      `${String(x.shards).padStart(4)} shards: merge ${x.mergeWallS} s (exit ${x.exitCode}, ${x.verdict}), merged session ${x.mergedKiB} KiB, budget per shard ${x.shortestShardS}-${x.longestShardS} s, command line ${x.commandLineBytes} bytes`,
    );
}
