import { settingsSchema } from './db-options.ts';

/**
 * dbOptions: `synchronousCommit` (on, the default: a COMMIT returns once its WAL is fsynced; off: it
 * returns before, and the WAL writer fsyncs within three `wal_writer_delay`s, so a power failure may lose
 * commits already acknowledged, as the documentation says); `walWriterDelayMs` (`wal_writer_delay`, 200 ms
 * by default, 1–10000): how often the WAL writer fsyncs, and so how much asynchronous commit can lose.
 */
export interface PostgresOptions {
  synchronousCommit: 'on' | 'off';
  walWriterDelayMs: number;
}

export const postgresOptionsSchema = settingsSchema({
  synchronousCommit: { allowed: ['on', 'off'], fallback: 'on' },
  walWriterDelayMs: { integer: [1, 10_000], fallback: 200 },
});
