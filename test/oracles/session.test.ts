import test from 'ava';
import { sessionChecker } from '../../checkers/catalogue/session.ts';
import { H, run, types } from './build.ts';

const v = (value: unknown, version: number) => ({ value, version });

test('session: versions that never go back within a session are valid', async (t) => {
  const h = new H().call(0, 'write', ['x', 1], { version: 1 }).call(0, 'read', ['x', null], v(1, 1));
  h.call(1, 'write', ['x', 2], { version: 2 })
    .call(0, 'read', ['x', null], v(2, 2))
    .call(1, 'read', ['x', null], v(2, 2));
  const r = await run(sessionChecker, h.ops(), {});
  t.is(r.valid, true);
  t.like(r.stats, { sessions: 2, reads: 3, writes: 2 });
});

test('session: a read older than an earlier read of the same session is non-monotonic', async (t) => {
  const h = new H().call(0, 'read', ['x', null], v(5, 3)).call(0, 'read', ['x', null], v(4, 2));
  const r = await run(sessionChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['non-monotonic-read']);
});

test("session: a read older than the session's own write breaks read-your-writes", async (t) => {
  const h = new H().call(0, 'write', ['x', 9], { version: 7 }).call(0, 'read', ['x', null], v(8, 6));
  const r = await run(sessionChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['read-your-writes']);
});

test('session: other sessions and other keys do not interfere; op.key is honoured', async (t) => {
  const h = new H().call(0, 'read', ['x', null], v(5, 3)).call(1, 'read', ['x', null], v(4, 2));
  h.invoke(0, 'read', null, { key: 'y' }).ok(0, 'read', v(1, 1), { key: 'y' });
  t.is((await run(sessionChecker, h.ops(), {})).valid, true);
});

test('session: without versions, reading back an own write already overwritten is caught', async (t) => {
  const h = new H().call(0, 'write', 1).call(0, 'write', 2).call(0, 'read', null, 1);
  const r = await run(sessionChecker, h.ops(), {});
  t.is(r.valid, false);
  t.deepEqual(types(r), ['stale-own-write']);
  // If another process also wrote 1, the read may have seen that write: not flagged.
  const h2 = new H().call(1, 'write', 1).call(0, 'write', 1).call(0, 'write', 2).call(0, 'read', null, 1);
  t.is((await run(sessionChecker, h2.ops(), {})).valid, true);
});

test('session: no ok reads is unknown', async (t) => {
  t.is((await run(sessionChecker, new H().call(0, 'write', 1).ops(), {})).valid, 'unknown');
});
