import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { FaultLedger, readLedger } from '../../nemeses/ledger.ts';
import { buildSchedule, parseSchedule, scheduleToJson } from '../../nemeses/schedule.ts';
import type { FaultRecord } from '../../nemeses/types.ts';

const tmp = () => join(mkdtempSync(join(tmpdir(), 'nem-ledger-')), 'ledger.jsonl');
const rec = (id: string): FaultRecord => ({
  id,
  spec: { kind: 'partition', action: 'start', params: { topology: 'halves' } },
  nodes: ['n1'],
  injectedAt: new Date().toISOString(),
  undo: { rules: { n1: ['10.0.0.2'] } },
});

test('ledger: inject before, heal after; unhealed read back with the newest undo', (t) => {
  const path = tmp();
  const l = new FaultLedger(path);
  l.cluster([{ name: 'n1', host: '10.0.0.1', port: 22, user: 'root' }], { knownHostsFiles: ['/k'] });
  l.beforeInject(rec('w1'));
  l.afterInject('w1', { extra: 1 });
  l.beforeInject(rec('w2'));
  l.healed('w1');
  l.close();
  const s = readLedger(path);
  t.deepEqual(
    s.nodes.map((n) => n.name),
    ['n1'],
  );
  t.deepEqual(s.knownHostsFiles, ['/k']);
  t.deepEqual(
    s.records.map((r) => r.id),
    ['w1', 'w2'],
  );
  t.deepEqual(
    s.unhealed.map((r) => r.id),
    ['w2'],
  );
  t.deepEqual(s.records[0]?.undo, { rules: { n1: ['10.0.0.2'] }, extra: 1 });
  t.truthy(s.records[0]?.healedAt);
});

test("ledger: the wall times of each fault's injected, evidence and heal entries are read back", (t) => {
  const path = tmp();
  const entries = [
    { t: 'inject', at: '2026-01-01T00:00:00.000Z', record: rec('w1') },
    { t: 'injected', at: '2026-01-01T00:00:01.000Z', id: 'w1', undo: {} },
    { t: 'evidence', at: '2026-01-01T00:00:02.000Z', id: 'w1', evidence: { landed: true, signals: [] } },
    { t: 'heal', at: '2026-01-01T00:00:05.000Z', id: 'w1' },
    { t: 'injected', at: '2026-01-01T00:00:06.000Z', id: 'w2', undo: {} },
  ];
  // The run was killed while appending w2's evidence: the torn line costs only that entry.
  writeFileSync(path, `${entries.map((e) => JSON.stringify(e)).join('\n')}\n{"t":"evidence","at":"2026-01`);
  const { times } = readLedger(path);
  t.deepEqual(Object.fromEntries(times.injected), {
    w1: '2026-01-01T00:00:01.000Z',
    w2: '2026-01-01T00:00:06.000Z',
  });
  t.deepEqual(Object.fromEntries(times.evidence), { w1: '2026-01-01T00:00:02.000Z' });
  t.deepEqual(Object.fromEntries(times.healed), { w1: '2026-01-01T00:00:05.000Z' });
});

test('ledger: a torn last line is ignored; a bad middle line names file:line', (t) => {
  const path = tmp();
  const l = new FaultLedger(path);
  l.beforeInject(rec('w1'));
  l.close();
  appendFileSync(path, '{"t":"heal","at":"x","i');
  t.deepEqual(
    readLedger(path).unhealed.map((r) => r.id),
    ['w1'],
  );
  writeFileSync(path, `${readFileSync(path, 'utf8')}\n{"t":"heal"}\n`);
  t.throws(() => readLedger(path), { message: new RegExp(`${path}:2: `) });
  t.throws(() => readLedger('/nonexistent/ledger.jsonl'), { message: /cannot read the fault ledger/ });
});

test("ledger: the run driver's event lines are read too (intent without record stays unhealed)", (t) => {
  const path = tmp();
  const lines = [
    { at: 'a', event: 'intent', id: 'w1', spec: { kind: 'process', action: 'pause', targets: ['n1'] } },
    { at: 'b', event: 'injected', id: 'w1', record: rec('w1') },
    { at: 'c', event: 'healed', id: 'w1' },
    { at: 'd', event: 'intent', id: 'w2', spec: { kind: 'partition', action: 'start' } },
  ];
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const s = readLedger(path);
  t.deepEqual(
    s.unhealed.map((r) => r.id),
    ['w2'],
  );
  t.is(s.unhealed[0]?.spec.kind, 'partition');
  t.deepEqual(s.nodes, []);
});

test('schedule: seeded, alternating start/stop per class, final heals, JSON round trip', (t) => {
  const opts = {
    faults: ['partition', 'pause', 'clock'] as const,
    intervalMs: 1000,
    durationMs: 30_000,
    seed: 7,
  };
  const a = buildSchedule({ ...opts, faults: [...opts.faults] });
  const b = buildSchedule({ ...opts, faults: [...opts.faults] });
  t.deepEqual(a, b);
  t.notDeepEqual(a.ops, buildSchedule({ ...opts, faults: [...opts.faults], seed: 8 }).ops);
  const main = a.ops.filter((o) => o.phase === 'main');
  t.true(main.length > 10);
  for (let i = 1; i < main.length; i++) t.true((main[i]?.atMs ?? 0) >= (main[i - 1]?.atMs ?? 0));
  const part = main.filter((o) => o.f.endsWith('-partition')).map((o) => o.f);
  for (const [i, f] of part.entries()) t.is(f, i % 2 === 0 ? 'start-partition' : 'stop-partition');
  t.deepEqual(
    a.ops.filter((o) => o.phase === 'final').map((o) => o.f),
    ['stop-partition', 'resume', 'reset-clock'],
  );
  for (const o of main.filter((x) => x.f === 'bump-clock'))
    t.true(Math.abs(o.value.deltaMs as number) >= 100);
  t.deepEqual(parseSchedule(scheduleToJson(a)), a);
  t.throws(() => parseSchedule('{"version":2}', 's.json'), { message: /^s\.json: version: / });
});
