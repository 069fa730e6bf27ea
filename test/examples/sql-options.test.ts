import test from 'ava';
import { settingsSchema } from '../../examples/sql/db-options.ts';
import { postgresOptionsSchema } from '../../examples/sql/postgres-options.ts';

// The SQL example's dbOptions (synchronousCommit and walWriterDelayMs, flushLogAtTrxCommit): checked by
// value, each with a default; plan check turns a refusal into `file:line: … dbOptions.KEY: one of …`.
test('a dbOptions schema takes its values, defaults, and refuses anything else by name', (t) => {
  const flush = settingsSchema({ flushLogAtTrxCommit: { allowed: [0, 1, 2], fallback: 1 } });
  t.deepEqual(flush.safeParse(undefined), { success: true, data: { flushLogAtTrxCommit: 1 } });
  t.deepEqual(flush.safeParse({ flushLogAtTrxCommit: 0 }), {
    success: true,
    data: { flushLogAtTrxCommit: 0 },
  });
  const wrong = flush.safeParse({ flushLogAtTrxCommit: '2' });
  t.false(wrong.success);
  t.like(wrong, { error: { issues: [{ path: ['flushLogAtTrxCommit'], message: 'one of 0, 1, 2' }] } });
  const unknown = postgresOptionsSchema.safeParse({ fsync: 'off' });
  t.like(unknown, {
    success: false,
    error: {
      issues: [{ path: ['fsync'], message: 'unknown option (known: synchronousCommit, walWriterDelayMs)' }],
    },
  });
});

test('postgres: walWriterDelayMs is an integer from 1 to 10000, 200 when not named', (t) => {
  t.deepEqual(postgresOptionsSchema.safeParse({ synchronousCommit: 'off' }), {
    success: true,
    data: { synchronousCommit: 'off', walWriterDelayMs: 200 },
  });
  t.deepEqual(postgresOptionsSchema.safeParse({ walWriterDelayMs: 1000 }), {
    success: true,
    data: { synchronousCommit: 'on', walWriterDelayMs: 1000 },
  });
  for (const bad of [0, 10_001, 1.5, '1000', -5])
    t.like(
      postgresOptionsSchema.safeParse({ walWriterDelayMs: bad }),
      {
        success: false,
        error: { issues: [{ path: ['walWriterDelayMs'], message: 'an integer from 1 to 10000' }] },
      },
      String(bad),
    );
});
