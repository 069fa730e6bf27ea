import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { parseRunFlags } from '../../src/app/cli/commands/run-action.ts';
import { earlierBaselineFacts, loadEarlierBaselines } from '../../src/app/run/baseline.ts';
import { runPlan } from '../../src/app/run/plan-run.ts';
import { runAudits } from '../../src/app/verdict/audits.ts';
import { EXIT, UserError } from '../../src/core/util/errors.ts';
import { hardeningEvidence, scenario } from '../verdict/evidence-builders.ts';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;

/** An earlier session directory with metrics/<id>.json for each id. */
function earlierSession(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-baseline-'));
  mkdirSync(join(dir, 'metrics'));
  for (const [id, body] of Object.entries(files))
    writeFileSync(join(dir, 'metrics', `${id}.json`), typeof body === 'string' ? body : JSON.stringify(body));
  return dir;
}

const goodFile = {
  scenario: 'S1',
  windowS: 2,
  baselineOpsPerSec: 96.5,
  afterHealOpsPerSec: 90,
  baselineHarness: 'faultline 0.9.0 abc1234',
  baselineCapturedAt: '2026-12-01T01:00:00.000Z',
  summary: {},
  windows: [],
};

function rf9(baseline: ReturnType<typeof earlierBaselineFacts>) {
  const items = runAudits(hardeningEvidence({ baseline }), scenario('S1'), 'hardening').redFlags;
  return items.find((i) => i.id === 'RF9')!;
}

test('--baseline: an earlier session’s metrics file is RF9’s baseline, named, with both harnesses and its age', (t) => {
  const dir = earlierSession({ S1: goodFile });
  for (const given of [dir, join(dir, 'metrics')]) {
    const b = loadEarlierBaselines(given, ['S1']).get('S1');
    t.truthy(b);
    t.is(b?.path, join(dir, 'metrics', 'S1.json'));
    t.is(b?.file.baselineHarness, 'faultline 0.9.0 abc1234');
  }
  const earlier = loadEarlierBaselines(dir, ['S1']).get('S1')!;
  const facts = earlierBaselineFacts(earlier, {
    currentHarnessVersion: 'faultline 0.9.0 abc1234',
    currentOpsPerSec: 94.2,
    runStartedAt: '2026-12-02T03:00:00.000Z',
  });
  t.like(facts, { earlier: true, ageS: 93600, opsPerSec: 96.5, currentOpsPerSec: 94.2 });
  const same = rf9(facts);
  t.is(same.status, 'checked');
  t.regex(
    same.evidence,
    new RegExp(`baseline from an earlier session \\(${join(dir, 'metrics', 'S1.json')}\\)`),
  );
  t.regex(
    same.evidence,
    /captured by harness faultline 0\.9\.0 abc1234 at 2026-12-01T01:00:00\.000Z, 26\.0 h old/,
  );
  t.regex(
    same.evidence,
    /run with the same harness; baseline 96\.5 ops\/s vs this run's no-fault 94\.2 ops\/s/,
  );

  const changed = rf9(
    earlierBaselineFacts(earlier, {
      currentHarnessVersion: 'faultline 1.0.0 def5678',
      currentOpsPerSec: null,
      runStartedAt: '2026-12-02T03:00:00.000Z',
    }),
  );
  t.is(changed.status, 'failed');
  t.regex(changed.evidence, /run with faultline 1\.0\.0 def5678: re-baseline/);
});

test('--baseline: a missing, malformed or figure-less file is bad input naming the file', (t) => {
  const dir = earlierSession({
    S1: goodFile,
    S2: '{ not json',
    S3: { baselineOpsPerSec: 10, baselineCapturedAt: 'T0' },
    S4: { ...goodFile, baselineOpsPerSec: null },
  });
  const cases: [string, RegExp][] = [
    ['S2', /S2\.json: not JSON/],
    ['S3', /S3\.json: not a baseline file \(baselineHarness: /],
    ['S4', /S4\.json: holds no baseline figure/],
    ['S9', /S9\.json: no baseline of S9 there/],
  ];
  for (const [id, re] of cases) {
    const err = t.throws(() => loadEarlierBaselines(dir, ['S1', id]), { instanceOf: UserError });
    t.is(err?.exitCode, EXIT.badInput);
    t.regex(err?.message ?? '', re);
    t.notRegex(err?.message ?? '', /\n/);
  }
  t.throws(() => loadEarlierBaselines(join(dir, 'nope'), ['S1']), { message: /not a directory/ });
});

test('faultline run --baseline with a malformed file: exit 254, one line naming it, before any session or cluster', async (t) => {
  const dir = earlierSession({ S1: '{ "baselineHarness": 1 }' });
  const out = mkdtempSync(join(tmpdir(), 'fl-baseline-out-'));
  // An inventory that does not exist: the baseline check must come first, or this would fail on it.
  const args = ['run', planPath, '--inventory', join(out, 'no-inventory.yaml'), '--scenario', 'S1'];
  const r = await execa('node', [bin, ...args, '--out', out, '--yes', '--baseline', dir], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  t.is(r.exitCode, EXIT.badInput, r.stderr);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(lines[0]!, new RegExp(`${join(dir, 'metrics', 'S1.json')}: not a baseline file`));
  t.deepEqual(readdirSync(out), [], 'no session directory was created');
});

test('runPlan reads --baseline before the session starts (a good file passes the check)', async (t) => {
  const dir = earlierSession({ S1: goodFile });
  const out = mkdtempSync(join(tmpdir(), 'fl-baseline-out-'));
  const flags = parseRunFlags(planPath, {
    inventory: join(out, 'no-inventory.yaml'),
    scenario: ['S1'],
    out,
    yes: true,
    baseline: dir,
  });
  t.is(flags.baseline, dir);
  // The good baseline is accepted; the run then stops at the missing inventory, not at the baseline.
  const err = await t.throwsAsync(runPlan({ ...flags, print: () => {} }));
  t.notRegex(err?.message ?? '', /--baseline/);
  t.regex(err?.message ?? '', /cannot read inventory/);
});
