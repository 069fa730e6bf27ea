import { createRequire } from 'node:module';
import type { Logger } from 'pino';

/**
 * One process-wide logger. Pretty on a terminal, JSON lines with --log-json or when stderr is not a TTY
 * (CI logs stay machine-readable). Logs go to stderr so stdout stays clean for results and --json output.
 *
 * pino is loaded on the first `log()` call, not when this module is imported: commands that never log
 * (`faultline check`, `history stats`) start without paying for it.
 */
let current: Logger | undefined;
let settings: { json?: boolean; level?: string } = {};

/** Sets how the logger will be built; a logger already built is rebuilt on its next use. */
export function configureLogger(opts: { json?: boolean; level?: string } = {}): void {
  settings = opts;
  current = undefined;
}

function build(opts: { json?: boolean; level?: string }): Logger {
  const pino = createRequire(import.meta.url)('pino') as typeof import('pino').default;
  const level = opts.level ?? process.env.FAULTLINE_LOG_LEVEL ?? 'info';
  const pretty = !opts.json && process.stderr.isTTY;
  return pretty
    ? pino({
        level,
        transport: {
          target: 'pino-pretty',
          options: { destination: 2, colorize: true, ignore: 'pid,hostname' },
        },
      })
    : pino({ level }, pino.destination(2));
}

export function log(): Logger {
  current ??= build(settings);
  return current;
}
