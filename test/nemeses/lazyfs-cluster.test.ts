import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { healRecords, sweepNodes } from '../../nemeses/heal.ts';
import { lazyfsNemesis } from '../../nemeses/lazyfs.ts';
import { FaultPlane } from '../../nemeses/plane.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import { signalTreeCommand } from '../../src/core/control/process-tree.ts';
import { shellQuote } from '../../src/core/control/quote.ts';
import type { Remote } from '../../src/core/control/types.ts';
import type { FaultTarget } from '../../src/core/database/capabilities.ts';
import { pollFor } from '../../src/core/util/retry.ts';
import { withCluster } from '../helpers/cluster.ts';

// The lazyfs nemesis through the fault plane on a local cluster, against a tiny "database": a writer that
// appends numbered lines to data/log, fsyncs after every tenth and records each fsync outside the data
// directory (and stops fsyncing while a `hold` file exists there, so a test can be sure some writes are
// not fsynced when power fails). A power failure must cut the log back to an fsync boundary, and heal must
// leave no mount.

const fx = withCluster(test, { nodes: 2, name: 'crd-lz' });
const BASE = '/var/lib/faultline/lazyfs-test';
const WRITER = `
import os, sys, time
d = sys.argv[1]
fd = os.open(d + '/data/log', os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
n = len(open(d + '/data/log').read().splitlines())
# A child, as a database's helper process: once the writer dies it writes and fsyncs data/late (as
# PostgreSQL's WAL writer can finish an fsync after its postmaster's death). A power failure stops it with
# the writer, so data/late must never survive one.
if os.fork() == 0:
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.002)
    try:
        late = os.open(d + '/data/late', os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(late, b'late\\n')
        os.fsync(late)
    finally:
        os._exit(0)
while True:
    n += 1
    os.write(fd, b'%d\\n' % n)
    if n % 10 == 0 and not os.path.exists(d + '/hold'):
        os.fsync(fd)
        with open(d + '/synced', 'w') as s: s.write(str(n))
        # The next line at once: un-fsynced bytes exist at almost every instant, whenever power fails.
        continue
    time.sleep(0.005)
`;

const dir = (node: string) => `${BASE}/${node}`;
const pidFile = (node: string) => `${dir(node)}/writer.pid`;

function sut(remote: Remote): FaultTarget {
  const none = async () => {};
  const db = {
    name: 'writer',
    process: {
      processName: 'python3',
      pidFile: (_ctx: unknown, node: string) => pidFile(node),
      kill: none,
      pause: none,
      resume: none,
      async start(_ctx: unknown, node: string) {
        const d = dir(node);
        await remote.exec(
          node,
          `if [ -e /proc/$(cat ${pidFile(node)} 2>/dev/null || echo none) ]; then exit 0; fi; cd ${d} && setsid /usr/bin/python3 ${d}/writer.py ${d} </dev/null >/dev/null 2>&1 & echo $! > ${pidFile(node)}`,
          { sudo: true },
        );
      },
    },
    dataDir: (_ctx: unknown, node: string) => `${dir(node)}/data`,
  };
  return { db, ctx: { remote, nodes: remote.nodes.map((n) => n.name) } };
}

/** How many of the writer's lines ("1\\n", "2\\n" …) make exactly `bytes`, or null. */
function linesIn(bytes: number): number | null {
  let total = 0;
  for (let i = 1; total < bytes; i++) {
    total += String(i).length + 1;
    if (total === bytes) return i;
  }
  return bytes === 0 ? 0 : null;
}

async function lines(remote: Remote, node: string) {
  const r = await remote.exec(node, `wc -l < ${dir(node)}/data/log; cat ${dir(node)}/synced`);
  const [n, synced] = r.stdout.trim().split('\n').map(Number);
  return { n: n as number, synced: synced as number };
}

/** A fresh writer directory on every node, and everything undone when the test ends. */
async function prepare(t: { teardown(fn: () => Promise<void>): void }, remote: Remote): Promise<void> {
  for (const node of ['n1', 'n2']) {
    const d = dir(node);
    await remote.exec(
      node,
      `kill -9 $(cat ${pidFile(node)} 2>/dev/null) 2>/dev/null; rm -rf ${d} && mkdir -p ${d}/data && touch ${d}/data/log && printf '%s' ${shellQuote(WRITER)} > ${d}/writer.py`,
      { sudo: true },
    );
  }
  t.teardown(async () => {
    await sweepNodes(remote, ['n1', 'n2'], ['lazyfs']);
    for (const node of ['n1', 'n2'])
      await remote.exec(node, `kill -9 $(cat ${pidFile(node)}) 2>/dev/null; rm -rf ${dir(node)}`, {
        check: false,
      });
  });
}

/** Both writers running and a fault plane over them, closed when the test ends. */
async function runningPlane(
  t: { teardown(fn: () => void | Promise<void>): void },
  remote: Remote,
  hooks: FaultTarget,
): Promise<FaultPlane> {
  for (const n of ['n1', 'n2']) await hooks.db.process?.start(hooks.ctx, n);
  const plane = new FaultPlane({
    remote,
    sut: hooks,
    ledgerPath: join(mkdtempSync(join(tmpdir(), 'faultline-lazyfs-')), 'ledger.jsonl'),
  });
  t.teardown(() => plane.close());
  return plane;
}

fx.test.serial(
  'lose-unfsynced: lands on the writer, the power failure cuts its log back to an fsync',
  async (t) => {
    const remote = await fx.remote();
    await prepare(t, remote);
    const plane = await runningPlane(t, remote, sut(remote));
    const started = await plane.invoke({
      f: 'start-lazyfs',
      value: { action: 'lose-unfsynced', targets: ['n1'] },
    });
    const value = started.value as { landed: boolean; reason?: string };
    t.true(value.landed, value.reason);
    const rec = plane.records[0] as FaultRecord;
    t.deepEqual(rec.nodes, ['n1']);
    // The writer, restarted on the mount, has written there (not merely started) before power fails.
    const atInject = await lines(remote, 'n1');
    const before = await pollFor(
      () => lines(remote, 'n1'),
      (l) => l.n >= atInject.n + 30,
      { timeoutMs: 30_000, stepMs: 200 },
    );
    t.true(
      before.n >= atInject.n + 30,
      `the writer wrote ${before.n - atInject.n} lines on the mount in 30 s`,
    );
    // Un-fsynced writes when power fails, for sure: had the writer been killed inside an fsync, the
    // filesystem would finish that fsync and nothing would be left to drop. With `hold` at most one fsync
    // already decided on (within ten lines of the hold) still happens; 25 lines more leave at least 15 unsynced.
    // data/late is the first writer's child's, written when the plane stopped the writer to mount.
    await remote.exec('n1', `touch ${dir('n1')}/hold && rm -f ${dir('n1')}/data/late`, { sudo: true });
    const held = before.n;
    const tail = await pollFor(
      () => lines(remote, 'n1'),
      (l) => l.n >= held + 25,
      { timeoutMs: 30_000, stepMs: 200 },
    );
    t.true(tail.n >= held + 25, `the writer wrote ${tail.n - held} lines after the hold in 30 s`);
    await plane.invoke({ f: 'stop-lazyfs', value: { targets: 'all' } });
    const dropped = rec.afterHeal?.signals.find((s) => s.signal.startsWith('power failure'));
    t.regex(
      String(dropped?.after),
      /^[1-9]\d* bytes in 1 files \(python3 pid \d+ and 1 process it started stopped first\)/,
    );
    // The writer's child was stopped with it at the power failure, so its write after the writer's
    // death never happened (a kill of the writer alone let it write and fsync before the drop).
    const late = await remote.exec('n1', `cat ${dir('n1')}/data/late 2>/dev/null || echo absent`, {
      sudo: true,
    });
    t.is(late.stdout.trim(), 'absent');
    const victim = rec.afterHeal?.signals.find((s) => s.side === 'victim');
    t.regex(JSON.stringify(victim?.after), /\/log: \d+ -> \d+/);
    t.true(rec.afterHeal?.landed, rec.afterHeal?.reason);
    // What survived ends exactly at an fsync (every tenth line), at or after the last one recorded.
    const survived = Number(/\/log: \d+ -> (\d+)/.exec(JSON.stringify(victim?.after))?.[1]);
    const n = linesIn(survived);
    t.not(n, null, `${survived} bytes is not a whole number of lines`);
    t.is((n as number) % 10, 0, `${n} lines survived`);
    t.true((n as number) >= before.synced, `${n} lines, ${before.synced} fsynced before`);
    t.is((await remote.exec('n1', `awk '$3 == "fuse.faultline-lazyfs"' /proc/self/mounts`)).stdout, '');
    // The writer runs again (the plane restarts the database at the window's end).
    const alive = await remote.exec('n1', `kill -0 $(cat ${pidFile('n1')}) && echo alive`, { check: false });
    t.is(alive.stdout.trim(), 'alive');
  },
);

fx.test.serial(
  'fsync-fail and slow land with probes; heal from the ledger alone unmounts and restores',
  async (t) => {
    const remote = await fx.remote();
    await prepare(t, remote);
    const plane = await runningPlane(t, remote, sut(remote));
    const failed = await plane.invoke({
      f: 'start-lazyfs',
      value: { action: 'fsync-fail', targets: ['n2'] },
    });
    t.true((failed.value as { landed: boolean }).landed, JSON.stringify(failed));
    const signals = plane.records[0]?.evidence?.signals ?? [];
    const probe = signals.find((s) => s.signal.startsWith('fsync of a probe'));
    t.regex(String(probe?.during), /^EIO after/);
    // The writer ran on the mount (its fsyncs succeeding) before they began to fail; then its own fsync
    // answered EIO and it died of it (Python raises OSError, uncaught).
    const own = signals.find((s) => s.signal === "python3's own fsyncs on the lazy filesystem");
    t.regex(String(own?.before), /^[1-9]\d* fsyncs ok, [1-9]\d* writes \(pid \d+ running on the mount\)$/);
    t.regex(String(own?.during), /^[1-9]\d* fsync\(s\) answered EIO$/);
    const reaction = signals.find((s) => s.side === 'victim' && /once its fsyncs fail/.test(s.signal));
    t.regex(String(reaction?.during), /^exited; 0 I\/O error line\(s\) logged$/);
    await plane.invoke({ f: 'stop-lazyfs', value: { targets: 'all' } });
    // After heal the writer runs again on its own directory.
    const back = plane.records[0]?.afterHeal?.signals.find((s) => /^python3 running on /.test(s.signal));
    t.regex(String(back?.after), /^pid \d+, files open there: \d+$/);
    const slow = await plane.invoke({
      f: 'start-lazyfs',
      value: { action: 'slow', targets: ['n2'], params: { delayMs: 100 } },
    });
    t.true((slow.value as { landed: boolean }).landed, JSON.stringify(slow));
    // As `faultline heal --ledger` does: the nemesis heals from the record alone.
    const outcome = await healRecords(remote, [plane.records[1] as FaultRecord]);
    t.true(outcome[0]?.healed);
    const clean = await lazyfsNemesis.verifyClean(remote, 'n2');
    t.true(clean.clean, JSON.stringify(clean));
    const restored = await remote.exec(
      'n2',
      `test -d ${dir('n2')}/data.lazyfs-backing || echo restored; test -s ${dir('n2')}/data/log && echo data`,
    );
    t.is(restored.stdout.trim(), 'restored\ndata');
  },
);

fx.test.serial(
  'several targets move one at a time, the leader last: the next is mounted only once the one before runs there',
  async (t) => {
    const remote = await fx.remote();
    await prepare(t, remote);
    const base = sut(remote);
    // n1 is the leader the database names: it must be moved last although it comes first in node order.
    const plane = await runningPlane(t, remote, {
      ...base,
      db: { ...base.db, primaries: async () => ['n1'] },
    });
    const started = await plane.invoke({
      f: 'start-lazyfs',
      value: { action: 'lose-unfsynced', targets: ['n1', 'n2'], params: { move: 'rolling' } },
    });
    const value = started.value as { landed: boolean; reason?: string };
    t.true(value.landed, value.reason);
    const rec = plane.records[0] as FaultRecord;
    const undo = rec.undo as { moved?: unknown; perNode: Record<string, { socket: string }> };
    t.deepEqual(undo.moved, { order: ['n2', 'n1'], leaders: ['n1'] });
    // Seen on the nodes, not in the record: n2's writer was started on its mount (its pidfile written)
    // before n1's filesystem came up (its control socket created). All at once, both mounts came first.
    const at = async (node: string, path: string) =>
      Number((await remote.exec(node, `stat -c %.9Y ${shellQuote(path)}`)).stdout.trim());
    const n2Started = await at('n2', pidFile('n2'));
    const n1Mounted = await at('n1', undo.perNode.n1?.socket as string);
    t.true(n2Started <= n1Mounted, `n2 started on its mount at ${n2Started}, n1 mounted at ${n1Mounted}`);
    await plane.invoke({ f: 'stop-lazyfs', value: { targets: 'all' } });
    t.true(rec.afterHeal?.landed, rec.afterHeal?.reason);
  },
);

/** What a killed run leaves on n1: the writer moved onto a lazy filesystem that no heal will undo. */
async function leftMount(t: { deepEqual(a: unknown, b: unknown): void }, remote: Remote, id: string) {
  const hooks = sut(remote);
  await hooks.db.process?.start(hooks.ctx, 'n1');
  const rec = await lazyfsNemesis.inject(
    remote,
    {
      kind: 'lazyfs',
      action: 'lose-unfsynced',
      targets: ['n1'],
      params: { dirs: { n1: `${dir('n1')}/data` }, pidFiles: { n1: pidFile('n1') }, processName: 'python3' },
    },
    id,
  );
  t.deepEqual(rec.nodes, ['n1']);
  return hooks;
}

fx.test.serial('a killed run leaves a mount: the sweep finds it by its marker and undoes it', async (t) => {
  const remote = await fx.remote();
  await prepare(t, remote);
  await leftMount(t, remote, 'sweep1');
  const swept = await sweepNodes(remote, ['n1'], ['lazyfs']);
  t.true(swept[0]?.clean, JSON.stringify(swept));
  t.regex(JSON.stringify(swept[0]), /unmounted .*data and moved/);
});

fx.test.serial(
  'a run killed inside its power failure leaves the database stopped: the sweep resumes it before it stops it',
  async (t) => {
    const remote = await fx.remote();
    await prepare(t, remote);
    const hooks = await leftMount(t, remote, 'sweep2');
    await hooks.db.process?.start(hooks.ctx, 'n1');
    const atStart = await pollFor(
      () => lines(remote, 'n1').catch(() => ({ n: 0, synced: 0 })),
      (l) => l.n > 0,
      { timeoutMs: 30_000, stepMs: 100 },
    );
    await pollFor(
      () => lines(remote, 'n1'),
      (l) => l.n >= atStart.n + 20,
      { timeoutMs: 30_000, stepMs: 100 },
    );
    // The power failure's first step, and then the run dies: the writer and its child stay stopped.
    const stopped = (
      await remote.exec('n1', signalTreeCommand(pidFile('n1'), 'python3', 'STOP'), { sudo: true })
    ).stdout
      .trim()
      .split(/\s+/);
    t.is(stopped.length, 2, `the writer and its child: ${stopped.join(' ')}`);
    const swept = await sweepNodes(remote, ['n1'], ['lazyfs']);
    t.true(swept[0]?.clean, JSON.stringify(swept));
    const states = await remote.exec(
      'n1',
      stopped
        .map((p) => `sed -n 's/^State:[[:space:]]*//p' /proc/${p}/status 2>/dev/null || true`)
        .join('; '),
      { sudo: true },
    );
    t.notRegex(states.stdout, /^T/m, `no process of the writer is left stopped: ${states.stdout}`);
  },
);
