import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { bucketSeconds, perfChecker } from '../../checkers/catalogue/perf.ts';
import { logTicks } from '../../checkers/catalogue/svg.ts';
import { bandLabel, faultBands } from '../../checkers/fault-bands.ts';
import { describeFault, grudgeComponents } from '../../nemeses/describe.ts';
import { completeGrudge, majoritiesRing } from '../../nemeses/topology.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { H } from './build.ts';

/** What each fault did, in words, and its window drawn once from the history. */

const five = ['n1', 'n2', 'n3', 'n4', 'n5'];

test('partitions in words: isolated, cut off, three ways, one-way cuts', (t) => {
  const one = describeFault({
    kind: 'partition',
    action: 'start',
    nodes: five,
    grudge: completeGrudge([['n2'], ['n1', 'n3', 'n4', 'n5']]),
  });
  t.deepEqual(one, { what: 'n2 isolated from n1 n3 n4 n5', short: 'n2 | n1 n3 n4 n5' });
  const halves = describeFault({
    kind: 'partition',
    action: 'start',
    nodes: five,
    grudge: completeGrudge([
      ['n4', 'n5'],
      ['n1', 'n2', 'n3'],
    ]),
  });
  t.deepEqual(halves, { what: 'n4 n5 cut off from n1 n2 n3', short: 'n4 n5 | n1 n2 n3' });
  const three = describeFault({
    kind: 'partition',
    action: 'start',
    nodes: five,
    grudge: completeGrudge([['n1'], ['n2', 'n3'], ['n4', 'n5']]),
  });
  t.is(three.what, 'nodes partitioned into n1 | n2 n3 | n4 n5');
  const oneWay = describeFault({
    kind: 'partition',
    action: 'start',
    nodes: ['n1', 'n3'],
    params: { topology: 'asymmetric' },
    grudge: { n1: ['n3'] },
    allNodes: five,
  });
  t.is(oneWay.what, 'asymmetric partition: n1 drops n3');
  t.is(grudgeComponents(majoritiesRing(five)), null, 'a ring is not a set of components');
  // Only the targets known (an older history): the rest of the cluster is the other side.
  t.is(
    describeFault({ kind: 'partition', action: 'start', nodes: ['n2'], allNodes: five }).what,
    'n2 isolated from n1 n3 n4 n5',
  );
});

test('process, clock and packet faults in words', (t) => {
  t.deepEqual(
    describeFault({ kind: 'process', action: 'kill', nodes: ['n3'], params: { process: 'etcd' } }),
    {
      what: 'etcd killed (SIGKILL) on n3',
      short: 'kill n3',
    },
  );
  t.is(
    describeFault({ kind: 'clock', action: 'bump', nodes: ['n2'], params: { deltaMs: 300_000 } }).what,
    "n2's clock +300 s",
  );
  t.is(
    describeFault({
      kind: 'packet',
      action: 'start',
      nodes: ['n1', 'n2'],
      params: { behaviors: { delay: { timeMs: 100 }, loss: { percent: 20 } } },
    }).what,
    'packets of n1 n2: delayed 100 ms, loss 20%',
  );
  // Aimed at the primary: every node shapes its link to n1, named by the target.
  t.is(
    describeFault({
      kind: 'packet',
      action: 'start',
      nodes: ['n1', 'n2', 'n3'],
      targets: ['n1'],
      params: { behaviors: { rate: '64kbit' } },
    }).what,
    'packets to and from n1: rate 64kbit',
  );
});

/** A faultline history: the nemesis's start/stop ops with their completion values, and marked client ops. */
function faultlineHistory() {
  const h = new H();
  h.invoke(0, 'read', null, { node: 'n1', at: 1e9 }).ok(0, 'read', 1, { node: 'n1', at: 1.1e9 });
  h.invoke('nemesis', 'start-partition', { topology: 'one', targets: 'one' }, { at: 4e9 });
  h.info(
    'nemesis',
    'start-partition',
    { id: 'w1', fault: 'partition', nodes: ['n2'], what: 'n2 isolated from n1 n3 n4 n5', landed: true },
    { at: 5e9, faultEpoch: ['w1'] },
  );
  for (let i = 0; i < 5; i++)
    h.invoke(1 + i, 'read', null, { node: 'n2', at: (5.5 + i) * 1e9, faultEpoch: ['w1'] }).info(
      1 + i,
      'read',
      null,
      { at: (5.5 + i) * 1e9 + 1 },
    );
  h.invoke('nemesis', 'stop-partition', { targets: 'all' }, { at: 10e9, faultEpoch: ['w1'] });
  h.info('nemesis', 'stop-partition', { fault: 'partition', healed: ['w1'] }, { at: 10.8e9 });
  // A client op invoked during the window but completing long after it (a timeout).
  h.invoke(9, 'read', null, { node: 'n2', at: 9.9e9, faultEpoch: ['w1'] }).info(9, 'read', null, {
    at: 12.5e9,
  });
  return h;
}

test('a window is one band from the start op to its heal, labelled with what it did', (t) => {
  const events = faultlineHistory().history();
  const ops = pairEvents(events).ops;
  const bands = faultBands(ops, events);
  t.is(bands.length, 1, 'the nemesis op and the fault epoch are one window, not two');
  const [b] = bands;
  t.is(b?.start, 4e9);
  t.is(b?.end, 10.8e9, 'ends when the heal completed, not when a slow op marked with it ended');
  t.is(bandLabel(b as (typeof bands)[number]), 'w1 partition: n2 isolated from n1 n3 n4 n5');
  // A per-key slice has no nemesis op: its window comes from the ops' fault epochs.
  const slice = faultBands(ops.filter((o) => o.process !== 'nemesis'));
  t.deepEqual(
    slice.map((x) => [x.id, x.start, x.end]),
    [['w1', 5.5e9, 9.9e9]],
  );
});

test('perf: buckets sized to the run, each fault window shaded once with its label, log ticks', async (t) => {
  t.is(bucketSeconds(30), 1);
  t.is(bucketSeconds(600), 20);
  t.true(30 / bucketSeconds(30) >= 20 && 600 / bucketSeconds(600) >= 20 && 3 / bucketSeconds(3) >= 20);
  t.deepEqual(logTicks(5, 5000), [5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]);
  t.true(logTicks(800, 1300).length >= 4, 'a narrow range still gets several ticks');
  t.deepEqual(logTicks(0.5, 2e5), [1, 10, 100, 1000, 10000, 100000]);

  const dir = mkdtempSync(join(tmpdir(), 'perf-bands-'));
  try {
    const h = faultlineHistory();
    for (let i = 0; i < 300; i++)
      h.invoke(20, 'write', i, { at: i * 0.1e9 }).ok(20, 'write', i, { at: i * 0.1e9 + 5e6 });
    const events = h.history();
    const ops = pairEvents(events).ops;
    const r = await perfChecker.check(ops, {}, { outDir: dir, faults: faultBands(ops, events) });
    t.is(r.stats.windowSeconds, 1);
    const windows = r.stats.latencyMsByWindow as unknown[];
    t.true(windows.length >= 20, `${windows.length} buckets over a 30 s run`);
    const svg = readFileSync(join(dir, 'latency.svg'), 'utf8');
    t.is((svg.match(/class="fault-band"/g) ?? []).length, 1);
    t.regex(svg, /data-label="w1 partition: n2 isolated from n1 n3 n4 n5"/);
    t.regex(svg, /p50 \(solid\) and p99 \(dashed\) per 1 s bucket/);
    const rate = readFileSync(join(dir, 'rate.svg'), 'utf8');
    t.is((rate.match(/class="fault-band"/g) ?? []).length, 1);
    for (const outcome of ['write ok', 'read info']) t.true(rate.includes(`>${outcome}</text>`), outcome);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
