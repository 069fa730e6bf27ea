import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * The demo plan (plans/etcd-register.md, smoke tier, seed 7) run unsharded and as 3 shards in parallel,
 * each shard on its own 3-node local cluster (three clusters at once), then merged: the merged session
 * must give the same verdict table (scenario, verdict, expectation) as the unsharded run, and its
 * report.json, junit.xml and report.html must exist. Heavy (four local clusters, about 10-20 minutes on
 * 2 cores), so outside `npm test`: `npm run test:shards` sets FAULTLINE_SHARD_TESTS=1. The wall times
 * are printed (t.log), not asserted. FAULTLINE_TEST_CLUSTER_PREFIX prefixes the cluster names.
 */
const enabled = process.env.FAULTLINE_SHARD_TESTS === '1';
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const plan = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const prefix = process.env.FAULTLINE_TEST_CLUSTER_PREFIX ?? 'fl-';
type Result = {
  exitCode: number;
  sessionDir: string;
  rows: { scenario: string; verdict: string; expected: string }[];
};

const fl = (args: string[]) =>
  execa(process.execPath, [bin, '--log-level', 'warn', ...args], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });

const runArgs = (cluster: string, out: string) => [
  'run',
  plan,
  '--local',
  '3',
  '--cluster-name',
  cluster,
  '--tier',
  'smoke',
  '--seed',
  '7',
  '--yes',
  '--max-reduction-runs',
  '2',
  '--deadline',
  '25m',
  '--out',
  out,
  '--json',
];

const table = (r: Result) => r.rows.map((x) => `${x.scenario} ${x.verdict} ${x.expected}`);
const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t0 = Date.now();
  const v = await f();
  return [v, (Date.now() - t0) / 1000];
};

(enabled ? test : test.skip)(
  `the demo plan as 3 shards merged gives the unsharded verdict table${enabled ? '' : ' (skipped: four demo runs on local clusters, about 7 minutes; npm run test:shards runs it)'}`,
  async (t) => {
    t.timeout(60 * 60_000);
    const root = mkdtempSync(join(tmpdir(), 'shards-demo-'));
    const down = (name: string) => fl(['cluster', 'down', '--name', name]);
    const names = [1, 2, 3].map((k) => `${prefix}s${k}`);
    try {
      const [shards, shardWall] = await timed(() =>
        Promise.all(
          names.map((name, i) =>
            fl([...runArgs(name, join(root, `shard-${i + 1}`)), '--shard', `${i + 1}/3`]),
          ),
        ),
      );
      const shardResults = shards.map((r) => JSON.parse(r.stdout) as Result);
      const [merged, mergeWall] = await timed(() =>
        fl([
          'sessions',
          'merge',
          ...shardResults.map((r) => r.sessionDir),
          '--out',
          join(root, 'merged'),
          '--json',
        ]),
      );
      t.true(merged.stdout.length > 0, merged.stderr);
      const m = JSON.parse(merged.stdout) as Result;
      const [plain, plainWall] = await timed(() => fl(runArgs(`${prefix}u`, join(root, 'unsharded'))));
      const u = JSON.parse(plain.stdout) as Result;
      t.log(`3 shards in parallel: ${shardWall.toFixed(0)} s wall; merge ${mergeWall.toFixed(1)} s`);
      t.log(`unsharded: ${plainWall.toFixed(0)} s wall`);
      t.log(`unsharded:\n${table(u).join('\n')}`);
      t.log(`merged:\n${table(m).join('\n')}`);
      t.deepEqual(table(m), table(u));
      t.is(merged.exitCode, plain.exitCode);
      for (const f of ['findings/report.json', 'findings/report.html', 'junit.xml', 'session.json'])
        t.notThrows(() => readFileSync(join(m.sessionDir, f)), f);
    } finally {
      for (const n of [...names, `${prefix}u`]) await down(n);
    }
  },
);
