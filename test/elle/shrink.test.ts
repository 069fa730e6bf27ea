import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runElle } from '../../checkers/elle/check.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { parseHistoryText } from '../../src/core/history/read-foreign.ts';
import { history, ok, type T } from './helpers.ts';

const options = { workload: 'list-append', consistencyModels: ['serializable'] };

/** Serial noise on keys of their own: each transaction completes before the next begins. */
function noise(n: number, from: number): T[] {
  const out: T[] = [];
  for (let i = from; i < from + n; i++) out.push(ok(['append', `n${i % 3}`, i], ['r', `m${i % 2}`, []]));
  return out;
}

/** The txns' schedule: `serialBefore` run one after another, then `overlapping` all at once, then the rest in turn. */
function schedule(serialBefore: number, overlapping: number, serialAfter: number): ['i' | 'c', number][] {
  const s: ['i' | 'c', number][] = [];
  let n = 0;
  for (let i = 0; i < serialBefore; i++, n++) s.push(['i', n], ['c', n]);
  const group = Array.from({ length: overlapping }, (_, i) => n + i);
  for (const g of group) s.push(['i', g]);
  for (const g of group) s.push(['c', g]);
  n += overlapping;
  for (let i = 0; i < serialAfter; i++, n++) s.push(['i', n], ['c', n]);
  return s;
}

test('an Elle FAIL carries its 1-minimal failing sub-history, written for faultline check', (t) => {
  // Write skew among ten noise transactions: the two skewed transactions are the whole core.
  const txns = [
    ...noise(6, 0),
    ok(['r', 'x', []], ['r', 'y', []], ['append', 'x', 1]),
    ok(['r', 'x', []], ['r', 'y', []], ['append', 'y', 1]),
    ...noise(4, 6),
  ];
  const ops = history(txns, schedule(6, 2, 4));
  const dir = mkdtempSync(join(tmpdir(), 'elle-shrink-'));
  try {
    const r = runElle(ops, options, { outDir: dir });
    t.is(r.valid, false);
    t.deepEqual(r.anomalyTypes, ['G2-item']);
    const m = r.stats.minimalHistory as {
      type: string;
      ops: number;
      of: number;
      minimal: boolean;
      invokeIndices: number[];
      recheck: string;
    };
    t.is(m.type, 'G2-item');
    t.is(m.of, 12);
    t.is(m.ops, 2);
    t.true(m.minimal);
    t.regex(
      r.evidence,
      /; minimal failing sub-history \(G2-item\): 2 of 12 ops \(1-minimal\): ops \d+, \d+$/,
    );
    t.deepEqual(r.anomalies[0]?.minimalOps, m.invokeIndices);
    const file = join(dir, 'elle', 'minimal-history.jsonl');
    t.true(r.artifacts?.includes(file));
    t.is(
      m.recheck,
      `faultline check ${file} --checker elle --workload list-append --consistency-models serializable`,
    );
    const sub = pairEvents(parseHistoryText(readFileSync(file, 'utf8'), 'jsonl', file)).ops;
    t.is(sub.length, 2);
    const again = runElle(sub, options);
    t.is(again.valid, false);
    t.deepEqual(again.anomalyTypes, ['G2-item']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the core keeps the writer whose elements its reads show', (t) => {
  // T0 writes x and y; T1 and T2 skew on them (each reads [1] on both keys and appends 2 to one), and a
  // later read shows both lists. Dropping T0 turns the reads of 1 into garbage reads, a failure of
  // another kind, so T0 stays; the later read is not needed (each writer read [1] before appending).
  const txns = [
    ...noise(3, 0),
    ok(['append', 'x', 1], ['append', 'y', 1]),
    ok(['r', 'x', [1]], ['r', 'y', [1]], ['append', 'x', 2]),
    ok(['r', 'x', [1]], ['r', 'y', [1]], ['append', 'y', 2]),
    ok(['r', 'x', [1, 2]], ['r', 'y', [1, 2]]),
    ...noise(3, 3),
  ];
  const ops = history(txns, schedule(4, 2, 4));
  const r = runElle(ops, options);
  t.is(r.valid, false);
  const m = r.stats.minimalHistory as { ops: number; minimal: boolean; invokeIndices: number[] };
  t.true(m.minimal);
  t.deepEqual(
    m.invokeIndices,
    [3, 4, 5].map((n) => ops[n]!.invokeIndex),
  );
  // The core alone fails the same way and shows nothing the whole history did not; without T0 it
  // would show garbage reads.
  const core = new Set(m.invokeIndices);
  t.deepEqual(
    runElle(
      ops.filter((op) => core.has(op.invokeIndex)),
      options,
    ).anomalyTypes,
    r.anomalyTypes,
  );
  t.true(runElle([ops[4]!, ops[5]!], options).anomalyTypes.includes('garbage-read'));
});

test('a valid history is not shrunk', (t) => {
  const r = runElle(history([ok(['append', 'x', 1]), ok(['r', 'x', [1]])], schedule(2, 0, 0)), options);
  t.is(r.valid, true);
  t.is(r.stats.minimalHistory, undefined);
});
