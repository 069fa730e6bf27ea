import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { Binding } from '../../src/app/plan/binding.ts';
import { measureRun } from '../../src/app/run/run-evidence.ts';

/**
 * A synthetic run directory as runTest writes it: client ops at 10/s for 10 s, one partition window
 * (injected at 3 s, healed at 6 s), a ledger whose wall times are offset from the history's monotonic
 * clock, checker results, and one node log with a panic line.
 */
const binding = { checkers: ['linearizable'] } as unknown as Binding;
const T0 = Date.parse('2026-11-30T04:00:00.000Z');
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

/** A read of key r on n1 invoked at `s` seconds, answered 5 ms later. */
function readPair(
  ev: (e: Record<string, unknown>) => void,
  process: number,
  s: number,
  faultEpoch: string[] | null,
): void {
  const at = { f: 'read', key: 'r', process, node: 'n1', faultEpoch };
  ev({ ...at, type: 'invoke', value: null, time: s * 1e9 });
  ev({ ...at, type: 'ok', value: 1, time: s * 1e9 + 5e6 });
}

function runDir(opts: { unmarked?: number } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-measure-'));
  const lines: unknown[] = [];
  let index = 0;
  const ev = (e: Record<string, unknown>) =>
    lines.push({ index: index++, node: null, faultEpoch: null, ...e });
  let unmarked = opts.unmarked ?? 0;
  for (let i = 0; i < 100; i++) {
    const t = i * 0.1;
    const inWindow = t >= 3.2 && t < 6;
    const epoch = inWindow && unmarked-- <= 0 ? ['w1'] : null;
    if (i === 30)
      ev({ type: 'invoke', f: 'start-partition', value: { topology: 'one' }, process: 'nemesis', time: 3e9 });
    if (i === 32)
      ev({
        type: 'info',
        f: 'start-partition',
        value: { id: 'w1', landed: true },
        process: 'nemesis',
        time: 3.2e9,
      });
    if (i === 60)
      ev({ type: 'info', f: 'stop-partition', value: { healed: ['w1'] }, process: 'nemesis', time: 6e9 });
    readPair(ev, i % 5, t, epoch);
  }
  writeFileSync(join(dir, 'history.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  // The ledger's wall clock: the workload began at T0.
  const ledger = [
    {
      t: 'inject',
      at: iso(3.05),
      record: {
        id: 'w1',
        spec: { kind: 'partition', action: 'start' },
        nodes: ['n1'],
        injectedAt: iso(3.05),
        undo: {},
      },
    },
    { t: 'injected', at: iso(3.15), id: 'w1', undo: {} },
    { t: 'evidence', at: iso(3.2), id: 'w1', evidence: { landed: true, signals: [] } },
    { t: 'heal', at: iso(6.02), id: 'w1' },
  ];
  writeFileSync(join(dir, 'ledger.jsonl'), `${ledger.map((l) => JSON.stringify(l)).join('\n')}\n{"t":"inj`);
  const signals = [
    { side: 'injector', node: 'n1', signal: 'FAULTLINE DROP packets', before: 0, during: 12, landed: true },
    { side: 'victim', node: 'n1', signal: 'tcp connect n1→n2', landed: true },
  ];
  writeFileSync(
    join(dir, 'faults.json'),
    JSON.stringify([
      {
        id: 'w1',
        spec: { kind: 'partition', action: 'start', params: { topology: 'one' } },
        nodes: ['n1'],
        injectedAt: iso(3.05),
        undo: {},
        evidence: { landed: true, signals },
        healedAt: iso(6.0),
      },
    ]),
  );
  writeFileSync(
    join(dir, 'results.json'),
    JSON.stringify({
      valid: true,
      results: [
        {
          checker: 'linearizable',
          valid: true,
          evidence: 'lin: 100 ops',
          scope: 's',
          anomalies: [],
          stats: { opsConsumed: 100 },
        },
        {
          checker: 'workload',
          valid: true,
          evidence: '100 client ops',
          scope: '',
          anomalies: [],
          stats: { opsConsumed: 100 },
        },
      ],
    }),
  );
  mkdirSync(join(dir, 'n1'));
  writeFileSync(join(dir, 'n1', 'etcd.log'), 'started\npanic: runtime error\nok\n');
  return dir;
}

test('fault windows in workload seconds, anchored on the ledger; a complete history is not weak', async (t) => {
  const m = await measureRun(runDir(), binding, 10);
  t.is(m.ops, 100);
  t.is(m.faults.length, 1);
  const f = m.faults[0];
  t.is(f?.kind, 'partition');
  t.is(f?.topology, 'one');
  t.true(f?.landed);
  t.true(Math.abs((f?.startS ?? 0) - 3.05) < 0.01, `start ${f?.startS}`);
  t.true(Math.abs((f?.endS ?? 0) - 6.0) < 0.01, `end ${f?.endS}`);
  t.deepEqual(m.history.weaknesses, []);
  t.is(m.history.fieldsPresent.length, 11, m.history.fieldsPresent.join(','));
  t.is(m.throughput.length, 5);
  t.deepEqual(
    m.throughput.map((w) => w.faultActive),
    [false, true, true, false, false],
  );
  t.is(m.workloadS, 10);
  t.false(m.violation);
  t.deepEqual(
    m.oracles.map((o) => [o.checker, o.declared, o.opsConsumed]),
    [
      ['linearizable', true, 100],
      ['workload', false, 100],
    ],
  );
  t.is(m.sutLog.filesScanned, 1);
  t.is(m.sutLog.matches[0]?.line, 2);
  t.is(m.metrics[0]?.opsPerSec, 10);
  t.is(m.metrics[0]?.latencyMs.p50, 5);
});

test('ops invoked inside the marked window without fault_epoch make the history weak', async (t) => {
  const m = await measureRun(runDir({ unmarked: 3 }), binding, 10);
  t.deepEqual(m.history.weaknesses, ['3 op(s) invoked during a fault window lack fault_epoch']);
});

test('a checker that reads only some op kinds names the subset; linearizable on a session claim is a mismatch', async (t) => {
  const dir = runDir();
  const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
    results: { checker: string }[];
  };
  results.results.push({ ...results.results[0], checker: 'elle' } as { checker: string });
  writeFileSync(join(dir, 'results.json'), JSON.stringify(results));
  const m = await measureRun(
    dir,
    { checkers: ['linearizable', 'elle'], model: 'session' } as unknown as Binding,
    10,
  );
  const elle = m.oracles.find((o) => o.checker === 'elle');
  t.regex(String(elle?.subset), /^txn ops only; 100 read op\(s\) unchecked$/);
  const lin = m.oracles.find((o) => o.checker === 'linearizable');
  t.is(lin?.subset, null);
  t.regex(String(lin?.mismatch), /session claim/);
});

test('a set checker reads the ops its options name: set-full with readF final-read leaves the plain reads unchecked', async (t) => {
  const dir = runDir();
  const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
    results: { checker: string }[];
  };
  results.results.push({ ...results.results[0], checker: 'set-full' } as { checker: string });
  writeFileSync(join(dir, 'results.json'), JSON.stringify(results));
  const m = await measureRun(
    dir,
    {
      checkers: ['linearizable', 'set-full'],
      model: 'register',
      checkerOptions: { 'set-full': { readF: 'final-read' } },
    } as unknown as Binding,
    10,
  );
  const setFull = m.oracles.find((o) => o.checker === 'set-full');
  t.regex(String(setFull?.subset), /^add\/final-read ops only; 100 read op\(s\) unchecked$/);
});

/**
 * Etcd's S8 as a run directory: reads at 10/s for 40 s; at 15 s every snapshot truncated (disk corrupt,
 * `backup` as given), at 17 s every member killed, started again at 20 s (nothing served 17–20.5 s);
 * the final heal at 41 s closes the corruption's window, restoring nothing without a backup.
 */
function corruptThenKillDir(backup: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-measure-'));
  const lines: unknown[] = [];
  let index = 0;
  const ev = (e: Record<string, unknown>) =>
    lines.push({ index: index++, node: null, faultEpoch: null, ...e });
  const nemesis = (type: string, f: string, value: unknown, s: number) =>
    ev({ type, f, value, process: 'nemesis', time: s * 1e9 });
  for (let i = 0; i < 400; i++) {
    const s = i * 0.1;
    if (i === 150) nemesis('invoke', 'corrupt-file', { targets: 'all' }, 15);
    if (i === 152) nemesis('info', 'corrupt-file', { id: 'c1', landed: true }, 15.2);
    if (i === 170) nemesis('invoke', 'kill', { targets: 'all' }, 17);
    if (i === 171) nemesis('info', 'kill', { id: 'w2', landed: true }, 17.1);
    if (i === 200) nemesis('info', 'start', { healed: ['w2'] }, 20);
    if (s > 16.95 && s < 20.5) continue;
    const epoch = s >= 15 ? (s < 20 ? ['c1', 'w2'] : ['c1']) : null;
    readPair(ev, i % 6, s, epoch);
  }
  writeFileSync(join(dir, 'history.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const corrupt = {
    kind: 'disk',
    action: 'corrupt',
    params: { globs: ['member/snap/*.snap'], mode: 'truncate', fraction: 0.5, ...(backup && { backup }) },
  };
  const kill = { kind: 'process', action: 'kill' };
  const record = (id: string, spec: unknown, at: number, healed: number) => ({
    id,
    spec,
    nodes: ['n1', 'n2', 'n3'],
    injectedAt: iso(at),
    undo: {},
    evidence: { landed: true, signals: [] },
    healedAt: iso(healed),
  });
  const ledger = [
    { t: 'inject', at: iso(15.0), record: { ...record('c1', corrupt, 15, 0), healedAt: undefined } },
    { t: 'injected', at: iso(15.1), id: 'c1', undo: {} },
    { t: 'evidence', at: iso(15.2), id: 'c1', evidence: { landed: true, signals: [] } },
    { t: 'inject', at: iso(17.0), record: { ...record('w2', kill, 17, 0), healedAt: undefined } },
    { t: 'injected', at: iso(17.05), id: 'w2', undo: {} },
    { t: 'evidence', at: iso(17.1), id: 'w2', evidence: { landed: true, signals: [] } },
    { t: 'heal', at: iso(20.0), id: 'w2' },
    { t: 'heal', at: iso(41.0), id: 'c1' },
  ];
  writeFileSync(join(dir, 'ledger.jsonl'), `${ledger.map((l) => JSON.stringify(l)).join('\n')}\n`);
  writeFileSync(
    join(dir, 'faults.json'),
    JSON.stringify([record('c1', corrupt, 15, 41), record('w2', kill, 17, 20)]),
  );
  writeFileSync(join(dir, 'results.json'), JSON.stringify({ valid: true, results: [] }));
  return dir;
}

test('a corruption without backup is damage nothing heals: the restart after the kill is judged back to nominal', async (t) => {
  const m = await measureRun(corruptThenKillDir(false), { ...binding, rate: 10 } as Binding, 40);
  t.deepEqual(m.recovery?.permanent, ['c1']);
  t.deepEqual(
    m.recovery?.windows.map((w) => w.id),
    ['w2'],
  );
  const w2 = m.recovery?.windows[0];
  t.is(w2?.rate?.backAfterS, 2, 'the rate was back in the first whole window after the restart');
  t.true((w2?.recoveredAfterS ?? 99) <= 2, `recovered after ${w2?.recoveredAfterS}`);
  t.true((m.recovery?.afterHealOpsPerSec ?? 0) > 9);
  t.false(
    m.throughput.some((w) => w.startS >= 22 && w.faultActive),
    'no window after the restart counts as under a fault',
  );
  // With a backup the final heal restores the file: the corruption was in force to the end.
  const b = await measureRun(corruptThenKillDir(true), { ...binding, rate: 10 } as Binding, 40);
  t.is(b.recovery?.permanent, undefined);
  t.true(b.throughput.filter((w) => w.startS >= 22).every((w) => w.faultActive));
});
