import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Client, ClientChannel, SFTPWrapper } from 'ssh2';
import { log } from '../util/log.ts';
import { retry } from '../util/retry.ts';
import { CommandLog, type CommandLogEntry, Redactor } from './command-log.ts';
import {
  abbreviate,
  RemoteChannelError,
  RemoteCommandError,
  RemoteError,
  RemoteTimeoutError,
} from './connection-errors.ts';
import { shellQuote } from './quote.ts';
import {
  buildRemoteCommand,
  KILL_GRACE_S,
  looksTimedOut,
  needsSudo,
  remoteArgv,
  remoteScript,
} from './remote-command.ts';
import { Semaphore } from './semaphore.ts';
import { type ConnectionOptions, SshConnector } from './ssh-connection.ts';
import {
  type Collected,
  CommandRunner,
  type RunnerJob,
  RunnerLostError,
  RunnerStartError,
  type RunnerSudo,
  RunnerSudoError,
} from './ssh-runner.ts';
import type { ExecOptions, ExecResult, NodeResult, NodeSpec, Remote, TransferOptions } from './types.ts';

export interface RemoteOptions extends ConnectionOptions {
  /** Run log directory: per-node `<node>.commands.jsonl` files are written here. */
  logDir?: string;
  /**
   * Concurrent channels per connection (default 6, at most 9). OpenSSH's MaxSessions is 10, but sshd
   * frees a closed session a little after the close, so rapid reuse needs headroom (Jepsen uses 6 too).
   */
  maxChannels?: number;
  /**
   * Long-lived command runners per connection (ssh-runner.ts), used for commands without stdin or a sudo
   * password; each holds a session slot, so at most 9 − maxChannels (default 3). 0: an exec channel per
   * command.
   */
  commandRunners?: number;
  /**
   * How long a command waits for a busy connection's runner to come free before it opens an exec channel
   * instead (default 10 ms; see DEFAULT_RUNNER_WAIT_MS).
   */
  runnerWaitMs?: number;
  /** Timeout for commands that do not set one (0 = none). */
  defaultTimeoutMs?: number;
  /** Connect to every node before returning (default true); false connects on first use. */
  eager?: boolean;
}

const DEFAULT_TIMEOUT_MS = 120_000;
/** Extra wait on the control side beyond the node-side timeout before giving up on a silent node. */
const WATCHDOG_SLACK_MS = (KILL_GRACE_S + 3) * 1000;
/**
 * How long a command waits for one of its connection's runners to come free, once all are busy, before
 * it opens an exec channel instead (`runnerWaitMs`). A runner's command costs the node about 0.5 ms of
 * CPU and an exec channel 4–9 ms (a session process, a login shell, `timeout`, `sh -c`) and answers
 * later, so a short command queued behind short ones is served sooner by waiting (with 10 commands in
 * flight on 5 nodes, the 5 % that found their node's runners busy were most of the p99); one stuck
 * behind long commands loses at most this long.
 */
const DEFAULT_RUNNER_WAIT_MS = 10;

function tempTransferPath(): string {
  return `/tmp/.faultline-transfer-${randomBytes(8).toString('hex')}`;
}

/** One pooled connection per node, reopened lazily after it drops. */
class NodeSession {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  readonly channels: Semaphore;
  /** Channels open per connection, and connections to end once their last channel closes. */
  private readonly openChannels = new Map<Client, number>();
  private readonly retiring = new Set<Client>();
  /** Idle runners, and how many runners each connection has open. */
  private idleRunners: CommandRunner[] = [];
  private readonly runnerCount = new Map<Client, number>();
  /** How many of them are root runners. */
  private readonly rootCount = new Map<Client, number>();
  /** Commands waiting for a busy connection's runner (at most runnerWaitMs), first come first served. */
  private waiters: {
    client: Client;
    root: boolean;
    resolve: (r: CommandRunner | undefined) => void;
  }[] = [];
  /** Runners started with their connection and not yet handed to a command. */
  private warming: { client: Client; runner: Promise<CommandRunner | undefined> }[] = [];
  /** Connections where a runner's shell never reported its mode: exec channels only there. */
  private readonly noRunners = new WeakSet<Client>();
  /** Connections where sudo refused a root runner: sudo commands take exec channels there. */
  private readonly noRootRunners = new WeakSet<Client>();

  constructor(
    readonly spec: NodeSpec,
    private readonly connector: SshConnector,
    maxChannels: number,
    private readonly maxRunners: number,
    private readonly runnerWaitMs: number,
  ) {
    this.channels = new Semaphore(maxChannels);
  }

  /**
   * An idle runner on `c`, else one still starting, else a new one while `c` has fewer than the limit;
   * undefined when all are busy or runners do not start on `c` (the caller then opens an exec channel).
   * Throws when a new runner's channel cannot be opened or is lost while it starts.
   */
  async runner(c: Client): Promise<CommandRunner | undefined> {
    this.idleRunners = this.idleRunners.filter((r) => r.usable);
    // The most recently used first: its processes are the warmest on the node.
    const idle = this.idleRunners.findLastIndex((r) => r.client === c && !r.root);
    if (idle >= 0) return this.idleRunners.splice(idle, 1)[0];
    const warming = this.warming.findIndex((w) => w.client === c);
    if (warming >= 0) {
      const r = await this.warming.splice(warming, 1)[0]?.runner;
      if (r?.usable) return r;
      r?.close();
    }
    if (this.noRunners.has(c)) return undefined;
    if ((this.runnerCount.get(c) ?? 0) >= this.maxRunners) return this.waitForRunner(c, false);
    return this.startRunner(c);
  }

  /**
   * The first runner of `c` (root or not) released within runnerWaitMs, handed over by `release`; else
   * undefined, and the caller opens an exec channel.
   */
  private waitForRunner(c: Client, root: boolean): Promise<CommandRunner | undefined> {
    if (this.maxRunners === 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = {
        client: c,
        root,
        resolve: (r: CommandRunner | undefined) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(undefined);
      }, this.runnerWaitMs);
      this.waiters.push(waiter);
    });
  }

  /** Waiters on `c` (on every connection when none is named) sent to exec channels: it is going away. */
  private releaseWaiters(c?: Client): void {
    const gone = this.waiters.filter((w) => c === undefined || w.client === c);
    this.waiters = this.waiters.filter((w) => !gone.includes(w));
    for (const w of gone) w.resolve(undefined);
  }

  /**
   * A root runner for a login user that is not root: sudo asked once for the runner's life rather than
   * once per command (with a password, each ask cost 2–7 s on emulated guests). Started on the first
   * sudo command, never ahead: a user without sudo rights would otherwise see refusals logged for
   * commands never asked for. Undefined when all are busy or sudo refused one on `c` (the caller then
   * runs the command with sudo on an exec channel, which reports sudo's own error).
   */
  async rootRunner(c: Client, sudo: RunnerSudo): Promise<CommandRunner | undefined> {
    this.idleRunners = this.idleRunners.filter((r) => r.usable);
    const idle = this.idleRunners.findLastIndex((r) => r.client === c && r.root);
    if (idle >= 0) return this.idleRunners.splice(idle, 1)[0];
    if (this.noRunners.has(c) || this.noRootRunners.has(c)) return undefined;
    if (!this.roomForRootRunner(c))
      return (this.rootCount.get(c) ?? 0) > 0 ? this.waitForRunner(c, true) : Promise.resolve(undefined);
    return this.startRunner(c, sudo);
  }

  /**
   * Whether `c` may open another root runner. Root runners take at most all but one of the connection's
   * runner slots, so the login user keeps one (a slot changing hands costs a sudo check each time, and
   * mixed work would otherwise trade slots back and forth); a full connection makes room by closing an
   * idle user runner, never its last. A user command never closes a root runner: with no user runner
   * free it takes an exec channel.
   */
  private roomForRootRunner(c: Client): boolean {
    const total = this.runnerCount.get(c) ?? 0;
    const roots = this.rootCount.get(c) ?? 0;
    if (roots >= Math.max(1, this.maxRunners - 1)) return false;
    if (total < this.maxRunners) return true;
    const users = total - roots;
    const idle = this.idleRunners.findIndex((r) => r.client === c && !r.root);
    if (idle < 0 || (users <= 1 && this.maxRunners > 1)) return false;
    this.idleRunners.splice(idle, 1)[0]?.close();
    return true;
  }

  /**
   * Start the connection's runners in the background, so that the first commands on it, and the first
   * ones run side by side, do not each wait for a runner's shell and watchdog to come up.
   */
  private warm(c: Client): void {
    for (let i = 0; i < this.maxRunners; i++) {
      const runner = this.startRunner(c).catch((err: Error) => {
        log().debug({ node: this.spec.name, err: err.message }, 'command runner did not start');
        return undefined;
      });
      const entry = { client: c, runner };
      this.warming.push(entry);
      void entry.runner.then((r) => {
        const at = this.warming.indexOf(entry);
        if (at < 0) return; // a command took it
        this.warming.splice(at, 1);
        if (r) this.release(r);
      });
    }
  }

  private async startRunner(c: Client, sudo?: RunnerSudo): Promise<CommandRunner | undefined> {
    const counts = sudo ? [this.runnerCount, this.rootCount] : [this.runnerCount];
    const add = (n: number) => {
      for (const m of counts) m.set(c, (m.get(c) ?? 0) + n);
    };
    add(1);
    let opened = false;
    try {
      const runner = await CommandRunner.start(
        c,
        (command, onStream) =>
          openExec(c, command, (stream) => {
            opened = true;
            this.hold(c, stream);
            stream.once('close', () => add(-1));
            onStream(stream);
          }),
        sudo,
      );
      log().debug({ node: this.spec.name, fast: runner.fast, root: runner.root }, 'command runner started');
      return runner;
    } catch (err) {
      if (!opened) add(-1);
      if (err instanceof RunnerSudoError) {
        this.noRootRunners.add(c);
        log().warn(
          { node: this.spec.name, err: err.message },
          'root command runners disabled on this connection',
        );
        return undefined;
      }
      if (!(err instanceof RunnerStartError)) throw err;
      this.noRunners.add(c);
      log().warn({ node: this.spec.name, err: err.message }, 'command runners disabled on this connection');
      return undefined;
    }
  }

  /**
   * A runner back from a command: handed to the first command waiting for one like it, else kept while
   * its connection is the current one, else closed.
   */
  release(r: CommandRunner): void {
    if (!(r.usable && r.client === this.client)) {
      r.close();
      return;
    }
    const waiter = this.waiters.findIndex((w) => w.client === r.client && w.root === r.root);
    if (waiter >= 0) this.waiters.splice(waiter, 1)[0]?.resolve(r);
    else this.idleRunners.push(r);
  }

  private closeIdleRunners(c?: Client): void {
    this.releaseWaiters(c);
    for (const r of this.idleRunners) if (c === undefined || r.client === c) r.close();
    this.idleRunners = this.idleRunners.filter((r) => r.usable);
  }

  get(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connector
      .connect(this.spec)
      .then((c) => {
        this.client = c;
        // Small request/response exchanges: Nagle plus delayed ACKs would add ~40 ms to every command.
        c.setNoDelay(true);
        this.warm(c);
        c.on('close', () => {
          if (this.client === c) this.client = undefined;
          this.openChannels.delete(c);
          this.retiring.delete(c);
        });
        // After ready, errors (keepalive timeout, reset) are followed by 'close'; just note them.
        c.on('error', (err) =>
          log().debug({ node: this.spec.name, err: err.message }, 'ssh connection error'),
        );
        return c;
      })
      .finally(() => {
        this.connecting = undefined;
      });
    return this.connecting;
  }

  /** Count a channel on `c` until it closes. */
  hold(c: Client, channel: { once(event: 'close', listener: () => void): unknown }): void {
    this.openChannels.set(c, (this.openChannels.get(c) ?? 0) + 1);
    channel.once('close', () => {
      const left = (this.openChannels.get(c) ?? 1) - 1;
      if (left > 0) {
        this.openChannels.set(c, left);
        return;
      }
      this.openChannels.delete(c);
      if (this.retiring.delete(c)) endSoon(c);
    });
  }

  /**
   * Stop using a connection that misbehaves (e.g. refuses a channel) so the next use reconnects. Commands
   * still running on it finish first: ending it now would turn each of them into "connection lost, it may
   * or may not have run", an indeterminate result the harness itself caused.
   */
  discard(c: Client): void {
    if (this.client === c) this.client = undefined;
    this.closeIdleRunners(c);
    if ((this.openChannels.get(c) ?? 0) > 0) this.retiring.add(c);
    else endSoon(c);
  }

  close(): void {
    this.closeIdleRunners();
    for (const c of new Set([...this.retiring, ...(this.client ? [this.client] : [])])) endSoon(c);
    this.retiring.clear();
    this.openChannels.clear();
    this.client = undefined;
  }
}

/**
 * A clean SSH disconnect, then the socket destroyed after a short grace: a peer that vanished (a killed VM,
 * a namespace torn down) never answers the FIN, and its half-closed socket would hold the process open
 * until TCP gives up minutes later.
 */
function endSoon(c: Client): void {
  c.end();
  setTimeout(() => c.destroy(), 2000).unref();
}

/**
 * Open an exec channel and hand it to `onStream` synchronously inside ssh2's callback: the exit status
 * and close of a fast command can arrive in the same packet batch as the open confirmation, and an
 * 'exit' emitted before listeners are attached is lost for good.
 */
function openExec(client: Client, command: string, onStream: (stream: ClientChannel) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      client.exec(command, (err, stream) => {
        if (err) {
          reject(err);
          return;
        }
        onStream(stream);
        resolve();
      });
    } catch (err) {
      reject(err); // ssh2 throws synchronously when the connection is already gone
    }
  });
}

function openSftp(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => {
    try {
      client.sftp((err, sftp) => (err ? reject(err) : resolve(sftp)));
    } catch (err) {
      reject(err);
    }
  });
}

class SshRemote implements Remote {
  readonly nodes: readonly NodeSpec[];
  private readonly sessions = new Map<string, NodeSession>();
  private readonly redactor = new Redactor();
  private readonly commandLog: CommandLog;
  private readonly defaultTimeoutMs: number;
  private readonly connector: SshConnector;

  constructor(nodes: readonly NodeSpec[], opts: RemoteOptions) {
    this.nodes = nodes;
    const connector = new SshConnector(opts);
    this.connector = connector;
    const maxChannels = Math.min(Math.max(1, opts.maxChannels ?? 6), 9);
    const maxRunners = Math.max(0, Math.min(opts.commandRunners ?? 3, 9 - maxChannels));
    const wait = Math.max(0, opts.runnerWaitMs ?? DEFAULT_RUNNER_WAIT_MS);
    for (const n of nodes) {
      if (this.sessions.has(n.name)) throw new RemoteError(n.name, 'node name appears twice');
      this.sessions.set(n.name, new NodeSession(n, connector, maxChannels, maxRunners, wait));
      if (n.passwordEnv) this.redactor.add(process.env[n.passwordEnv]);
      if (n.sudoPasswordEnv) this.redactor.add(process.env[n.sudoPasswordEnv]);
    }
    this.commandLog = new CommandLog(opts.logDir, this.redactor);
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  node(name: string): NodeSpec {
    return this.session(name).spec;
  }

  commandLogPath(node: string): string | null {
    return this.commandLog.pathOf(node);
  }

  knownHostsFiles(): string[] {
    return this.connector.knownHostsFiles();
  }

  private session(name: string): NodeSession {
    const s = this.sessions.get(name);
    if (!s) throw new RemoteError(name, `no such node (known: ${[...this.sessions.keys()].join(', ')})`);
    return s;
  }

  async connectAll(): Promise<void> {
    const results = await this.onNodes(
      this.nodes.map((n) => n.name),
      (n) => this.session(n).get(),
    );
    const failed = results.find((r) => !r.ok);
    if (failed) throw failed.error;
  }

  async exec(node: string, command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const session = this.session(node);
    const spec = session.spec;
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    const sudoPassword =
      opts.sudo && spec.user !== 'root' && spec.sudoPasswordEnv
        ? process.env[spec.sudoPasswordEnv]
        : undefined;
    if (opts.sudo && spec.user !== 'root' && spec.sudoPasswordEnv && sudoPassword === undefined) {
      throw new RemoteError(
        node,
        `environment variable ${spec.sudoPasswordEnv} (sudoPasswordEnv) is not set`,
      );
    }
    const sudo = needsSudo(spec, opts);
    const wire = buildRemoteCommand(spec, command, opts, timeoutMs, sudoPassword !== undefined);
    const logged: Omit<CommandLogEntry, 'code' | 'durationMs' | 'outcome'> = {
      node,
      command,
      sudo: opts.sudo ?? false,
      envKeys: Object.keys(opts.env ?? {}),
    };
    const redacted = this.redactor.apply(command);

    await session.channels.acquire();
    const start = performance.now();
    try {
      // A refused channel, or a runner that did not start the command, means nothing ran, so one fresh
      // connection and a second attempt are safe. Connect errors (auth, host key) come from
      // session.get() and are never retried here.
      const outcome = await retry(
        async () => {
          const client = await session.get();
          const runner =
            opts.stdin === undefined
              ? await (sudo
                  ? session.rootRunner(client, sudoPassword === undefined ? {} : { password: sudoPassword })
                  : session.runner(client)
                ).catch((err: Error) => {
                  session.discard(client);
                  throw new RemoteChannelError(node, `cannot open a channel: ${err.message}`);
                })
              : undefined;
          logged.via = runner ? (runner.root ? 'root runner' : 'runner') : 'exec';
          if (runner) {
            // A root runner is root already: the command takes the form it has for a root login.
            const job: RunnerJob = {
              script: remoteScript(command, opts),
              timeoutMs,
              argv: remoteArgv(spec, command, sudo ? { ...opts, sudo: false } : opts, timeoutMs, false),
            };
            return this.runOn(session, runner, job, redacted);
          }
          try {
            let collected: Promise<Collected> | undefined;
            await openExec(client, wire, (stream) => {
              session.hold(client, stream);
              collected = this.collect(node, stream, opts.stdin, sudoPassword, timeoutMs, redacted);
            });
            if (!collected) throw new Error('channel opened without a stream');
            return { collected };
          } catch (err) {
            session.discard(client);
            throw new RemoteChannelError(node, `cannot open a channel: ${(err as Error).message}`);
          }
        },
        { attempts: 2, retryable: (err) => err instanceof RemoteChannelError, delayMs: () => 0 },
      );
      const out = await outcome.collected;
      const durationMs = performance.now() - start;
      if (looksTimedOut(out.code, durationMs, timeoutMs) || out.watchdog) {
        this.commandLog.write({ ...logged, code: out.code, durationMs, outcome: 'timeout' });
        throw new RemoteTimeoutError(node, redacted, timeoutMs);
      }
      const result: ExecResult = {
        node,
        command: redacted,
        stdout: this.redactor.apply(out.stdout),
        stderr: this.redactor.apply(out.stderr),
        code: out.code,
        durationMs,
      };
      this.commandLog.write({
        ...logged,
        code: out.code,
        durationMs,
        outcome: out.code === 0 ? 'ok' : 'nonzero',
      });
      log().trace({ node, code: out.code, ms: Math.round(durationMs), cmd: abbreviate(redacted) }, 'exec');
      if (out.code !== 0 && (opts.check ?? true)) {
        throw new RemoteCommandError(node, redacted, out.code, result.stdout, result.stderr);
      }
      return result;
    } catch (err) {
      if (err instanceof RemoteChannelError) {
        this.commandLog.write({
          ...logged,
          code: null,
          durationMs: performance.now() - start,
          outcome: 'channel-error',
        });
      }
      throw err;
    } finally {
      session.channels.release();
    }
  }

  /**
   * Run on a runner. Lost before the runner printed its start line: the command never began, so the
   * error is a retryable RemoteChannelError (the connection is dropped first). Lost after: the outcome
   * is unknown, reported as it is for an exec channel, outside the retry.
   */
  private async runOn(
    session: NodeSession,
    runner: CommandRunner,
    job: RunnerJob,
    redacted: string,
  ): Promise<{ collected: Promise<Collected> }> {
    const node = session.spec.name;
    try {
      const out = await runner.run(job, job.timeoutMs > 0 ? job.timeoutMs + WATCHDOG_SLACK_MS : 0);
      session.release(runner);
      return { collected: Promise.resolve(out) };
    } catch (err) {
      if (!(err instanceof RunnerLostError)) throw err;
      if (!err.started) {
        session.discard(runner.client);
        throw new RemoteChannelError(node, `the command runner went away before starting: ${err.message}`);
      }
      const lost = new RemoteChannelError(
        node,
        `connection lost during ${abbreviate(redacted)}; it may or may not have run`,
      );
      return { collected: Promise.reject(lost) };
    }
  }

  /**
   * Read the whole channel. Both stdout and stderr must be drained or `close` never fires, and `exit`
   * may arrive before the last data, so the result is assembled on `close`.
   */
  private collect(
    node: string,
    stream: ClientChannel,
    stdin: string | Uint8Array | undefined,
    sudoPassword: string | undefined,
    timeoutMs: number,
    redacted: string,
  ): Promise<Collected> {
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let code: number | null = null;
      let signal: string | undefined;
      let watchdog = false;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              // The remote `timeout` should have ended it already; the node is not answering.
              watchdog = true;
              stream.close();
            }, timeoutMs + WATCHDOG_SLACK_MS)
          : undefined;
      stream.on('data', (d: Buffer) => out.push(d));
      stream.stderr.on('data', (d: Buffer) => err.push(d));
      stream.on('exit', (c: number | null, sig?: string) => {
        code = c;
        signal = sig;
      });
      stream.on('error', (e: Error) => {
        clearTimeout(timer);
        reject(new RemoteChannelError(node, `channel failed during ${abbreviate(redacted)}: ${e.message}`));
      });
      stream.on('close', () => {
        clearTimeout(timer);
        if (code === null && signal === undefined && !watchdog) {
          reject(
            new RemoteChannelError(
              node,
              `connection lost during ${abbreviate(redacted)}; it may or may not have run`,
            ),
          );
          return;
        }
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          // Killed by a signal: report it the way a shell would (128 + signal number).
          code: code ?? (signal ? 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0) : -1),
          watchdog,
        });
      });
      if (sudoPassword !== undefined) stream.write(`${sudoPassword}\n`);
      if (stdin !== undefined) stream.write(stdin);
      stream.end(); // EOF on stdin so commands that read it finish
    });
  }

  async upload(
    node: string,
    localPath: string,
    remotePath: string,
    opts: TransferOptions = {},
  ): Promise<void> {
    if (!opts.sudo) {
      await this.transfer(node, 'upload', localPath, remotePath);
      return;
    }
    // SFTP runs as the login user: land in a private temp file, then copy into place as root.
    const tmp = tempTransferPath();
    try {
      await this.transfer(node, 'upload', localPath, tmp);
      await this.exec(node, `cp ${shellQuote(tmp)} ${shellQuote(remotePath)}`, { sudo: true });
    } finally {
      await this.exec(node, `rm -f ${shellQuote(tmp)}`, { sudo: true, check: false }).catch(() => undefined);
    }
  }

  async download(
    node: string,
    remotePath: string,
    localPath: string,
    opts: TransferOptions = {},
  ): Promise<void> {
    if (!opts.sudo) {
      await this.transfer(node, 'download', remotePath, localPath);
      return;
    }
    const tmp = tempTransferPath();
    try {
      // Copied as root and made readable so the login user's SFTP session can fetch it.
      await this.exec(
        node,
        `cp ${shellQuote(remotePath)} ${shellQuote(tmp)} && chmod 0644 ${shellQuote(tmp)}`,
        {
          sudo: true,
        },
      );
      await this.transfer(node, 'download', tmp, localPath);
    } finally {
      await this.exec(node, `rm -f ${shellQuote(tmp)}`, { sudo: true, check: false }).catch(() => undefined);
    }
  }

  private async transfer(node: string, dir: 'upload' | 'download', from: string, to: string): Promise<void> {
    const session = this.session(node);
    await session.channels.acquire();
    const start = performance.now();
    let sftp: SFTPWrapper | undefined;
    try {
      const client = await session.get();
      try {
        sftp = await openSftp(client);
        session.hold(client, sftp);
      } catch (err) {
        session.discard(client);
        throw new RemoteChannelError(node, `cannot open SFTP: ${(err as Error).message}`);
      }
      const s = sftp;
      await new Promise<void>((resolve, reject) => {
        const cb = (e: Error | null | undefined) =>
          e ? reject(new RemoteError(node, `${dir} ${from} → ${to} failed: ${e.message}`)) : resolve();
        if (dir === 'upload') s.fastPut(from, to, cb);
        else s.fastGet(from, to, cb);
      });
      this.commandLog.write({
        node,
        command: `${dir} ${from} ${to}`,
        code: 0,
        durationMs: performance.now() - start,
        sudo: false,
        envKeys: [],
        outcome: dir,
      });
    } finally {
      sftp?.end(); // an SFTP session holds a channel until ended
      session.channels.release();
    }
  }

  async onNodes<T>(nodes: readonly string[], fn: (node: string) => Promise<T>): Promise<NodeResult<T>[]> {
    return Promise.all(
      nodes.map(async (node): Promise<NodeResult<T>> => {
        try {
          return { node, ok: true, value: await fn(node) };
        } catch (error) {
          return { node, ok: false, error: error instanceof Error ? error : new Error(String(error)) };
        }
      }),
    );
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) s.close();
    await this.commandLog.close();
  }
}

/**
 * Connect to a cluster. With `eager` (the default) every node is dialled in parallel now and the first
 * failure is thrown (a typed RemoteError naming the node); otherwise nodes connect on first use.
 */
export async function connectRemote(nodes: readonly NodeSpec[], opts: RemoteOptions = {}): Promise<Remote> {
  const remote = new SshRemote(nodes, opts);
  if (opts.eager ?? true) {
    try {
      await remote.connectAll();
    } catch (err) {
      await remote.close();
      throw err;
    }
  }
  return remote;
}
