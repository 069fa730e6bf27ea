import type { NemesisDriver } from '../../../nemeses/types.ts';
import type { Rng } from '../../core/generator/rng.ts';
import {
  type Context,
  type GenEvent,
  type Generator,
  type GenOp,
  PENDING,
  type ThreadId,
} from '../../core/generator/types.ts';
import type { EventType, HistoryEvent, ProcessId } from '../../core/history/event.ts';
import { NO_CLIENT } from '../../core/history/operation.ts';
import { bounded, boundedQuietly } from '../../core/util/bounded.ts';
import { inClientThread } from '../../core/util/client-thread.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import type { Client, Completion } from '../../lib/clients/types.ts';
import { RunClock } from './clock-readings.ts';
import type { DispatchRecorder } from './dispatch-log.ts';
import type { EventSink } from './sink.ts';

/**
 * The generator interpreter (Jepsen's jepsen.generator.interpreter, reference §4): one loop owns the
 * generator, hands ops to `concurrency` client threads plus the nemesis thread, and streams every
 * invocation and completion to the sink.
 *
 * - Thread i is bound to node nodes[i mod n] and starts as process i. An `info` completion retires the
 *   process: the thread continues as process (old + concurrency) with a freshly opened client, and the
 *   old op stays open forever in the history.
 * - Per-op timeout: an op still in flight after `opTimeoutMs` completes as `info` with error "timeout";
 *   its late answer, if any, is dropped. A sweep timer does this (one timer, not one per op).
 * - Every event carries a monotonic ns time, the node contacted and the fault windows active then.
 *   An op with an intended start (rate/stagger) records it as `intendedTime`; its latency is measured
 *   from there, so a stalled system cannot hide behind a slowed-down arrival rate.
 */

export type { NemesisCompletion, NemesisDriver } from '../../../nemeses/types.ts';

export interface InterpreterOptions {
  generator: Generator;
  concurrency: number;
  nodes: readonly string[];
  /** Opens a client for a node (Jepsen's open!); called per process unless the client is reusable. */
  client: Client;
  nemesis?: NemesisDriver;
  sink: EventSink;
  rng: Rng;
  opTimeoutMs: number;
  /**
   * How long a client's `close()` may take before it is abandoned (logged, never awaited again): a
   * plugin's close that never resolves must not hold the run. Default 10 s.
   */
  closeTimeoutMs?: number;
  /** Nemesis ops get their own, longer bound (a kill + restart can take a while). */
  nemesisTimeoutMs?: number;
  /** Records every op handed to a thread (the run's schedule.json). */
  dispatchLog?: DispatchRecorder;
  clock?: RunClock;
  /**
   * Stops the run (Ctrl-C, a deadline): no op is started after it, a `sleep` in progress ends at once,
   * and the nemesis's op in flight sees its own signal abort. Client ops in flight still complete or
   * time out, so the history stays exact; a nemesis op is still awaited, so the heal that follows never
   * races an injection still under way.
   */
  signal?: AbortSignal;
}

export interface InterpreterStats {
  invoked: number;
  ok: number;
  fail: number;
  info: number;
  timeouts: number;
  nemesisOps: number;
  /** Client threads currently running an op. */
  inFlight: number;
}

interface InFlight {
  token: number;
  thread: ThreadId;
  process: ProcessId;
  f: string;
  value: unknown;
  key: string | undefined;
  node: string | null;
  deadline: number;
  controller: AbortController | undefined;
  invokeTime: number;
  intendedTime: number | undefined;
  special: boolean;
  /** A `sleep` op's timer: an interrupt ends the sleep early. */
  sleepTimer?: NodeJS.Timeout;
}

interface Finished {
  flight: InFlight;
  completion: Completion;
  special: boolean;
}

interface ThreadState {
  process: ProcessId;
  node: string | null;
  client: Client | undefined;
  flight: InFlight | undefined;
}

export class Interpreter {
  readonly stats: InterpreterStats = {
    invoked: 0,
    ok: 0,
    fail: 0,
    info: 0,
    timeouts: 0,
    nemesisOps: 0,
    inFlight: 0,
  };
  readonly clock: RunClock;
  private index = 0;
  private token = 0;
  private readonly threads = new Map<ThreadId, ThreadState>();
  private readonly free = new Set<ThreadId>();
  private readonly finished: Finished[] = [];
  private wakeUp: (() => void) | undefined;
  private readonly opened: Client[] = [];
  private readonly closing: Promise<void>[] = [];
  /** The root generator context; `time` is updated in place so restricted contexts read it through. */
  private readonly ctx: { -readonly [K in keyof Context]: Context[K] };

  constructor(private readonly o: InterpreterOptions) {
    if (!Number.isInteger(o.concurrency) || o.concurrency < 1)
      throw new RangeError('concurrency must be ≥ 1');
    if (o.nodes.length === 0) throw new RangeError('need at least one node');
    this.clock = o.clock ?? new RunClock();
    for (let t = 0; t < o.concurrency; t++) {
      this.threads.set(t, {
        process: t,
        node: o.nodes[t % o.nodes.length] as string,
        client: undefined,
        flight: undefined,
      });
      this.free.add(t);
    }
    if (o.nemesis) {
      this.threads.set('nemesis', { process: 'nemesis', node: null, client: undefined, flight: undefined });
      this.free.add('nemesis');
    }
    this.ctx = {
      time: 0,
      rng: o.rng,
      threads: [...this.threads.keys()],
      free: this.free,
      allowed: () => true,
      processOf: (t: ThreadId) => this.threads.get(t)?.process ?? t,
    };
  }

  /** Runs the generator to exhaustion (or until the signal aborts) and waits for every op in flight. */
  async run(): Promise<InterpreterStats> {
    const ctx = this.ctx;
    const sweepEvery = Math.max(5, Math.min(100, Math.floor(this.o.opTimeoutMs / 4)));
    const sweeper = setInterval(() => this.sweep(), sweepEvery);
    sweeper.unref();
    // An interrupt must not wait for the loop's next look (up to a second, or a thread's long sleep).
    const onAbort = () => this.interrupt();
    this.o.signal?.addEventListener('abort', onAbort, { once: true });
    let sinceYield = 0;
    let lastYield = this.clock.now();
    let generating = true;
    try {
      for (;;) {
        this.drain(ctx);
        const now = this.clock.now();
        ctx.time = now;
        // Let timers and I/O (the history writer, the sweeper) run even when completions come as microtasks.
        if (++sinceYield >= 2000 || now - lastYield > 20_000_000) {
          sinceYield = 0;
          lastYield = now;
          await new Promise<void>((r) => setImmediate(r));
          // Backpressure: never let the history writer's unsynced backlog grow without bound.
          if (this.o.sink.needsDrain) await this.o.sink.drain?.();
          continue;
        }
        if (generating && this.o.signal?.aborted) generating = false;
        const r = generating ? this.o.generator.peek(ctx) : null;
        if (r === null) {
          generating = false;
          if (this.free.size === this.threads.size) break;
          await this.waitForCompletion(1000);
          continue;
        }
        if (r === PENDING) {
          await this.waitForCompletion(10);
          continue;
        }
        if (r.time !== undefined && r.time > now + 50_000) {
          await this.waitForCompletion(Math.max(1, Math.ceil((r.time - now) / 1e6)));
          continue;
        }
        const thread = r.thread;
        if (thread === undefined || !this.free.has(thread)) {
          // A generator must bind ops to free threads; treat anything else as "not yet".
          await this.waitForCompletion(1);
          continue;
        }
        this.o.generator.take(ctx, r);
        this.dispatch(thread, r);
      }
    } finally {
      clearInterval(sweeper);
      this.o.signal?.removeEventListener('abort', onAbort);
    }
    await this.closeClients();
    return this.stats;
  }

  private dispatch(thread: ThreadId, op: GenOp): void {
    const st = this.threads.get(thread) as ThreadState;
    const now = this.clock.now();
    const kind = op.kind ?? 'invoke';
    this.o.dispatchLog?.record(thread, st.process, now, op);
    this.free.delete(thread);
    const isNemesis = thread === 'nemesis';
    const flight: InFlight = {
      token: ++this.token,
      thread,
      process: st.process,
      f: op.f,
      value: op.value ?? null,
      key: op.key,
      node: st.node,
      deadline: now + (isNemesis ? (this.o.nemesisTimeoutMs ?? 300_000) : this.o.opTimeoutMs) * 1e6,
      controller: undefined,
      invokeTime: now,
      intendedTime: op.time,
      special: kind !== 'invoke',
    };
    st.flight = flight;
    if (kind === 'sleep') {
      const ms = Math.max(0, Number(op.value) / 1e6);
      flight.deadline = Number.POSITIVE_INFINITY;
      flight.sleepTimer = setTimeout(() => this.finish(flight, { type: 'ok' }, true), ms);
      return;
    }
    if (kind === 'log') {
      log().info({ thread }, String(op.value));
      flight.deadline = Number.POSITIVE_INFINITY;
      queueMicrotask(() => this.finish(flight, { type: 'ok' }, true));
      return;
    }
    this.stats.invoked++;
    if (!isNemesis) this.stats.inFlight++;
    const event = this.event('invoke', flight, flight.value, now);
    if (op.time !== undefined) event.intendedTime = op.time;
    this.emit(event, thread);
    if (isNemesis) {
      this.stats.nemesisOps++;
      const nem = this.o.nemesis as NemesisDriver;
      flight.controller = new AbortController();
      nem.invoke({ f: flight.f, value: flight.value }, flight.controller.signal).then(
        (c) =>
          this.finish(flight, {
            type: 'info',
            value: c.value,
            ...(c.error !== undefined && { error: c.error }),
            ...(c.extras && { extras: c.extras }),
          }),
        (err) => this.finish(flight, { type: 'info', value: flight.value, error: errorMessage(err) }),
      );
      return;
    }
    this.invokeClient(st, flight);
  }

  private invokeClient(st: ThreadState, flight: InFlight): void {
    // Bounded by the op's own deadline too (the sweep completes it), but a hung open must not be awaited later.
    const clientP = st.client
      ? undefined
      : bounded(`client open(${st.node})`, this.o.opTimeoutMs, () =>
          // The thread is known while open() runs: a routed client gets this thread's own proxy listener.
          inClientThread(flight.thread as number, () => this.o.client.open(st.node as string)),
        );
    const call = (client: Client) => {
      const ictx = {
        get signal(): AbortSignal {
          flight.controller ??= new AbortController();
          return flight.controller.signal;
        },
      };
      let p: Promise<Completion>;
      try {
        p = client.invoke(
          {
            f: flight.f,
            value: flight.value,
            key: flight.key,
            process: flight.process,
            node: flight.node as string,
          },
          ictx,
        );
      } catch (err) {
        p = Promise.reject(err);
      }
      p.then(
        (c) => this.finish(flight, c),
        (err) => this.finish(flight, { type: 'info', error: `indeterminate: ${errorMessage(err)}` }),
      );
    };
    if (!clientP) {
      call(st.client as Client);
      return;
    }
    clientP.then(
      (client) => {
        this.opened.push(client);
        if (st.flight !== flight) {
          // Timed out while opening: this client belongs to a retired process.
          this.closing.push(this.close(client));
          return;
        }
        st.client = client;
        call(client);
      },
      // Nothing was sent, so the op definitely did not happen (Jepsen's [:no-client msg]).
      (err) => this.finish(flight, { type: 'fail', error: [NO_CLIENT, errorMessage(err)] }),
    );
  }

  /**
   * The run was stopped: sleeps end now (idle time, not in the history), and the nemesis's op in
   * flight is asked to stop through its signal. What it did is recorded when it returns.
   */
  private interrupt(): void {
    for (const st of this.threads.values()) {
      const f = st.flight;
      if (!f) continue;
      if (f.sleepTimer !== undefined) {
        clearTimeout(f.sleepTimer);
        this.finish(f, { type: 'ok' }, true);
      } else if (f.thread === 'nemesis') f.controller?.abort(new Error('interrupted'));
    }
    this.wake();
  }

  /** Wakes the run loop if it is waiting for a completion. */
  private wake(): void {
    const w = this.wakeUp;
    if (w) {
      this.wakeUp = undefined;
      w();
    }
  }

  private finish(flight: InFlight, completion: Completion, special = false): void {
    const st = this.threads.get(flight.thread);
    if (!st || st.flight !== flight) return; // timed out already: a late answer is dropped
    st.flight = undefined;
    this.finished.push({ flight, completion, special: special || flight.special });
    this.wake();
  }

  /** Completes overdue ops as info/timeout. */
  private sweep(): void {
    const now = this.clock.now();
    for (const st of this.threads.values()) {
      const f = st.flight;
      if (f && f.deadline < now) {
        this.stats.timeouts++;
        f.controller?.abort(new Error('timeout'));
        this.finish(f, { type: 'info', error: 'timeout' });
      }
    }
  }

  private drain(ctx: Context & { time: number }): void {
    const q = this.finished;
    if (q.length === 0) return;
    for (let i = 0; i < q.length; i++) {
      const { flight, completion, special } = q[i] as Finished;
      const thread = flight.thread;
      const st = this.threads.get(thread) as ThreadState;
      if (!special) {
        const now = this.clock.now();
        (ctx as { time: number }).time = now;
        const type = completion.type;
        const value = completion.value === undefined ? flight.value : completion.value;
        const ev = this.event(type, flight, value, now);
        if (completion.node !== undefined) ev.node = completion.node;
        if (completion.error !== undefined) ev.error = completion.error;
        if (completion.extras) Object.assign(ev, completion.extras);
        if (flight.intendedTime !== undefined) ev.latency = now - flight.intendedTime;
        if (thread !== 'nemesis') {
          this.stats.inFlight--;
          this.stats[type]++;
        }
        this.emit(ev, thread);
        if (type === 'info' && thread !== 'nemesis') this.retire(st);
      }
      this.free.add(thread);
    }
    q.length = 0;
  }

  private retire(st: ThreadState): void {
    st.process = (st.process as number) + this.o.concurrency;
    if (st.client && !st.client.reusable) {
      const old = st.client;
      st.client = undefined;
      this.closing.push(this.close(old));
    }
  }

  private event(type: EventType, flight: InFlight, value: unknown, time: number): HistoryEvent {
    const ev: HistoryEvent = {
      index: this.index++,
      type: flight.thread === 'nemesis' ? 'info' : type,
      f: flight.f,
      value,
      process: flight.process,
      time,
      node: flight.node,
      faultEpoch: this.o.nemesis?.activeWindows() ?? null,
    };
    if (flight.key !== undefined) ev.key = flight.key;
    return ev;
  }

  private emit(ev: HistoryEvent, thread: ThreadId): void {
    this.o.sink.append(ev);
    if (this.o.generator.update) {
      const gev: GenEvent = {
        type: ev.type as GenEvent['type'],
        thread,
        process: ev.process,
        f: ev.f,
        value: ev.value,
      };
      if (thread === 'nemesis') gev.type = this.threads.get(thread)?.flight ? 'invoke' : 'info';
      this.o.generator.update(this.ctx, gev);
    }
  }

  private waitForCompletion(maxMs: number): Promise<void> {
    if (this.finished.length > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve();
      }, maxMs);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async closeClients(): Promise<void> {
    const live = new Set<Client>();
    for (const st of this.threads.values()) if (st.client) live.add(st.client);
    await Promise.all([...live].map((c) => this.close(c)));
    await Promise.all(this.closing);
  }

  /** A client's close, bounded: an overrun is logged and abandoned. */
  private close(client: Client): Promise<void> {
    return boundedQuietly('client close()', this.o.closeTimeoutMs ?? CLOSE_TIMEOUT_MS, () => client.close());
  }
}

const CLOSE_TIMEOUT_MS = 10_000;
