import pino, { type Logger } from 'pino';

/**
 * One process-wide logger. Pretty on a terminal, JSON lines with --log-json or when stderr is not a TTY
 * (CI logs stay machine-readable). Logs go to stderr so stdout stays clean for results and --json output.
 */
let current: Logger | undefined;

export function configureLogger(opts: { json?: boolean; level?: string } = {}): Logger {
  const level = opts.level ?? process.env.FAULTLINE_LOG_LEVEL ?? 'info';
  const pretty = !opts.json && process.stderr.isTTY;
  current = pretty
    ? pino({
        level,
        transport: {
          target: 'pino-pretty',
          options: { destination: 2, colorize: true, ignore: 'pid,hostname' },
        },
      })
    : pino({ level }, pino.destination(2));
  return current;
}

export function log(): Logger {
  current ??= configureLogger();
  return current;
}
