import test from 'ava';
import { checkOperations } from '../../checkers/linearizability/check.ts';
import { createModel, type ModelOptions } from '../../checkers/linearizability/models/index.ts';
import { multiRegisterKey } from '../../checkers/linearizability/models/multi-register.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { NOT_APPLIED } from '../../src/core/history/operation.ts';
import { type Ev, history } from './helpers.ts';

async function verdict(model: string, ops: Operation[], initialValue?: unknown, options: ModelOptions = {}) {
  const m = createModel(model, { initialValue, ...options });
  if (!m) throw new Error(model);
  return (await checkOperations(m, ops)).valid;
}

// The register examples of the MIT 6.824 quiz that Porcupine's tests use.
test('register: 6.824 quiz history that is linearizable', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'write', 100],
    [1, 'invoke', 'read', null],
    [2, 'invoke', 'read', null],
    [2, 'ok', 'read', 0],
    [1, 'ok', 'read', 100],
    [0, 'ok', 'write', 100],
  ];
  t.is(await verdict('register', history(evs), 0), true);
});

test('register: 6.824 quiz history that is not linearizable', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'write', 200],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 200],
    [2, 'invoke', 'read', null],
    [2, 'ok', 'read', 0],
    [0, 'ok', 'write', 200],
  ];
  t.is(await verdict('register', history(evs), 0), false);
});

test('register: read of nil before any write, stale read after a completed write', async (t) => {
  t.is(
    await verdict(
      'register',
      history([
        [0, 'invoke', 'read', null],
        [0, 'ok', 'read', null],
      ]),
    ),
    true,
  );
  const stale: Ev[] = [
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', null],
  ];
  t.is(await verdict('register', history(stale), null, { nilRead: 'value' }), false);
  // Knossos (the default): an ok read of nil says nothing, so the same history is linearizable.
  t.is(await verdict('register', history(stale)), true);
});

test('register: an info write may take effect late or never', async (t) => {
  const late: Ev[] = [
    [0, 'invoke', 'write', 1],
    [0, 'info', 'write', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', null],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
  ];
  t.is(await verdict('register', history(late)), true);
  // …but not before it was invoked.
  const early: Ev[] = [
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
    [0, 'invoke', 'write', 1],
    [0, 'info', 'write', 1],
  ];
  t.is(await verdict('register', history(early)), false);
});

test('register: a failed write did not happen', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'write', 1],
    [0, 'fail', 'write', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
  ];
  t.is(await verdict('register', history(evs)), false);
});

test('a fail marked not-applied (never reached the server) observed nothing and constrains nothing', async (t) => {
  const ops = (error: Operation['error']) => {
    const h = history([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'cas', [1, 3]],
      [1, 'fail', 'cas', [1, 3]],
    ]);
    const cas = h.find((o) => o.f === 'cas');
    if (cas) cas.error = error;
    return h;
  };
  const mismatch: ModelOptions = { failedCas: 'mismatch' };
  // A compare that ran and failed while the value was 1 is impossible...
  t.is(await verdict('cas-register', ops('cas-mismatch'), null, mismatch), false);
  // ...but a cas refused before it reached the server says nothing about the value.
  t.is(
    await verdict('cas-register', ops(`${NOT_APPLIED}: fetch failed (ECONNREFUSED)`), null, mismatch),
    true,
  );
  // ...nor does one that found no client (its open failed under a proxy reset: Jepsen's [:no-client msg]).
  t.is(await verdict('cas-register', ops(['no-client', 'Connection is closed.']), null, mismatch), true);
  t.is(await verdict('cas-register', ops(['other', 'x']), null, mismatch), false);
});

test('cas-register: ok cas needs the expected value; with failedCas mismatch a failed cas saw another value', async (t) => {
  const mismatch: ModelOptions = { failedCas: 'mismatch' };
  const ok: Ev[] = [
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [0, 'invoke', 'cas', [1, 2]],
    [0, 'ok', 'cas', [1, 2]],
    [1, 'invoke', 'cas', [1, 3]],
    [1, 'fail', 'cas', [1, 3]],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 2],
  ];
  t.is(await verdict('cas-register', history(ok), null, mismatch), true);
  t.is(await verdict('cas-register', history(ok)), true);
  const badFail: Ev[] = [
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [1, 'invoke', 'cas', [1, 3]],
    [1, 'fail', 'cas', [1, 3]],
  ];
  t.is(await verdict('cas-register', history(badFail), null, mismatch), false);
  t.is(await verdict('cas-register', history(badFail)), true, 'Knossos: a failed cas did not happen');
  const badOk: Ev[] = [
    [1, 'invoke', 'cas', [1, 3]],
    [1, 'ok', 'cas', [1, 3]],
  ];
  t.is(await verdict('cas-register', history(badOk)), false);
  t.is(await verdict('cas-register', history(badOk), 1), true, 'initial value 1 makes the cas legal');
});

test('cas-register: an unknown cas applies only when the value matches', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'cas', [0, 5]],
    [0, 'info', 'cas', [0, 5]],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 5],
  ];
  t.is(await verdict('cas-register', history(evs), 0), true);
  t.is(await verdict('cas-register', history(evs), 1), false);
});

test('zero-duration ops (invoke and completion adjacent) are ordered by real time', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
    [0, 'invoke', 'write', 2],
    [0, 'ok', 'write', 2],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
  ];
  t.is(await verdict('register', history(evs)), false);
});

test('kv: per-key strings, append concatenates, keys are independent partitions', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'append', 'a', 'x'],
    [1, 'invoke', 'append', 'b', 'y'],
    [0, 'ok', 'append', 'a', 'x'],
    [1, 'ok', 'append', 'b', 'y'],
    [0, 'invoke', 'get', null, 'x'],
    [0, 'ok', 'get', 'a', 'x'],
    [1, 'invoke', 'put', 'c', 'y'],
    [1, 'ok', 'put', 'c', 'y'],
    [1, 'invoke', 'get', null, 'y'],
    [1, 'ok', 'get', 'c', 'y'],
  ];
  t.is(await verdict('kv', history(evs)), true);
  const bad = evs.slice(0, 8).concat([
    [1, 'invoke', 'get', null, 'y'],
    [1, 'ok', 'get', 'bc', 'y'],
  ] as Ev[]);
  t.is(await verdict('kv', history(bad)), false);
});

test('multi-register: [k v] values partitioned by key', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'write', [1, 10]],
    [0, 'ok', 'write', [1, 10]],
    [1, 'invoke', 'read', [2, null]],
    [1, 'ok', 'read', [2, null]],
    [1, 'invoke', 'read', [1, null]],
    [1, 'ok', 'read', [1, 10]],
  ];
  t.is(await verdict('multi-register', history(evs)), true);
  const bad: Ev[] = [...evs, [1, 'invoke', 'read', [2, null]], [1, 'ok', 'read', [2, 10]]];
  t.is(await verdict('multi-register', history(bad)), false);
});

test('multi-register: keys 1 and "1" are two registers; a key’s text is its own', async (t) => {
  // Written as 1 then "1", read as 1: two registers, each linearizable. One text for both keys made
  // this one register, where the read of 10 after the write of 20 failed.
  const two: Ev[] = [
    [0, 'invoke', 'write', [1, 10]],
    [0, 'ok', 'write', [1, 10]],
    [1, 'invoke', 'write', ['1', 20]],
    [1, 'ok', 'write', ['1', 20]],
    [1, 'invoke', 'read', [1, null]],
    [1, 'ok', 'read', [1, 10]],
  ];
  t.is(await verdict('multi-register', history(two)), true);
  // A value read from a key nobody wrote it to is still caught.
  const crossed: Ev[] = [...two, [0, 'invoke', 'read', ['1', null]], [0, 'ok', 'read', ['1', 10]]];
  t.is(await verdict('multi-register', history(crossed)), false);
  // Every pair of distinct keys gets distinct texts (brute force over keys made to collide), and the
  // keys histories use keep their text (reports name them so).
  const keys: unknown[] = [
    1,
    '1',
    '"1"',
    '""1""',
    2.5,
    '2.5',
    true,
    'true',
    null,
    'null',
    'x',
    '"x"',
    '\\"x',
    [1],
    '[1]',
    [1, 2],
    '[1,2]',
    { a: 1 },
    '{"a":1}',
    '',
    ' 1',
    'key-7',
    10n ** 20n,
  ];
  const texts = keys.map(multiRegisterKey);
  for (let i = 0; i < keys.length; i++)
    for (let j = i + 1; j < keys.length; j++)
      t.not(texts[i], texts[j], `${String(keys[i])} and ${String(keys[j])}`);
  t.deepEqual([1, 'x', 'key-7', [1, 2], { b: 1, a: 2 }].map(multiRegisterKey), [
    '1',
    'x',
    'key-7',
    '[1,2]',
    '{"a":2,"b":1}',
  ]);
  t.is(multiRegisterKey('1'), '"1"');
});

test('set: adds and whole-set reads; a duplicate in a read is illegal', async (t) => {
  const base: Ev[] = [
    [0, 'invoke', 'add', 1],
    [1, 'invoke', 'add', 2],
    [0, 'ok', 'add', 1],
    [2, 'invoke', 'read', null],
    [2, 'ok', 'read', { '#set': [1] }],
  ];
  t.is(await verdict('set', history(base)), true);
  const later: Ev[] = [...base, [1, 'ok', 'add', 2], [2, 'invoke', 'read', null], [2, 'ok', 'read', [2, 1]]];
  t.is(await verdict('set', history(later)), true);
  const lost: Ev[] = [...base, [1, 'ok', 'add', 2], [2, 'invoke', 'read', null], [2, 'ok', 'read', [1]]];
  t.is(await verdict('set', history(lost)), false);
  const dup: Ev[] = [...base, [1, 'ok', 'add', 2], [2, 'invoke', 'read', null], [2, 'ok', 'read', [1, 2, 2]]];
  t.is(await verdict('set', history(dup)), false);
  // An element read back with its fields in another order is the element added.
  const record: Ev[] = [
    [0, 'invoke', 'add', { id: 1, v: 'x' }],
    [0, 'ok', 'add', { id: 1, v: 'x' }],
    [2, 'invoke', 'read', null],
    [2, 'ok', 'read', [{ v: 'x', id: 1 }]],
  ];
  t.is(await verdict('set', history(record)), true);
});

test('fifo-queue: dequeues in enqueue order; nil means empty', async (t) => {
  const ok: Ev[] = [
    [0, 'invoke', 'enqueue', 1],
    [0, 'ok', 'enqueue', 1],
    [0, 'invoke', 'enqueue', 2],
    [0, 'ok', 'enqueue', 2],
    [1, 'invoke', 'dequeue', null],
    [1, 'ok', 'dequeue', 1],
    [1, 'invoke', 'dequeue', null],
    [1, 'ok', 'dequeue', 2],
    [1, 'invoke', 'dequeue', null],
    [1, 'ok', 'dequeue', null],
  ];
  t.is(await verdict('fifo-queue', history(ok)), true);
  const reordered: Ev[] = ok.slice(0, 4).concat([
    [1, 'invoke', 'dequeue', null],
    [1, 'ok', 'dequeue', 2],
  ] as Ev[]);
  t.is(await verdict('fifo-queue', history(reordered)), false);
});

test('mutex: two overlapping holders are not linearizable', async (t) => {
  const ok: Ev[] = [
    [0, 'invoke', 'acquire', null],
    [0, 'ok', 'acquire', null],
    [1, 'invoke', 'acquire', null],
    [0, 'invoke', 'release', null],
    [0, 'ok', 'release', null],
    [1, 'ok', 'acquire', null],
  ];
  t.is(await verdict('mutex', history(ok)), true);
  const bad: Ev[] = [
    [0, 'invoke', 'acquire', null],
    [0, 'ok', 'acquire', null],
    [1, 'invoke', 'acquire', null],
    [1, 'ok', 'acquire', null],
  ];
  t.is(await verdict('mutex', history(bad)), false);
});

test('an open op may never take effect, even where it could not be linearized at the end', async (t) => {
  // B's acquire timed out while A held the lock and never released it: B's acquire did not happen.
  const evs: Ev[] = [
    [0, 'invoke', 'acquire', null],
    [0, 'ok', 'acquire', null],
    [1, 'invoke', 'acquire', null],
    [1, 'info', 'acquire', null],
  ];
  t.is(await verdict('mutex', history(evs)), true);
  // A completed acquire while A still holds the lock remains impossible.
  const bad: Ev[] = [...evs, [2, 'invoke', 'acquire', null], [2, 'ok', 'acquire', null]];
  t.is(await verdict('mutex', history(bad)), false);
});

test('counter: reads must match the sum of the adds linearized before them', async (t) => {
  const evs: Ev[] = [
    [0, 'invoke', 'add', 2],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 0],
    [0, 'ok', 'add', 2],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 2],
  ];
  t.is(await verdict('counter', history(evs)), true);
  const bad: Ev[] = [...evs, [1, 'invoke', 'read', null], [1, 'ok', 'read', 3]];
  t.is(await verdict('counter', history(bad)), false);
  t.is(
    await verdict('counter', history(evs), 5),
    false,
    'initial value 5: the first read of 0 is impossible',
  );
});

test('empty history and nemesis-only history are linearizable', async (t) => {
  t.is(await verdict('cas-register', []), true);
  const m = createModel('kv');
  if (!m) throw new Error('kv');
  const nemesisOnly = history([[0, 'invoke', 'start-partition', null]]).map((op) => ({
    ...op,
    process: 'nemesis' as const,
  }));
  const out = await checkOperations(m, nemesisOnly);
  t.is(out.valid, true);
  t.is(out.partitions.length, 0);
  t.is(out.opsConsumed, 0);
});

test('an op the model does not know is bad input naming the op', async (t) => {
  const m = createModel('register');
  if (!m) throw new Error('register');
  const ops = history([
    [3, 'invoke', 'cas', [1, 2]],
    [3, 'ok', 'cas', [1, 2]],
  ]);
  const err = await t.throwsAsync(checkOperations(m, ops));
  t.regex(err?.message ?? '', /op 0 \(process 3, f "cas"\): model register has no function "cas"/);
});
