import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runTest } from '../../src/app/test/test-run.ts';
import type { Client, ClientOp, Completion } from '../../src/lib/clients/types.ts';
import { workloads } from '../../src/lib/workloads/index.ts';
import { memoryDb, nowhereRemote } from '../helpers/memory-run.ts';

/**
 * The built-in queue workload end to end on an in-memory queue: enqueue / dequeue, then one final drain,
 * checked by queue and total-queue. A queue that drops an acknowledged element is caught as lost.
 */
const scratch = mkdtempSync(join(tmpdir(), 'faultline-queue-workload-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

class MemoryQueue implements Client {
  constructor(
    private readonly q: number[],
    private readonly dropEvery = 0,
    private readonly ops: string[] = [],
  ) {}
  private acked = 0;
  async open(): Promise<Client> {
    return this;
  }
  async setup(): Promise<void> {}
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
  async invoke(op: ClientOp): Promise<Completion> {
    this.ops.push(op.f);
    await new Promise((r) => setTimeout(r, 1));
    if (op.f === 'enqueue') {
      this.acked++;
      // The lossy queue acknowledges, then forgets.
      if (!(this.dropEvery > 0 && this.acked % this.dropEvery === 0)) this.q.push(op.value as number);
      return { type: 'ok' };
    }
    if (op.f === 'dequeue') return { type: 'ok', value: this.q.shift() ?? null };
    if (op.f === 'drain') return { type: 'ok', value: this.q.splice(0) };
    return { type: 'fail', error: `no ${op.f}` };
  }
}

async function run(name: string, client: Client) {
  return runTest({
    remote: nowhereRemote,
    db: memoryDb,
    makeClient: () => client,
    workload: 'queue',
    faults: [],
    nemesisIntervalS: 1,
    timeLimitS: 1,
    concurrency: 3,
    rate: 200,
    seed: 1,
    outDir: join(scratch, name),
    opTimeoutMs: 1000,
    recoveryS: 0,
  });
}

test('the queue workload is registered with its three ops and both queue checkers', (t) => {
  const def = workloads.require('queue', 'test');
  t.deepEqual([...def.ops], ['enqueue', 'dequeue', 'drain']);
  const w = def.create({ nodes: ['n1'], concurrency: 1 });
  t.deepEqual(
    w.checkers.map((c) => c.name),
    ['queue', 'total-queue'],
  );
});

test('a correct queue: enqueues, dequeues and one final drain; queue and total-queue valid', async (t) => {
  const ops: string[] = [];
  const r = await run('ok', new MemoryQueue([], 0, ops));
  t.true(ops.includes('enqueue') && ops.includes('dequeue'));
  const firstDrain = ops.indexOf('drain');
  t.true(firstDrain > 0 && ops.slice(firstDrain).every((f) => f === 'drain'), 'drains come last');
  const byName = Object.fromEntries(r.results.map((c) => [c.checker, c]));
  t.is(byName.queue?.valid, true, byName.queue?.evidence);
  t.is(byName['total-queue']?.valid, true, byName['total-queue']?.evidence);
});

test('a queue that loses acknowledged elements: total-queue finds them lost', async (t) => {
  const r = await run('lossy', new MemoryQueue([], 5));
  const tq = r.results.find((c) => c.checker === 'total-queue');
  t.is(tq?.valid, false, tq?.evidence);
  t.regex(tq?.evidence ?? '', /[1-9]\d* lost/);
  t.is(r.valid, false);
});

test('a drain that fails (its node still restarting) is repeated until one completes ok', async (t) => {
  const q: number[] = [];
  let drains = 0;
  const client = new MemoryQueue(q);
  const invoke = client.invoke.bind(client);
  client.invoke = async (op) => {
    if (op.f === 'drain' && ++drains <= 2) return { type: 'fail', error: 'connect ECONNREFUSED' };
    return invoke(op);
  };
  const r = await run('drain-retried', client);
  t.true(drains >= 3);
  const tq = r.results.find((c) => c.checker === 'total-queue');
  t.is(tq?.valid, true, tq?.evidence);
});

test('drainQueue: empties the queue; bounded; cut off after taking elements it is info with them', async (t) => {
  const { drainQueue } = await import('../../src/api/clients.ts');
  const from = (q: number[], failAfter = Number.POSITIVE_INFINITY) => {
    let takes = 0;
    return async () => {
      if (takes++ >= failAfter) throw new Error('connection lost');
      return q.shift() ?? null;
    };
  };
  t.deepEqual(await drainQueue(from([1, 2, 3])), { type: 'ok', value: [1, 2, 3] });
  t.deepEqual(await drainQueue(from([])), { type: 'ok', value: [] });
  const bounded = await drainQueue(from([1, 2, 3]), 2);
  t.is(bounded.type, 'info');
  t.deepEqual(bounded.value, [1, 2]);
  const cut = await drainQueue(from([1, 2, 3], 2));
  t.is(cut.type, 'info');
  t.deepEqual(cut.value, [1, 2]);
  t.regex(String(cut.error), /^indeterminate: drain stopped after 2 elements: connection lost/);
  // Nothing taken yet: the error is the client's to classify, as a dequeue's.
  await t.throwsAsync(drainQueue(from([1], 0)), { message: 'connection lost' });
});
