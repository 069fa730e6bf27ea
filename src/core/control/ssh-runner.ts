import { randomBytes } from 'node:crypto';
import type { Client, ClientChannel } from 'ssh2';
import { shellQuote } from './quote.ts';
import { KILL_GRACE_S } from './remote-command.ts';

/** What a finished command left: its output, exit code, and whether the control side gave up on it. */
export interface Collected {
  stdout: string;
  stderr: string;
  code: number;
  watchdog: boolean;
}

/** A runner's channel opened but its shell never reported its mode; exec channels may still work. */
export class RunnerStartError extends Error {}

/** Why a runner command failed without an exit code. `started` says whether the node had begun it. */
export class RunnerLostError extends Error {
  constructor(
    message: string,
    readonly started: boolean,
  ) {
    super(message);
  }
}

/** One command for a runner, in both forms it may take on the node. */
export interface RunnerJob {
  /** The shell text to run, its env and cwd prefix included: what `sh -c` would be given. */
  script: string;
  /** Node-side timeout in ms (0: none). */
  timeoutMs: number;
  /** The command as an exec channel runs it: `timeout -k … sh -c '<script>'`, never with sudo (a root
   * runner is root already). */
  argv: string;
}

/** How long a new runner may take to report its mode. */
const START_TIMEOUT_MS = 15_000;
/**
 * How long sudo may take to let a root runner in. Checking a password is deliberately slow (yescrypt on
 * Debian 12), and on an emulated guest it took 2–7 s per check: the price a root runner pays once, where
 * an exec channel pays it for every command.
 */
const SUDO_START_TIMEOUT_MS = 60_000;

/** A runner that is root through sudo: how its login user gets there. */
export interface RunnerSudo {
  /** Given once, when sudo prompts for it; undefined: sudo must not ask (`-n`). */
  password?: string;
}

/** sudo refused a root runner (a wrong password, no sudo right, no sudo): root runners stay off there. */
export class RunnerSudoError extends RunnerStartError {}

/**
 * Scripts the subshell form would change, so they run as `argv`: `$$` and `$PPID` would name the runner
 * rather than the command's own shell (and `$!` its last background job), and a background job (`&`,
 * but not `&&`, `>&`, `<&` or `|&`) would stay in the runner's process group, where a later command's
 * timeout would signal it. A false positive (an `&` inside quotes) only costs the slower form.
 */
const NEEDS_OWN_SHELL = /\$\{?#?[$!]|PPID|(?:^|[^&<>|])&(?!&)/;

/** The form `job` takes on a runner: a subshell of the runner (fast mode only), or its `argv`. */
export function runnerForm(fast: boolean, job: RunnerJob): 'subshell' | 'argv' {
  return fast && !NEEDS_OWN_SHELL.test(job.script) ? 'subshell' : 'argv';
}

/**
 * How often a watchdog looks at what its runner wrote, at the latest (s). A command with a timeout of at
 * least this does not wake the watchdog as it starts: the watchdog learns of it at its next look, from
 * the start stamp the runner wrote, in time for its deadline. A shorter timeout rings the bell (fd 3).
 * Waking the watchdog for every command was about a sixth of a runner command's CPU on the node and one
 * more process to schedule between the command and its answer.
 */
const WATCH_POLL_S = 1;
/** A bell every so many commands all the same, so that what the runner writes never fills the FIFO. */
const BELL_EVERY = 64;

/**
 * The watchdog of a fast runner: one bash per runner, started once under setsid, so in a session and
 * process group of its own, out of reach of the signals it sends to the runner's group. (Started as a
 * job of a bash with `set -m` it gets a group of its own without the exec of setsid, but shares the
 * runner's session and so its scheduler autogroup; in interleaved bench runs that p99 was the same or
 * higher.) Its fds:
 * 7 reads, in order, `L<number> <seconds> <uptime>` as each timed command starts (its number, its
 * timeout, and /proc/uptime as the runner read it just before) and `D` as it ends; the watchdog reads
 * them when it looks (at least every WATCH_POLL_S, and whenever the bell rings), never blocking on them.
 * 3 is the bell: a byte wakes it, EOF says the runner exited. 4 answers the runner (`K`: in time, `T`:
 * timed out) and doubles as its timer once the runner is gone (nothing to read there while it naps), 5
 * and 6 are the channel's stdout and stderr. bash reads a pipe a byte at a time (with `-t`, a pselect and
 * two sigprocmasks besides each read), so the messages are short: a command's number, not its nonce (the
 * runner's nonce prefix is in the watchdog's script as P, never on a command line).
 *
 * The deadline is the start stamp plus the timeout, rounded up to the stamp's 10 ms (never early; a
 * missing stamp counts from when the watchdog read the message: late, never early). At a deadline with
 * the command's `D` still missing it first sends USR1 to the runner (which will then wait for its answer
 * before reporting or starting anything), looks for the `D` once more, and only then sends TERM to the
 * runner's process group: the runner traps it; the command and what it started in the group get it. So
 * a TERM can never reach a later command, and a command is reported as timed out (124) or in time, never
 * both. A command still running KILL_GRACE_S later is killed with the whole group, runner included, and
 * the watchdog prints the end markers itself: exit 137 and `end` (the runner is gone). EOF on the bell
 * means the runner exited: it quits, after keeping the deadline of a command the runner left running.
 */
const WATCHDOG = `R=$2 G=$3 c=0 m=0 dl=0 t=0
((BASH_VERSINFO[0] >= 4)) || exit
alive() { kill -0 -- "-$R"; }
nap() { read -r -t "$1" -u 4 _; }
now() { read -r t _ </proc/uptime; t=$((10#\${t/./})); }
drain() {
  while read -r -t 0 -u 7 && read -r -u 7 op a b; do
    if [[ $op == D ]]; then ((m++)); continue; fi
    [[ $op == L* ]] || continue
    ((c++)); n=\${op#L}
    if [[ $b =~ ^[0-9]+\\.[0-9][0-9]$ ]]; then t0=$((10#\${b/./})); else now; t0=$t; fi
    dl=$((t0 + (10#\${a/./} + 9) / 10 + 1))
  done
}
ended() { drain; ((m >= c)); }
printf 'R\\n' >&4
while :; do
  w=${WATCH_POLL_S}
  if ! ended; then
    now
    if ((t >= dl)); then
      kill -USR1 "$R"
      if ended; then printf 'K\\n' >&4; continue; fi
      kill -TERM -- "-$R"
      if read -r -u 7 -t "$G" _; then ((m++)); printf 'T\\n' >&4; continue; fi
      kill -KILL -- "-$R"
      for ((i = 0; i < 100; i++)); do alive || break; nap 0.01; done
      printf 'E%sn%s 137 end\\n' "$P" "$n" >&5
      printf 'E%sn%s\\n' "$P" "$n" >&6
      exit
    fi
    ((dl - t < ${WATCH_POLL_S} * 100)) && printf -v w '%d.%02d' $(((dl - t) / 100)) $(((dl - t) % 100))
  fi
  read -r -u 3 -t "$w" -n 1 _
  rc=$?
  ((rc == 0 || rc > 128)) && continue
  ended && exit
  now
  while ((t < dl)) && alive; do nap 0.2; now; done
  if alive; then
    kill -TERM -- "-$R"
    for ((i = 0; i < G * 10; i++)); do alive || break; nap 0.1; done
    kill -KILL -- "-$R"
  fi
  exit
done
`;

/**
 * What a new runner (`sh`, under sshd) runs first. It keeps the channel's stderr on fd 7 for commands and
 * markers and sends its own to /dev/null (the shell's job reports, such as "Terminated" for a subshell
 * killed at its deadline, are not the command's output). The fast mode needs bash (the watchdog's
 * `read -t`), setsid, mkfifo, a readable /proc/uptime (the start stamps), and the runner leading its own
 * process group (sshd makes each session one). Three FIFOs, named after the nonce, connect runner and watchdog
 * and are unlinked (in the background) once both ends are open, so nothing is left on disk. No open
 * blocks (the runner holds both ends first), and the runner's lasting ends (fd 8 rings the bell, fd 6
 * writes `L` and `D`, fd 9 reads answers) have the watchdog as their only peer: once it is gone, the
 * runner's next `L` is a SIGPIPE and an answer it waits for an EOF. USR1 (from the watchdog: a deadline passed, wait for
 * its answer) sets fl_p. Anything missing: the slow mode, every command as `argv`. Prints
 * `M<nonce> fast|slow`. Costs the node, once per runner, an exec of mkfifo, setsid, bash and rm.
 */
function bootstrap(nonce: string, prefix: string): string {
  return `exec 7>&2 2>/dev/null
fl_m=slow fl_f="\${TMPDIR:-/tmp}/.faultline-runner-${nonce}"
if command -v bash >/dev/null && command -v setsid >/dev/null && command -v mkfifo >/dev/null &&
  read -r fl_g fl_g fl_g fl_g fl_g fl_x </proc/$$/stat && [ "$fl_g" = "$$" ] &&
  mkfifo -m 600 "$fl_f.q" "$fl_f.d" "$fl_f.a" &&
  command exec 3<>"$fl_f.q" 4<>"$fl_f.a" 5<>"$fl_f.d" 8>"$fl_f.q" 9<"$fl_f.a" 6>"$fl_f.d"; then
  BASH_ENV= LC_ALL=C setsid bash -s faultline-runner-watchdog $$ ${KILL_GRACE_S} \\
    3<"$fl_f.q" 4<>"$fl_f.a" 5>&1 6>&7 7<"$fl_f.d" 8>&- 9<&- >/dev/null <<'FL_WATCHDOG' &
P=${prefix}
${WATCHDOG}FL_WATCHDOG
  exec 3>&- 4>&- 5>&-
  read -r fl_h <&9 && [ "$fl_h" = R ] && [ -r /proc/uptime ] && fl_m=fast
fi
if [ -p "$fl_f.q" ] || [ -p "$fl_f.d" ] || [ -p "$fl_f.a" ]; then
  rm -f "$fl_f.q" "$fl_f.d" "$fl_f.a" >/dev/null 6>&- 7>&- 8>&- 9<&- &
fi
if [ "$fl_m" = fast ]; then trap : HUP INT QUIT TERM; trap fl_p=1 USR1
else exec 3>&- 4>&- 5>&- 6>&- 8>&- 9<&-; fi
printf '%s %s\\n' M${nonce} "$fl_m"
unset fl_m fl_f fl_g fl_x fl_h
`;
}

/**
 * The exec command of a root runner: sudo once, for the runner's whole life, instead of once per command.
 * The shell under sudo first prints `A<nonce>` (sudo let it in), then becomes the runner under setsid so
 * that it leads a process group of its own (sudo without a pty keeps its command in its own group, and a
 * runner that does not lead its group could not use the fast mode). With a password, sudo prompts with a
 * marker of its own on stderr (`-S`), and the password is written only after that prompt: sudo that does
 * not ask (NOPASSWD, a cached grant) would otherwise leave it for the shell to run as a command. `-p` is
 * free of `%`, which sudo would expand.
 */
export function sudoRunnerCommand(nonce: string, withPassword: boolean): string {
  const inner = `printf '%s\\n' A${nonce}; command -v setsid >/dev/null 2>&1 && exec setsid -w sh; exec sh`;
  const sudo = withPassword ? `sudo -S -p ${sudoPrompt(nonce)}` : 'sudo -n';
  return `exec ${sudo} -- sh -c ${shellQuote(inner)}`;
}

const sudoPrompt = (nonce: string) => `faultline-sudo-${nonce}:`;

/** Read the watchdog's answer into fl_a: three tries, since its USR1 and TERM can each interrupt one. */
const ANSWER = 'read -r fl_a <&9 || read -r fl_a <&9 || read -r fl_a <&9';

/**
 * The line a runner reads for one command. Between the start line and the end markers only the command
 * writes. The command gets stdin /dev/null and the channel's stderr, without the runner's fds 6 to 9; in
 * the subshell form also without the runner's variables. A fast command with a timeout writes the
 * watchdog its start (`L`, stamped with /proc/uptime) before and `D` after, and rings its bell only for
 * a timeout under WATCH_POLL_S (and every BELL_EVERY commands); the runner waits for the watchdog's answer only when its USR1 said a deadline passed (fl_p),
 * and reads it before reporting (`T`: exit 124) or, if the USR1 came later, before the next command. No
 * answer (the watchdog is gone): the runner reports and exits, or exits before starting anything.
 */
function runnerLine(fast: boolean, job: RunnerJob, prefix: string, counter: number): string {
  const number = counter.toString(36);
  const nonce = `${prefix}n${number}`;
  const settle = fast ? `:; [ -z "$fl_p" ] || ${ANSWER} || exit; fl_p=; ` : '';
  const start = `printf '%s\\n' S${nonce}`;
  const end = (status: string) => `printf '%s %s\\n' E${nonce} ${status}; printf '%s\\n' E${nonce} >&7`;
  if (runnerForm(fast, job) === 'argv')
    return `${settle}${start}; ${job.argv} </dev/null 2>&7 6>&- 7>&- 8>&- 9<&-; ${end('"$?"')}\n`;
  const script = shellQuote(job.script);
  // Redirections of a subshell are made in the child only, without the save and restore that an
  // `exec` inside it costs (dash: 8 system calls where `exec 6>&- …` took 20).
  const body = `( unset fl_s fl_a fl_p fl_t; eval ${script} ) </dev/null 2>&7 6>&- 7>&- 8>&- 9<&-`;
  if (job.timeoutMs <= 0) return `${settle}${start}; ${body}; ${end('"$?"')}\n`;
  const seconds = (Math.max(1, job.timeoutMs) / 1000).toFixed(3);
  const bell = job.timeoutMs < WATCH_POLL_S * 1000 || counter % BELL_EVERY === 0 ? 'printf W >&8; ' : '';
  return (
    `${settle}read -r fl_t _ </proc/uptime; printf 'L%s %s %s\\n' ${number} ${seconds} "$fl_t" >&6; ${bell}` +
    `${start}; ${body}; fl_s=$?; ` +
    `printf 'D\\n' >&6; :; if [ -n "$fl_p" ]; then ` +
    `if ${ANSWER}; then [ "$fl_a" != T ] || fl_s=124; else fl_s="$fl_s end"; fi; fl_p=; fi; ` +
    `${end('"$fl_s"')}; case $fl_s in *end) exit ;; esac\n`
  );
}

interface Pending {
  nonce: string;
  started: boolean;
  out: Buffer[];
  err: Buffer[];
  code: number | null;
  stderrDone: boolean;
  watchdog: ReturnType<typeof setTimeout> | undefined;
  resolve: (c: Collected) => void;
  reject: (e: RunnerLostError) => void;
}

interface Starting {
  nonce: string;
  timer: ReturnType<typeof setTimeout>;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** 96 random bits. A runner draws one and numbers its commands after it (a draw per command cost more). */
const newNonce = () => `fl${randomBytes(12).toString('hex')}`;

/**
 * One long-lived `sh` on a node, reached over one SSH exec channel, that runs short commands one after
 * another; a fresh exec channel per command would also cost a session process in sshd, the login shell,
 * and the channel's open and close round trips.
 *
 * Fast mode (a node with bash, setsid and mkfifo): each command runs in a subshell of the runner,
 * `( eval '<script>' ) </dev/null`, a fork without any exec, and its timeout is kept by the runner's
 * watchdog (see WATCHDOG), a bash started once per runner that signals the runner's process group: the
 * command and everything it started that stayed in the group get TERM at the deadline and KILL after
 * KILL_GRACE_S, reported as exit 124 or 137 as GNU timeout does. The watchdog runs on the node, so the
 * deadline holds without the control connection. The subshell is `sh -c` in all that a command can see
 * (variables, cwd, traps, umask, `exit` stay inside it; stdin is /dev/null) except: `$$` and `$PPID`,
 * the shell's own `$-`, and its diagnostics, which read `sh: 1: eval: foo: not found` rather than
 * `sh: 1: foo: not found`. Scripts naming `$$`, `$PPID` or `$!`, scripts with a background job (which
 * would stay in the runner's process group, within reach of a later command's timeout) run as `argv`
 * instead (NEEDS_OWN_SHELL). A login user that is not root reaches root through a root runner of its
 * own (sudo once, when the runner starts: sudoRunnerCommand), whose watchdog can signal what its
 * commands start. A process that outlives its command in the
 * group without `&` (a program that forks and exits, without setsid) gets that TERM too. Slow mode
 * (anything the fast mode needs is missing): every command runs as `argv`, `timeout … sh -c`, an exec
 * of each, as before.
 *
 * Framing: the runner prints a start line `S<nonce>` before the command, and after it
 * `E<nonce> <status>[ end]` on stdout and `E<nonce>` on stderr; the nonce is the runner's random prefix
 * and the command's number, so output cannot forge it. What lies between is the command's own output,
 * byte for byte. `end` says the runner is gone (its command was killed with it, or its watchdog died).
 * The command's stdin is /dev/null (it must not read the runner's script). Commands needing stdin keep
 * using their own exec channel.
 *
 * A command's background processes must not keep writing to the inherited stdout or stderr (in an exec
 * channel the same process would hold the channel open until it exits): their later output would land in
 * the next command's.
 */
export class CommandRunner {
  private pending: Pending | undefined;
  private starting: Starting | undefined;
  private closed = false;
  private outTail: Buffer = Buffer.alloc(0);
  private errTail: Buffer = Buffer.alloc(0);
  /** Command nonces: this runner's random prefix, then the command's number. */
  private readonly noncePrefix = newNonce();
  private commands = 0;
  /** Subshells under the watchdog (true), or every command as its `argv` (false). Set by `start`. */
  fast = false;
  /** Root through sudo (a root runner), not the login user's own shell. */
  readonly root: boolean;
  /**
   * While sudo decides whether to let a root runner in: what the channel said so far (not the runner's
   * output), and who waits for it.
   */
  private entering: { out: Buffer[]; err: Buffer[]; heard?: () => void } | undefined;

  private constructor(
    readonly client: Client,
    private readonly stream: ClientChannel,
    sudo: boolean,
  ) {
    // Set before the first byte can arrive: sudo's prompt may come in the same packet batch as the
    // channel's open confirmation, and is emitted before `start` gets to wait for it.
    this.root = sudo;
    this.entering = sudo ? { out: [], err: [] } : undefined;
    stream.on('data', (d: Buffer) => this.onStdout(d));
    stream.stderr.on('data', (d: Buffer) => this.onStderr(d));
    stream.on('error', () => this.lost('the runner channel failed'));
    stream.on('close', () => this.lost('connection lost'));
  }

  /**
   * Starts a runner on `client` with `open`, the caller's way of opening an exec channel. With `sudo`, a
   * root runner: the login user's sudo is asked once, here (see sudoRunnerCommand).
   */
  static async start(
    client: Client,
    open: (command: string, onStream: (s: ClientChannel) => void) => Promise<void>,
    sudo?: RunnerSudo,
  ): Promise<CommandRunner> {
    let runner: CommandRunner | undefined;
    const nonce = newNonce();
    const command = sudo ? sudoRunnerCommand(nonce, sudo.password !== undefined) : 'exec sh';
    await open(command, (stream) => {
      runner = new CommandRunner(client, stream, sudo !== undefined);
    });
    if (!runner) throw new Error('runner channel opened without a stream');
    if (sudo) await runner.enter(nonce, sudo);
    await runner.boot();
    return runner;
  }

  /**
   * Wait until sudo has let the runner's shell in (its `A<nonce>` line), writing the password once when
   * sudo prompts for it. A second prompt means the password was refused: the channel is closed at once,
   * so sudo never reads anything else as a password. What sudo printed (never the password: sudo does
   * not echo it) goes into the error.
   */
  private enter(nonce: string, sudo: RunnerSudo): Promise<void> {
    const entering = this.entering;
    if (!entering) return Promise.resolve();
    const prompt = Buffer.from(sudoPrompt(nonce));
    const admitted = Buffer.from(`A${nonce}\n`);
    let prompts = 0;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.stream.off('close', onClose);
        this.entering = undefined;
      };
      const fail = (why: string) => {
        done();
        this.close();
        const said = Buffer.concat(entering.err)
          .toString('utf8')
          .split(prompt.toString())
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim();
        reject(
          new RunnerSudoError(
            `sudo did not start a root command runner: ${why}${said ? ` (sudo: ${said})` : ''}`,
          ),
        );
      };
      const heard = () => {
        if (Buffer.concat(entering.out).indexOf(admitted) >= 0) {
          // Anything after the line is the runner's own output, which starts only once it is booted.
          done();
          resolve();
          return;
        }
        const err = Buffer.concat(entering.err);
        let seen = 0;
        for (let at = err.indexOf(prompt); at >= 0; at = err.indexOf(prompt, at + prompt.length)) seen++;
        if (seen <= prompts) return;
        prompts = seen;
        // A second prompt: the password was refused. Close at once, so that sudo reads nothing else.
        if (prompts > 1 || sudo.password === undefined) fail('the sudo password was refused');
        else this.stream.write(`${sudo.password}\n`);
      };
      const onClose = () => fail('sudo exited');
      const timer = setTimeout(
        () => fail(`no answer within ${SUDO_START_TIMEOUT_MS / 1000} s`),
        SUDO_START_TIMEOUT_MS,
      );
      this.stream.on('close', onClose);
      entering.heard = heard;
      heard(); // what came before `start` got here
    });
  }

  private boot(): Promise<void> {
    const nonce = newNonce();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.starting = undefined;
        this.close();
        reject(new RunnerStartError(`the command runner did not start within ${START_TIMEOUT_MS / 1000} s`));
      }, START_TIMEOUT_MS);
      this.starting = { nonce, timer, resolve, reject };
      this.stream.write(bootstrap(nonce, this.noncePrefix));
    });
  }

  get usable(): boolean {
    return !this.closed && this.pending === undefined && this.starting === undefined;
  }

  /**
   * Run `job`. `watchdogMs` > 0: give up (and close the runner) when no end marker has come by then.
   */
  run(job: RunnerJob, watchdogMs: number): Promise<Collected> {
    if (!this.usable) return Promise.reject(new RunnerLostError('runner busy or closed', false));
    const counter = ++this.commands;
    const nonce = `${this.noncePrefix}n${counter.toString(36)}`;
    const line = runnerLine(this.fast, job, this.noncePrefix, counter);
    return new Promise((resolve, reject) => {
      const p: Pending = {
        nonce,
        started: false,
        out: [],
        err: [],
        code: null,
        stderrDone: false,
        watchdog: undefined,
        resolve,
        reject,
      };
      if (watchdogMs > 0)
        p.watchdog = setTimeout(() => {
          // The node-side timeout should have ended it already; the node is not answering.
          this.pending = undefined;
          resolve({ ...this.text(p), code: -1, watchdog: true });
          this.close();
        }, watchdogMs);
      this.pending = p;
      this.outTail = Buffer.alloc(0);
      this.errTail = Buffer.alloc(0);
      this.stream.write(line);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.close();
  }

  private text(p: Pending): { stdout: string; stderr: string } {
    return { stdout: Buffer.concat(p.out).toString('utf8'), stderr: Buffer.concat(p.err).toString('utf8') };
  }

  private onStarting(s: Starting, d: Buffer): void {
    const buf = Buffer.concat([this.outTail, d]);
    const mark = Buffer.from(`M${s.nonce} `);
    const at = buf.indexOf(mark);
    const nl = at < 0 ? -1 : buf.indexOf(10, at + mark.length);
    if (nl < 0) {
      this.outTail = buf;
      return;
    }
    this.outTail = Buffer.alloc(0);
    this.fast = buf.subarray(at + mark.length, nl).toString('latin1') === 'fast';
    clearTimeout(s.timer);
    this.starting = undefined;
    s.resolve();
  }

  private onStdout(d: Buffer): void {
    if (this.entering) {
      this.entering.out.push(d);
      this.entering.heard?.();
      return;
    }
    if (this.starting) {
      this.onStarting(this.starting, d);
      return;
    }
    const p = this.pending;
    if (!p) return;
    let buf = Buffer.concat([this.outTail, d]);
    if (!p.started) {
      const start = Buffer.from(`S${p.nonce}\n`);
      const at = buf.indexOf(start);
      if (at < 0) {
        this.outTail = buf;
        return;
      }
      p.started = true;
      buf = buf.subarray(at + start.length);
    }
    const end = Buffer.from(`E${p.nonce} `);
    const at = buf.indexOf(end);
    if (at < 0) {
      // Keep a tail long enough to hold a marker split across two packets; the rest is output.
      const keep = Math.min(buf.length, end.length + 4);
      p.out.push(buf.subarray(0, buf.length - keep));
      this.outTail = Buffer.from(buf.subarray(buf.length - keep));
      return;
    }
    const nl = buf.indexOf(10, at + end.length);
    if (nl < 0) {
      this.outTail = Buffer.from(buf); // the status line is not complete yet
      return;
    }
    p.out.push(buf.subarray(0, at));
    const [status, flag] = buf
      .subarray(at + end.length, nl)
      .toString('latin1')
      .split(' ');
    p.code = Number(status);
    // `end`: the runner is gone (killed with its command, or its watchdog died); never reuse it.
    if (flag === 'end') this.closed = true;
    this.outTail = Buffer.alloc(0);
    this.finishIfDone(p);
  }

  private onStderr(d: Buffer): void {
    if (this.entering) {
      this.entering.err.push(d);
      this.entering.heard?.();
      return;
    }
    const p = this.pending;
    if (!p) return;
    const buf = Buffer.concat([this.errTail, d]);
    const end = Buffer.from(`E${p.nonce}\n`);
    const at = buf.indexOf(end);
    if (at < 0) {
      const keep = Math.min(buf.length, end.length);
      p.err.push(buf.subarray(0, buf.length - keep));
      this.errTail = Buffer.from(buf.subarray(buf.length - keep));
      return;
    }
    p.err.push(buf.subarray(0, at));
    p.stderrDone = true;
    this.errTail = Buffer.alloc(0);
    this.finishIfDone(p);
  }

  private finishIfDone(p: Pending): void {
    if (p.code === null || !p.stderrDone) return;
    clearTimeout(p.watchdog);
    this.pending = undefined;
    p.resolve({ ...this.text(p), code: p.code, watchdog: false });
    if (this.closed) this.stream.close();
  }

  private lost(why: string): void {
    this.closed = true;
    const s = this.starting;
    if (s) {
      this.starting = undefined;
      clearTimeout(s.timer);
      s.reject(new Error(`the command runner did not start: ${why}`));
    }
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.watchdog);
    p.reject(new RunnerLostError(why, p.started));
  }
}
