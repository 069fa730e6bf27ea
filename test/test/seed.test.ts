import test from 'ava';
import { classifyFaultOp } from '../../nemeses/registry.ts';
import { parseFaults } from '../../nemeses/schedule.ts';
import { MemoryDispatchLog } from '../../src/app/test/dispatch-log.ts';
import { Interpreter, type NemesisDriver } from '../../src/app/test/interpreter.ts';
import { MemorySink } from '../../src/app/test/sink.ts';
import { buildGenerator } from '../../src/app/test/test-run.ts';
import { Rng } from '../../src/core/generator/index.ts';
import { NoopClient } from '../../src/lib/clients/noop.ts';
import { registerWorkload } from '../../src/lib/workloads/register.ts';

/** A nemesis that does nothing but keep the windows, with a small random delay (timing noise). */
function fakeNemesis(): NemesisDriver {
  let active: string[] = [];
  let n = 0;
  return {
    async invoke(op) {
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      const c = classifyFaultOp(op.f);
      if (c?.starts) active = [...active, `w${++n}`];
      else active = [];
      return { value: op.value };
    },
    activeWindows: () => (active.length ? active : null),
  };
}

async function runOnce(seed: number) {
  const dispatchLog = new MemoryDispatchLog();
  const sink = new MemorySink();
  const workload = registerWorkload({ nodes: ['n1', 'n2', 'n3'], concurrency: 4 });
  const generator = buildGenerator(
    {
      timeLimitS: 1.5,
      faults: ['partition', 'kill'],
      nemesisIntervalS: 0.1,
      nemesisDelayS: 0.1,
      rate: 200,
      recoveryS: 0,
      seed,
    },
    workload.generator(),
    workload.finalGenerator(),
  );
  await new Interpreter({
    generator,
    concurrency: 4,
    nodes: ['n1', 'n2', 'n3'],
    client: new NoopClient(),
    nemesis: fakeNemesis(),
    sink,
    rng: new Rng(seed),
    opTimeoutMs: 1000,
    dispatchLog,
  }).run();
  // main-phase client ops: the ones with an intended time (rate); final reads have none
  const client = dispatchLog.ops
    .filter((o) => o.thread !== 'nemesis' && o.kind === 'invoke' && o.time !== undefined)
    .map((o) => `${o.f}:${JSON.stringify(o.value)}`);
  const faults = dispatchLog.ops
    .filter((o) => o.thread === 'nemesis' && o.kind === 'invoke')
    .map((o) => `${o.f}:${JSON.stringify(o.value)}`);
  return { client, faults, events: sink.events };
}

test('the same seed gives the same client ops and the same fault schedule; another seed does not', async (t) => {
  const a = await runOnce(11);
  const b = await runOnce(11);
  const c = await runOnce(12);
  t.true(a.client.length > 100, `ran ${a.client.length} client ops`);
  // The op sequence is fixed by the seed. How much of it runs before the time limit depends on how fast
  // this (shared) machine dispatches, so one run's ops are a prefix of the other's.
  const m = Math.min(a.client.length, b.client.length);
  t.deepEqual(a.client.slice(0, m), b.client.slice(0, m));
  t.true(m >= 0.8 * Math.max(a.client.length, b.client.length));
  t.true(a.faults.length >= 4, `faults: ${a.faults.join(' ')}`);
  const n = Math.min(a.faults.length, b.faults.length) - 2; // the last fault before the limit may race the cutoff
  t.deepEqual(a.faults.slice(0, n), b.faults.slice(0, n));
  t.notDeepEqual(a.client, c.client);
  // the run ends healed: the final generator stops every fault class it started
  const last = a.events.filter((e) => e.process === 'nemesis').map((e) => e.f);
  t.true(last.includes('stop-partition') && last.includes('start'));
});

test('client events carry the fault windows active at the time', async (t) => {
  const { events } = await runOnce(3);
  const during = events.filter((e) => e.process !== 'nemesis' && e.faultEpoch !== null);
  t.true(during.length > 0);
  t.true(during.every((e) => e.faultEpoch?.every((w) => /^w\d+$/.test(w))));
});

test('--nemesis parsing: lists, all, none, unknown names refused', (t) => {
  t.deepEqual(parseFaults('partition,kill'), ['partition', 'kill']);
  t.deepEqual(parseFaults('none'), []);
  t.deepEqual(parseFaults('all'), ['partition', 'kill', 'pause', 'clock']);
  t.throws(() => parseFaults('partition,flood'), { message: /unknown fault "flood"/ });
});
