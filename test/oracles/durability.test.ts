import test from 'ava';
import { exactlyOnceChecker } from '../../checkers/catalogue/exactly-once.ts';
import { finalStateInvariantChecker } from '../../checkers/catalogue/final-state.ts';
import { noLostAckChecker } from '../../checkers/catalogue/no-lost-ack.ts';
import { replicaReconciliationChecker } from '../../checkers/catalogue/replica-reconciliation.ts';
import { setFullChecker } from '../../checkers/catalogue/set-full.ts';
import { H, run, types } from './build.ts';

function finalReads(h: H, dumps: Record<string, unknown>): H {
  let p = 100;
  for (const [node, state] of Object.entries(dumps)) {
    h.invoke(p, 'final-read', null, { node }).ok(p, 'final-read', state, { node });
    p++;
  }
  return h;
}

test('no-lost-ack: acked writes present on every replica is valid; timed-out writes are not judged', async (t) => {
  const h = new H().call(0, 'append', 1).call(1, 'append', 2).invoke(2, 'append', 3).info(2, 'append', 3);
  finalReads(h, { n1: [1, 2], n2: [2, 1] });
  const r = await run(noLostAckChecker, h.ops(), {});
  t.is(r.valid, true);
  t.regex(r.evidence, /2 acked writes, 0 missing in final read of 2 replicas/);
  t.is(r.stats.timedOut, 1);
});

test('no-lost-ack: consumes every write and every final read, also a final read that did not answer ok', async (t) => {
  const h = new H().call(0, 'append', 1).call(1, 'append', 2);
  h.invoke(99, 'final-read', null, { node: 'n1' }).fail(99, 'final-read', null, { node: 'n1' });
  finalReads(h, { n1: [1, 2], n2: [2, 1] });
  const r = await run(noLostAckChecker, h.ops(), {});
  t.is(r.valid, true);
  // 2 writes + 3 final reads: the whole history, so a verdict does not call the check partial.
  t.is(r.stats.opsConsumed, 5);
  t.is(h.ops().length, 5);
});

test('no-lost-ack: an acked write missing from one replica is lost, naming the replica', async (t) => {
  const h = finalReads(new H().call(0, 'append', 1).call(1, 'append', 2), { n1: [1, 2], n2: [1] });
  const r = await run(noLostAckChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['lost']);
  t.is(r.anomalies[0]?.replica, 'n2');
});

test('no-lost-ack: a write missing from every replica counts once as lost, its absences apart', async (t) => {
  const h = new H().call(0, 'append', 1).call(1, 'append', 2);
  finalReads(h, { n1: [1], n2: [1], n3: [1] });
  const r = await run(noLostAckChecker, h.ops(), {});
  t.is(r.valid, false);
  t.is(r.stats.lostWrites, 1);
  t.is(r.stats.missing, 3);
  t.regex(
    r.evidence,
    /2 acked writes, 1 missing in final read of 3 replicas \(3 absences over the replicas\)/,
  );
});

test('no-lost-ack: a failed write whose value is present is rejected-present', async (t) => {
  const h = new H().call(0, 'append', 1).invoke(1, 'append', 2).fail(1, 'append', 2);
  finalReads(h, { n1: [1, 2] });
  t.deepEqual(types(await run(noLostAckChecker, h.ops(), {})), ['rejected-present']);
});

test('no-lost-ack: map dumps by key; an overwritten key is superseded, not lost', async (t) => {
  const h = new H().call(0, 'write', ['a', 1]).call(1, 'write', ['a', 2]).call(0, 'write', ['b', 3]);
  const ok = await run(noLostAckChecker, h.ops(), { finalState: { a: 2, b: 3 } });
  t.is(ok.valid, true);
  t.is(ok.stats.superseded, 1);
  const lost = await run(noLostAckChecker, h.ops(), { finalState: { a: 2 } });
  t.deepEqual(types(lost), ['lost']);
});

test('no-lost-ack: superseded by a write that may have come later, even one invoked first; lost otherwise', async (t) => {
  // a=2 was invoked before a=1 but completed after it was invoked: it may have taken effect last.
  const overlap = new H()
    .invoke(1, 'write', ['a', 2])
    .invoke(0, 'write', ['a', 1])
    .ok(0, 'write', ['a', 1])
    .ok(1, 'write', ['a', 2]);
  const r = await run(noLostAckChecker, overlap.ops(), { finalState: { a: 2 } });
  t.is(r.valid, true, r.evidence);
  t.is(r.stats.superseded, 1);
  // A timed-out write may take effect at any time after its invocation.
  const crashed = new H().invoke(1, 'write', ['a', 2]).call(0, 'write', ['a', 1]).info(1, 'write', ['a', 2]);
  t.is((await run(noLostAckChecker, crashed.ops(), { finalState: { a: 2 } })).valid, true);
  // a=2 completed before a=1 began: it cannot have overwritten a=1, though a later write to a exists.
  const before = new H()
    .call(1, 'write', ['a', 2])
    .call(0, 'write', ['a', 1])
    .invoke(2, 'write', ['a', 3])
    .info(2, 'write', ['a', 3]);
  const lost = await run(noLostAckChecker, before.ops(), { finalState: { a: 2 } });
  t.is(lost.valid, false);
  t.deepEqual(types(lost), ['lost']);
  t.regex(lost.anomalies[0]?.explanation ?? '', /write of \["a",1\] \(op 2\) is missing/);
  // A value nobody wrote supersedes nothing.
  const garbage = new H().call(0, 'write', ['a', 1]).call(1, 'write', ['a', 2]);
  t.deepEqual(types(await run(noLostAckChecker, garbage.ops(), { finalState: { a: 9 } })), ['lost']);
});

test('no-lost-ack: a dump taken while writes still completed is unknown (not quiescent); no dump is unknown', async (t) => {
  const h = new H()
    .call(0, 'append', 1)
    .invoke(0, 'append', 2)
    .invoke(100, 'final-read')
    .ok(0, 'append', 2)
    .ok(100, 'final-read', [1, 2]);
  const r = await run(noLostAckChecker, h.ops(), {});
  t.is(r.valid, 'unknown');
  t.regex(r.evidence, /quiescence/);
  t.is((await run(noLostAckChecker, new H().call(0, 'append', 1).ops(), {})).valid, 'unknown');
});

const credit = (key: string, amount = 1) => ({ idempotencyKey: key, amount });

test('exactly-once: one record per key in the final ledger is valid, even with retries', async (t) => {
  const h = new H()
    .call(0, 'credit', credit('k1'))
    .invoke(1, 'credit', credit('k2'))
    .info(1, 'credit', credit('k2'));
  h.call(2, 'credit', credit('k2'));
  const ledger = [{ idempotencyKey: 'k1' }, { idempotencyKey: 'k2' }];
  const r = await run(exactlyOnceChecker, h.ops(), { keyPath: 'idempotencyKey', finalState: ledger });
  t.is(r.valid, true);
  t.is(r.stats.retriedKeys, 1);
});

test('exactly-once: a key applied twice is duplicate-effect; an acked key with no record is lost-effect', async (t) => {
  const h = new H()
    .call(0, 'credit', credit('k1'))
    .call(1, 'credit', credit('k1'))
    .call(2, 'credit', credit('k3'));
  const ledger = [{ idempotencyKey: 'k1' }, { idempotencyKey: 'k1' }];
  const r = await run(exactlyOnceChecker, h.ops(), { keyPath: 'idempotencyKey', finalState: ledger });
  t.is(r.valid, false);
  t.deepEqual(types(r), ['duplicate-effect', 'lost-effect']);
});

test('exactly-once: from the history, two distinct effect ids for one key is a duplicate', async (t) => {
  const h = new H()
    .call(0, 'credit', credit('k1'), { entry: 10 })
    .call(1, 'credit', credit('k1'), { entry: 11 });
  const r = await run(exactlyOnceChecker, h.ops(), { keyPath: 'idempotencyKey', effectIdPath: 'entry' });
  t.deepEqual(types(r), ['duplicate-effect']);
  const same = new H()
    .call(0, 'credit', credit('k1'), { entry: 10 })
    .call(1, 'credit', credit('k1'), { entry: 10 });
  t.is(
    (await run(exactlyOnceChecker, same.ops(), { keyPath: 'idempotencyKey', effectIdPath: 'entry' })).valid,
    true,
  );
});

test('exactly-once: from the history, an ack without an effect id is not judged, never a lost effect', async (t) => {
  // A retry acknowledged as "already applied" without the id: nothing says the effect is missing.
  const h = new H()
    .call(0, 'credit', credit('k1'), { entry: 10 })
    .call(1, 'credit', credit('k1'), { status: 'duplicate' })
    .call(2, 'credit', credit('k2'), { status: 'duplicate' })
    .call(3, 'credit', credit('k2'), { status: 'duplicate' });
  const r = await run(exactlyOnceChecker, h.ops(), { keyPath: 'idempotencyKey', effectIdPath: 'entry' });
  t.is(r.valid, true, r.evidence);
  t.is(r.stats.unidentified, 1);
  t.is(
    r.stats.opsConsumed,
    2,
    "k2's two ops were not judged, so a run's verdict says the check covered part",
  );
  t.regex(r.evidence, /1 acked keys whose ok outputs carry no effect id \(not judged\)/);
  // No acked key identified at all: nothing was judged.
  const none = new H()
    .call(0, 'credit', credit('k2'), { status: 'ok' })
    .call(1, 'credit', credit('k2'), { status: 'ok' });
  t.is(
    (await run(exactlyOnceChecker, none.ops(), { keyPath: 'idempotencyKey', effectIdPath: 'entry' })).valid,
    'unknown',
  );
});

test('exactly-once: refuses op ids as the key, by name and by content', async (t) => {
  const h = new H().call(0, 'credit', { opId: 0 }).call(0, 'credit', { opId: 1 });
  await t.throwsAsync(async () => run(exactlyOnceChecker, h.ops(), { keyPath: 'opId', finalState: [] }), {
    message: /op id/,
  });
  const h2 = new H()
    .call(0, 'credit', { ref: 0 })
    .call(0, 'credit', { ref: 1 })
    .call(0, 'credit', { ref: 2 });
  await t.throwsAsync(async () => run(exactlyOnceChecker, h2.ops(), { keyPath: 'ref', finalState: [] }), {
    message: /op's id or index/,
  });
});

test('final-state-invariant: built-in sum holds / fails, and a predicate function works', async (t) => {
  const h = finalReads(new H().call(0, 'transfer', {}), { n1: { a: 5, b: -5 } });
  t.is(
    (await run(finalStateInvariantChecker, h.ops(), { invariant: { type: 'sum', equals: 0 } })).valid,
    true,
  );
  const bad = await run(finalStateInvariantChecker, h.ops(), { invariant: { type: 'non-negative' } });
  t.is(bad.valid, false);
  t.deepEqual(types(bad), ['invariant-violated']);
  const fn = await run(finalStateInvariantChecker, h.ops(), {
    predicate: (s) => (s as { a: number }).a === 5 || 'a is not 5',
    description: 'a is 5',
  });
  t.is(fn.valid, true);
  t.regex(fn.evidence, /fired 0 \/ passed 1/);
});

test('final-state-invariant: expression and unique from an options file', async (t) => {
  const h = finalReads(new H().call(0, 'join', 'x'), { n1: ['x', 'y', 'x'] });
  t.is((await run(finalStateInvariantChecker, h.ops(), { invariant: { type: 'unique' } })).valid, false);
  t.is(
    (
      await run(finalStateInvariantChecker, h.ops(), {
        invariant: { type: 'expression', expr: 'state.length === 3' },
      })
    ).valid,
    true,
  );
});

test('replica-reconciliation: identical dumps are valid; divergent keys are named', async (t) => {
  const same = finalReads(new H().call(0, 'write', ['a', 1]), {
    n1: { a: 1, b: 2 },
    n2: { b: 2, a: 1 },
    n3: { a: 1, b: 2 },
  });
  t.is((await run(replicaReconciliationChecker, same.ops(), {})).valid, true);
  const diff = finalReads(new H().call(0, 'write', ['a', 1]), {
    n1: { a: 1, b: 2 },
    n2: { a: 1, b: 3 },
    n3: { a: 1, b: 2, c: 0 },
  });
  const r = await run(replicaReconciliationChecker, diff.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['divergent']);
  t.deepEqual([...(r.stats.divergentKeys as string[])].sort(), ['b', 'c']);
  t.regex(r.anomalies[0]?.explanation ?? '', /n1 and n2 differ on 1 key: b/);
});

test('replica-reconciliation: a record read back with its fields in another order is no divergence', async (t) => {
  // Two replicas serialise the same hash with its fields in different orders.
  const r = await run(replicaReconciliationChecker, [], {
    replicas: { n1: { u1: { name: 'a', age: 3 } }, n2: { u1: { age: 3, name: 'a' } } },
  });
  t.is(r.valid, true, r.evidence);
  const lists = await run(replicaReconciliationChecker, [], {
    replicas: { n1: { log: [1, 2] }, n2: { log: [2, 1] } },
  });
  t.is(lists.valid, false, 'a list in another order is divergence');
});

test('set-full and no-lost-ack: an element read back with its fields in another order is the element', async (t) => {
  const h = new H().call(0, 'add', { id: 1, v: 'x' });
  h.invoke(1, 'read').ok(1, 'read', [{ v: 'x', id: 1 }]);
  const sf = await run(setFullChecker, h.ops(), {});
  t.is(sf.valid, true, sf.evidence);
  const nla = await run(noLostAckChecker, new H().call(0, 'add', { id: 1, v: 'x' }).ops(), {
    finalState: [{ v: 'x', id: 1 }],
  });
  t.is(nla.valid, true, nla.evidence);
});

test('replica-reconciliation: sets compare regardless of order; one dump is unknown', async (t) => {
  const r = await run(replicaReconciliationChecker, [], {
    replicas: { n1: { s: { '#set': [1, 2] } }, n2: { s: { '#set': [2, 1] } } },
  });
  t.is(r.valid, true);
  t.is((await run(replicaReconciliationChecker, [], { replicas: { n1: {} } })).valid, 'unknown');
});
