import test from 'ava';
import { generateCasRegisterHistory } from '../../checkers/linearizability/generate.ts';
import { deepEqual } from '../../checkers/linearizability/model.ts';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import { EncodedOps, EncodedOpsBuilder, orderById } from '../../checkers/linearizability/op-columns.ts';
import { prepareHistory } from '../../checkers/linearizability/prepare.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { history, searchingEveryOp } from './helpers.ts';

/**
 * The preparer's columns (one shared encoding per distinct raw op) must hold exactly what encoding each
 * op on its own gives: same input, output, interval and process, and the same ops ignored.
 */
test('prepared columns equal encoding every op on its own', (t) => {
  for (const values of [5, 0]) {
    const model = createModel('cas-register');
    if (!model) throw new Error('cas-register');
    const ops = pairEvents(
      generateCasRegisterHistory({ ops: 3000, processes: 8, infoRate: 0.2, values, seed: 5 }),
    ).ops;
    // Compared op by op without what the model leaves out; what it leaves out is checked below.
    const prepared = prepareHistory(searchingEveryOp(model), ops);
    const cols = prepared.partitions[0]?.ops as EncodedOps;
    let k = 0;
    let ignored = 0;
    for (const op of ops) {
      const io = model.encode(op);
      if (io === null) {
        ignored++;
        continue;
      }
      const got = cols.at(k++);
      t.is(got?.id, op.id);
      t.is(got?.process, op.process);
      t.is(got?.call, op.invokeIndex);
      t.is(
        got?.ret,
        op.type === 'info' || op.completeIndex === null ? Number.POSITIVE_INFINITY : op.completeIndex,
      );
      t.true(deepEqual(got?.input, io.input) && deepEqual(got?.output, io.output), `op ${op.id}`);
    }
    t.is(k, cols.length);
    t.is(prepared.opsIgnored, ignored);
    t.is(prepared.opsUnobserved + prepared.opsBounded, 0);
    const simpler = model.simplify?.(cols) ?? cols;
    const simplified = prepareHistory(model, ops);
    const simplifiedOps = simplified.partitions[0]?.ops;
    if (!simplifiedOps) throw new Error('one partition');
    t.deepEqual(simplifiedOps.toArray(), simpler.toArray());
    t.is(simplified.opsUnobserved, cols.length - simpler.length);
    if (values === 0) {
      t.true(simplified.opsUnobserved > 0, 'unique values: some crashed write nobody read');
      t.true(simplified.opsBounded > 0, 'unique values: some crashed write somebody read');
    }
  }
});

test('equal raw ops share one class; keys and strings are told apart', (t) => {
  const model = createModel('kv');
  if (!model) throw new Error('kv');
  const ops = history([
    [0, 'invoke', 'put', 'x', 'a'],
    [0, 'ok', 'put', 'x', 'a'],
    [1, 'invoke', 'put', 'x', 'b'],
    [1, 'ok', 'put', 'x', 'b'],
    [0, 'invoke', 'put', 'x', 'a'],
    [0, 'ok', 'put', 'x', 'a'],
  ]);
  const prepared = prepareHistory(model, ops);
  t.deepEqual(
    prepared.partitions.map((p) => p.key),
    ['a', 'b'],
  );
  const a = prepared.partitions[0]?.ops as EncodedOps;
  t.is(a.length, 2);
  t.is(a.io[0], a.io[1]);
  const reg = createModel('register');
  if (!reg) throw new Error('register');
  // "1" and 1 are different values: different classes.
  const p = prepareHistory(
    reg,
    history([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'write', '1'],
      [1, 'ok', 'write', '1'],
    ]),
  ).partitions[0]?.ops as EncodedOps;
  t.not(p.io[0], p.io[1]);
  t.is((p.inputOf(1) as { a: unknown }).a, '1');
});

test('columns: from objects in the given order, out-of-order pushes sorted by id, and a round trip through plain data', (t) => {
  const shared = { f: 'write' };
  const cols = EncodedOps.from([
    { id: 4, process: 1, call: 5, ret: 9, input: shared, output: null, io: 7 },
    { id: 2, process: 0, call: 1, ret: Number.POSITIVE_INFINITY, input: { f: 'read' }, output: 3 },
    { id: 6, process: 2, call: 6, ret: 8, input: shared, output: null, io: 7 },
  ]);
  t.is(cols.io[0], cols.io[2]);
  t.is(cols.io[1], -1);
  t.deepEqual(cols.at(1), {
    id: 2,
    process: 0,
    call: 1,
    ret: Number.POSITIVE_INFINITY,
    input: { f: 'read' },
    output: 3,
  });
  t.deepEqual(new EncodedOps(structuredClone(cols.data())).toArray(), cols.toArray());
  const b = new EncodedOpsBuilder(['in'], ['out']);
  b.push(3, 1, 10, 11, 0);
  b.pushOwn(1, 2, 2, 4, 'own-in', 'own-out');
  b.push(2, 3, 3, 5, 0);
  const sorted = b.finish();
  t.deepEqual([...sorted.id], [1, 2, 3]);
  t.deepEqual([sorted.inputOf(0), sorted.inputOf(1), sorted.outputOf(2)], ['own-in', 'in', 'out']);
  t.is(cols.at(3), undefined);
});

test('orderById: ids placed directly equal a stable sort by id, whatever the ids', (t) => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const sorted = (ids: Int32Array) =>
    [...ids.keys()].sort((a, b) => (ids[a] as number) - (ids[b] as number) || a - b);
  const cases: Int32Array[] = [];
  // Distinct ids, nearly in order (the preparer's case: ops complete near their invocation order).
  for (const n of [0, 1, 2, 50, 5000]) {
    const ids = Int32Array.from({ length: n }, (_, i) => i * 2 + (i % 3));
    for (let k = 0; k < n; k++) {
      const j = Math.min(n - 1, k + rand(6));
      [ids[k], ids[j]] = [ids[j] as number, ids[k] as number];
    }
    cases.push(ids);
  }
  // Repeated ids (stable order among equals), negative ids, ids far beyond the count: sorted instead.
  cases.push(Int32Array.from([3, 1, 3, 0, 1, 3]));
  cases.push(Int32Array.from([5, -1, 2, -7, 0]));
  cases.push(Int32Array.from([1_000_000_000, 4, 2_000_000, 9]));
  for (const ids of cases)
    t.deepEqual([...orderById(ids, ids.length)], sorted(ids), `ids ${ids.slice(0, 8)}`);
});

test('columns finished out of id order come out in id order, inputs with them', (t) => {
  const inputs: unknown[] = ['a', 'b'];
  const outputs: unknown[] = ['A', 'B'];
  const b = new EncodedOpsBuilder(inputs, outputs);
  const ids = [4, 0, 3, 1, 2];
  for (const id of ids) {
    if (id % 2 === 0) b.push(id, id, id * 10, id * 10 + 5, id === 0 ? 0 : 1);
    else b.pushOwn(id, id, id * 10, id * 10 + 5, `own${id}`, `OWN${id}`);
  }
  const cols = b.finish();
  t.deepEqual([...cols.id], [0, 1, 2, 3, 4]);
  t.deepEqual([...cols.call], [0, 10, 20, 30, 40]);
  t.deepEqual(
    [0, 1, 2, 3, 4].map((i) => cols.inputOf(i)),
    ['a', 'own1', 'b', 'own3', 'b'],
  );
});
