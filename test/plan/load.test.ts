import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { loadPlan, parsePlanText } from '../../src/app/plan/load.ts';
import type { Problem } from '../../src/app/plan/problem.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const bin = fileURLToPath(new URL('../../bin/faultline.js', import.meta.url));

test('complete Markdown plan: header, claims, hypotheses, §6b, §7b/c/d, §9', async (t) => {
  const p = await loadPlan(fixture('complete.md'));
  t.is(p.slug, 'kv-store-partitions');
  t.deepEqual(p.header, {
    date: '2026-11-30',
    planMode: 'project-wide',
    sut: 'etcd 3.4 (3-node Raft cluster)',
    changeUnderTest: 'N/A — project-wide',
    planAuthor: 'storage team',
    status: 'reviewed',
  });
  t.deepEqual(
    p.claims.map((c) => [c.id, c.category]),
    [
      ['C1', 'safety'],
      ['C2', 'durability'],
      ['C3', 'boundary'],
      ['C4', 'performance-SLO'],
    ],
  );
  t.deepEqual(
    p.hypotheses.map((h) => [h.id, h.title, h.couldFalsify]),
    [
      ['H1', 'Stale read after partition', ['C1']],
      ['H2', 'Lost ack under leader crash', ['C2']],
    ],
  );
  t.deepEqual(
    p.environment.map((e) => [e.requirement, e.usedBy, e.broughtUpBySut]),
    [
      ['iptables', ['S1', 'S2'], false],
      ['etcd', ['S1', 'S2', 'S3', 'S4'], true],
    ],
  );
  t.is(p.adequacy.length, 2);
  t.is(p.adequacy[0]!.whySufficient, 'majorities-ring isolates every node in turn');
  t.is(p.residualUncertainty.length, 1);
  t.regex(p.confidence.statement, /not observed a linearizability violation/);
  t.deepEqual(p.confidence.aspects[0], {
    claim: 'C3',
    aspect: 'watch stream',
    confidence: 'moderate',
    reason: 'async path only smoke-tested',
  });
  t.deepEqual(p.openQuestions, ['Should S2 kill followers too? — storage team, by 2026-12-15']);
  t.deepEqual(
    Object.keys(p.sections).sort(),
    ['0', '1', '1b', '1c', '2', '3', '4', '5', '6', '6b', '7', '7b', '7c', '7d', '8', '9'].sort(),
  );
  t.regex(p.sections['1c']!.body, /explicit emptiness/);
  t.deepEqual(
    checkPlan(p).filter((x) => x.severity === 'error'),
    [],
  );
});

test('complete plan: §7 scenario fields, §7.M, skeleton, binding, tiers', async (t) => {
  const p = await loadPlan(fixture('complete.md'));
  const s1 = p.scenarios[0]!;
  t.is(s1.id, 'S1');
  t.is(s1.name, 'linearizable_register_under_partition');
  t.deepEqual(s1.falsifies, ['C1']);
  t.deepEqual(s1.closes, ['H1']);
  t.is(s1.technique, 'history checking');
  t.is(s1.oracle, 'Porcupine-class linearizability per key over the full history');
  t.is(s1.observabilityRequired, 'raft term metric, iptables counters');
  t.is(s1.targetTestFile, 'tests/auto/test_linearizable_register_under_partition.py');
  t.is(s1.skeletonLanguage, 'python');
  t.regex(s1.skeleton!, /^# AUTO-GENERATED from test plan: /);
  t.regex(s1.skeleton!, /REVIEW BEFORE TREATING AS A PERMANENT REGRESSION/);
  t.is(p.scenarios[1]!.skeletonAs, 'S1');
  const m = s1.model;
  t.true(typeof m === 'object' && m !== null);
  if (typeof m === 'object' && m) {
    t.is(m.modelUnderTest, 'register');
    t.regex(m.ambiguousOutcomes!, /timeout_marker=true[\s\S]*separate op/);
  }
  t.is(s1.surface, 'not applicable');
  t.deepEqual(s1.binding?.checkers, ['linearizable']);
  t.is(s1.binding?.nemesis[0]?.kind, 'partition');
  const r1 = p.resolved[0]!;
  t.true(r1.serious);
  t.deepEqual(r1.tiers.smoke, { nodes: 3, durationS: 60, faultWindows: 1, seeds: 1 });
  t.deepEqual(r1.tiers.hardening, { nodes: 5, durationS: 1800, faultWindows: 5, seeds: 3 });
  t.deepEqual(r1.tiers.releaseDisclosure, {
    reason: 'no soak rig yet',
    revisitWhen: 'the nightly cluster exists',
  });
  const r2 = p.resolved.find((r) => r.id === 'S2')!;
  t.deepEqual(r2.tiers.release, { nodes: 5, durationS: 86400, faultWindows: 6, seeds: 30 });
});

test('complete plan: §7.M.S with eight fields and arms, each arm with its own §7.M and oracle', async (t) => {
  const p = await loadPlan(fixture('complete.md'));
  const s3 = p.scenarios.find((s) => s.id === 'S3')!;
  t.is(s3.model, 'not applicable');
  const surface = s3.surface;
  t.true(typeof surface === 'object' && surface !== null);
  if (typeof surface === 'object' && surface) {
    for (const v of Object.values(surface)) t.not(v, null);
    t.regex(surface.adversarialInputs!, /prefix collision/);
  }
  t.deepEqual(
    s3.arms.map((a) => a.id),
    ['S3/api', 'S3/watch', 'S3/snapshot'],
  );
  t.is(s3.arms[0]!.oracle, 'invariant: no cross-tenant key in any range read');
  t.is(s3.arms[1]!.model?.modelUnderTest, 'log');
  const armRows = p.resolved.filter((r) => r.parentId === 'S3');
  t.deepEqual(
    armRows.map((r) => [r.id, r.serious]),
    [
      ['S3/api', true],
      ['S3/watch', true],
      ['S3/snapshot', true],
    ],
  );
  const s3r = p.resolved.find((r) => r.id === 'S3')!;
  t.true(s3r.surfaceGated);
  t.false(s3r.serious);
});

test('drift: "### S01:" headings, bare "#### §7.M", Nemesis:, Skeleton: as S01, Exit criteria budgets', async (t) => {
  const p = await loadPlan(fixture('drift-raft.md'));
  t.deepEqual(
    p.scenarios.map((s) => s.id),
    ['S01', 'S02'],
  );
  const [s1, s2] = p.scenarios;
  t.is(s1!.faults, 'majority partition, 10s on / 10s off');
  t.is(s2!.faults, 'kill -9 a follower every 15s');
  t.is(s2!.skeletonAs, 'S01');
  t.regex(s1!.skeleton!, /AUTO-GENERATED/);
  const m = s1!.model;
  t.true(typeof m === 'object' && m !== null && m.modelUnderTest === 'other(term-log)');
  const r = p.resolved[0]!;
  t.deepEqual(r.tiers.smoke, { nodes: 3, durationS: 60, faultWindows: 1, seeds: 1 });
  t.deepEqual(r.tiers.hardening, { nodes: 5, durationS: 1200, faultWindows: 10, seeds: 5 });
  const errors = checkPlan(p).filter((x) => x.severity === 'error');
  t.deepEqual(errors, []);
  t.is(p.header.planMode, 'change-scoped');
});

test('drift: "Exit criteria" that names no tier is a missing budget', (t) => {
  const p = parsePlanText(
    `# Test Plan: x\n\n## 1b. Claims under test\n\n| ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n| C1 | c | liveness | s | no |\n\n## 7. Scenarios\n\n### S01: progress\n\n- Falsifies if it FAILs: C1\n- Oracle: throughput >= 10 ops/s\n- Exit criteria: runs for a while\n- Release budget: not provided — x. Revisit when: y.\n`,
    'x.md',
  );
  const problems = checkPlan(p).filter((x) => x.severity === 'error');
  t.true(
    problems.some(
      (x) => x.scenario === 'S01' && x.field === 'Smoke budget' && /Exit criteria/.test(x.reason),
    ),
  );
  t.true(problems.some((x) => x.scenario === 'S01' && x.field === 'Hardening budget'));
});

function has(problems: Problem[], scenario: string | null, field: string, reason: RegExp) {
  return problems.some(
    (p) => p.scenario === scenario && p.field === field && reason.test(p.reason) && p.severity === 'error',
  );
}

test('invalid plan: every problem names scenario and field', async (t) => {
  const p = await loadPlan(fixture('invalid.md'));
  const problems = checkPlan(p);
  for (const x of problems) {
    t.truthy(x.field);
    t.truthy(x.reason);
    t.not(x.line, null);
  }
  t.true(has(problems, 'S1', 'Oracle', /not an oracle/));
  t.true(has(problems, 'S1', 'Smoke budget', /TBD/));
  t.true(has(problems, 'S1', 'Hardening budget', /see §6b/));
  t.true(has(problems, 'S1', 'Release budget', /neither a gate/));
  t.true(has(problems, 'S1', '§7.M Nemesis + landing evidence', /partially filled/));
  t.true(has(problems, 'S2', 'Hardening budget', /not strictly stronger than smoke on: size/));
  t.true(has(problems, 'S2', '§7.M.S', /mandatory for a boundary claim/));
  t.true(has(problems, 'S2', '§7.M.S Scenario arms', /no arms/));
  t.true(has(problems, 'S3', 'Falsifies if it FAILs', /cites no claim/));
  t.true(has(problems, 'S3', 'Oracle', /needs a threshold/));
  t.true(has(problems, 'S3', 'Smoke budget', /faultWindows, seeds/));
  t.true(has(problems, 'S3', 'binding.nemesis.0.topology', /halves/));
  t.true(has(problems, null, '§1b C3 Category', /robustness/));
  t.false(problems.some((x) => x.scenario === 'S3' && x.field === 'binding' && x.severity === 'warning'));
});

test('a serious scenario that declares §7.M not applicable is an error', (t) => {
  const p = parsePlanText(
    `# Test Plan: x\n\n## 1b. Claims under test\n\n| ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n| C1 | c | ordering | s | no |\n\n## 7. Scenarios\n\n### Scenario S1: order_kept\n\n- Falsifies if it FAILs: C1\n- Oracle: prefix/order checker over consumer histories\n- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed\n- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds\n- Release budget: not provided — x. Revisit when: y.\n\n§7.M: not applicable (no gated claim category falsified)\n`,
    'x.md',
  );
  t.true(has(checkPlan(p), 'S1', '§7.M', /declared not applicable.*ordering/));
});

test('injector-only landing evidence is rejected', (t) => {
  const p = parsePlanText(
    `# Test Plan: x\n\n## 1b. Claims under test\n\n| ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n| C1 | c | safety | s | no |\n\n## 7. Scenarios\n\n### Scenario S1: a\n\n- Falsifies if it FAILs: C1\n- Oracle: linearizability checker\n- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed\n- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds\n- Release budget: not provided — x. Revisit when: y.\n\n#### §7.M — Model\n\n- Model under test: register\n- Operation history: 11 fields\n- Checker: linearizable\n- Nemesis + landing evidence: the injector reported success\n- Ambiguous outcomes: default\n- Reduction plan: minimise\n`,
    'x.md',
  );
  t.true(has(checkPlan(p), 'S1', '§7.M Nemesis + landing evidence', /does not count/));
});

test('native YAML plan loads into the same shape, tiers from the binding agree with the strings', async (t) => {
  const y = await loadPlan(fixture('native.yaml'));
  t.is(y.source.format, 'yaml');
  t.is(y.slug, 'etcd-register');
  const r = y.resolved[0]!;
  t.true(r.serious);
  t.deepEqual(r.binding?.checkers, ['linearizable']);
  t.deepEqual(r.tiers.hardening, { nodes: 5, durationS: 1800, faultWindows: 5, seeds: 3 });
  t.deepEqual(checkPlan(y), []);
  const md = await loadPlan(fixture('complete.md'));
  t.deepEqual(r.tiers.smoke, md.resolved[0]!.tiers.smoke);
});

test('native JSON plan with a structural error is a one-line InputError', (t) => {
  const err = t.throws(() =>
    parsePlanText(JSON.stringify({ slug: 'x', scenarios: [{ id: 'S1' }] }), 'p.json'),
  );
  t.regex(err!.message, /^p\.json: scenarios\.0\.name: /);
});

test('binding tiers that disagree with the budget string are an error', (t) => {
  const p = parsePlanText(
    `slug: x\nclaims: [{id: C1, claim: c, category: safety}]\nscenarios:\n  - id: S1\n    name: a\n    falsifies: [C1]\n    oracle: linearizable checker\n    smokeBudget: 3 nodes × 60s × 1 fault × 1 seed\n    hardeningBudget: 5 nodes × 10min × 3 faults × 3 seeds\n    releaseBudget: "not provided — x. Revisit when: y."\n    binding:\n      db: etcd\n      workload: register\n      model: register\n      checkers: [linearizable]\n      nemesis: [{kind: partition, topology: halves, intervalS: 60}]\n      tiers:\n        smoke: {nodes: 3, durationS: 120, faultWindows: 1, seeds: 1}\n`,
    'x.yaml',
  );
  t.true(has(checkPlan(p), 'S1', 'Smoke budget', /disagrees with the faultline binding/));
});

test('faultline plan check: exit 3 with every problem listed; exit 0 for a runnable plan; --json', async (t) => {
  const env = { FAULTLINE_FROM_SOURCE: '1' };
  const bad = await execa('node', [bin, 'plan', 'check', fixture('invalid.md')], { reject: false, env });
  t.is(bad.exitCode, 3);
  t.regex(bad.stdout, /invalid\.md:18: error: S1: Oracle: "logs look fine" is not an oracle/);
  t.regex(bad.stdout, /the plan must not run$/m);
  const good = await execa('node', [bin, 'plan', 'check', fixture('complete.md'), '--json'], {
    reject: false,
    env,
  });
  t.is(good.exitCode, 0, good.stderr);
  const j = JSON.parse(good.stdout);
  t.false(j.mustNotRun);
  t.is(j.errors, 0);
  t.true(j.problems.every((p: Problem) => p.severity === 'warning'));
  const missing = await execa('node', [bin, 'plan', 'check', '/nonexistent/plan.md'], { reject: false, env });
  t.is(missing.exitCode, 254);
  t.regex(missing.stderr, /cannot read plan/);
});

test('the complete example plan in docs/plans.md loads and checks clean', async (t) => {
  const doc = await readFile(fileURLToPath(new URL('../../docs/plans.md', import.meta.url)), 'utf8');
  const m = doc.match(/````markdown\n([\s\S]*?)\n````/);
  t.truthy(m, 'docs/plans.md has a ````markdown example');
  const p = parsePlanText(m![1]!, 'plans-example.md');
  t.deepEqual(checkPlan(p), []);
  t.deepEqual(p.resolved[0]!.tiers.hardening, { nodes: 5, durationS: 600, faultWindows: 20, seeds: 3 });
});

test('arms from a multi-line "Scenario arms:" list and "#### Arm S5/api" headings with nested §7.M', async (t) => {
  const p = await loadPlan(fixture('arms-headings.md'));
  const s5 = p.scenarios[0]!;
  t.deepEqual(
    s5.arms.map((a) => [a.id, a.oracle !== null, a.model !== null]),
    [
      ['S5/api', true, true],
      ['S5/sdk', true, false],
    ],
  );
  t.is(s5.arms[0]!.model?.checker, 'fairness');
  const problems = checkPlan(p);
  t.true(has(problems, 'S5/sdk', '§7.M', /its own §7.M/));
  t.false(problems.some((x) => x.scenario === 'S5/api' && x.severity === 'error'));
  // "only two … because" is a justification for fewer than 3 surfaces: no warning
  t.false(problems.some((x) => x.field === '§7.M.S Surfaces'));
});

test('§3 inventory and §5 coverage matrix are read; off-vocabulary verdicts and gap kinds are warned about', async (t) => {
  const p = await loadPlan(fixture('complete.md'));
  t.is(p.testInventory.length, 1);
  t.deepEqual(
    p.coverageMatrix.map((r) => [r.claim, r.verdict, r.gapKind, r.recommendedScenario]),
    [['C1', 'not covered', 'no fault-injection variant', 'S1']],
  );
  const bad = parsePlanText(
    `# Test Plan: x\n\n## 5. Coverage matrix\n\n| Claim | Hypothesis | Existing tests | Verdict | Gap kind | Recommended scenario |\n|---|---|---|---|---|---|\n| C1 | H1 | none | mostly | too lazy | S1 |\n`,
    'x.md',
  );
  const problems = checkPlan(bad);
  t.true(problems.some((x) => x.field === '§5 Verdict' && x.severity === 'warning' && x.line === 7));
  t.true(problems.some((x) => x.field === '§5 Gap kind' && /too lazy/.test(x.reason)));
});

test('native plans reject unknown keys, so a typo is not silently dropped', (t) => {
  const err = t.throws(() =>
    parsePlanText('slug: x\nscenarios:\n  - id: S1\n    name: a\n    smokebudget: 3 nodes\n', 'x.yaml'),
  );
  t.regex(err!.message, /^x\.yaml: scenarios\.0: Unrecognized key: "smokebudget"/);
});

test('CRLF line endings and a byte-order mark do not change what is read', async (t) => {
  const text = await readFile(fixture('complete.md'), 'utf8');
  const crlf = parsePlanText(`\uFEFF${text.replace(/\n/g, '\r\n')}`, 'complete.md');
  const lf = parsePlanText(text, 'complete.md');
  t.is(crlf.slug, 'kv-store-partitions');
  t.deepEqual(
    crlf.resolved.map((r) => [r.id, r.tiers, r.oracle]),
    lf.resolved.map((r) => [r.id, r.tiers, r.oracle]),
  );
  t.deepEqual(checkPlan(crlf), checkPlan(lf));
});

test('a slug that cannot name the session directory is an error', (t) => {
  const p = parsePlanText('# Test Plan: my plan/v2\n', 'x.md');
  t.true(has(checkPlan(p), null, 'slug', /cannot name the session directory/));
});

test('"logs look fine" next to a real checker is a warning; alone it is an error', (t) => {
  const plan = (oracle: string) =>
    parsePlanText(
      `# Test Plan: x\n\n## 1b. Claims under test\n\n| ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n| C1 | c | liveness | s | no |\n\n## 7. Scenarios\n\n### Scenario S1: a\n\n- Falsifies if it FAILs: C1\n- Oracle: ${oracle}\n- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed\n- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds\n- Release budget: not provided — x. Revisit when: y.\n`,
      'x.md',
    );
  const oracleProblems = (o: string) => checkPlan(plan(o)).filter((p) => p.field === 'Oracle');
  t.deepEqual(
    oracleProblems('Dashboards look OK').map((p) => p.severity),
    ['error'],
  );
  t.deepEqual(
    oracleProblems('throughput >= 200 ops/s for the whole window; logs look fine').map((p) => p.severity),
    ['warning'],
  );
  t.deepEqual(oracleProblems('throughput >= 200 ops/s for the whole window'), []);
});

test('a misspelt dbOptions key is an error, so a negative control cannot silently run the safe configuration', async (t) => {
  const path = fileURLToPath(new URL('../../plans/etcd-register.md', import.meta.url));
  const text = (await readFile(path, 'utf8')).replace('serializableReads: true', 'serialisableReads: true');
  const problems = checkPlan(parsePlanText(text, path));
  t.true(
    problems.some((p) => p.severity === 'error' && p.scenario === 'S3' && /serialisableReads/.test(p.reason)),
    JSON.stringify(problems),
  );
  const clean = parsePlanText(await readFile(path, 'utf8'), path);
  t.false(checkPlan(clean).some((p) => p.severity === 'error'));
});

test('a tier sized in tenants is a warning naming why it cannot be met (no tenant audit)', async (t) => {
  const p = await loadPlan(fixture('complete.md'));
  const tenantWarnings = checkPlan(p).filter((x) => /sized in tenants/.test(x.reason));
  t.true(tenantWarnings.length > 0);
  for (const w of tenantWarnings) {
    t.is(w.severity, 'warning');
    t.regex(w.reason, /faultline counts no tenants \(no tenant audit is defined\)/);
  }
  t.true(tenantWarnings.some((w) => w.field === 'Hardening budget' && /8 tenants/.test(w.reason)));
  // A plan sized in nodes gets no such warning.
  const nodes = await loadPlan(fixture('invalid.md'));
  t.false(checkPlan(nodes).some((x) => /sized in tenants/.test(x.reason)));
});
