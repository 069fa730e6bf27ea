import test from 'ava';
import { runCheckersOnStream } from '../../checkers/compose.ts';
import { elleChecker } from '../../checkers/elle/index.ts';
import { type SimIsolation, simulateEvents } from '../../checkers/elle/simulate.ts';
import { TxnBuilder } from '../../checkers/elle/txns.ts';
import type { StreamIntake } from '../../checkers/types.ts';
import { CompactValue } from '../../src/core/history/compact-value.ts';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { EventColumnsDecoder, EventColumnsEncoder } from '../../src/core/history/event-columns.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';

/**
 * Elle's builder takes a transaction's micro-ops straight from the compact tree the reader scanned them
 * into (`OpSink.compactValues`). Whatever the micro-ops hold, what it builds (every array, code, key id
 * and interned value) and the error it gives must be exactly what the same ops with plain values give.
 */

/** The events through the columns the two-thread reader uses, values left as trees or made plain. */
function throughColumns(events: readonly HistoryEvent[], views: boolean): HistoryEvent[] {
  const encoder = new EventColumnsEncoder();
  const decoder = new EventColumnsDecoder(views);
  const out: HistoryEvent[] = [];
  // Several batches, so string references cross batches as they do in a file.
  for (let i = 0; i < events.length; i += 97)
    out.push(...decoder.decode(encoder.encode(events.slice(i, i + 97))));
  return out;
}

function txnEvents(
  txns: { type: 'ok' | 'fail' | 'info'; input: unknown; output: unknown }[],
): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const [p, t] of txns.entries()) {
    const base = { f: 'txn', process: p, node: null, faultEpoch: null };
    events.push({ ...base, index: events.length, type: 'invoke', value: t.input, time: events.length });
    events.push({ ...base, index: events.length, type: t.type, value: t.output, time: events.length });
  }
  return events;
}

/** The builder's history (or its error) over the ops, fed in completion order. */
function build(ops: readonly Operation[], writeF: 'append' | 'w'): unknown {
  const b = new TxnBuilder(writeF);
  for (const op of [...ops].reverse()) b.add(op);
  try {
    return b.finish();
  } catch (err) {
    return { error: String(err) };
  }
}

function sameBuild(
  t: import('ava').ExecutionContext,
  events: readonly HistoryEvent[],
  writeF: 'append' | 'w',
) {
  const compact = pairEvents(throughColumns(events, true)).ops;
  const plain = pairEvents(throughColumns(events, false)).ops;
  t.true(
    compact.some((op) => op.input instanceof CompactValue || op.output instanceof CompactValue),
    'some values stay compact',
  );
  t.false(plain.some((op) => op.input instanceof CompactValue || op.output instanceof CompactValue));
  const want = build(plain, writeF);
  t.deepEqual(build(compact, writeF), want);
  return want;
}

const nodes = (v: unknown): number => (Array.isArray(v) ? v.reduce((n: number, e) => n + nodes(e), 1) : 1);

test('a compact value reads as the plain value it was scanned from', (t) => {
  const values = [
    [
      ['r', 3, [1, 2, -5, 'x', null, [7, 8]]],
      ['append', 'k', 9],
    ],
    [],
    [[]],
    [null, 'a', -2147483648, 2147483647],
  ];
  const events = txnEvents(values.map((v) => ({ type: 'ok', input: v, output: v })));
  const decoded = throughColumns(events, true);
  for (const [i, v] of values.entries()) {
    const cv = decoded[2 * i + 1]?.value as CompactValue;
    t.true(cv instanceof CompactValue, `value ${i}`);
    t.deepEqual(cv.value(), v);
    t.is(JSON.stringify(cv), JSON.stringify(v));
    t.is(cv.after(cv.root), cv.root + nodes(v));
  }
});

test('micro-ops off the fast path build what their plain values build', (t) => {
  const big = 70_000 + 123; // beyond the keys interned through an array
  const h = sameBuild(
    t,
    txnEvents([
      { type: 'ok', input: [['r', 1, null]], output: [['r', 1, [1, 2, 3]]] },
      { type: 'ok', input: [['append', 1, 4]], output: [['append', 1, 4]] },
      { type: 'ok', input: [['r', big, null]], output: [['r', big, [-3, 0, 5, -3]]] },
      { type: 'ok', input: [['r', 'kx', null]], output: [['r', 'kx', ['a', null, 'a', 2]]] },
      { type: 'ok', input: [['r', -4, null]], output: [['r', -4, [[1, 2], 3]]] },
      { type: 'ok', input: [['append', 2, [5]]], output: [['append', 2, [5]]] },
      { type: 'ok', input: [['append', 2, 'v']], output: [['append', 2, 'v']] },
      { type: 'ok', input: [['append', 2, -9]], output: [['append', 2, -9]] },
      {
        type: 'ok',
        input: [['r', 2]],
        output: [
          ['r', 2],
          ['append', 3],
        ],
      },
      { type: 'ok', input: [['r', 3, null]], output: [['r', 3, 'str']] },
      { type: 'ok', input: [['r', null, null]], output: [['r', null, []]] },
      { type: 'ok', input: [['r', [1, 2], null]], output: [['r', [1, 2], [1]]] },
      {
        type: 'info',
        input: [
          ['r', 1, [9, 9]],
          ['append', 1, 10],
        ],
        output: null,
      },
      {
        type: 'fail',
        input: [
          ['r', 1, null],
          ['append', 1, 11],
        ],
        output: [['r', 1, [1]]],
      },
      {
        type: 'fail',
        input: 'not a txn',
        output: [
          ['append', 5, 1],
          ['r', 5, [1]],
        ],
      },
      { type: 'ok', input: [['r', 6, null]], output: [['r', 6, []]] },
    ]),
    'append',
  );
  t.false('error' in (h as object));
});

for (const [name, mop] of [
  ['a micro-op that is not a list', 7],
  ['a micro-op of one element', ['r']],
  ['a micro-op of four elements', ['r', 1, [1], 2]],
  ['a micro-op whose f is a number', [1, 1, 1]],
  ['a micro-op of another workload', ['w', 1, 1]],
  ['a micro-op whose f is a list', [['r'], 1, [1]]],
] as const) {
  test(`${name} gives the same error, after the same ops`, (t) => {
    const h = sameBuild(
      t,
      txnEvents([
        { type: 'ok', input: [['append', 1, 1]], output: [['append', 1, 1]] },
        { type: 'ok', input: [['r', 1, null], mop], output: [['r', 1, [1]], mop] },
        { type: 'ok', input: [['r', 1, null]], output: [['r', 1, [1]]] },
      ]),
      'append',
    );
    t.regex((h as { error: string }).error, /^Error: op 2: /);
  });
}

test('rw-register micro-ops build what their plain values build', (t) => {
  sameBuild(
    t,
    txnEvents([
      {
        type: 'ok',
        input: [
          ['w', 1, 1],
          ['r', 2, null],
        ],
        output: [
          ['w', 1, 1],
          ['r', 2, 5],
        ],
      },
      { type: 'ok', input: [['r', 1, null]], output: [['r', 1, 1]] },
      { type: 'info', input: [['w', 2, 3]], output: null },
    ]),
    'w',
  );
});

for (const isolation of ['serializable', 'snapshot-isolation', 'read-committed'] as SimIsolation[]) {
  test(`${isolation} with corrupted reads: the builder and the whole check agree`, async (t) => {
    const events: HistoryEvent[] = [];
    let k = 0;
    simulateEvents(
      { isolation, txns: 1500, concurrency: 6, seed: 11, activeKeys: 6, infoRate: 0.05 },
      (ev) => {
        k++;
        if (ev.type === 'ok' && k % 19 === 0) {
          for (const mop of ev.value as unknown[][]) {
            if (mop[0] === 'r' && Array.isArray(mop[2])) {
              mop[2] = k % 2 ? [...(mop[2] as number[]), 9999] : (mop[2] as number[]).slice(1);
              break;
            }
          }
        }
        events.push(ev);
      },
    );
    sameBuild(t, events, 'append');
    const check = async (views: boolean) => {
      const ops = pairEvents(throughColumns(events, views)).ops;
      const plain = pairEvents(throughColumns(events, false)).ops;
      const replay = async (add: (op: Operation) => void) => {
        for (const op of plain) add(op);
        return plain.length;
      };
      const sink = elleChecker.stream(
        { workload: 'list-append', consistencyModels: ['serializable'] },
        { replay },
      );
      for (const op of ops) sink.add(op);
      const r = await sink.finish();
      const { seconds: _s, phaseSeconds: _p, ...stats } = r.stats;
      return { ...r, stats };
    };
    const compact = await check(true);
    t.is(compact.valid, false);
    t.deepEqual(compact, await check(false));
  });
}

test('values stay compact only when every streamed checker takes them', async (t) => {
  const intakes: (StreamIntake | undefined)[] = [];
  const feed = async (_add: (op: Operation) => void, intake?: StreamIntake) => {
    intakes.push(intake);
    return 0;
  };
  await runCheckersOnStream([{ name: 'elle', options: { workload: 'list-append' } }], feed);
  await runCheckersOnStream(
    [
      { name: 'elle', options: { workload: 'list-append' } },
      { name: 'linearizable', options: { model: 'cas-register' } },
    ],
    feed,
  );
  t.deepEqual(intakes, [{ compactValues: true }, { compactValues: false }]);
});
