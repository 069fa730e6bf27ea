import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * examples/zookeeper and examples/nats end to end on a 3-node local cluster (root on Debian 12 with
 * zookeeperd, nats-server and FUSE; each example's npm dependencies are installed when missing). The
 * smoke runs in `npm test`, the two negative controls at once (about 3 minutes): ZooKeeper's plain
 * reads from a follower cut off from the quorum must FAIL reproducibly naming the stale read (key,
 * node n1, the fault window), and a power failure of every NATS server must FAIL reproducibly naming
 * the lost acknowledged messages. `npm run test:coord` (FAULTLINE_COORD_TESTS=1) runs both plans whole:
 * `faultline run` must exit 0, every scenario meeting the `Expected verdict:` its plan declares.
 */
const root = new URL('../../', import.meta.url).pathname;
const bin = join(root, 'bin/faultline.js');
const full = process.env.FAULTLINE_COORD_TESTS === '1';
/** FAULTLINE_TEST_CLUSTER_PREFIX (e.g. `ci-`) keeps concurrent runs of this suite on distinct clusters. */
const clusterPrefix = process.env.FAULTLINE_TEST_CLUSTER_PREFIX ?? '';

interface ScenarioRow {
  id: string;
  verdict: string;
  headline: string;
  expected: string[] | null;
  expectationMet: boolean | null;
  counts: { ops: number; ok: number };
}

async function ensureDependencies(example: string, module: string): Promise<void> {
  const dir = join(root, 'examples', example);
  if (existsSync(join(dir, 'node_modules', module))) return;
  await execa('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir });
}

/** Run scenarios of a plan on a fresh local cluster: the exit code and the report's rows. */
async function runPlan(plan: string, cluster: string, opts: { scenarios?: string[]; reductions: number }) {
  const out = mkdtempSync(join(tmpdir(), 'fl-coord-'));
  const started = Date.now();
  try {
    const r = await execa(
      'node',
      [
        bin,
        '--log-level',
        'warn',
        'run',
        join(root, 'plans', plan),
        '--local',
        '3',
        '--cluster-name',
        `${clusterPrefix}${cluster}`,
        ...(opts.scenarios ? ['--scenario', opts.scenarios.join(',')] : []),
        '--tier',
        'smoke',
        '--seed',
        '7',
        '--yes',
        '--max-reduction-runs',
        String(opts.reductions),
        '--out',
        out,
      ],
      { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
    );
    const session = /^report: (.+)\/findings\/report\.(?:md|html)\b/m.exec(r.stdout)?.[1];
    if (!session) throw new Error(`no report (exit ${r.exitCode}): ${r.stdout}\n${r.stderr}`);
    const json = JSON.parse(readFileSync(join(session, 'findings/report.json'), 'utf8')) as {
      scenarios: ScenarioRow[];
    };
    return {
      exitCode: r.exitCode,
      rows: new Map(json.scenarios.map((s) => [s.id, s])),
      output: `${r.stdout}\n${r.stderr}`,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await execa('node', [bin, 'cluster', 'down', '--name', `${clusterPrefix}${cluster}`], {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    });
  }
}

/** ZooKeeper S1's headline: the stale read's key, the node that answered it, and the fault window. */
const STALE_READ =
  /^On key \d+, read → \S+ \(op \d+, process \d+ on n1, [\d.]+–[\d.]+ s, during w1: n1 isolated from n2 n3\) cannot be linearized/;
/** NATS S1's headline: an acknowledged publish (by value) missing after the power failure, and the window. */
const LOST_ACKS =
  /acknowledged add of \d+ \(op \d+, process \d+ on n\d, [\d.]+–[\d.]+ s, during w1: lazyfs lose-unfsynced on n1 n2 n3\) is missing from the final state/;

test.before(async () => {
  await ensureDependencies('zookeeper', 'node-zookeeper-client');
  await ensureDependencies('nats', 'nats');
});

const smoke = full ? test.skip : test;

smoke(
  'zookeeper smoke: plain reads from a cut-off follower FAIL reproducibly, naming key, node and window',
  async (t) => {
    t.timeout(8 * 60_000);
    const r = await runPlan('zookeeper-reads.md', 'coord-smoke-zk', { scenarios: ['S1'], reductions: 0 });
    const s1 = r.rows.get('S1');
    t.log(`S1 ${s1?.verdict} in ${r.seconds}s: ${s1?.headline}`);
    t.is(s1?.verdict, 'FAIL-reproducible', r.output);
    t.regex(s1?.headline ?? '', STALE_READ);
    t.is(s1?.expectationMet, true);
    t.is(r.exitCode, 0, 'the only scenario run met its expectation');
  },
);

smoke('nats smoke: a power failure of every server loses acknowledged messages, reproducibly', async (t) => {
  t.timeout(8 * 60_000);
  const r = await runPlan('nats-durability.md', 'coord-smoke-nats', { scenarios: ['S1'], reductions: 0 });
  const s1 = r.rows.get('S1');
  t.log(`S1 ${s1?.verdict} in ${r.seconds}s: ${s1?.headline}`);
  t.is(s1?.verdict, 'FAIL-reproducible', r.output);
  t.regex(s1?.headline ?? '', LOST_ACKS);
  t.is(s1?.expectationMet, true);
  t.is(r.exitCode, 0, 'the only scenario run met its expectation');
});

const fullTest = full ? test.serial : test.skip;

function expectAllMet(t: import('ava').ExecutionContext, r: Awaited<ReturnType<typeof runPlan>>) {
  for (const row of r.rows.values()) {
    t.log(`${row.id} ${row.verdict} (expected ${row.expected?.join(' or ') ?? '—'}): ${row.headline}`);
    t.true(row.expectationMet === true, `${row.id}: ${row.verdict}, expected ${row.expected?.join(' or ')}`);
  }
  t.log(`whole plan in ${r.seconds}s`);
  t.is(r.exitCode, 0, r.output);
}

fullTest('zookeeper plan: every scenario meets its expected verdict', async (t) => {
  t.timeout(30 * 60_000);
  const r = await runPlan('zookeeper-reads.md', 'coord-zk', { reductions: 1 });
  expectAllMet(t, r);
  t.regex(r.rows.get('S1')?.headline ?? '', STALE_READ);
});

fullTest('nats plan: every scenario meets its expected verdict', async (t) => {
  t.timeout(40 * 60_000);
  const r = await runPlan('nats-durability.md', 'coord-nats', { reductions: 1 });
  expectAllMet(t, r);
  t.regex(r.rows.get('S1')?.headline ?? '', LOST_ACKS);
});
