import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';

/**
 * One process-wide logger. Pretty on a terminal, JSON lines with --log-json or when stderr is not a TTY
 * (CI logs stay machine-readable). Logs go to stderr so stdout stays clean for results and --json output.
 */
let current: Logger | undefined;

let configured: { json: boolean; level: string } = { json: false, level: 'info' };

export function configureLogger(opts: { json?: boolean; level?: string } = {}): Logger {
  const level = opts.level ?? process.env.FAULTLINE_LOG_LEVEL ?? 'info';
  configured = { json: opts.json ?? false, level };
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

/**
 * Also write the log, at debug level whatever the terminal shows, to `path` (a session's
 * `logs/control.debug.jsonl`) until the returned function is called. The terminal keeps its level and form.
 */
export function teeLogToFile(path: string): () => void {
  const previous = log();
  const file = pino.destination({ dest: path, sync: true, mkdir: true });
  const stderr =
    !configured.json && process.stderr.isTTY
      ? pinoPretty({ destination: 2, colorize: true, ignore: 'pid,hostname', sync: true })
      : pino.destination(2);
  const consoleLevel = configured.level;
  const fileLevel = pino.levels.values[consoleLevel]! < pino.levels.values.debug! ? consoleLevel : 'debug';
  current = pino(
    { level: fileLevel },
    pino.multistream([
      { level: consoleLevel as pino.Level, stream: stderr },
      { level: fileLevel as pino.Level, stream: file },
    ]),
  );
  return () => {
    current = previous;
    file.flushSync();
    file.end();
  };
}
