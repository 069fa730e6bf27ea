import test from 'ava';
import {
  faultEvidenceFromRecord,
  historyFacts,
  markRecovering,
  recoveryAfterHeal,
  scanSutLog,
  throughputWindows,
  windowRate,
  withExposure,
} from '../../src/app/verdict/measure.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('a Porcupine etcd history: measures');

const S = 1e9;

function op(id: number, invokeS: number, completeS: number | null, over: Partial<Operation> = {}): Operation {
  return {
    id,
    process: id % 5,
    f: 'write',
    type: completeS === null ? 'info' : 'ok',
    input: id,
    output: null,
    invokeIndex: 2 * id,
    completeIndex: completeS === null ? null : 2 * id + 1,
    invokeTime: invokeS * S,
    completeTime: completeS === null ? null : completeS * S,
    node: 'n1',
    key: 'k',
    error: undefined,
    faultEpoch: null,
    infoTime: null,
    ...over,
  };
}

test('throughputWindows counts completions per window and marks fault windows', (t) => {
  const ops = [op(0, 0.1, 0.2), op(1, 1.1, 1.5), op(2, 1.6, 1.9), op(3, 3.2, 3.4)];
  const w = throughputWindows(ops, { windowS: 1, durationS: 4, faults: [{ id: 'w1', startS: 2, endS: 3 }] });
  t.deepEqual(
    w.map((x) => [x.startS, x.ops, x.faultActive]),
    [
      [0, 1, false],
      [1, 2, false],
      [2, 0, true],
      [3, 1, false],
    ],
  );
});

test('a nemesis acting before its window opens (a rolling restart inside inject): the rate counts it as under the fault, fault_epoch does not', (t) => {
  // The lazy filesystem moved the members from 1 s; its window opened (inject returned) at 3 s.
  const fault = { id: 'w1', startS: 3, actingFromS: 1, endS: 4 };
  const ops = [op(0, 0.1, 0.2), op(1, 0.5, 0.6), op(2, 1.5, 1.6), op(3, 4.2, 4.4), op(4, 4.5, 4.6)];
  const w = throughputWindows(ops, { windowS: 1, durationS: 5, faults: [fault] });
  t.deepEqual(
    w.map((x) => [x.startS, x.faultActive]),
    [
      [0, false],
      [1, true],
      [2, true],
      [3, true],
      [4, false],
    ],
  );
  // RF8's baseline is the rate before the nemesis acted (the first window: 2 ops over the 0.8 s from the
  // first completion); the 1–3 s of the move are not part of it (with them the median would be 1).
  const r = recoveryAfterHeal(ops, w, [fault], { endS: 5, intendedOpsPerSec: 2 });
  t.is(r?.baselineOpsPerSec, 2.5);
  // Ops invoked during the move carry no fault_epoch and need none: the window opened at 3 s.
  t.deepEqual(historyFacts(ops, [fault]).weaknesses, []);
});

test('historyFacts: missing node_seen, fault_epoch during a fault, completion without time', (t) => {
  const ops = [
    op(0, 0.5, 0.6),
    op(1, 2.5, 2.6, { faultEpoch: null }),
    op(2, 2.7, null, { type: 'ok', node: null }),
  ];
  const f = historyFacts(ops, [{ id: 'w1', startS: 2, endS: 3 }]);
  t.is(f.ops, 3);
  t.false(f.fieldsPresent.includes('node_seen'));
  t.false(f.fieldsPresent.includes('fault_epoch'));
  t.false(f.fieldsPresent.includes('invoke_ts/complete_ts'));
  t.true(f.fieldsPresent.includes('timeout_marker'));
  t.is(f.weaknesses.length, 2);
  const good = historyFacts(
    [op(0, 0.5, 0.6), op(1, 2.5, 2.6, { faultEpoch: ['w1'] })],
    [{ id: 'w1', startS: 2, endS: 3 }],
  );
  t.deepEqual(good.weaknesses, []);
  t.is(good.fieldsPresent.length, 11);
});

test('throughputWindows: the seconds served start at the first completion and end with the workload', (t) => {
  // The clients' first op completes at 1.5 s (start-up), the workload ends at 3.5 s.
  const ops = [op(0, 0.1, 1.5), op(1, 1.6, 1.9), op(2, 2.1, 2.5), op(3, 3.0, 3.4)];
  const w = throughputWindows(ops, { windowS: 1, durationS: 3.5, faults: [] });
  t.deepEqual(
    w.map((x) => [x.startS, x.ops, x.seconds]),
    [
      [0, 0, 0],
      [1, 2, 0.5],
      [2, 1, 1],
      [3, 1, 0.5],
    ],
  );
  t.is(windowRate(w[0]!), null, 'before the first op: no rate, no collapse');
  t.is(windowRate(w[1]!), 4);
  t.is(windowRate(w[3]!), 2, 'the partial last window over its half second');
});

test('recoveryAfterHeal: per key, from the heal to its first ok op, against the budget', (t) => {
  // Keys a and b in use across a fault 2–4 s; a serves at 4.3 s (and twice more before 5 s), b only at 5.5 s (its op invoked under
  // the fault timed out); key c was retired during the fault and has nothing to recover.
  const ops = [
    op(0, 0.1, 0.2, { key: 'a' }),
    op(1, 0.3, 0.4, { key: 'b' }),
    op(2, 0.5, 0.6, { key: 'c' }),
    op(3, 2.5, null, { key: 'c', type: 'info', infoTime: 4.5 * S }),
    op(4, 3.0, null, { key: 'b', type: 'info', infoTime: 4.8 * S }),
    op(5, 4.1, 4.3, { key: 'a' }),
    op(9, 4.4, 4.5, { key: 'a' }),
    op(10, 4.6, 4.7, { key: 'a' }),
    op(6, 4.9, 5.5, { key: 'b' }),
    op(7, 6.1, 6.2, { key: 'a' }),
    op(8, 7.1, 7.2, { key: 'b' }),
  ];
  const faults = [{ id: 'w1', startS: 2, endS: 4 }];
  const windows = throughputWindows(ops, { windowS: 1, durationS: 8, faults });
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 8, budgetS: 2 });
  t.deepEqual(r?.windows, [
    {
      id: 'w1',
      healS: 4,
      keys: 2,
      recoveredAfterS: 1.5,
      budgetS: 2,
      budgetFrom: "the plan's recoveryBudgetS",
      slowestKey: 'b',
      // 4–5 s answered 3 ops (≥ 80% of the 3.75 ops/s before the fault; the two timeouts completing
      // in it are not counted): the rate was back at once.
      rate: { backAfterS: 0, referenceOpsPerSec: 3.75 },
    },
  ]);
  // Without a plan budget: until the history ends, after the last window.
  const open = recoveryAfterHeal(ops, windows, faults, { endS: 8 });
  t.is(open?.windows[0]?.budgetS, 4);
  t.is(open?.windows[0]?.budgetFrom, 'the end of the history');
  // Windows from 5.5 s on are whole and after the recovery: 6–7 and 7–8 s, one op each.
  t.is(r?.afterHealOpsPerSec, 1);
  const marked = markRecovering(windows, r);
  t.deepEqual(
    marked.filter((w) => w.recovering).map((w) => w.startS),
    [4, 5],
  );
  t.is(recoveryAfterHeal(ops, windows, [], { endS: 8 }), null);
  t.is(recoveryAfterHeal(ops, windows, [{ id: 'w1', startS: 2, endS: null }], { endS: 8 }), null);
});

test('recoveryAfterHeal: a key asked for the whole budget that never serves an ok op is not recovered', (t) => {
  const ops = [
    op(0, 0.1, 0.2, { key: 'a' }),
    op(1, 4.5, null, { key: 'a', type: 'info', infoTime: 5.5 * S }),
    op(2, 5.6, null, { key: 'a', type: 'info', infoTime: 6.6 * S }),
    op(3, 6.7, null, { key: 'a', type: 'info', infoTime: 7.7 * S }),
  ];
  const faults = [{ id: 'w1', startS: 2, endS: 4 }];
  const windows = throughputWindows(ops, { windowS: 1, durationS: 8, faults });
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 8, budgetS: 2 });
  t.is(r?.windows[0]?.recoveredAfterS, null);
  t.is(r?.windows[0]?.slowestKey, 'a');
  t.is(r?.windows[0]?.retired, undefined);
});

test('recoveryAfterHeal: a key the workload stopped asking inside the budget is not judged', (t) => {
  // After the heal at 4 s nothing serves until 6.5 s (an election); key a's ops time out and the
  // generator moves on to key b at 6 s, which serves at 6.5 s. Key a was not asked after 5 s: with a
  // 10 s budget it is not judged (retired), key b recovered in 2.5 s.
  const ops = [
    op(0, 0.1, 0.2, { key: 'a' }),
    op(1, 0.3, 0.4, { key: 'b' }),
    op(2, 4.1, null, { key: 'a', type: 'info', infoTime: 5 * S }),
    op(3, 5.0, null, { key: 'a', type: 'info', infoTime: 6 * S }),
    op(4, 6.0, 6.5, { key: 'b' }),
    op(5, 6.6, 6.7, { key: 'b' }),
  ];
  const faults = [{ id: 'w1', startS: 2, endS: 4 }];
  const windows = throughputWindows(ops, { windowS: 1, durationS: 8, faults });
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 8, budgetS: 10 });
  t.deepEqual(r?.windows[0]?.retired, ['a']);
  t.is(r?.windows[0]?.recoveredAfterS !== null && (r?.windows[0]?.recoveredAfterS ?? 0) >= 2.5, true);
  t.is(r?.windows[0]?.slowestKey, 'b');
  // With a 0.5 s budget key a was still being asked when it ran out: judged, and never served.
  const tight = recoveryAfterHeal(ops, windows, faults, { endS: 8, budgetS: 0.5 });
  t.is(tight?.windows[0]?.retired, undefined);
  t.is(tight?.windows[0]?.recoveredAfterS, null);
});

test('recoveryAfterHeal: a key the next fault reaches before it served again is not judged by this heal', (t) => {
  // w1 heals at 4 s with a 10 s budget; key a serves at 4.3 s; key b's op times out and w2 (a kill of
  // b's node) begins at 5 s, inside w1's budget: b is w2's to judge, not w1's.
  const ops = [
    op(0, 0.1, 0.2, { key: 'a' }),
    op(1, 0.3, 0.4, { key: 'b' }),
    op(2, 4.1, 4.3, { key: 'a' }),
    op(3, 4.5, null, { key: 'b', type: 'info', infoTime: 6 * S }),
    op(4, 9.5, 9.6, { key: 'a' }),
  ];
  const faults = [
    { id: 'w1', startS: 2, endS: 4 },
    { id: 'w2', startS: 5, endS: 8 },
  ];
  const windows = throughputWindows(ops, { windowS: 1, durationS: 10, faults });
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 10, budgetS: 10 });
  t.is(r?.windows[0]?.recoveredAfterS, 0.3);
  t.deepEqual(r?.windows[0]?.unjudged, { keys: ['b'], by: 'w2', afterS: 1 });
  // Without the next fault inside the budget, the same key is a failure to recover.
  // (key b asked again after the 3 s budget ran out, so it was asked for the whole budget).
  const askedOn = [...ops, op(5, 7.5, null, { key: 'b', type: 'info', infoTime: 9 * S })];
  const alone = recoveryAfterHeal(askedOn, windows, [faults[0]!], { endS: 10, budgetS: 3 });
  t.is(alone?.windows[0]?.recoveredAfterS, null);
  t.is(alone?.windows[0]?.slowestKey, 'b');
});

/**
 * 10 ops/s on keys a and b, a fault 2–4 s. Both keys answer right after the heal (ops invoked under the
 * fault complete at 4.1 s), then a rejoining member forces an election: nothing completes from 4.2 to
 * `stallEndS`, then 10 ops/s again until 12 s.
 */
function stallAfterHeal(stallEndS: number): Operation[] {
  const ops: Operation[] = [];
  let id = 0;
  const at = (t: number, key: string) => ops.push(op(id++, t - 0.05, t, { key }));
  for (let t = 0.05; t < 2; t += 0.1) at(t, id % 2 ? 'a' : 'b');
  at(4.1, 'a');
  at(4.1, 'b');
  for (let t = stallEndS + 0.05; t < 12; t += 0.1) at(t, id % 2 ? 'a' : 'b');
  return ops;
}

test('recoveryAfterHeal: every key answering is not enough, the rate must be back to nominal', (t) => {
  const faults = [{ id: 'w1', startS: 2, endS: 4 }];
  const ops = stallAfterHeal(8);
  const windows = throughputWindows(ops, { windowS: 2, durationS: 12, faults });
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 12, budgetS: 10 });
  const w1 = r?.windows[0];
  // The keys answered 0.1 s after the heal; 4–6 and 6–8 s ran ~0 ops/s; 8–10 s was back to 10 ops/s.
  t.is(w1?.rate?.backAfterS, 4);
  t.true(Math.abs((w1?.rate?.referenceOpsPerSec ?? 0) - 10) < 0.5, 'the rate before the fault');
  t.is(w1?.rate?.cutBy, undefined);
  t.is(w1?.recoveredAfterS, 4, 'recovered when the rate was back, not when the keys first answered');
  // The stall is recovery (RF8's to judge against its budget), not a rate collapse for RF1.
  t.deepEqual(
    markRecovering(windows, r)
      .filter((x) => x.recovering)
      .map((x) => x.startS),
    [4, 6],
  );
  // A budget shorter than the stall: recovered after 4 s > 3 s.
  const tight = recoveryAfterHeal(ops, windows, faults, { endS: 12, budgetS: 3 });
  t.is(tight?.windows[0]?.recoveredAfterS, 4);
  t.is(tight?.windows[0]?.rate?.cutBy, undefined);
  // Never back: no nominal window after the heal before the workload ended, 6 s later (> 3 s budget).
  const never = stallAfterHeal(12);
  const nw = throughputWindows(never, { windowS: 2, durationS: 12, faults });
  const nr = recoveryAfterHeal(never, nw, faults, { endS: 12, budgetS: 3 });
  t.is(nr?.windows[0]?.rate?.backAfterS, null);
  t.is(nr?.windows[0]?.rate?.cutBy, undefined, 'the budget ran out before the end: judged, not cut');
  t.true((nr?.afterHealOpsPerSec ?? 1) < 1, 'judged: the windows after the keys answered ran ~0 ops/s');
  // Not back when the workload ended, but the budget runs past it: the rate is not judged, and the
  // windows after the heal are not "after the recovery" either (they were still recovering).
  const cut = recoveryAfterHeal(never, nw, faults, { endS: 14, budgetS: 10 });
  t.is(cut?.windows[0]?.rate?.cutBy, 'the end of the workload');
  t.is(cut?.afterHealOpsPerSec, null);
  // The next fault began inside the budget before the rate was back: that fault's to judge.
  const two = [...faults, { id: 'w2', startS: 6, endS: 7 }];
  const tw = throughputWindows(ops, { windowS: 2, durationS: 12, faults: two });
  const tr = recoveryAfterHeal(ops, tw, two, { endS: 12, budgetS: 10 });
  t.is(tr?.windows[0]?.rate?.backAfterS, null);
  t.is(tr?.windows[0]?.rate?.cutBy, 'w2');
});

test('scanSutLog finds panics, fatals and internal errors with their line numbers', (t) => {
  const log =
    'ok\nINFO raft: elected\npanic: runtime error: index out of range\nE | rpc error: Internal error\nlevel=FATAL msg=x\n';
  t.deepEqual(
    scanSutLog(log, 'n2', 'etcd.log').matches.map((m) => m.line),
    [3, 4, 5],
  );
  t.deepEqual(scanSutLog('all good\nstill good\n', 'n1', 'x.log'), { matches: [], expected: 0 });
});

test('scanSutLog counts the database’s declared log noise as expected, never as a match', (t) => {
  const log = [
    '2026-12-01 FATAL:  the database system is in recovery mode',
    '2026-12-01 FATAL:  the database system is in recovery mode',
    '2026-12-01 PANIC:  could not write to file "pg_wal/xlogtemp.42": No space left on device',
  ].join('\n');
  const noise = [/FATAL: {2}the database system is (?:starting up|in recovery mode|shutting down)/];
  const r = scanSutLog(log, 'n1', 'postgresql.log', noise);
  t.is(r.expected, 2);
  t.deepEqual(
    r.matches.map((m) => m.line),
    [3],
    'a real PANIC still counts',
  );
});

fixtureTest('on a real Jepsen etcd history (Porcupine fixture): counts agree with the pairing', async (t) => {
  const events = await loadHistory(fixture('porcupine/jepsen/etcd_000.log'), { format: 'porcupine-etcd' });
  const paired = pairEvents(events);
  const client = paired.ops.filter((o) => o.process !== 'nemesis');
  const facts = historyFacts(paired.ops, []);
  t.is(facts.ops, client.length);
  t.true(facts.ops > 0);
  const windows = throughputWindows(paired.ops, { windowS: 1, faults: [] });
  const completed = client.filter((o) => (o.completeTime ?? o.infoTime) !== null).length;
  t.is(
    windows.reduce((s, w) => s + w.ops, 0),
    completed,
  );
});

test('faultEvidenceFromRecord turns a nemesis ledger record into evidence seconds and signals', (t) => {
  const started = new Date('2026-11-30T04:00:00Z');
  const ev = faultEvidenceFromRecord(
    {
      id: 'w1',
      spec: { kind: 'partition', action: 'start', targets: 'majority', params: { topology: 'asymmetric' } },
      nodes: ['n1', 'n2'],
      injectedAt: '2026-11-30T04:00:10Z',
      healedAt: '2026-11-30T04:00:30.500Z',
      undo: {},
      evidence: {
        landed: true,
        signals: [
          {
            side: 'injector',
            node: 'n1',
            signal: 'FAULTLINE DROP packets',
            before: 0,
            during: 812,
            landed: true,
          },
          { side: 'victim', node: 'n3', signal: 'tcp connect n3→n1:2380', landed: true },
        ],
      },
    },
    started,
  );
  t.is(ev.startS, 10);
  t.is(ev.endS, 30.5);
  t.is(ev.topology, 'asymmetric');
  t.true(ev.landed && ev.healed);
  t.is(ev.signals.length, 2);
  const bare = faultEvidenceFromRecord(
    {
      id: 'w2',
      spec: { kind: 'process', action: 'kill' },
      nodes: ['n2'],
      injectedAt: '2026-11-30T04:01:00Z',
      undo: {},
    },
    started,
  );
  t.false(bare.landed);
  t.is(bare.endS, null);
  t.regex(bare.reason!, /no landing evidence/);
});

test('historyFacts reads timeouts and clock inversions from the ops, and carries the recorder facts', (t) => {
  const op = (id: number, type: 'ok' | 'info', invoke: number, complete: number | null) => ({
    id,
    process: id,
    f: 'write',
    type,
    input: 1,
    output: null,
    invokeIndex: id * 2,
    completeIndex: id * 2 + 1,
    invokeTime: invoke,
    completeTime: complete,
    node: 'n1',
    key: 'k',
    error: null,
    faultEpoch: null,
    infoTime: type === 'info' ? invoke + 5 : null,
  });
  const f = historyFacts([op(0, 'ok', 10, 20), op(1, 'info', 10, null), op(2, 'ok', 30, 25)], []);
  t.deepEqual(f.timeouts, { count: 1, withCompletion: 0 });
  t.is(f.timeInversions, 1);
  t.is(f.clock, 'unknown', 'no clock readings: the clock is not assumed');
  const marked = historyFacts([op(1, 'info', 10, 12)], []);
  t.is(marked.timeouts?.withCompletion, 1);
  t.false(marked.fieldsPresent.includes('timeout_marker'));
});

test('withExposure: a power failure with nothing acknowledged while it was in force has not landed', (t) => {
  const started = new Date('2026-11-30T04:00:00Z');
  const power = faultEvidenceFromRecord(
    {
      id: 'w1',
      spec: { kind: 'lazyfs', action: 'lose-unfsynced', targets: ['n1', 'n2', 'n3'] },
      nodes: ['n1', 'n2', 'n3'],
      injectedAt: '2026-11-30T04:00:02Z',
      healedAt: '2026-11-30T04:00:27Z',
      undo: {},
      evidence: {
        landed: true,
        signals: [{ side: 'injector', node: 'n1', signal: 'mounted', landed: true }],
      },
    },
    started,
  );
  const window = { startS: 3, endS: 27 };
  // Acknowledged before the window, failed or unknown inside it, invoked inside and acknowledged after it.
  const nothing = [
    op(1, 1, 1.5),
    op(2, 5, 5.2, { type: 'fail' }),
    op(3, 10, null),
    op(4, 26, 28),
    op(5, 12, 12.1, { process: 'nemesis' }),
  ];
  const none = withExposure(power, window, nothing);
  t.false(none.landed);
  t.regex(none.reason ?? '', /no client op was acknowledged while the fault was in force \(3\.0–27\.0 s\)/);
  t.is(none.signals.at(-1)?.during, '0 acknowledged in 3.0–27.0 s');
  t.false(none.signals.at(-1)?.landed);

  const some = withExposure(power, window, [...nothing, op(6, 20, 20.3), op(7, 21, 21.4)]);
  t.true(some.landed);
  t.is(some.reason, null);
  t.is(some.signals.at(-1)?.during, '2 acknowledged in 3.0–27.0 s');

  // Other faults are judged by their own evidence only: a partition may well block every write.
  const partition = { ...power, kind: 'partition', action: 'start' };
  t.is(withExposure(partition, window, nothing), partition);
  const fsyncFail = { ...power, action: 'fsync-fail' };
  t.is(withExposure(fsyncFail, window, nothing), fsyncFail);
});

test('recoveryAfterHeal: failures that never reached the database (no-client) are not service', (t) => {
  // One key, served at 10 ops/s before a power failure 2–4 s; after the heal the database never
  // answers again: every op fails at once because no client could be opened (Jepsen's no-client),
  // at a higher rate than before, until the history ends at 8 s. No budget: the end of the history.
  const ops: Operation[] = [];
  let id = 0;
  for (let s = 0.05; s < 2; s += 0.1) ops.push(op(id++, s, s + 0.01, { key: 'k' }));
  for (let s = 4.01; s < 8; s += 0.05)
    ops.push(op(id++, s, s + 0.001, { key: 'k', type: 'fail', error: ['no-client', 'Connection refused'] }));
  const faults = [{ id: 'w1', startS: 2, endS: 4 }];
  const windows = throughputWindows(ops, { windowS: 1, durationS: 8, faults });
  t.is(windows[5]?.ops, 20, 'the refusals complete, and are counted as completions');
  t.is(windows[5]?.served, 0, 'but none of them was answered by the database');
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 8 });
  const w = r?.windows[0];
  t.is(w?.recoveredAfterS, null, 'the key never served again');
  t.is(w?.slowestKey, 'k');
  t.is(w?.retired, undefined, 'asked until the end: not retired');
  t.is(w?.rate?.backAfterS, null, 'the rate of answered ops never came back');
});

test('recoveryAfterHeal: a database that answers nothing after the heal has not recovered, whichever keys the workload moved on to', (t) => {
  // Keys a and b in use across a fault 2–4 s; after the heal every op is refused at once, so the
  // generator burns through a and b and moves on to c: nothing answered, a and b are not "retired".
  const refused = { type: 'fail' as const, error: 'not-applied: fetch failed (ECONNREFUSED)' };
  const ops = [
    op(0, 0.1, 0.2, { key: 'a' }),
    op(1, 0.3, 0.4, { key: 'b' }),
    op(2, 4.1, 4.11, { key: 'a', ...refused }),
    op(3, 4.2, 4.21, { key: 'b', ...refused }),
    op(4, 5.0, 5.01, { key: 'c', ...refused }),
    op(5, 7.0, 7.01, { key: 'c', ...refused }),
  ];
  const faults = [{ id: 'w1', startS: 2, endS: 4 }];
  const windows = throughputWindows(ops, { windowS: 1, durationS: 8, faults });
  const w = recoveryAfterHeal(ops, windows, faults, { endS: 8 })?.windows[0];
  t.is(w?.recoveredAfterS, null);
  t.is(w?.retired, undefined);
  // The same history with key c served at 5 s: a and b were retired by a database that answers.
  const served = ops.map((o) => (o.id === 4 ? { ...o, type: 'ok' as const, error: null } : o));
  const w2 = recoveryAfterHeal(served, windows, faults, { endS: 8 })?.windows[0];
  t.deepEqual(w2?.retired, ['a', 'b']);
});

/**
 * Etcd's S8 shape: keys a and b at 10 ops/s for 40 s; every snapshot corrupted (no backup) at 15 s, every
 * member killed at 17 s and started again at 20 s, nothing served from 17 to 20.5 s. The corruption's
 * window closes only at the final heal (after the workload), which restores nothing.
 */
function corruptThenKill(): Operation[] {
  const ops: Operation[] = [];
  let id = 0;
  for (let t = 0.05; t < 40; t += 0.1) {
    if (t > 16.9 && t < 20.5) continue;
    ops.push(op(id++, t - 0.04, t, { key: id % 2 ? 'a' : 'b' }));
  }
  return ops;
}

test('recoveryAfterHeal: permanent damage has no heal of its own; the restart after it is judged with it in place', (t) => {
  const ops = corruptThenKill();
  // As the run measures them: the corruption in force while it was dealt (15–15.2 s), then permanent.
  const faults = [
    { id: 'c1', startS: 15, endS: 15.2, permanent: true },
    { id: 'w2', startS: 17, endS: 20 },
  ];
  const windows = throughputWindows(ops, { windowS: 2, durationS: 40, faults });
  t.deepEqual(
    windows.filter((w) => w.faultActive).map((w) => w.startS),
    [14, 16, 18],
    'after the kill healed the windows are the database serving with the damage, not under a fault',
  );
  const r = recoveryAfterHeal(ops, windows, faults, { endS: 40, intendedOpsPerSec: 10 });
  t.deepEqual(r?.permanent, ['c1']);
  t.deepEqual(
    r?.windows.map((w) => w.id),
    ['w2'],
    'the corruption is not a heal to time (2 s before the kill, no whole window could show the rate)',
  );
  const w2 = r?.windows[0];
  t.true((w2?.recoveredAfterS ?? 99) < 2.5, `keys and rate back after the restart: ${w2?.recoveredAfterS}`);
  t.is(w2?.rate?.backAfterS, 2, 'the 22–24 s window is the first whole one at the rate before the fault');
  t.true((r?.afterHealOpsPerSec ?? 0) > 9, 'the rate after the last recovery is compared');
  // A permanent fault alone: nothing healed, nothing to time, and it says so.
  const alone = [faults[0]!];
  const aw = throughputWindows(ops, { windowS: 2, durationS: 40, faults: alone });
  const ar = recoveryAfterHeal(ops, aw, alone, { endS: 40 });
  t.deepEqual(ar?.windows, []);
  t.deepEqual(ar?.permanent, ['c1']);
});
