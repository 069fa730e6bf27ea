import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { readLedger } from '../../nemeses/ledger.ts';
import { FaultPlane } from '../../nemeses/plane.ts';
import type { FaultRecord, FaultSpec, Nemesis } from '../../nemeses/types.ts';
import { faultCheck } from '../../src/app/test/checks.ts';
import type { Remote } from '../../src/core/control/types.ts';
import type { FaultTarget } from '../../src/core/database/capabilities.ts';
import { Rng } from '../../src/core/generator/index.ts';

const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
const remote = {
  nodes: nodes.map((name) => ({ name, host: name, port: 22, user: 'root' })),
} as unknown as Remote;

/** A nemesis that records what it was asked; landing is decided per spec by `lands`. */
function fakeNemesis(
  kind: string,
  calls: string[],
  lands: (s: FaultSpec) => boolean,
  failInject = false,
): Nemesis {
  return {
    kind,
    capabilities: async () => [],
    async inject(_r, spec, id): Promise<FaultRecord> {
      calls.push(`inject ${id} ${spec.kind}/${spec.action} ${(spec.targets as string[]).join(',')}`);
      if (failInject) throw new Error('iptables: not found');
      return {
        id,
        spec,
        nodes: spec.targets as string[],
        injectedAt: new Date().toISOString(),
        undo: { spec },
      };
    },
    async evidence(_r, rec) {
      const landed = lands(rec.spec);
      return { landed, ...(landed ? {} : { reason: 'counter stayed 0' }), signals: [] };
    },
    async heal(_r, rec) {
      calls.push(`heal ${rec.id}`);
    },
    async evidenceAfterHeal(_r, rec, ctx) {
      calls.push(`after-heal ${rec.id} others: ${ctx?.othersInForce?.join(', ') ?? 'none'}`);
      return { landed: true, signals: [] };
    },
    verifyClean: async () => ({ clean: true, fixed: [], found: [] }),
  };
}

function fakeFaultTarget(calls: string[]): FaultTarget {
  const none = async () => {};
  const db = {
    name: 'fake',
    primaries: async () => ['n3'],
    process: {
      processName: 'fake',
      pidFile: (_c: unknown, n: string) => `/run/${n}.pid`,
      start: async (_c: unknown, n: string) => {
        calls.push(`start ${n}`);
      },
      kill: none,
    },
  };
  return { db, ctx: { remote, nodes: remote.nodes.map((n) => n.name) } };
}

function driver(calls: string[], opts: { failInject?: boolean; lands?: (s: FaultSpec) => boolean } = {}) {
  const ledgerPath = join(mkdtempSync(join(tmpdir(), 'faultline-driver-')), 'ledger.jsonl');
  const lands = opts.lands ?? (() => true);
  const d = new FaultPlane({
    remote,
    sut: fakeFaultTarget(calls),
    lookup: async (kind) => fakeNemesis(kind, calls, lands, opts.failInject),
    rng: new Rng(1),
    ledgerPath,
  });
  return { d, ledgerPath };
}

test('start/stop open and close fault windows; primaries resolve through the DB; ledger records every step', async (t) => {
  const calls: string[] = [];
  const { d, ledgerPath } = driver(calls);
  const r1 = await d.invoke({ f: 'start-partition', value: { targets: 'primaries' } });
  t.like(r1.value as object, { id: 'w1', fault: 'partition', nodes: ['n3'], landed: true });
  t.deepEqual(d.activeWindows(), ['w1']);
  const r2 = await d.invoke({ f: 'kill', value: { targets: 'minority' } });
  t.is((r2.value as { nodes: string[] }).nodes.length, 2);
  t.deepEqual(d.activeWindows(), ['w1', 'w2']);
  await d.invoke({ f: 'stop-partition', value: { targets: 'all' } });
  t.deepEqual(d.activeWindows(), ['w2']);
  await d.invoke({ f: 'start', value: { targets: 'all' } });
  t.is(d.activeWindows(), null);
  // a kill window ends with the DB's own start on every node
  t.deepEqual(
    calls.filter((c) => c.startsWith('start ')).sort(),
    nodes.map((n) => `start ${n}`),
  );
  t.true(calls.includes('inject w1 partition/start n3'));
  const events = readFileSync(ledgerPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).t);
  t.deepEqual(events, [
    'cluster',
    'inject',
    'injected',
    'evidence',
    'inject',
    'injected',
    'evidence',
    'heal',
    // every heal is followed by the signals measured again (or the kind saying it has none)
    'after-heal',
    'heal',
    'after-heal',
  ]);
  // the nemeses' own ledger reader sees nothing left in force
  t.deepEqual(readLedger(ledgerPath).unhealed, []);
  const rec = d.records[0] as FaultRecord;
  t.is(rec.spec.params?.topology, 'primaries');
  t.truthy(rec.healedAt);
  t.is(faultCheck(d.records).valid, true);
});

test('a fault without landing evidence, or one that could not be injected, makes the faults check unknown', async (t) => {
  const calls: string[] = [];
  const { d } = driver(calls, { lands: (s) => s.kind !== 'process' });
  await d.invoke({ f: 'pause', value: { targets: 'one' } });
  await d.invoke({ f: 'resume', value: { targets: 'all' } });
  const check = faultCheck(d.records);
  t.is(check.valid, 'unknown');
  t.regex(check.anomalies[0]?.explanation ?? '', /counter stayed 0/);

  const failing = driver([], { failInject: true }).d;
  const r = await failing.invoke({ f: 'start-partition', value: { targets: 'one' } });
  t.regex(String(r.error), /inject failed: iptables: not found/);
  t.is(failing.activeWindows(), null);
  t.is(faultCheck(failing.records).valid, 'unknown');
});

test('healAll undoes whatever is still open', async (t) => {
  const calls: string[] = [];
  const { d } = driver(calls);
  await d.invoke({ f: 'start-partition', value: { targets: 'majority' } });
  await d.invoke({ f: 'bump-clock', value: { targets: 'one', deltaMs: 5000 } });
  const report = await d.healAll();
  t.deepEqual(
    report.faults.filter((f) => !f.healed),
    [],
  );
  t.is(d.activeWindows(), null);
  t.deepEqual(calls.filter((c) => c.startsWith('heal')).sort(), ['heal w1', 'heal w2']);
  // a majority partition isolates a minority (2 of 5)
  t.is(d.records[0]?.nodes.length, 2);
});

test('after heal, a window is re-measured knowing which other faults are still in force', async (t) => {
  const calls: string[] = [];
  const { d } = driver(calls);
  t.teardown(() => d.close());
  await d.invoke({ f: 'start-partition', value: { topology: 'asymmetric' } });
  await d.invoke({ f: 'kill', value: { targets: ['n2'] } });
  await d.invoke({ f: 'start', value: { targets: 'all' } });
  await d.invoke({ f: 'stop-partition', value: { targets: 'all' } });
  t.deepEqual(
    calls.filter((c) => c.startsWith('after-heal')),
    ['after-heal w2 others: w1 partition', 'after-heal w1 others: none'],
  );
});
