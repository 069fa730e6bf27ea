import test from 'ava';
import { oneSettingSchema } from '../../examples/sql/db-options.ts';

// The SQL example's dbOptions (synchronousCommit, flushLogAtTrxCommit): one setting each, checked by
// value, with a default; plan check turns a refusal into `file:line: … dbOptions.KEY: one of …`.
test('a one-setting dbOptions schema takes its values, defaults, and refuses anything else by name', (t) => {
  const flush = oneSettingSchema('flushLogAtTrxCommit', [0, 1, 2], 1);
  t.deepEqual(flush.safeParse(undefined), { success: true, data: { flushLogAtTrxCommit: 1 } });
  t.deepEqual(flush.safeParse({ flushLogAtTrxCommit: 0 }), {
    success: true,
    data: { flushLogAtTrxCommit: 0 },
  });
  const wrong = flush.safeParse({ flushLogAtTrxCommit: '2' });
  t.false(wrong.success);
  t.like(wrong, { error: { issues: [{ path: ['flushLogAtTrxCommit'], message: 'one of 0, 1, 2' }] } });
  const unknown = oneSettingSchema('synchronousCommit', ['on', 'off'], 'on').safeParse({ fsync: 'off' });
  t.like(unknown, {
    success: false,
    error: { issues: [{ path: ['fsync'], message: 'unknown option (known: synchronousCommit)' }] },
  });
});
