import test from 'ava';
import { MemoryDispatchLog, replayDispatchLog } from '../../src/app/test/dispatch-log.ts';
import { Interpreter, type NemesisDriver } from '../../src/app/test/interpreter.ts';
import { MemorySink } from '../../src/app/test/sink.ts';
import { any, clients, limit, nemesis, phases, Rng, repeat, sleep } from '../../src/core/generator/index.ts';
import { NoopClient } from '../../src/lib/clients/noop.ts';
import type { Client, ClientOp, Completion } from '../../src/lib/clients/types.ts';

const nodes = ['n1', 'n2', 'n3'];

function run(opts: {
  gen: Parameters<typeof clients>[0];
  concurrency?: number;
  client?: Client;
  nemesis?: NemesisDriver;
  timeoutMs?: number;
  dispatchLog?: MemoryDispatchLog;
}) {
  const sink = new MemorySink();
  const interp = new Interpreter({
    generator: opts.nemesis ? (opts.gen as never) : clients(opts.gen),
    concurrency: opts.concurrency ?? 3,
    nodes,
    client: opts.client ?? new NoopClient(),
    ...(opts.nemesis && { nemesis: opts.nemesis }),
    sink,
    rng: new Rng(1),
    opTimeoutMs: opts.timeoutMs ?? 1000,
    ...(opts.dispatchLog && { dispatchLog: opts.dispatchLog }),
  });
  return interp.run().then((stats) => ({ stats, events: sink.events }));
}

test('every op is invoked then completed; index dense, time monotonic, node bound per thread', async (t) => {
  const { stats, events } = await run({ gen: limit(300, repeat({ f: 'write', value: 1 })) });
  t.is(stats.invoked, 300);
  t.is(stats.ok, 300);
  t.is(events.length, 600);
  t.deepEqual(
    events.map((e) => e.index),
    events.map((_e, i) => i),
  );
  for (let i = 1; i < events.length; i++) t.true((events[i]?.time ?? 0) >= (events[i - 1]?.time ?? 0));
  for (const e of events) t.is(e.node, nodes[(e.process as number) % 3] ?? null);
  for (const e of events) t.is(e.faultEpoch, null);
});

/** A client whose ops hang for some ops, throw for others. */
class FlakyClient implements Client {
  opens = 0;
  closes = 0;
  constructor(private readonly behave: (op: ClientOp) => 'ok' | 'hang' | 'throw') {}
  async open(): Promise<Client> {
    this.opens++;
    return this;
  }
  async setup(): Promise<void> {}
  invoke(op: ClientOp, ctx: { signal: AbortSignal }): Promise<Completion> {
    const b = this.behave(op);
    if (b === 'throw') return Promise.reject(new Error('connection reset'));
    if (b === 'hang')
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    return Promise.resolve({ type: 'ok', value: op.value });
  }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {
    this.closes++;
  }
}

test('per-op timeout completes the op as info "timeout" and retires the process (old + concurrency)', async (t) => {
  const client = new FlakyClient((op) => (op.value === 1 ? 'hang' : 'ok'));
  const { stats, events } = await run({
    gen: [{ f: 'write', value: 1 }, ...Array.from({ length: 5 }, () => ({ f: 'write', value: 2 }))],
    concurrency: 1,
    client,
    timeoutMs: 50,
  });
  t.is(stats.timeouts, 1);
  const info = events.find((e) => e.type === 'info');
  t.is(info?.error, 'timeout');
  t.is(info?.process, 0);
  // later ops run as process 1 (0 + concurrency 1) on a freshly opened client
  t.true(events.filter((e) => e.value === 2).every((e) => e.process === 1));
  t.is(client.opens, 2);
  t.is(client.closes >= 1, true);
});

test('a throwing client gives info with an indeterminate error; the process is retired', async (t) => {
  const client = new FlakyClient((op) => (op.value === 1 ? 'throw' : 'ok'));
  const { events } = await run({
    gen: [
      { f: 'write', value: 1 },
      { f: 'write', value: 2 },
    ],
    concurrency: 2,
    client,
  });
  const info = events.find((e) => e.type === 'info');
  t.regex(String(info?.error), /indeterminate: connection reset/);
  const later = events.find((e) => e.type === 'invoke' && e.value === 2);
  t.not(later?.process, info?.process);
});

test('nemesis ops go to the nemesis driver, recorded as process "nemesis"; fault windows stamp client events', async (t) => {
  let active: string[] | null = null;
  const driver: NemesisDriver = {
    async invoke(op) {
      if (op.f === 'start-partition') active = ['w1'];
      else active = null;
      return { value: { landed: true } };
    },
    activeWindows: () => active,
  };
  const gen = phases(
    nemesis([{ f: 'start-partition', value: 'majority' }]),
    clients(limit(10, repeat({ f: 'read' }))),
    nemesis([{ f: 'stop-partition' }]),
    clients(limit(5, repeat({ f: 'read' }))),
  );
  const { events } = await run({ gen, nemesis: driver });
  const nem = events.filter((e) => e.process === 'nemesis');
  t.is(nem.length, 4);
  t.true(nem.every((e) => e.type === 'info'));
  t.deepEqual(nem[1]?.value, { landed: true });
  const reads = events.filter((e) => e.f === 'read' && e.type === 'invoke');
  t.is(reads.filter((e) => e.faultEpoch?.[0] === 'w1').length, 10);
  t.is(reads.filter((e) => e.faultEpoch === null).length, 5);
});

test('sleep ops idle a thread without entering the history', async (t) => {
  const started = Date.now();
  const { events } = await run({ gen: [sleep(30_000_000), { f: 'read' }], concurrency: 1 });
  t.is(events.length, 2);
  t.true(Date.now() - started >= 25);
});

test('a recorded dispatch log replays the same ops on the same threads', async (t) => {
  const dispatchLog = new MemoryDispatchLog();
  const gen = limit(
    50,
    repeat((ctx) => ({ f: 'write', value: ctx.rng.int(100) })),
  );
  const first = await run({ gen, dispatchLog });
  const second = await run({ gen: replayDispatchLog({ ops: dispatchLog.ops }) as never });
  const sig = (evs: typeof first.events) =>
    evs
      .filter((e) => e.type === 'invoke')
      .map((e) => `${e.process}:${e.value}`)
      .sort();
  t.deepEqual(sig(second.events), sig(first.events));
  t.is(dispatchLog.ops.length, 50);
});

/** An interpreter over a client workload and a nemesis schedule, stopped by `abort`. */
function interruptible(
  nemesisOps: Parameters<typeof nemesis>[0],
  driver: NemesisDriver,
  abort: AbortController,
) {
  const sink = new MemorySink();
  const interp = new Interpreter({
    generator: any(clients(limit(1_000_000, repeat({ f: 'read' }))), nemesis(nemesisOps)) as never,
    concurrency: 2,
    nodes,
    client: new NoopClient(),
    nemesis: driver,
    sink,
    rng: new Rng(1),
    opTimeoutMs: 1000,
    nemesisTimeoutMs: 20_000,
    signal: abort.signal,
  });
  return { sink, run: () => interp.run() };
}

test('an interrupt ends a sleep at once: the run stops without waiting out the nemesis’s pause', async (t) => {
  const driver: NemesisDriver = { invoke: async (op) => ({ value: op.f }), activeWindows: () => null };
  const abort = new AbortController();
  // Jepsen's shape: start, sleep 30 s, stop. Ctrl-C lands during the sleep.
  const { sink, run } = interruptible(
    [{ f: 'start-partition' }, sleep(30_000_000_000), { f: 'stop-partition' }],
    driver,
    abort,
  );
  setTimeout(() => abort.abort(new Error('interrupted')), 100);
  const started = Date.now();
  await run();
  t.true(Date.now() - started < 10_000, `returned after ${Date.now() - started} ms`);
  const fs = sink.events.filter((e) => e.process === 'nemesis').map((e) => e.f);
  t.deepEqual(fs, ['start-partition', 'start-partition'], 'nothing after the sleep was started');
  // Every client op started before the interrupt was completed: the history stays whole.
  const client = sink.events.filter((e) => e.process !== 'nemesis');
  t.is(client.length, 2 * client.filter((e) => e.type === 'invoke').length);
});

test('an interrupt asks the nemesis op in flight to stop, and the run waits for what it did', async (t) => {
  let sawAbort = false;
  const driver: NemesisDriver = {
    invoke: (op, signal) =>
      new Promise((resolve) => {
        if (op.f !== 'start-kill') return resolve({ value: op.f });
        // A slow injection (waiting for a process to die) that stops when told to.
        signal.addEventListener('abort', () => {
          sawAbort = true;
          setTimeout(() => resolve({ value: 'stopped early' }), 50);
        });
      }),
    activeWindows: () => null,
  };
  const abort = new AbortController();
  const { sink, run } = interruptible([{ f: 'start-kill' }, { f: 'stop-kill' }], driver, abort);
  setTimeout(() => abort.abort(new Error('interrupted')), 100);
  await run();
  t.true(sawAbort, 'the nemesis saw its signal abort');
  const nem = sink.events.filter((e) => e.process === 'nemesis');
  t.deepEqual(
    nem.map((e) => [e.f, e.type, e.value]),
    [
      ['start-kill', 'info', null],
      ['start-kill', 'info', 'stopped early'],
    ],
    'its completion is recorded before the run returns; stop-kill is left to the heal',
  );
});
