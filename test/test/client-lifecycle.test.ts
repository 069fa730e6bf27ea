import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runTest } from '../../src/app/test/test-run.ts';
import type { Client, ClientOp, Completion } from '../../src/lib/clients/types.ts';
import { memoryDb, NODES, nowhereRemote } from '../helpers/memory-run.ts';

/**
 * The client protocol as users implement it (Jepsen's open / setup! / invoke! / teardown! / close!):
 * `runTest` sets up once per node before the first op, tears down once per node after the last op,
 * and closes every client it opened. A teardown that never answers does not hold the run.
 */
const scratch = mkdtempSync(join(tmpdir(), 'faultline-client-lifecycle-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

type Call = { call: 'open' | 'setup' | 'invoke' | 'teardown' | 'close'; node: string; at: number };

class RecordingClient implements Client {
  constructor(
    private readonly calls: Call[],
    private readonly node = '',
    private readonly hangInTeardown = false,
  ) {}
  private record(call: Call['call']) {
    this.calls.push({ call, node: this.node, at: this.calls.length });
  }
  async open(node: string): Promise<Client> {
    const c = new RecordingClient(this.calls, node, this.hangInTeardown);
    c.record('open');
    return c;
  }
  async setup(): Promise<void> {
    this.record('setup');
  }
  async invoke(op: ClientOp): Promise<Completion> {
    this.record('invoke');
    await new Promise((r) => setTimeout(r, 2));
    return op.f === 'read' ? { type: 'ok', value: null } : { type: 'ok' };
  }
  async teardown(): Promise<void> {
    this.record('teardown');
    if (this.hangInTeardown) await new Promise(() => {});
  }
  async close(): Promise<void> {
    this.record('close');
  }
}

async function run(name: string, hangInTeardown: boolean) {
  const calls: Call[] = [];
  await runTest({
    remote: nowhereRemote,
    db: memoryDb,
    makeClient: () => new RecordingClient(calls, '', hangInTeardown),
    workload: 'register',
    faults: [],
    nemesisIntervalS: 1,
    timeLimitS: 0.5,
    concurrency: 3,
    rate: 100,
    seed: 1,
    outDir: join(scratch, name),
    opTimeoutMs: 1000,
    recoveryS: 0,
  });
  return calls;
}

test('setup once per node before any op, teardown once per node after every op, every client closed', async (t) => {
  const calls = await run('ordered', false);
  const of = (call: Call['call']) => calls.filter((c) => c.call === call);
  t.deepEqual(
    of('setup')
      .map((c) => c.node)
      .sort(),
    NODES,
  );
  t.deepEqual(
    of('teardown')
      .map((c) => c.node)
      .sort(),
    NODES,
  );
  const invokes = of('invoke');
  t.true(invokes.length > 0, 'the workload ran');
  t.true(Math.max(...of('setup').map((c) => c.at)) < Math.min(...invokes.map((c) => c.at)));
  t.true(Math.min(...of('teardown').map((c) => c.at)) > Math.max(...invokes.map((c) => c.at)));
  t.is(of('close').length, of('open').length, 'every opened client is closed');
});

test('a teardown that never answers is abandoned and the run still ends with its history', async (t) => {
  t.timeout(90_000);
  const calls = await run('hanging', true);
  t.is(calls.filter((c) => c.call === 'teardown').length, NODES.length);
});
