import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { runCheckers } from '../../checkers/compose.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { check } from '../../src/index.ts';
import { H } from './build.ts';

/** Two registers on keys a and b: a is linearizable, b reads a value nobody wrote. */
function twoKeys(): H {
  return new H()
    .invoke(0, 'write', 1, { key: 'a' })
    .ok(0, 'write', 1, { key: 'a' })
    .invoke(1, 'read', null, { key: 'a' })
    .ok(1, 'read', 1, { key: 'a' })
    .invoke(2, 'write', 2, { key: 'b' })
    .ok(2, 'write', 2, { key: 'b' })
    .invoke(3, 'read', null, { key: 'b' })
    .ok(3, 'read', 7, { key: 'b' });
}

test('independent is a combinator: each key checked on its own, the failing key named', async (t) => {
  const ops = twoKeys().ops();
  const r = await runCheckers(
    [{ name: 'linearizable', options: { model: 'register' }, independent: true }],
    ops,
  );
  t.is(r.valid, false);
  const res = r.results[0];
  t.deepEqual(res?.stats.invalidKeys, ['b']);
  t.is(res?.stats.keys, 2);
  t.regex(res?.evidence ?? '', /per key: 2 keys, 4 ops, 1 invalid/);
  t.true(res?.anomalies.every((a) => a.key === 'b'));
  // The same through the public API.
  const api = await check(ops, 'linearizable', {
    options: { linearizable: { model: 'register' } },
    independent: true,
  });
  t.is(api.valid, false);
  t.is(api.ops, 4);
  // Refused options and unknown names are errors in the API, unknown results in a run.
  await t.throwsAsync(check(ops, 'linearizable', { options: { linearizable: { model: 'nope' } } }), {
    instanceOf: UserError,
    message: /linearizable: model: unknown model/,
  });
  const inRun = await runCheckers([{ name: 'no-such' }], ops);
  t.is(inRun.valid, 'unknown');
  t.regex(inRun.results[0]?.error ?? '', /unknown checker "no-such"/);
});

test('faultline check --independent; a bare --timeout is refused with the unit to add', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-indep-'));
  const file = join(dir, 'h.jsonl');
  const ops = twoKeys();
  writeFileSync(
    file,
    `${(ops as unknown as { events: object[] }).events.map((e) => JSON.stringify(e)).join('\n')}\n`,
  );
  const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
  const r = await execa(
    'node',
    [bin, 'check', file, '--checker', 'linearizable', '--model', 'register', '--independent', '--json'],
    { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
  );
  t.is(r.exitCode, 1, r.stderr);
  t.deepEqual(JSON.parse(r.stdout).results.linearizable.stats.invalidKeys, ['b']);
  const bare = await execa(
    'node',
    [bin, 'check', file, '--checker', 'linearizable', '--model', 'register', '--timeout', '30'],
    { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } },
  );
  t.is(bare.exitCode, 254);
  t.regex(bare.stderr, /--timeout: "30" has no unit; write 30s, 30ms or 30m/);
});
