import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { HookError } from '../../src/app/test/hook-error.ts';
import { runTest } from '../../src/app/test/test-run.ts';
import { RemoteCommandError } from '../../src/core/control/connection-errors.ts';
import type { Remote } from '../../src/core/control/types.ts';
import { bounded, CallTimeoutError } from '../../src/core/util/bounded.ts';
import { EXIT } from '../../src/core/util/errors.ts';
import type { Client, ClientOp, Completion } from '../../src/lib/clients/types.ts';
import type { Database } from '../../src/lib/databases/types.ts';
import { memoryDb, nowhereRemote } from '../helpers/memory-run.ts';

/**
 * Calls into a plugin are bounded: a client whose close() (or open, or invoke) never resolves cannot hold
 * a run past its deadline, and a database hook that fails says which hook, node and command, and where
 * the node's command log is.
 */
const scratch = mkdtempSync(join(tmpdir(), 'faultline-bounded-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

const never = () => new Promise<never>(() => {});

/** A register client that answers ops at once; `hang` names the calls that never resolve. */
class HangingClient implements Client {
  private used = false;
  constructor(private readonly hang: ReadonlySet<string>) {}
  async open(): Promise<Client> {
    if (this.hang.has('open')) return never();
    return new HangingClient(this.hang);
  }
  async setup(): Promise<void> {}
  async invoke(op: ClientOp): Promise<Completion> {
    this.used = true;
    if (this.hang.has('invoke')) return never();
    await new Promise((r) => setTimeout(r, 2));
    return op.f === 'read' ? { type: 'ok', value: null } : { type: 'ok' };
  }
  async teardown(): Promise<void> {
    if (this.hang.has('teardown')) return never();
  }
  async close(): Promise<void> {
    if (this.hang.has('close') || (this.used && this.hang.has('close-after-ops'))) return never();
  }
}

function run(name: string, hang: string[], o: { deadlineMs: number; timeLimitS: number; callMs?: number }) {
  const started = Date.now();
  const signal = AbortSignal.timeout(o.deadlineMs);
  return runTest({
    remote: nowhereRemote,
    db: memoryDb,
    makeClient: () => new HangingClient(new Set(hang)),
    workload: 'register',
    faults: [],
    nemesisIntervalS: 1,
    timeLimitS: o.timeLimitS,
    concurrency: 3,
    rate: 50,
    seed: 1,
    outDir: join(scratch, name),
    opTimeoutMs: 500,
    ...(o.callMs !== undefined && { clientCallTimeoutMs: o.callMs }),
    recoveryS: 0,
    signal,
  }).then((r) => ({ r, elapsedMs: Date.now() - started }));
}

test('bounded: a call that never settles is abandoned with its name; a settled one passes through', async (t) => {
  const err = await t.throwsAsync(bounded('client close()', 50, never));
  t.true(err instanceof CallTimeoutError);
  t.regex(err?.message ?? '', /client close\(\): no answer within 50 ms; abandoned/);
  t.is(await bounded('x', 1000, async () => 7), 7);
  await t.throwsAsync(
    bounded('x', 1000, async () => Promise.reject(new Error('boom'))),
    { message: 'boom' },
  );
});

test('a client whose close() never resolves: the run stopped by its deadline ends within the deadline + 30 s, checked', async (t) => {
  // Default bounds (no clientCallTimeoutMs): the deadline at 3 s stops a run meant to last 120 s, whose
  // workers' clients (and the teardown's) never close.
  const { r, elapsedMs } = await run('close-default', ['close-after-ops', 'teardown'], {
    deadlineMs: 3000,
    timeLimitS: 120,
  });
  t.log(`ended ${elapsedMs} ms after the start (deadline 3000 ms)`);
  t.true(elapsedMs < 3000 + 30_000, `${elapsedMs} ms`);
  t.true(r.stats.invoked > 0);
  t.true(r.results.length > 0, 'the history was checked');
});

test('open, invoke, teardown and close that never resolve: the run still ends, ops complete info/timeout', async (t) => {
  const { r, elapsedMs } = await run('all-hang', ['invoke', 'teardown', 'close'], {
    deadlineMs: 60_000,
    timeLimitS: 1,
    callMs: 300,
  });
  t.true(elapsedMs < 15_000, `${elapsedMs} ms`);
  t.true(r.stats.timeouts > 0);
  t.is(r.stats.ok, 0);
  // A client that cannot even open for its setup fails the run at once, naming the call.
  const started = Date.now();
  const err = await t.throwsAsync(
    run('open-hangs', ['open'], { deadlineMs: 60_000, timeLimitS: 1, callMs: 300 }),
  );
  t.is((err as HookError).exitCode, EXIT.badInput);
  t.regex(err?.message ?? '', /client setup on n1 failed: client open\(n1\): no answer within 300 ms/);
  t.true(Date.now() - started < 5000);
});

test('a failing Database hook names the hook, the node, the full command, its stderr and the command log; exit 254', async (t) => {
  const command = `apt-get install -y ${'some-long-package-name '.repeat(12)}missing-thing`;
  const stderr = Array.from({ length: 12 }, (_, i) => `E: line ${i + 1}`).join('\n');
  const db = {
    ...memoryDb,
    setup: async (_ctx: unknown, node: string) => {
      if (node === 'n2') throw new RemoteCommandError(node, command, 100, '', stderr);
    },
  } as unknown as Database;
  const remote = {
    ...nowhereRemote,
    commandLogPath: (node: string) => `/runs/x/logs/ssh/${node}.commands.jsonl`,
  } as Remote;
  const err = await t.throwsAsync(
    runTest({
      remote,
      db,
      makeClient: () => new HangingClient(new Set()),
      workload: 'register',
      faults: [],
      nemesisIntervalS: 1,
      timeLimitS: 1,
      concurrency: 1,
      rate: 10,
      seed: 1,
      outDir: join(scratch, 'hook-error'),
      opTimeoutMs: 500,
      recoveryS: 0,
    }),
  );
  t.true(err instanceof HookError, String(err));
  t.is((err as HookError).exitCode, EXIT.badInput);
  const msg = err?.message ?? '';
  t.regex(msg, /^memory: setup on n2 failed: exit 100 from: /);
  t.true(msg.includes(command), 'the full command, not cut');
  t.true(msg.includes('E: line 12') && msg.includes('E: line 5') && !msg.includes('E: line 4\n'));
  t.true(msg.includes('/runs/x/logs/ssh/n2.commands.jsonl'));
});
