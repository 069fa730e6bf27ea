import { createRequire } from 'node:module';
import type { Logger } from 'pino';

/**
 * One process-wide logger, on stderr so stdout stays clean for results and --json output.
 *
 * People read it: one human line per record whatever stderr is (a terminal, a CI log, `| tee`), with
 * colour only on a terminal and never when NO_COLOR is set; JSON lines only when asked (`json: true`).
 * The same warning about several nodes, logged within a moment of each other (the parallel per-node
 * steps do that), is printed once: `on n1–n5: libfaketime cannot move this binary's clock`.
 *
 * pino (and pino-pretty) load on the first `log()` call, not when this module is imported: commands that
 * never log (`faultline check`, `history stats`) start without paying for them.
 */
let current: Logger | undefined;
let settings: LoggerOptions = {};
let human: HumanLines | undefined;
let exitHook = false;
let cjsRequire: NodeJS.Require | undefined;

/** pino and pino-pretty are CommonJS; the require function itself is made on first use too. */
function requireLazily(id: string): unknown {
  cjsRequire ??= createRequire(import.meta.url);
  return cjsRequire(id);
}

export interface LoggerOptions {
  /** JSON lines (pino's own format) instead of human lines. */
  json?: boolean;
  /** trace | debug | info | warn | error | fatal; default FAULTLINE_LOG_LEVEL, else info. */
  level?: string;
  /** Force colour on or off; default: on a terminal, unless NO_COLOR is set. */
  color?: boolean;
  /** Where human lines go (tests); default stderr. */
  out?: { write(s: string): unknown };
}

/** https://no-color.org: any non-empty NO_COLOR turns colour off; FORCE_COLOR turns it on. */
export function colorWanted(env: NodeJS.ProcessEnv = process.env, isTTY = process.stderr.isTTY): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  return isTTY === true;
}

/** Sets how the logger is built; a logger already built is rebuilt on its next use. */
export function configureLogger(opts: LoggerOptions = {}): void {
  human?.flush();
  settings = opts;
  current = undefined;
}

function build(opts: LoggerOptions): Logger {
  const pino = requireLazily('pino') as typeof import('pino').default;
  const level = opts.level ?? process.env.FAULTLINE_LOG_LEVEL ?? 'info';
  human = opts.json ? undefined : new HumanLines(opts.out ?? process.stderr, opts.color ?? colorWanted());
  const logger = human ? pino({ level }, human) : pino({ level }, pino.destination(2));
  if (!exitHook) {
    // A warning still waiting for its group is written before the process ends.
    process.once('exit', () => human?.flush());
    exitHook = true;
  }
  return logger;
}

export function log(): Logger {
  current ??= build(settings);
  return current;
}

/**
 * Node names as a compact set: runs of three or more consecutive numbered names become a range
 * (`n1–n5`), the rest are listed: `n1–n3 n5`.
 */
export function nodeSet(nodes: readonly string[]): string {
  const parsed = [...new Set(nodes)]
    .map((n) => {
      const m = /^(.*?)(\d+)$/.exec(n);
      return m ? { n, prefix: m[1] as string, k: Number(m[2]) } : { n, prefix: n, k: Number.NaN };
    })
    .sort((a, b) => a.prefix.localeCompare(b.prefix) || a.k - b.k || a.n.localeCompare(b.n));
  const out: string[] = [];
  for (let i = 0; i < parsed.length; ) {
    let j = i;
    const a = parsed[i] as (typeof parsed)[number];
    while (
      j + 1 < parsed.length &&
      (parsed[j + 1] as (typeof parsed)[number]).prefix === a.prefix &&
      (parsed[j + 1] as (typeof parsed)[number]).k === (parsed[j] as (typeof parsed)[number]).k + 1
    )
      j++;
    if (j - i >= 2) out.push(`${a.n}–${(parsed[j] as (typeof parsed)[number]).n}`);
    else for (let k = i; k <= j; k++) out.push((parsed[k] as (typeof parsed)[number]).n);
    i = j + 1;
  }
  return out.join(' ');
}

type LogRecord = Record<string, unknown> & { level: number; msg?: string; node?: unknown };

/** How long a warning waits for the same warning about other nodes. */
const GROUP_MS = 300;
const WARN = 40;

/**
 * pino's destination for human lines: formats each record with pino-pretty (one line, time first),
 * grouping identical warnings about different nodes. Writes synchronously, in order.
 */
class HumanLines {
  private readonly pretty: (o: LogRecord) => string;
  private pending: { key: string; record: LogRecord; nodes: string[] } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: { write(s: string): unknown },
    color: boolean,
  ) {
    const { prettyFactory } = requireLazily('pino-pretty') as typeof import('pino-pretty');
    this.pretty = prettyFactory({
      colorize: color,
      translateTime: 'HH:MM:ss',
      ignore: 'pid,hostname',
      singleLine: true,
      errorLikeObjectKeys: [],
    }) as (o: LogRecord) => string;
  }

  write(line: string): void {
    let record: LogRecord;
    try {
      record = JSON.parse(line) as LogRecord;
    } catch {
      this.flush();
      this.out.write(line);
      return;
    }
    const node = typeof record.node === 'string' ? record.node : null;
    if (node === null || record.level < WARN) {
      this.flush();
      this.print(record);
      return;
    }
    const { time: _t, pid: _p, hostname: _h, node: _n, ...rest } = record;
    const key = JSON.stringify(rest, Object.keys(rest).sort());
    if (this.pending && this.pending.key === key) {
      this.pending.nodes.push(node);
      return;
    }
    this.flush();
    this.pending = { key, record, nodes: [node] };
    this.timer = setTimeout(() => this.flush(), GROUP_MS);
    this.timer.unref();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const p = this.pending;
    this.pending = null;
    if (!p) return;
    if (p.nodes.length === 1) {
      this.print(p.record);
      return;
    }
    const { node: _n, ...record } = p.record;
    this.print({ ...record, msg: `on ${nodeSet(p.nodes)}: ${p.record.msg ?? ''}` } as LogRecord);
  }

  private print(record: LogRecord): void {
    this.out.write(this.pretty(record));
  }
}

/**
 * Also write the log, at debug level whatever the terminal shows, to `path` (a session's
 * `logs/control.debug.jsonl`) until the returned function is called. The terminal keeps its level and form.
 */
export function teeLogToFile(path: string): () => void {
  const previous = log();
  const pino = requireLazily('pino') as typeof import('pino').default;
  const file = pino.destination({ dest: path, sync: true, mkdir: true });
  const consoleLevel = (settings.level ?? process.env.FAULTLINE_LOG_LEVEL ?? 'info') as import('pino').Level;
  const consoleStream = human ?? pino.destination(2);
  const fileLevel =
    (pino.levels.values[consoleLevel] ?? 30) < (pino.levels.values.debug ?? 20) ? consoleLevel : 'debug';
  current = pino(
    { level: fileLevel },
    pino.multistream([
      { level: consoleLevel, stream: consoleStream },
      { level: fileLevel, stream: file },
    ]),
  );
  return () => {
    current = previous;
    file.flushSync();
    file.end();
  };
}
