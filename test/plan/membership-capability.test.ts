import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * Membership faults need a database that can remove and add members: `plan check` accepts one on etcd
 * and refuses it on Redis at the line of the step, before anything runs.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const plans = new URL('../../plans/', import.meta.url).pathname;
const step = '  - kind: membership\n    targets: one\n    startS: 30\n    durationS: 5\n';

function withMembershipStep(plan: string): string {
  const text = readFileSync(join(plans, plan), 'utf8');
  // The first scenario's nemesis list gets a membership step.
  const out = text.replace(/\nnemesis:\n/, `\nnemesis:\n${step}`);
  const path = join(mkdtempSync(join(tmpdir(), 'hard-plan-')), plan);
  writeFileSync(path, out);
  return path;
}

const check = (path: string) =>
  execa(process.execPath, [bin, 'plan', 'check', path], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });

test('plan check accepts a membership fault on etcd', async (t) => {
  const r = await check(withMembershipStep('etcd-hardening-ci.md'));
  t.is(r.exitCode, 0, r.stderr || r.stdout);
});

test('plan check refuses a membership fault on Redis with file:line', async (t) => {
  const path = withMembershipStep('redis-replication.md');
  const r = await check(path);
  t.is(r.exitCode, 3, r.stdout);
  const line = readFileSync(path, 'utf8').split('\n').indexOf('  - kind: membership') + 1;
  t.regex(
    `${r.stdout}\n${r.stderr}`,
    new RegExp(`redis-replication\\.md:${line}: error: .*database redis does not support membership faults`),
  );
});
