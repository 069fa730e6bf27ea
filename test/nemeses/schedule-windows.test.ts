import test from 'ava';
import { faultWindows, nemesisPlanFor, opsForStep } from '../../nemeses/schedule.ts';
import { scheduledWindows } from '../../src/app/plan/binding.ts';
import { loadPlan } from '../../src/app/plan/load.ts';

const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;

test('windows follow startS / intervalS / count and stop at the run duration', (t) => {
  const w = faultWindows(
    [{ kind: 'partition', topology: 'one', startS: 4, durationS: 10, intervalS: 14, count: 2 }],
    30,
  );
  t.deepEqual(
    w.map((x) => [x.event, x.startS, x.endS]),
    [
      ['e1', 4, 14],
      ['e2', 18, 28],
    ],
  );
  // A window that would outlast the run is cut at its end.
  const cut = faultWindows(
    [{ kind: 'process', action: 'kill', targets: 'one', startS: 25, durationS: 10 }],
    30,
  );
  t.deepEqual(
    cut.map((x) => x.endS),
    [30],
  );
});

test('the tier caps the number of windows, earliest first, across steps', async (t) => {
  const plan = await loadPlan(planPath);
  const s1 = plan.resolved.find((r) => r.id === 'S1');
  const steps = s1?.binding?.nemesis ?? [];
  const smoke = faultWindows(steps, 30, s1?.tiers.smoke?.faultWindows);
  t.deepEqual(
    smoke.map((x) => `${x.step.kind} ${x.step.topology ?? x.step.action}`),
    ['partition asymmetric', 'process kill'],
    'smoke tier of S1: one partition and one kill',
  );
  const all = faultWindows(steps, 600);
  t.is(all.length, scheduledWindows(steps, 600), 'same count as the plan layer computes');
  const three = faultWindows(steps, 600, 3);
  t.deepEqual(
    three.map((x) => x.startS),
    [5, 15, 25],
  );
  t.deepEqual(
    three.map((x) => x.step.kind),
    ['partition', 'process', 'partition'],
  );
});

test('nemesis ops carry their intended times; stops before starts at the same instant; final heals each kind', (t) => {
  const w = faultWindows(
    [
      { kind: 'partition', topology: 'majorities-ring', startS: 0, durationS: 5, intervalS: 5, count: 2 },
      { kind: 'clock', action: 'bump', targets: 'one', deltaMs: 1000, startS: 1, durationS: 2 },
    ],
    20,
  );
  const plan = nemesisPlanFor(w, { clock: { mode: 'faketime', name: 'x' } });
  t.deepEqual(
    plan.main.map((o) => [o.f, (o.time ?? 0) / 1e9]),
    [
      ['start-partition', 0],
      ['bump-clock', 1],
      ['reset-clock', 3],
      ['stop-partition', 5],
      ['start-partition', 5],
      ['stop-partition', 10],
    ],
  );
  t.deepEqual(plan.final.map((o) => o.f).sort(), ['reset-clock', 'stop-partition']);
  const bump = plan.main[1]?.value as { params?: Record<string, unknown>; deltaMs?: number };
  t.is(bump.deltaMs, 1000);
  t.deepEqual(bump.params, { mode: 'faketime', name: 'x', deltaMs: 1000 });
});

test('ops use the runner vocabulary for every kind', (t) => {
  t.is(
    opsForStep({ kind: 'process', action: 'kill', targets: 'minority', startS: 0, durationS: 1 }).start.f,
    'kill',
  );
  t.is(
    opsForStep({ kind: 'process', action: 'kill', targets: 'minority', startS: 0, durationS: 1 }).stop?.f,
    'start',
  );
  t.is(
    opsForStep({ kind: 'process', action: 'pause', targets: 'one', startS: 0, durationS: 1 }).stop?.f,
    'resume',
  );
  t.deepEqual(
    opsForStep({
      kind: 'packet',
      behaviour: 'loss',
      targets: 'all',
      params: { percent: 10 },
      startS: 0,
      durationS: 1,
    }).start,
    { f: 'start-packet', value: { action: 'loss', targets: 'all', params: { percent: 10 } } },
  );
  t.is(
    opsForStep({ kind: 'disk', action: 'disk-full', targets: 'one', startS: 0, durationS: 1 }).stop?.f,
    'stop-disk',
  );
  const one = opsForStep({ kind: 'partition', topology: 'one', startS: 0, durationS: 1 }).start;
  t.deepEqual(one.value, { topology: 'one', targets: 'one' });
  const primaries = opsForStep({ kind: 'partition', topology: 'primaries', startS: 0, durationS: 1 }).start;
  t.deepEqual(primaries.value, { topology: 'primaries', targets: 'primaries' });
  const ring = opsForStep({ kind: 'partition', topology: 'majorities-ring', startS: 0, durationS: 1 }).start;
  t.deepEqual(ring.value, { topology: 'majorities-ring' });
});
