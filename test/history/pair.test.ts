import test from 'ava';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { PairingError, pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { operationFromRecord, operationRecord } from '../../src/core/history/record.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('reference histories: pairing');

function events(
  rows: [HistoryEvent['type'], HistoryEvent['process'], string, unknown, Partial<HistoryEvent>?][],
) {
  return rows.map(
    ([type, process, f, value, extra], index): HistoryEvent => ({
      index,
      type,
      f,
      value,
      process,
      time: index * 100,
      node: null,
      faultEpoch: null,
      ...extra,
    }),
  );
}

test('ok, fail and info completions; open ops stay open forever and retire their process', (t) => {
  const h = events([
    ['invoke', 0, 'write', 1, { node: 'n1', faultEpoch: ['w1'], key: 'k' }],
    ['invoke', 1, 'read', null],
    ['invoke', 2, 'cas', [1, 2]],
    ['ok', 0, 'write', 1],
    ['fail', 2, 'cas', [1, 2], { error: 'mismatch' }],
    ['info', 1, 'read', null, { error: 'timed-out', node: 'n3' }],
    ['invoke', 3, 'read', null],
  ]);
  const p = pairEvents(h);
  t.is(p.events, h);
  t.deepEqual(
    p.ops.map((o) => [
      o.id,
      o.process,
      o.f,
      o.type,
      o.invokeIndex,
      o.completeIndex,
      o.completeTime,
      o.infoTime,
    ]),
    [
      [0, 0, 'write', 'ok', 0, 3, 300, null],
      [1, 1, 'read', 'info', 1, 5, null, 500],
      [2, 2, 'cas', 'fail', 2, 4, 400, null],
      [3, 3, 'read', 'info', 6, null, null, null],
    ],
  );
  t.deepEqual(p.ops[0]!.faultEpoch, ['w1']);
  t.is(p.ops[0]!.key, 'k');
  t.is(p.ops[0]!.output, 1);
  t.is(p.ops[2]!.output, null, 'a failed op has no output');
  t.is(p.ops[2]!.error, 'mismatch');
  t.is(p.ops[1]!.node, 'n3', 'the completion names the node that answered');
  t.deepEqual(p.retiredProcesses.sort(), [1, 3]);
});

test("the nemesis's info/info pairs become ops and the nemesis is never retired", (t) => {
  const p = pairEvents(
    events([
      ['info', 'nemesis', 'start-partition', null],
      ['invoke', 0, 'read', null],
      ['info', 'nemesis', 'start-partition', ['n1']],
      ['ok', 0, 'read', 3],
      ['info', 'nemesis', 'stop-partition', null],
    ]),
  );
  t.deepEqual(
    p.ops.map((o) => [o.process, o.f, o.invokeIndex, o.completeIndex]),
    [
      ['nemesis', 'start-partition', 0, 2],
      [0, 'read', 1, 3],
      ['nemesis', 'stop-partition', 4, null],
    ],
  );
  t.deepEqual(p.retiredProcesses, []);
});

test('broken histories are refused with the event named', (t) => {
  t.throws(() => pairEvents(events([['ok', 0, 'read', 1]])), {
    instanceOf: PairingError,
    message: 'event 0: process 0 completed (ok) with no open invocation',
  });
  t.throws(
    () =>
      pairEvents(
        events([
          ['invoke', 0, 'read', null],
          ['invoke', 0, 'read', null],
        ]),
      ),
    { message: 'event 1: process 0 invoked again while its op from event 0 is still open' },
  );
});

fixtureTest('the operation record view has the spec fields and is lossless', async (t) => {
  for (const rel of [
    'porcupine/jepsen/etcd_000.log',
    'elle/histories/jepsen/bank.edn',
    'elle/elle-histories/huge-scc.edn',
  ]) {
    const p = pairEvents(await loadHistory(fixture(rel)));
    for (const op of p.ops) {
      const r = operationRecord(op);
      t.deepEqual(operationFromRecord(r), op);
      if (r.timeout_marker) {
        t.is(r.complete_ts, null);
        t.is(r.output, null);
      }
      if (r.output !== null) t.is(r.outcome, 'ok');
    }
  }
  const [op] = pairEvents(
    events([['invoke', 4, 'write', 7, { key: 'x', node: 'n2', faultEpoch: ['p1'] }]]),
  ).ops;
  t.deepEqual(operationRecord(op!), {
    op_id: 0,
    process_id: 4,
    invoke_ts: 0,
    complete_ts: null,
    op_type: 'write',
    key: 'x',
    input: 7,
    output: null,
    error: null,
    timeout_marker: true,
    node_seen: 'n2',
    fault_epoch: ['p1'],
    outcome: 'info',
    invoke_index: 0,
    complete_index: null,
    info_ts: null,
    info_value: null,
  });
  // An info completion's value is kept (a drain cut off lists what it took), and survives the record.
  const [cut] = pairEvents(
    events([
      ['invoke', 1, 'drain', null],
      ['info', 1, 'drain', [4, 5]],
    ]),
  ).ops;
  t.deepEqual(cut?.infoValue, [4, 5]);
  t.is(cut?.output, null, 'output stays the ok completion’s value only');
  t.deepEqual(operationRecord(cut!).info_value, [4, 5]);
  t.deepEqual(operationFromRecord(operationRecord(cut!)), cut);
});

fixtureTest('Porcupine etcd logs: timed-out completions carry the error, not a value', async (t) => {
  const h = await loadHistory(fixture('porcupine/jepsen/etcd_000.log'));
  const timedOut = h.filter((e) => e.error === 'timed-out');
  t.true(timedOut.length > 0);
  for (const e of timedOut) {
    t.not(e.type, 'invoke');
    t.is(e.value, null);
  }
  const p = pairEvents(h);
  t.true(p.ops.every((o) => typeof o.process === 'number'));
});

test('open ops are tracked alike for small and large process ids and the nemesis', (t) => {
  const evs = events([
    ['invoke', 3, 'write', 1],
    ['invoke', 70_000, 'write', 2],
    ['info', 'nemesis', 'start', null],
    ['invoke', 5, 'read', null],
    ['ok', 70_000, 'write', 2],
    ['invoke', 70_000, 'read', null],
    ['ok', 3, 'write', 1],
  ]);
  const { ops, retiredProcesses } = pairEvents(evs);
  t.deepEqual(
    ops.map((o) => [o.id, o.process, o.type, o.completeIndex]),
    [
      [0, 3, 'ok', 6],
      [1, 70_000, 'ok', 4],
      [2, 'nemesis', 'info', null],
      [3, 5, 'info', null],
      [4, 70_000, 'info', null],
    ],
  );
  t.deepEqual(retiredProcesses.sort(), [5, 70_000]);
  t.throws(() => pairEvents(events([['ok', 9, 'write', 1]])), { instanceOf: PairingError });
  t.throws(
    () =>
      pairEvents(
        events([
          ['invoke', 70_001, 'write', 1],
          ['invoke', 70_001, 'write', 2],
        ]),
      ),
    { message: /invoked again/ },
  );
});
