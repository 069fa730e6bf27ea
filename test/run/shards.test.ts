import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { parsePlanText } from '../../src/app/plan/load.ts';
import { mergeRowEvidence } from '../../src/app/run/merge-evidence.ts';
import { assignShards, parseShard, shardUnits, type Unit, unitsOf } from '../../src/app/run/shards.ts';
import { decidePlan } from '../../src/app/verdict/plan-verdicts.ts';
import { rowEvidence, writeShard } from '../helpers/shard-sessions.ts';

/**
 * Shards and merge without a cluster: the unit assignment (deterministic, every unit once, balanced,
 * the unsharded seeds), `run --shard --dry-run`, and `sessions merge` over recorded shard sessions of
 * plans/etcd-register.md at hardening tier (3 seeds per scenario, 9 units over 3 shards) against the
 * verdicts of an unsharded run over the same evidence. The real-cluster comparison is
 * test/e2e/shards-demo.test.ts (`npm run test:shards`).
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const planText = readFileSync(planPath, 'utf8');
const plan = parsePlanText(planText, planPath);
const fl = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });

test('--shard K/N is parsed strictly', (t) => {
  t.deepEqual(parseShard('2/3'), { index: 2, count: 3 });
  for (const bad of ['0/3', '4/3', '3', '1/0', 'a/b', '1/1001'])
    t.throws(() => parseShard(bad), { message: /--shard/ }, bad);
});

test('every unit is in exactly one shard, with its unsharded seed, and the shards are balanced', (t) => {
  const rows = plan.resolved.filter((r) => r.parentId === null);
  const all = unitsOf(rows, 'hardening', 7);
  t.is(all.length, 9, '3 scenarios × 3 hardening seeds');
  t.deepEqual(
    all.filter((u) => u.row === 'S3').map((u) => u.seed),
    [7, 8, 9],
  );
  // A made-up plan of uneven units: a long scenario and many short ones.
  const uneven: Unit[] = [
    ...Array.from({ length: 3 }, (_, i) => ({ row: 'L', seedIndex: i, seed: 1 + i, costS: 600 })),
    ...Array.from({ length: 20 }, (_, i) => ({ row: 'S', seedIndex: i, seed: 1 + i, costS: 60 })),
  ];
  for (const units of [all, uneven])
    for (let n = 1; n <= 7; n++) {
      const owner = assignShards(units, n);
      t.deepEqual(assignShards(units, n), owner, 'deterministic');
      const shares = Array.from({ length: n }, (_, k) => shardUnits(units, { index: k + 1, count: n }));
      t.is(shares.flat().length, units.length, `n=${n}: every unit once`);
      t.deepEqual(
        shares
          .flat()
          .map((u) => `${u.row}#${u.seed}`)
          .sort(),
        units.map((u) => `${u.row}#${u.seed}`).sort(),
      );
      const load = shares.map((s) => s.reduce((x, u) => x + u.costS, 0));
      const total = units.reduce((x, u) => x + u.costS, 0);
      // Graham's list-scheduling bound: no shard exceeds an even share by more than one unit.
      const bound = total / n + Math.max(...units.map((u) => u.costS));
      t.true(Math.max(...load) <= bound + 1e-9, `n=${n}: ${load.join(',')} within ${bound}`);
    }
});

test('run --shard K/N --dry-run lists the shard units; together they are the unsharded units', async (t) => {
  const seen: string[] = [];
  for (let k = 1; k <= 3; k++) {
    const r = await fl(
      'run',
      planPath,
      '--shard',
      `${k}/3`,
      '--dry-run',
      '--tier',
      'hardening',
      '--seed',
      '7',
      '--json',
    );
    t.is(r.exitCode, 0, r.stderr);
    const units = (JSON.parse(r.stdout) as { units: { row: string; seed: number }[] }).units;
    t.true(units.length > 0);
    seen.push(...units.map((u) => `${u.row}#${u.seed}`));
    t.regex(r.stderr, new RegExp(`shard ${k}/3: ${units.length} unit\\(s\\)`));
  }
  const all = await fl('run', planPath, '--dry-run', '--tier', 'hardening', '--seed', '7', '--json');
  const every = (JSON.parse(all.stdout) as { units: { row: string; seed: number }[] }).units;
  t.deepEqual(seen.sort(), every.map((u) => `${u.row}#${u.seed}`).sort());
  const bad = await fl('run', planPath, '--shard', '3/2', '--dry-run');
  t.is(bad.exitCode, 254);
  t.regex(bad.stderr, /--shard 3\/2: K is between 1 and 2/);
});

/** S3 FAILs on seeds 8 and 9; S1 and S2 pass every seed. */
const fails = (row: string, seed: number) => row === 'S3' && seed >= 8;

test('sessions merge: verdicts as an unsharded run over the same units; missing and duplicate shards are named', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'fl-merge-'));
  const units = unitsOf(
    plan.resolved.filter((r) => r.parentId === null),
    'hardening',
    7,
  );
  const shardOf = { plan, planPath, tier: 'hardening' as const, units, fails };
  const dirs = [1, 2, 3].map((k) => writeShard(root, k, 3, shardOf));

  const merged = await fl('sessions', 'merge', ...dirs, '--out', join(root, 'merged'), '--json');
  t.is(merged.exitCode, 1, merged.stderr);
  const result = JSON.parse(merged.stdout) as {
    sessionDir: string;
    rows: { scenario: string; verdict: string; expected: string }[];
  };
  // The unsharded run over the same units: each row's seeds in order, stopping at S3's first FAIL.
  const unsharded = ['S1', 'S2', 'S3'].map((row) =>
    rowEvidence(
      row,
      [7, 8, 9].map((seed) => ({ seed, fail: fails(row, seed) })),
    ),
  );
  const expected = decidePlan(plan, unsharded, undefined, { sharedClock: true, unselected: new Set() });
  t.deepEqual(
    result.rows.map((r) => `${r.scenario} ${r.verdict}`),
    expected.rows.map((d) => `${d.scenario} ${d.verdict}`),
  );
  const report = JSON.parse(readFileSync(join(result.sessionDir, 'findings', 'report.json'), 'utf8'));
  const s3 = report.scenarios.find((s: { id: string }) => s.id === 'S3');
  t.is(s3.verdict, 'FAIL-reproducible');
  t.true(
    s3.reasons.join(' ').length > 0 &&
      s3.countsPerSeed.map((c: { seed: number }) => c.seed).join(',') === '7,8',
    'seed 9 ran in a shard but an unsharded run stops at seed 8',
  );
  const s1 = report.scenarios.find((s: { id: string }) => s.id === 'S1');
  t.deepEqual(
    s1.countsPerSeed.map((c: { seed: number; ops: number }) => [c.seed, c.ops]),
    [
      [7, 1007],
      [8, 1008],
      [9, 1009],
    ],
  );
  t.is(s1.counts.ops, 1007 + 1008 + 1009, 'counts cover every seed');
  const metrics = JSON.parse(readFileSync(join(result.sessionDir, 'metrics', 'S1.json'), 'utf8'));
  t.is(metrics.total.ops, 3024);
  t.is(metrics.perSeed.length, 3);
  t.regex(metrics.perSeed[1].runDir, /^shards\/\d\/artifacts\/S1\/01-run-seed-8$/);
  const junit = readFileSync(join(result.sessionDir, 'junit.xml'), 'utf8');
  t.regex(junit, /tests="3"/);
  const session = JSON.parse(readFileSync(join(result.sessionDir, 'session.json'), 'utf8'));
  t.is(session.shard, null);
  t.is(session.units.length, 9);
  t.is(session.mergedFrom.length, 3);
  // The store reads the merged session as one run.
  const list = await fl('sessions', 'list', '--root', join(root, 'merged'));
  t.regex(list.stdout, /etcd-register \(1 session\(s\)\)/);

  const missing = await fl('sessions', 'merge', dirs[0]!, dirs[2]!, '--out', join(root, 'x'));
  t.is(missing.exitCode, 254);
  t.regex(missing.stderr, /shard\(s\) 2\/3 missing: given 1\/3, 3\/3/);
  const twice = await fl(
    'sessions',
    'merge',
    dirs[0]!,
    dirs[1]!,
    dirs[1]!,
    dirs[2]!,
    '--out',
    join(root, 'x'),
  );
  t.is(twice.exitCode, 254);
  t.regex(twice.stderr, /shard 2\/3 given twice: /);
  const other = writeShard(join(root, 'other'), 2, 3, { ...shardOf, hash: 'f'.repeat(64) });
  const mixed = await fl('sessions', 'merge', dirs[0]!, other, dirs[2]!, '--out', join(root, 'x'));
  t.is(mixed.exitCode, 254);
  t.regex(mixed.stderr, /plan sha256 f{64} differs/);
});

test('mergeRowEvidence: seeds after the first FAIL are dropped and named, the FAIL is the primary', (t) => {
  const a = rowEvidence('S3', [
    { seed: 7, fail: false },
    { seed: 9, fail: true },
  ]);
  const b = rowEvidence('S3', [{ seed: 8, fail: true }]);
  const m = mergeRowEvidence([
    { shard: 1, ev: a },
    { shard: 2, ev: b },
  ]);
  t.deepEqual(
    m.evidence.seeds.map((s) => `${s.seed} ${s.outcome}`),
    ['7 pass', '8 fail'],
  );
  t.is(m.primaryShard, 2);
  t.deepEqual(m.dropped, ['9 (shard 1)']);
  t.true(m.evidence.notes.some((n) => /seed\(s\) 9 \(shard 1\) not judged/.test(n)));
});
