import { Socket } from 'node:net';
import { posix } from 'node:path';
import { z } from 'zod';
import { clusterAddress } from '../../core/control/addresses.ts';
import { RemoteTimeoutError } from '../../core/control/connection-errors.ts';
import { ensurePackages } from '../../core/control/packages.ts';
import { envPrefix, shellJoin, shellQuote } from '../../core/control/quote.ts';
import { STOP_SIGNALS } from '../../core/database/capabilities.ts';
import { durationMsSchema } from '../../core/util/duration-schema.ts';
import { InputError, UserError } from '../../core/util/errors.ts';
import { clusterSegment, pathName, resolveInside } from '../../core/util/paths.ts';
import { waitFor } from '../../core/util/retry.ts';
import { type ParsedYaml, yamlIssueError, yamlLine } from '../../core/util/yaml.ts';
import {
  daemonRunning,
  ensureStartedProcess,
  execIdempotent,
  pidfileProcess,
  startDaemon,
  startSelfDaemonizing,
} from './daemon.ts';
import type { DatabaseDefinition } from './registry.ts';
import type {
  ClockWrapper,
  ClusterFormation,
  Database,
  DbContext,
  MemberInfo,
  ProcessControl,
} from './types.ts';

/**
 * A database without code: a process with a port, described in YAML (a file, or a `daemon:` block in a
 * plan binding). faultline installs its Debian packages, starts it detached with a pidfile, waits until
 * it answers (a TCP port, or a command), kills, pauses and restarts it by pidfile, starts it through the
 * libfaketime wrapper for clock faults, collects its logs, wipes and removes its directory.
 *
 * Text from the description never reaches a remote shell unquoted: `start`, `ready.command`, `form`
 * commands and `timeCommand` are split into words on spaces (no shell syntax: no pipes, quotes or
 * redirections), `args` are words as given (spaces kept), the placeholders are substituted inside words,
 * and every word is shell-quoted (`shellQuote`, the one quoting helper); `env` values likewise. `config`
 * files are written from templates over stdin, never through a shell. Every path it names must stay
 * inside the node's own directory under faultline's base directory
 * (`/var/lib/faultline/<name>/<cluster>/<node>`).
 */
export const BASE_DIR = '/var/lib/faultline';

const words = z
  .string()
  .min(1)
  .transform((s) => s.trim().split(/\s+/));

export const daemonDescriptionSchema = z.strictObject({
  /** The database's name (`db:` in a binding, `--db` on the command line). */
  name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
  summary: z.string().optional(),
  /** Debian packages installed on every node when missing. */
  packages: z.array(z.string().regex(/^[a-z0-9][a-z0-9.+-]*$/, 'a Debian package name')).default([]),
  /** The command that runs the daemon in the foreground: one word per argument, placeholders allowed. */
  start: words,
  /** More arguments after `start`, one list item per argument: spaces inside an item are kept. */
  args: z.array(z.string()).default([]),
  /** Environment for `start`, `ready.command` and `form` commands (values take placeholders). */
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string())
    .default({}),
  /**
   * Files written on every node before the daemon starts: `path` relative to the node's directory
   * (`{dir}`; `{dataDir}` is its `data/`), `content` a template with the placeholders.
   */
  config: z
    .array(
      z.strictObject({
        path: z.string().min(1),
        content: z.string(),
        mode: z
          .string()
          .regex(/^0?[0-7]{3}$/)
          .optional(),
      }),
    )
    .default([]),
  /**
   * Cluster formation after every node is ready: `on: primary` runs `commands` once on the first node,
   * `on: joining` runs them on every other node, one node after the other, in node order.
   */
  form: z
    .strictObject({
      on: z.enum(['primary', 'joining']).default('joining'),
      commands: z.array(words).min(1),
    })
    .optional(),
  /** What /proc/PID/comm shows; default: the start command's program name. */
  processName: z.string().min(1).optional(),
  /** The signal for a prompt clean shutdown where a fault restarts it (ProcessControl.stopSignal); default TERM. */
  stopSignal: z.enum(STOP_SIGNALS).optional(),
  /** The port clients use ({port}); also the default ready check. */
  port: z.number().int().min(1).max(65535).optional(),
  /** Where clients connect; default `{address}:{port}`. */
  clientAddress: z.string().min(1).optional(),
  ready: z
    .strictObject({
      /** Ready when this TCP port accepts a connection (from the control node). */
      port: z.number().int().min(1).max(65535).optional(),
      /** Ready when this command exits with `exitCode` on the node (words, placeholders allowed). */
      command: words.optional(),
      /** The exit code that means ready (default 0). */
      exitCode: z.number().int().min(0).max(255).default(0),
      /** Pause between attempts (default 1s); the command is retried until `timeout`. */
      interval: durationMsSchema().default(1_000),
      timeout: durationMsSchema().default(30_000),
    })
    .optional(),
  /**
   * For a daemon that forks and writes its own pidfile (a path under {dataDir}): faultline runs `start`,
   * then reads this file. Absent: faultline keeps the daemon in the foreground and writes the pidfile.
   */
  pidfile: z.string().min(1).optional(),
  /** Log files besides the daemon's console output (always collected). */
  logs: z.array(z.string().min(1)).default([]),
  /** What `wipe` removes, relative to the data directory; default: all of it. */
  wipe: z.array(z.string().min(1)).default([]),
  /** A command printing the database's own time (clock-fault evidence), words as `start`. */
  timeCommand: words.optional(),
  /** The client used when a binding names none. */
  client: z.string().optional(),
});
export type DaemonDescription = z.output<typeof daemonDescriptionSchema>;

/**
 * Parse a description; problems are `file[:line]: field: reason` bad input (with a line when `yaml`, the
 * document it was read from, is given).
 */
export function parseDaemonDescription(raw: unknown, file: string, yaml?: ParsedYaml): DaemonDescription {
  const r = daemonDescriptionSchema.safeParse(raw);
  if (!r.success) throw yamlIssueError(file, yaml, r.error.issues[0]);
  const lineOf = (path: readonly PropertyKey[]) => (yaml ? yamlLine(yaml, path) : null);
  // Each templated text with where it is in the description (a field split into words is named whole).
  const d = r.data;
  const templated: [PropertyKey[], string][] = [
    ...d.start.map((w): [PropertyKey[], string] => [['start'], w]),
    ...d.args.map((w, i): [PropertyKey[], string] => [['args', i], w]),
    ...Object.entries(d.env).map(([k, w]): [PropertyKey[], string] => [['env', k], w]),
    ...(d.ready?.command ?? []).map((w): [PropertyKey[], string] => [['ready', 'command'], w]),
    ...(d.timeCommand ?? []).map((w): [PropertyKey[], string] => [['timeCommand'], w]),
    ...(d.form?.commands ?? []).flatMap((c, i) =>
      c.map((w): [PropertyKey[], string] => [['form', 'commands', i], w]),
    ),
    ...d.config.flatMap((c, i): [PropertyKey[], string][] => [
      [['config', i, 'path'], c.path],
      [['config', i, 'content'], c.content],
    ]),
  ];
  for (const [path, w] of templated)
    for (const ph of w.match(/\{[a-zA-Z]+\}/g) ?? [])
      if (!PLACEHOLDERS.has(ph) && !(d.config.some((c) => c.content === w) && REPEATED.has(ph)))
        throw new InputError(
          file,
          lineOf(path),
          path.join('.'),
          REPEATED.has(ph)
            ? `${ph} repeats a line of a config file's content: it is not allowed elsewhere`
            : `unknown placeholder ${ph} (${[...PLACEHOLDERS].join(', ')}; in config content also ${[...REPEATED].join(', ')})`,
        );
  d.config.forEach((c, i) => {
    for (const line of c.content.split('\n'))
      if (repeatOver(line) === 'both')
        throw new InputError(
          file,
          lineOf(['config', i, 'content']),
          `config.${i}.content`,
          `a line names both {peer…} and {member…} placeholders: "${line.trim()}"`,
        );
  });
  return r.data;
}

/**
 * Placeholders that repeat a line of a `config` file's content: a line naming {peer}, {peerNode} or
 * {peerHostname} is written once per other node, a line naming {member}, {memberNode},
 * {memberHostname} or {memberIndex} once per node (this one included); node order, index from 1.
 * The whole line repeats, so a list takes one item per line (`routes: [` / `  nats://{peer}:6222` / `]`).
 */
const PEER_PLACEHOLDERS = ['{peer}', '{peerNode}', '{peerHostname}'] as const;
const MEMBER_PLACEHOLDERS = ['{member}', '{memberNode}', '{memberHostname}', '{memberIndex}'] as const;
const REPEATED: ReadonlySet<string> = new Set([...PEER_PLACEHOLDERS, ...MEMBER_PLACEHOLDERS]);

function repeatOver(line: string): 'peers' | 'members' | 'both' | null {
  const peers = PEER_PLACEHOLDERS.some((p) => line.includes(p));
  const members = MEMBER_PLACEHOLDERS.some((p) => line.includes(p));
  return peers && members ? 'both' : peers ? 'peers' : members ? 'members' : null;
}

const PLACEHOLDERS = new Set([
  '{node}',
  '{address}',
  '{hostname}',
  '{port}',
  '{peers}',
  '{peerHostnames}',
  '{nodes}',
  '{primary}',
  '{primaryAddress}',
  '{primaryHostname}',
  '{dir}',
  '{dataDir}',
  '{name}',
  '{index}',
]);

/** The registry definition of a described daemon. */
export function daemonDatabaseDefinition(d: DaemonDescription): DatabaseDefinition {
  return {
    name: d.name,
    summary: d.summary ?? `${d.name} (daemon description)`,
    defaultClient: d.client ?? '',
    binary: d.start[0] as string,
    create: () => new DaemonDatabase(d),
  };
}

export class DaemonDatabase implements Database {
  readonly name: string;
  private readonly wrappers = new Map<string, string>();
  readonly process: ProcessControl;
  readonly clock: ClockWrapper;
  readonly form?: ClusterFormation;

  constructor(private readonly d: DaemonDescription) {
    this.name = d.name;
    const processName = d.processName ?? posix.basename(d.start[0] as string);
    this.process = {
      ...pidfileProcess(
        processName,
        (ctx, node) => this.pidFile(ctx, node),
        (ctx, node) => this.start(ctx, node),
      ),
      ...(d.stopSignal && { stopSignal: d.stopSignal }),
    };
    this.clock = {
      setWrapper: (node, path) => {
        if (path === null) this.wrappers.delete(node);
        else this.wrappers.set(node, path);
      },
      binary: d.start[0] as string,
      ...(d.timeCommand && { timeCommand: shellJoin(d.timeCommand) }),
    };
    const form = d.form;
    if (form)
      this.form = {
        on: form.on,
        run: async (ctx, node) => {
          for (const command of form.commands)
            await ctx.remote.exec(node, this.commandLine(ctx, node, command), {
              sudo: true,
              timeoutMs: 120_000,
            });
        },
      };
  }

  /** A command from the description as one shell line: `env`, then every word substituted and quoted. */
  private commandLine(ctx: DbContext, node: string, command: readonly string[]): string {
    return `${envPrefix(this.env(ctx, node))}cd ${shellQuote(this.dataDir(ctx, node))} && ${shellJoin(command.map((w) => this.fill(ctx, node, w)))}`;
  }

  private env(ctx: DbContext, node: string): Record<string, string> {
    return Object.fromEntries(Object.entries(this.d.env).map(([k, v]) => [k, this.fill(ctx, node, v)]));
  }

  /** The node's own directory: everything the daemon has lives under it. */
  dir(ctx: DbContext, node: string): string {
    const spec = ctx.remote.node(node);
    const cluster = clusterSegment(spec);
    return resolveInside(
      `${BASE_DIR}/${pathName('database', this.name)}`,
      `${cluster}/${pathName('node', node)}`,
    );
  }

  dataDir(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/data`;
  }

  pidFile(ctx: DbContext, node: string): string {
    return this.d.pidfile
      ? this.inside(ctx, node, this.fill(ctx, node, this.d.pidfile))
      : `${this.dir(ctx, node)}/${this.name}.pid`;
  }

  private consoleLog(ctx: DbContext, node: string): string {
    return `${this.dir(ctx, node)}/${this.name}.log`;
  }

  private address(ctx: DbContext, node: string): string {
    return clusterAddress(ctx.remote.node(node));
  }

  clientAddress(ctx: DbContext, node: string): string {
    return this.fill(ctx, node, this.d.clientAddress ?? (this.d.port ? '{address}:{port}' : '{address}'));
  }

  private member(ctx: DbContext, n: string): MemberInfo {
    return ctx.members?.find((m) => m.name === n) ?? { name: n, address: this.address(ctx, n), hostname: n };
  }

  /**
   * A config file's content: each line naming {peer…} written once per other node, each naming
   * {member…} once per node (see REPEATED), then every placeholder substituted.
   */
  private fillContent(ctx: DbContext, node: string, content: string): string {
    const lines = content.split('\n').flatMap((line) => {
      const over = repeatOver(line);
      if (over === null) return [line];
      return ctx.nodes
        .filter((n) => over === 'members' || n !== node)
        .map((n) => {
          const m = this.member(ctx, n);
          const values: Record<string, string> = {
            '{peer}': m.address,
            '{peerNode}': m.name,
            '{peerHostname}': m.hostname,
            '{member}': m.address,
            '{memberNode}': m.name,
            '{memberHostname}': m.hostname,
            '{memberIndex}': String(ctx.nodes.indexOf(n) + 1),
          };
          return line.replace(/\{[a-zA-Z]+\}/g, (ph) => values[ph] ?? ph);
        });
    });
    return this.fill(ctx, node, lines.join('\n'));
  }

  /** Placeholders substituted inside one word (quoting comes after, word by word). */
  private fill(ctx: DbContext, node: string, word: string): string {
    const member = (n: string): MemberInfo => this.member(ctx, n);
    const others = ctx.nodes.filter((n) => n !== node).map(member);
    const primary = member(ctx.nodes[0] as string);
    const values: Record<string, string> = {
      '{node}': node,
      '{address}': this.address(ctx, node),
      '{hostname}': member(node).hostname,
      '{port}': String(this.d.port ?? ''),
      '{peers}': others.map((m) => m.address).join(','),
      '{peerHostnames}': others.map((m) => m.hostname).join(','),
      '{nodes}': ctx.nodes.join(','),
      '{primary}': primary.name,
      '{primaryAddress}': primary.address,
      '{primaryHostname}': primary.hostname,
      '{dir}': this.dir(ctx, node),
      '{dataDir}': this.dataDir(ctx, node),
      '{name}': this.name,
      '{index}': String(ctx.nodes.indexOf(node) + 1),
    };
    return word.replace(/\{[a-zA-Z]+\}/g, (ph) => values[ph] ?? ph);
  }

  /** A path from the description, refused unless it stays inside the node's directory. */
  private inside(ctx: DbContext, node: string, path: string, base = this.dataDir(ctx, node)): string {
    const dir = this.dir(ctx, node);
    const abs = posix.normalize(posix.isAbsolute(path) ? path : `${base}/${path}`);
    if (abs !== dir && !abs.startsWith(`${dir}/`))
      throw new UserError(`${this.name}: ${path} is outside the node's directory ${dir}`);
    return abs;
  }

  async install(ctx: DbContext, node: string): Promise<void> {
    await ensurePackages(ctx.remote, node, this.d.packages);
  }

  /** Configure (the data directory, the `config` files), then start. */
  async setup(ctx: DbContext, node: string): Promise<void> {
    await execIdempotent(ctx.remote, node, `mkdir -p ${shellQuote(this.dataDir(ctx, node))}`, { sudo: true });
    for (const file of this.d.config) {
      const path = this.inside(ctx, node, this.fill(ctx, node, file.path), this.dir(ctx, node));
      const content = this.fillContent(ctx, node, file.content);
      const q = shellQuote(path);
      await execIdempotent(
        ctx.remote,
        node,
        `mkdir -p ${shellQuote(posix.dirname(path))} && cat > ${q}${file.mode ? ` && chmod ${file.mode} ${q}` : ''}`,
        { sudo: true, stdin: content },
      );
    }
    await this.start(ctx, node);
  }

  async start(ctx: DbContext, node: string): Promise<void> {
    const command = [...this.d.start, ...this.d.args].map((w) => this.fill(ctx, node, w));
    const binary = this.wrappers.get(node) ?? (command[0] as string);
    const env = this.env(ctx, node);
    const spec = {
      binary,
      processName: this.process.processName,
      args: command.slice(1),
      ...(Object.keys(env).length > 0 && { env }),
      pidFile: this.pidFile(ctx, node),
      logFile: this.consoleLog(ctx, node),
      cwd: this.dataDir(ctx, node),
    };
    if (this.d.pidfile) await startSelfDaemonizing(ctx.remote, node, spec);
    else {
      await startDaemon(ctx.remote, node, spec);
      await ensureStartedProcess(ctx.remote, node, spec);
    }
  }

  async awaitReady(ctx: DbContext, timeoutMs: number): Promise<void> {
    const ready = this.d.ready;
    const port = ready?.port ?? (ready?.command ? undefined : this.d.port);
    const pending = new Set(ctx.nodes);
    let last = '';
    const allReady = async () => {
      for (const node of [...pending]) {
        const why = await this.notReady(ctx, node, port, ready?.command);
        if (why === null) pending.delete(node);
        else last = `${node}: ${why}`;
        // It was started and has exited: waiting longer cannot make it ready.
        if (why === 'not running') throw new UserError(await this.exitedMessage(ctx, node));
      }
      return pending.size === 0;
    };
    const limitMs = Math.min(timeoutMs, ready?.timeout ?? timeoutMs);
    if (!(await waitFor(allReady, limitMs, ready?.command ? ready.interval : 250)))
      throw new UserError(
        `${this.name} did not become ready on ${[...pending].join(', ')} (${last}); see ${this.consoleLog(ctx, [...pending][0] as string)} on the node`,
      );
  }

  /** The daemon exited before it was ready: say so with the last lines of its console. */
  private async exitedMessage(ctx: DbContext, node: string): Promise<string> {
    const log = this.consoleLog(ctx, node);
    const tail = await ctx.remote
      .exec(node, `tail -n 5 ${shellQuote(log)}`, { sudo: true, check: false, timeoutMs: 10_000 })
      .then((r) => r.stdout.trim().replace(/\n/g, ' | '))
      .catch(() => '');
    return `${this.name} exited on ${node} before it was ready; console ${log} on the node${tail ? `: ${tail}` : ''}`;
  }

  /** Why a node is not ready yet, or null when it is. */
  private async notReady(
    ctx: DbContext,
    node: string,
    port: number | undefined,
    command: readonly string[] | undefined,
  ): Promise<string | null> {
    const pf = this.pidFile(ctx, node);
    if (!(await daemonRunning(ctx.remote, node, pf, this.process.processName))) return 'not running';
    if (command) {
      const want = this.d.ready?.exitCode ?? 0;
      // An attempt that hangs is one more "not yet", not a failure: the loop retries until `timeout`.
      const r = await ctx.remote
        .exec(node, this.commandLine(ctx, node, command), { check: false, timeoutMs: 15_000 })
        .catch((err: unknown) => {
          if (err instanceof RemoteTimeoutError) return null;
          throw err;
        });
      if (r === null) return 'ready command did not answer within 15 s';
      if (r.code === want) return null;
      const tail = r.stderr.trim().split('\n').slice(-1)[0] ?? '';
      return `ready command exited ${r.code}, not ${want}${tail ? `: ${tail}` : ''}`;
    }
    if (port !== undefined) return tcpConnects(this.address(ctx, node), port, 1000);
    return null;
  }

  async teardown(ctx: DbContext, node: string): Promise<void> {
    await this.process.kill(ctx, node);
    await execIdempotent(
      ctx.remote,
      node,
      `rm -rf ${shellQuote(this.dir(ctx, node))} && { rmdir ${shellQuote(posix.dirname(this.dir(ctx, node)))} 2>/dev/null || true; }`,
      { sudo: true },
    );
  }

  logFiles(ctx: DbContext, node: string): string[] {
    return [
      this.consoleLog(ctx, node),
      ...this.d.logs.map((l) => this.inside(ctx, node, this.fill(ctx, node, l))),
    ];
  }

  async wipe(ctx: DbContext, node: string): Promise<void> {
    const targets =
      this.d.wipe.length > 0
        ? this.d.wipe.map((w) => this.inside(ctx, node, this.fill(ctx, node, w)))
        : [`${this.dataDir(ctx, node)}`];
    await execIdempotent(
      ctx.remote,
      node,
      `rm -rf ${targets.map(shellQuote).join(' ')} && mkdir -p ${shellQuote(this.dataDir(ctx, node))}`,
      { sudo: true },
    );
  }
}

/** A path segment from the inventory (a node or cluster name) that cannot climb out of the base. */
/** null when host:port accepts a TCP connection within the timeout, else why not. */
export function tcpConnects(host: string, port: number, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (why: string | null) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(timeoutMs, () => done(`port ${port}: no answer within ${timeoutMs} ms`));
    socket.once('error', (err) => done(`port ${port}: ${err.message}`));
    socket.connect(port, host, () => done(null));
  });
}
