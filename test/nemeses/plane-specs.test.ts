import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { DeclaredSignal } from '../../nemeses/declared-signal.ts';
import { FaultPlane } from '../../nemeses/plane.ts';
import { classifyFaultOp } from '../../nemeses/registry.ts';
import { buildSchedule, checkStepTargets, nemesisStepSchema } from '../../nemeses/schedule.ts';
import type { FaultRecord, FaultSpec, Nemesis } from '../../nemeses/types.ts';
import { gatePlanCommands } from '../../src/app/plugin/trust.ts';
import type { Remote } from '../../src/core/control/types.ts';
import type { FaultTarget } from '../../src/core/database/capabilities.ts';
import { Rng } from '../../src/core/generator/index.ts';

const remoteOf = (n: number) =>
  ({
    nodes: Array.from({ length: n }, (_v, i) => ({
      name: `n${i + 1}`,
      host: `h${i + 1}`,
      port: 22,
      user: 'r',
    })),
  }) as unknown as Remote;

/** A nemesis that records the specs it was given and proves landing (with after-heal signals). */
function recorder(specs: FaultSpec[]): Nemesis {
  return {
    kind: 'any',
    capabilities: async () => [],
    async inject(_r, spec, id): Promise<FaultRecord> {
      specs.push(spec);
      return { id, spec, nodes: spec.targets as string[], injectedAt: new Date().toISOString(), undo: {} };
    },
    evidence: async (_r, rec) => ({
      landed: true,
      signals: rec.nodes.map((node) => ({
        side: 'victim' as const,
        node,
        signal: 'probe',
        before: 'ok',
        during: 'cut',
        landed: true,
      })),
    }),
    heal: async () => {},
    evidenceAfterHeal: async (_r, rec) => ({
      landed: true,
      signals: rec.nodes.map((node) => ({
        side: 'victim' as const,
        node,
        signal: 'probe',
        after: 'ok',
        landed: true,
      })),
    }),
    verifyClean: async () => ({ clean: true, fixed: [], found: [] }),
  };
}

function plane(
  n: number,
  caps: Partial<Omit<FaultTarget, 'ctx'>> = {},
  declaredSignals: readonly DeclaredSignal[] = [],
) {
  const specs: FaultSpec[] = [];
  const remote = remoteOf(n);
  const sut: FaultTarget = {
    db: { name: 'db' },
    ...caps,
    ctx: { remote, nodes: remote.nodes.map((x) => x.name) },
  };
  const p = new FaultPlane({
    remote,
    ledgerPath: join(mkdtempSync(join(tmpdir(), 'fl-plane-')), 'ledger.jsonl'),
    sut,
    rng: new Rng(3),
    lookup: async () => recorder(specs),
    declaredSignals,
  });
  return { p, specs };
}

test('minority-third resolves to nodes (a third of the cluster), never to an empty target list', async (t) => {
  const { p, specs } = plane(7);
  const r = await p.invoke({
    f: 'start-partition',
    value: { topology: 'minority-third', targets: 'minority-third' },
  });
  t.like(r.value as object, { landed: true });
  t.is(specs[0]?.targets?.length, 2);
  t.is(specs[0]?.params?.topology, 'minority-third');
  // On 3 nodes there is no minority third: the fault is refused with the reason, not run on no node.
  const small = plane(3);
  const bad = await small.p.invoke({ f: 'start-partition', value: { targets: 'minority-third' } });
  t.regex(String(bad.error), /no minority third/);
  t.is(small.specs.length, 0);
});

test('unknown node names are refused: at inject time, and before a plan runs', async (t) => {
  const none = async () => {};
  const process = { processName: 'db', pidFile: (_c: unknown, n: string) => `/p/${n}`, start: none };
  const { p, specs } = plane(3, {
    db: { name: 'db', process: { ...process, kill: none } },
  });
  const r = await p.invoke({ f: 'kill', value: { targets: ['n1', 'n9'] } });
  t.regex(String(r.error), /unknown target node\(s\): n9/);
  t.is(specs.length, 0);
  t.throws(
    () =>
      checkStepTargets(
        [{ kind: 'process', action: 'kill', targets: ['n1', 'n9'], startS: 0, durationS: 1 }],
        ['n1', 'n2', 'n3'],
        'S1: binding',
      ),
    { message: /S1: binding: nemesis\[0\] \(process\): targets: unknown target node\(s\): n9/ },
  );
  t.throws(
    () =>
      checkStepTargets(
        [{ kind: 'partition', topology: 'majorities-ring', startS: 0, durationS: 1 }],
        ['n1', 'n2', 'n3'],
        'S2: binding',
      ),
    { message: /majorities-ring" needs at least 4 nodes/ },
  );
});

test('a fault needing a database capability the SUT lacks is not landed, naming the capability', async (t) => {
  const { p, specs } = plane(3, { db: { name: 'memcached' } });
  const kill = await p.invoke({ f: 'kill', value: { targets: 'one' } });
  t.regex(
    String(kill.error),
    /capability missing: database memcached does not declare the process capability/,
  );
  const lead = await p.invoke({
    f: 'start-partition',
    value: { targets: 'primaries', topology: 'primaries' },
  });
  t.regex(String(lead.error), /does not declare the primaries capability/);
  const disk = await p.invoke({ f: 'start-disk', value: { action: 'disk-full', targets: 'one' } });
  t.regex(String(disk.error), /data-dir capability/);
  t.is(specs.length, 0);
  t.true(p.records.every((r) => r.evidence?.landed === false && r.healedAt !== undefined));
});

test('plan steps become the specs the nemeses expect (packet behaviours, disk data dirs, clock wrapper)', async (t) => {
  const { p, specs } = plane(3, {
    db: { name: 'db', dataDir: (_c, n) => `/data/${n}` },
    clock: () => ({ mode: 'faketime', name: 'db', binary: '/usr/bin/db' }),
  });
  await p.invoke({ f: 'start-packet', value: { action: 'loss', targets: 'all', params: { percent: 10 } } });
  t.deepEqual(specs[0]?.params, { behaviors: { loss: { percent: 10 } } });
  await p.invoke({ f: 'start-disk', value: { action: 'disk-full', targets: ['n2'] } });
  t.deepEqual(specs[1]?.params, { dirs: { n2: '/data/n2' } });
  await p.invoke({ f: 'bump-clock', value: { targets: 'one', deltaMs: 5000 } });
  t.like(specs[2]?.params, { deltaMs: 5000, mode: 'faketime', binary: '/usr/bin/db' });
  // Evidence reads before → during → after: the after-heal signals join the landing signals.
  await p.healAll('none');
  const rec = p.records[0] as FaultRecord;
  t.like(rec.evidence?.signals[0], { before: 'ok', during: 'cut', after: 'ok' });
  t.is(rec.afterHeal?.landed, true);
});

test("a plan's landing command not trusted leaves its fault not proven, naming the flag; nothing runs", async (t) => {
  const signals = gatePlanCommands(
    [{ type: 'command', command: 'touch /tmp/never', only: null, text: 'command: touch /tmp/never' }],
    false,
  );
  // The remote has no exec at all: a refused command must not try to reach a node.
  const { p } = plane(3, {}, signals);
  await p.invoke({ f: 'start-partition', value: { topology: 'majorities-ring', targets: 'all' } });
  const rec = p.records[0] as FaultRecord;
  t.false(rec.evidence?.landed, 'the nemesis proved it, the plan asked for more');
  t.regex(
    rec.evidence?.reason ?? '',
    /the plan's declared landing command was not run \(.*--trust-plan-commands.*\): declared: command: touch \/tmp\/never/,
  );
  await p.healAll('none');
});

test('op vocabulary: Jepsen names and generic start-<kind> / stop-<kind> from the registry', (t) => {
  t.like(classifyFaultOp('kill'), { cls: 'kill', kind: 'process', action: 'kill', starts: true });
  t.like(classifyFaultOp('start'), { cls: 'kill', starts: false });
  t.like(classifyFaultOp('start-disk', { action: 'flakey' }), {
    cls: 'disk',
    kind: 'disk',
    action: 'flakey',
  });
  t.like(classifyFaultOp('corrupt-file'), { kind: 'disk', action: 'corrupt', starts: true });
  t.like(classifyFaultOp('stop-partition'), { cls: 'partition', starts: false });
  t.is(classifyFaultOp('start-flood'), null);
});

test('random schedules leave out targets a small cluster cannot have', (t) => {
  const s = buildSchedule({
    faults: ['partition'],
    intervalMs: 100,
    durationMs: 20_000,
    seed: 1,
    nodeCount: 3,
  });
  const topologies = new Set(s.ops.filter((o) => o.f === 'start-partition').map((o) => o.value.topology));
  t.true(topologies.size > 0);
  t.false(topologies.has('majorities-ring'));
  t.false(topologies.has('minority-third'));
  const delayed = buildSchedule({
    faults: ['kill'],
    intervalMs: 100,
    durationMs: 2000,
    seed: 1,
    delayMs: 1500,
  });
  t.true(delayed.ops.filter((o) => o.phase === 'main').every((o) => o.atMs >= 1500));
});

test('on one node a random schedule kills and pauses that node, and refuses a partition', (t) => {
  const startsOf = (fault: string) =>
    buildSchedule({ faults: [fault], intervalMs: 100, durationMs: 5000, seed: 1, nodeCount: 1 }).ops.filter(
      (o) => o.phase === 'main' && o.f === fault,
    );
  // `one` and `primaries` are selectors here, which one node satisfies; they are partition topologies
  // (one side cut off from another) only for the partition class.
  for (const fault of ['kill', 'pause']) {
    const starts = startsOf(fault);
    t.true(starts.length > 0, fault);
    t.true(
      starts.every((o) => ['one', 'primaries'].includes(String(o.value.targets))),
      fault,
    );
  }
  t.throws(
    () => buildSchedule({ faults: ['partition'], intervalMs: 100, durationMs: 5000, seed: 1, nodeCount: 1 }),
    {
      message: /--nemesis partition: no target fits this cluster/,
    },
  );
});

test('random schedules aim no fault at leaders a database cannot name', (t) => {
  const targetsOf = (hasPrimaries: boolean | undefined) => {
    const s = buildSchedule({
      faults: ['pause', 'kill', 'partition'],
      intervalMs: 100,
      durationMs: 20_000,
      seed: 1,
      nodeCount: 3,
      ...(hasPrimaries !== undefined && { hasPrimaries }),
    });
    const starts = s.ops.filter((o) => ['pause', 'kill', 'start-partition'].includes(o.f));
    return new Set(starts.map((o) => String(o.value.targets ?? o.value.topology)));
  };
  t.true(targetsOf(undefined).has('primaries'));
  t.true(targetsOf(true).has('primaries'));
  const without = targetsOf(false);
  t.false(without.has('primaries'));
  t.true(without.has('one'));
});

test('plan steps are validated by their nemesis: real actions only, unknown kinds named', (t) => {
  const ok = nemesisStepSchema.safeParse({ kind: 'disk', action: 'disk-full' });
  t.true(ok.success);
  t.like(ok.data, { targets: 'one', startS: 10, durationS: 20 });
  const slow = nemesisStepSchema.safeParse({ kind: 'disk', action: 'slow' });
  t.false(slow.success);
  t.deepEqual(slow.error?.issues[0]?.path, ['action']);
  const kind = nemesisStepSchema.safeParse({ kind: 'flood' });
  t.regex(
    kind.error?.issues[0]?.message ?? '',
    /unknown nemesis "flood" \(one of partition, packet, process, clock, disk, membership, lazyfs, proxy\)/,
  );
});

test('a lazyfs fault stops the database with the signal its process control names (TERM unless said)', async (t) => {
  const none = async () => {};
  const control = {
    processName: 'postgres',
    pidFile: (_c: unknown, n: string) => `/p/${n}`,
    start: none,
    kill: none,
  };
  const dataDir = (_c: unknown, n: string) => `/d/${n}`;
  const fast = plane(3, { db: { name: 'pg', dataDir, process: { ...control, stopSignal: 'INT' } } });
  await fast.p.invoke({ f: 'start-lazyfs', value: { action: 'lose-unfsynced', targets: ['n1'] } });
  t.like(fast.specs[0]?.params, { processName: 'postgres', stopSignal: 'INT', dirs: { n1: '/d/n1' } });
  const plain = plane(3, { db: { name: 'kv', dataDir, process: control } });
  await plain.p.invoke({ f: 'start-lazyfs', value: { action: 'lose-unfsynced', targets: ['n1'] } });
  t.false('stopSignal' in (plain.specs[0]?.params ?? {}));
});
