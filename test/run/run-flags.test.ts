import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseRunFlags } from '../../src/app/cli/commands/run-action.ts';
import { exitCodeFor, runPlan } from '../../src/app/run/plan-run.ts';
import { EXIT, UserError } from '../../src/core/util/errors.ts';

const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;

test('exit codes: DONE 0, FAIL 1, everything else 2', (t) => {
  t.is(exitCodeFor('DONE'), 0);
  t.is(exitCodeFor('FAIL'), 1);
  for (const v of ['INCONCLUSIVE', 'DONE_WITH_CONCERNS', 'BLOCKED'] as const) t.is(exitCodeFor(v), 2);
});

test('bad flags are user errors (exit 254)', (t) => {
  const bad: Record<string, unknown>[] = [
    {},
    { local: 3, inventory: 'x.yaml' },
    { local: 3, tier: 'gold' },
    { local: 3, onMissing: 'pray' },
    { local: 'three' },
    { local: 3, seed: -1 },
    { local: 3, deadline: 'soon' },
  ];
  for (const flags of bad) {
    const err = t.throws(() => parseRunFlags(planPath, flags), { instanceOf: UserError });
    t.is(err?.exitCode, EXIT.badInput);
  }
  const ok = parseRunFlags(planPath, {
    local: '3',
    tier: 'hardening',
    scenario: ['S3'],
    deadline: '2m',
    yes: true,
  });
  t.is(ok.local, 3);
  t.is(ok.deadlineS, 120);
  t.deepEqual(ok.scenarios, ['S3']);
  t.false(ok.interactive);
});

test('a plan that must not run exits 3 with its problems, before any node is touched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-run-'));
  const bad = join(dir, 'bad.md');
  writeFileSync(
    bad,
    // S1's oracle (the first in the plan) becomes one that is not machine-checkable.
    readFileSync(planPath, 'utf8').replace(/^- \*\*Oracle:\*\* .*$/m, '- **Oracle:** logs look fine'),
  );
  const lines: string[] = [];
  const r = await runPlan({
    ...parseRunFlags(bad, { inventory: join(dir, 'no-such-inventory.yaml'), out: dir, yes: true }),
    print: (l) => lines.push(l),
  });
  t.is(r.exitCode, EXIT.planMustNotRun);
  t.is(r.sessionDir, null);
  t.regex(lines.join('\n'), /S1.*Oracle/);
});

test('an unknown --scenario is a user error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-run-'));
  await t.throwsAsync(
    runPlan({
      ...parseRunFlags(planPath, { inventory: 'x', out: dir, scenario: ['S9'], yes: true }),
      print: () => {},
    }),
    { instanceOf: UserError, message: /S9: no such scenario/ },
  );
});
