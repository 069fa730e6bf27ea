import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const plan = new URL('../../plans/redis-replication.md', import.meta.url).pathname;

test('run writes a Markdown summary to $GITHUB_STEP_SUMMARY (appending), with each row and its expectation', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-summary-'));
  // A node nobody listens for: the session is BLOCKED quickly, and still summarised.
  const inventory = join(dir, 'inventory.yaml');
  writeFileSync(inventory, 'defaults:\n  user: root\n  port: 1\nnodes:\n  n1: { host: 127.0.0.1 }\n');
  const summary = join(dir, 'summary.md');
  writeFileSync(summary, '# earlier step\n');
  const r = await execa(
    'node',
    [bin, 'run', plan, '--inventory', inventory, '--yes', '--out', join(dir, 'store')],
    {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1', GITHUB_STEP_SUMMARY: summary },
    },
  );
  t.is(r.exitCode, 2, r.stderr);
  const text = readFileSync(summary, 'utf8');
  t.true(text.startsWith('# earlier step\n### faultline: BLOCKED (exit 2)\n'), text);
  t.regex(
    text,
    /^\| ❌ \| S1 \| NOT-RUN \| FAIL-reproducible \(UNMET\) \| — \| no evidence record: not attempted \|$/m,
  );
  t.regex(text, /Session: `.*\/store\/redis-replication\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ`/);
  const plain = await execa(
    'node',
    [bin, 'run', plan, '--inventory', inventory, '--yes', '--out', join(dir, 'store')],
    {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1', GITHUB_STEP_SUMMARY: '' },
    },
  );
  t.is(plain.exitCode, 2);
  t.is(readFileSync(summary, 'utf8'), text, 'nothing written when the variable is empty');
});
