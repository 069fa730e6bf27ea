import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { SessionLogWriter } from '../../src/app/report/session-log.ts';
import { sampleSession } from './session-record.ts';

test('SessionLogWriter appends to the timeline and rewrites the log after every event', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-log-'));
  const rec = await sampleSession(dir);
  rec.timeline = [];
  let clock = Date.parse('2026-11-30T04:00:00Z');
  const w = new SessionLogWriter(rec, () => new Date(clock));
  await w.event('S1', 'start', 'seed 1');
  const first = await readFile(join(dir, 'session-log.md'), 'utf8');
  t.regex(first, /\| 2026-11-30T04:00:00Z \| S1 \| start \| seed 1 \|/);
  const done = await w.starting('S1', 'workload', 600);
  clock += 612_300;
  await done('ok');
  const log = await readFile(join(dir, 'session-log.md'), 'utf8');
  const rows = log
    .split('## Scenario timeline')[1]!
    .split('## Scenario verdicts')[0]!
    .split('\n')
    .filter((l) => l.startsWith('| 2026'));
  t.deepEqual(rows, [
    '| 2026-11-30T04:00:00Z | S1 | start | seed 1 |',
    '| 2026-11-30T04:00:00Z | S1 | starting: workload | expected ~600s |',
    '| 2026-11-30T04:10:12Z | S1 | workload: ok | elapsed 612.3s |',
  ]);
  await rm(dir, { recursive: true });
});
