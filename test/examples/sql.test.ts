import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { runShippedPlan, type ScenarioRow } from '../helpers/plan-run.ts';

/**
 * examples/sql end to end on a local cluster (root on Debian 12; the plugin's npm dependencies are
 * installed into examples/sql when missing). The smoke runs in `npm test`, PostgreSQL and MariaDB side
 * by side: PostgreSQL 15 at REPEATABLE READ must FAIL naming G2-item with its transactions and keys, at
 * SERIALIZABLE PASS; MariaDB 10.11 at REPEATABLE READ must FAIL naming lost-update and G-single, at
 * SERIALIZABLE PASS; PostgreSQL's durability at a power failure of the lazy filesystem must lose
 * acknowledged adds with synchronous_commit off and keep every one with it on. `npm run test:sql`
 * (FAULTLINE_SQL_TESTS=1) runs every scenario of plans/postgres-isolation.md,
 * plans/postgres-durability.md, plans/mariadb-isolation.md, plans/mariadb-durability.md and
 * plans/galera-isolation.md and checks the verdict each plan expects. Every run must exit 0: each selected row met the plan's expected verdict.
 */
const root = new URL('../../', import.meta.url).pathname;
const example = join(root, 'examples/sql');
const full = process.env.FAULTLINE_SQL_TESTS === '1';

async function ensureDependencies(): Promise<void> {
  if (existsSync(join(example, 'node_modules/pg')) && existsSync(join(example, 'node_modules/mariadb')))
    return;
  await execa('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: example });
}

/** Run scenarios of a plan on a fresh local cluster; the plan's binding names the example's plugin (module:), code the operator vouches for. */
function runPlan(plan: string, scenarios: string[], nodes: number, cluster: string) {
  return runShippedPlan(plan, cluster, {
    scenarios,
    nodes,
    reductions: 1,
    seed: 7,
    pluginArgs: ['--trust-plan-modules'],
  });
}

/** What a checker needs from a transactional history, measured on one run's history.jsonl. */
function richness(session: string, scenario: string) {
  const dir = join(session, 'artifacts', scenario);
  const run = readdirSync(dir).find((d) => /^01-run-/.test(d)) as string;
  const lines = readFileSync(join(dir, run, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  const events = lines.map((l) => JSON.parse(l) as { type: string; f: string; value: unknown; time: number });
  const ok = events.filter((e) => e.type === 'ok' && e.f === 'txn');
  const mops = ok.flatMap((e) => e.value as [string, unknown, unknown][]);
  const reads = mops.filter((m) => m[0] === 'r');
  const nonEmpty = reads.filter((m) => m[2] !== null && !(Array.isArray(m[2]) && m[2].length === 0));
  const multiKey = ok.filter((e) => new Set((e.value as [string, unknown][]).map((m) => m[1])).size >= 2);
  const spanS = (Math.max(...events.map((e) => e.time)) - Math.min(...events.map((e) => e.time))) / 1e9;
  return {
    committed: ok.length,
    committedPerS: ok.length / spanS,
    nonEmptyReads: nonEmpty.length / Math.max(1, reads.length),
    multiKey: multiKey.length / Math.max(1, ok.length),
  };
}

function assertRich(t: import('ava').ExecutionContext, session: string, scenario: string): void {
  const r = richness(session, scenario);
  t.log(`${scenario}: ${JSON.stringify(r)}`);
  // Bounds well under what a loaded 2-core host reaches (tens of commits per second), far above a
  // history too thin to hold a dependency cycle.
  t.true(r.committedPerS >= 5, `${scenario}: ${r.committedPerS.toFixed(1)} committed txns/s`);
  t.true(r.nonEmptyReads >= 0.5, `${scenario}: ${(r.nonEmptyReads * 100).toFixed(0)}% of reads saw data`);
  t.true(r.multiKey >= 0.25, `${scenario}: ${(r.multiKey * 100).toFixed(0)}% of txns touch 2+ keys`);
}

test.before(ensureDependencies);

test('postgres smoke: REPEATABLE READ FAILs naming G2-item with ops and keys; SERIALIZABLE PASSes', async (t) => {
  t.timeout(10 * 60_000);
  const { rows, session, exitCode, output } = await runPlan(
    'postgres-isolation.md',
    ['S1', 'S2'],
    1,
    'sql-smoke',
  );
  t.is(exitCode, 0, output);
  const s1 = rows.get('S1');
  const s2 = rows.get('S2');
  t.regex(s1?.verdict ?? '', /^FAIL-/, output);
  t.regex(
    s1?.oracleEvidence ?? '',
    /found G2-item ×\d+ against serializable; first G2-item: ops \d+(, \d+)+ on keys? \d+/,
  );
  t.is(s2?.verdict, 'PASS-smoke', output);
  t.regex(s2?.oracleEvidence ?? '', /no anomalies against serializable/);
  assertRich(t, session, 'S2');
  await assertServerSnapshotsAgree(t, session, s1?.headline ?? '');
});

/**
 * The headline's cycle (op A –rw→ op B … –wr→ op A), checked against PostgreSQL's own snapshots that
 * the client keeps on every committed transaction: at REPEATABLE READ the server really commits it.
 */
async function assertServerSnapshotsAgree(
  t: import('ava').ExecutionContext,
  session: string,
  headline: string,
) {
  const cycle = headline.split(';')[0] as string;
  const steps = [...cycle.matchAll(/op (\d+)\b.*?–(wr|ww|rw)→/g)].flatMap((m) => [m[1], m[2]]);
  const closing = /–(?:wr|ww|rw)→ op (\d+)\.?$/.exec(cycle)?.[1];
  t.true(steps.length >= 4 && closing !== undefined, `a cycle in the headline: ${headline}`);
  const dir = join(session, 'artifacts', 'S1');
  const run = readdirSync(dir).find((d) => /^01-run-/.test(d)) as string;
  const r = await execa(
    'npx',
    [
      'tsx',
      'pg-cycle-snapshots.ts',
      join(dir, run, 'history.jsonl'),
      ...(steps as string[]),
      closing as string,
    ],
    { cwd: example, reject: false },
  );
  t.log(r.stdout);
  t.is(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  t.regex(r.stdout, /every edge agrees with PostgreSQL's snapshots/);
  // The server's own isolation level for each transaction of the cycle: S1 asks for REPEATABLE READ.
  t.regex(r.stdout, /isolation repeatable read/);
  t.notRegex(r.stdout, /isolation (?!repeatable read)/);
}

test('mariadb smoke: REPEATABLE READ FAILs naming lost-update and G-single; SERIALIZABLE PASSes', async (t) => {
  t.timeout(10 * 60_000);
  const { rows, session, exitCode, output } = await runPlan(
    'mariadb-isolation.md',
    ['S1', 'S4'],
    1,
    'sql-msmoke',
  );
  t.is(exitCode, 0, output);
  const s1 = rows.get('S1');
  const s4 = rows.get('S4');
  t.regex(s1?.verdict ?? '', /^FAIL-/, output);
  t.regex(s1?.oracleEvidence ?? '', /found .*lost-update/);
  t.regex(s1?.oracleEvidence ?? '', /found .*G-single/);
  t.regex(s1?.oracleEvidence ?? '', /first [\w-]+: ops \d+(, \d+)* on keys? \d+/);
  t.is(s4?.verdict, 'PASS-smoke', output);
  t.regex(s4?.oracleEvidence ?? '', /no anomalies against serializable/);
  assertRich(t, session, 'S4');
});

/** Expected verdicts of plans/postgres-durability.md: a loss is named by its lost adds, a pass by none. */
const POSTGRES_DURABILITY: Record<string, [RegExp, RegExp]> = {
  S1: [/^FAIL-reproducible$/, /set-full: [\d,]+ adds .* [1-9][\d,]* lost/],
  S2: [/^PASS-smoke$/, /set-full: [\d,]+ adds .* 0 lost/],
  S3: [/^FAIL-reproducible$/, /set-full: [\d,]+ adds .* [1-9][\d,]* lost/],
  S4: [/^PASS-smoke$/, /set-full: [\d,]+ adds .* 0 lost/],
  S5: [/^PARTIAL-surface$/, /set-full: [\d,]+ adds .* 0 lost/],
};

/** Expected verdicts of plans/mariadb-durability.md. */
const MARIADB_DURABILITY: Record<string, [RegExp, RegExp]> = {
  S1: [/^FAIL-reproducible$/, /set-full: [\d,]+ adds .* [1-9][\d,]* lost/],
  S2: [/^PASS-smoke$/, /set-full: [\d,]+ adds .* 0 lost/],
  S3: [/^PASS-smoke$/, /set-full: [\d,]+ adds .* 0 lost/],
  S4: [/^FAIL-reproducible$/, /set-full: [\d,]+ adds .* [1-9][\d,]* lost/],
};

/**
 * How many client ops were acknowledged while the scenario's first fault was in force (the victim
 * signal the run adds to a fault that can only lose what was acknowledged): a power failure that came
 * before any can lose nothing, so a pass is only worth something when this is well above zero.
 */
function acknowledgedUnderFault(session: string, scenario: string): number {
  const { evidence } = JSON.parse(readFileSync(join(session, 'session.json'), 'utf8')) as {
    evidence: { scenario: string; faults: { signals: { signal: string; during?: string }[] }[] }[];
  };
  const signals = evidence.find((e) => e.scenario === scenario)?.faults[0]?.signals ?? [];
  const signal = signals.find((s) => /acknowledged while the fault/.test(s.signal));
  return Number(/^(\d+) acknowledged/.exec(signal?.during ?? '')?.[1] ?? 0);
}

test('postgres durability smoke: a power failure loses acknowledged commits with synchronous_commit off, none with it on', async (t) => {
  t.timeout(10 * 60_000);
  const run = await runPlan('postgres-durability.md', ['S1', 'S2'], 1, 'sql-dsmoke');
  const { S1, S2 } = POSTGRES_DURABILITY as Record<'S1' | 'S2', [RegExp, RegExp]>;
  expectRows(t, run, { S1, S2 });
  const acknowledged = acknowledgedUnderFault(run.session, 'S2');
  t.log(`S2: ${acknowledged} ops acknowledged on the lazy filesystem before the power failure`);
  t.true(acknowledged >= 500, `S2 acknowledged ${acknowledged} ops on the lazy filesystem`);
});

const fullTest = full ? test.serial : test.skip;

/** Expected verdicts, as each plan's scenarios state them (a regex on the verdict and on the evidence). */
const POSTGRES: Record<string, [RegExp, RegExp]> = {
  S1: [/^FAIL-/, /found G2-item/],
  S2: [/^PASS-smoke$/, /no anomalies/],
  S3: [/^PASS-smoke$/, /no anomalies/],
  S4: [/^FAIL-/, /found .*G-single/],
  S5: [/^(FAIL-|PASS-smoke)/, /./],
  S6: [/^PASS-smoke$/, /no anomalies/],
};
const MARIADB: Record<string, [RegExp, RegExp]> = {
  S1: [/^FAIL-/, /G-single.*lost-update|lost-update.*G-single/],
  S2: [/^FAIL-/, /found G2-item ×\d+ against/],
  S3: [/^PASS-smoke$/, /no anomalies against snapshot-isolation/],
  S4: [/^PASS-smoke$/, /no anomalies/],
  S5: [/^FAIL-/, /lost-update/],
};

function expectRows(
  t: import('ava').ExecutionContext,
  run: { rows: Map<string, ScenarioRow>; exitCode: number | undefined; output: string },
  want: Record<string, [RegExp, RegExp]>,
) {
  const { rows } = run;
  for (const [id, [verdict, evidence]] of Object.entries(want)) {
    const row = rows.get(id);
    t.log(`${id}: ${row?.verdict} — ${row?.oracleEvidence}`);
    t.regex(row?.verdict ?? 'missing', verdict, id);
    t.regex(row?.oracleEvidence ?? '', evidence, id);
  }
  // Every selected row met the plan's Expected verdict: `faultline run` exits 0.
  t.is(run.exitCode, 0, run.output);
}

fullTest('postgres plan: every single-primary scenario ends as the plan expects', async (t) => {
  t.timeout(30 * 60_000);
  const run = await runPlan('postgres-isolation.md', Object.keys(POSTGRES), 1, 'sql-pg');
  expectRows(t, run, POSTGRES);
  assertRich(t, run.session, 'S6');
});

fullTest('postgres plan: reads from asynchronous streaming replicas are stale (S7)', async (t) => {
  t.timeout(15 * 60_000);
  const run = await runPlan('postgres-isolation.md', ['S7'], 3, 'sql-pg3');
  expectRows(t, run, { S7: [/^FAIL-/, /realtime/] });
});

fullTest('postgres durability plan: every scenario ends as the plan expects', async (t) => {
  t.timeout(20 * 60_000);
  const run = await runPlan('postgres-durability.md', Object.keys(POSTGRES_DURABILITY), 1, 'sql-pgdur');
  expectRows(t, run, POSTGRES_DURABILITY);
});

fullTest('mariadb durability plan: every scenario ends as the plan expects', async (t) => {
  t.timeout(20 * 60_000);
  const run = await runPlan('mariadb-durability.md', Object.keys(MARIADB_DURABILITY), 1, 'sql-mdur');
  expectRows(t, run, MARIADB_DURABILITY);
});

fullTest('mariadb plan: every scenario ends as the plan expects', async (t) => {
  t.timeout(30 * 60_000);
  const run = await runPlan('mariadb-isolation.md', Object.keys(MARIADB), 1, 'sql-maria');
  expectRows(t, run, MARIADB);
  assertRich(t, run.session, 'S4');
});

fullTest(
  'galera plan: snapshot isolation without faults; S2 and S3 report what partitions, pauses and kills with state transfer did',
  async (t) => {
    t.timeout(25 * 60_000);
    const run = await runPlan('galera-isolation.md', ['S1', 'S2', 'S3'], 3, 'sql-gal');
    // S2 and S3 expect G-single if Jepsen's finding reproduces here, else no anomaly (S2 may also end
    // PARTIAL-surface when throughput after the heal stays low): the plan's expectations decide.
    expectRows(t, run, {
      S1: [/^PASS-smoke$/, /no anomalies against snapshot-isolation/],
      S2: [/^(FAIL-|PASS-|PARTIAL-surface)/, /elle list-append/],
      S3: [/^(FAIL-|PASS-)/, /elle list-append/],
    });
  },
);
