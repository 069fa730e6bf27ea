import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { loadSchedule } from '../../nemeses/schedule.ts';
import { DispatchLogWriter, loadDispatchLog } from '../../src/app/test/dispatch-log.ts';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

/** A run's schedule.json as the runner writes it: every op dispatched, a client op and a nemesis op. */
async function writtenLog(dir: string): Promise<string> {
  const path = join(dir, 'schedule.json');
  const w = new DispatchLogWriter(path, { seed: 7, concurrency: 1, nodes: ['n1'], workload: 'register' });
  w.record(0, 0, 1_000, { f: 'read', value: null });
  w.record('nemesis', 'nemesis', 2_000, { f: 'start-partition', value: { targets: 'halves' }, time: 1_500 });
  await w.close();
  return path;
}

test('the dispatch log the runner writes is read back whole; it is not a fault schedule', async (t) => {
  const path = await writtenLog(mkdtempSync(join(tmpdir(), 'fl-dispatch-')));
  const log = await loadDispatchLog(path);
  t.is(log.seed, 7);
  t.deepEqual(
    log.ops.map((o) => [o.thread, o.f, o.at, o.time]),
    [
      [0, 'read', 1_000, undefined],
      ['nemesis', 'start-partition', 2_000, 1_500],
    ],
  );
  await t.throwsAsync(loadSchedule(path), { message: /schedule\.json/ });
});

test('faultline test --replay accepts a schedule.json a run wrote (checked as a dispatch log)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-dispatch-'));
  const log = await writtenLog(dir);
  const inv = join(dir, 'inv.yaml');
  // A closed loopback port: nothing below may get as far as connecting.
  writeFileSync(inv, 'nodes:\n  n1: 127.0.0.1:1\n');
  const missing = join(dir, 'missing-faults.json');
  const r = await execa(
    'node',
    [bin, 'test', '--inventory', inv, '--replay', log, '--fault-schedule', missing],
    {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    },
  );
  // The replayed log passed its check: the next input, the missing fault schedule, is the one refused.
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stderr, /missing-faults\.json/);
  t.notRegex(r.stderr, /schedule\.json/);
});
