import { fileURLToPath } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import { armBinding, type Binding } from '../../src/app/plan/binding.ts';
import { loadPlan } from '../../src/app/plan/load.ts';
import { DEFAULT_OP_TIMEOUT_MS, parseTimeScale, scalePlanTime } from '../../src/app/plan/time-scale.ts';

const demo = fileURLToPath(new URL('../../plans/etcd-register.md', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/faultline.js', import.meta.url));

test('a time scale stretches every duration of the schedule and divides the rate; counts stay', async (t) => {
  const plan = await loadPlan(demo);
  const scaled = scalePlanTime(plan, 4);
  const s1 = scaled.resolved.find((r) => r.id === 'S1');
  const was = plan.resolved.find((r) => r.id === 'S1');
  if (!s1?.binding || !was?.binding) return t.fail('S1 has no binding');
  t.deepEqual(s1.tiers.smoke, { nodes: 3, durationS: 120, faultWindows: 2, seeds: 1 });
  t.deepEqual(s1.tiers.hardening, { nodes: 5, durationS: 2400, faultWindows: 20, seeds: 3 });
  t.deepEqual(s1.binding.tiers.smoke, s1.tiers.smoke, "the binding's own tiers agree");
  t.deepEqual(
    s1.binding.nemesis.map((n) => [n.kind, n.startS, n.durationS, n.intervalS]),
    [
      ['partition', 20, 32, 160],
      ['partition', 100, 32, 160],
      ['process', 60, 12, 120],
    ],
  );
  t.is(s1.binding.rate, 12.5);
  t.is(s1.binding.concurrency, was.binding.concurrency);
  t.is(s1.binding.recoveryBudgetS, 40);
  t.is(s1.binding.opTimeout, DEFAULT_OP_TIMEOUT_MS * 4, 'the default op timeout is stretched too');
  // Not time: a clock bump's size stays as planned.
  const s2 = scaled.resolved.find((r) => r.id === 'S2');
  t.is(s2?.binding?.nemesis[0]?.deltaMs, 300_000);
  t.is(s2?.binding?.nemesis[0]?.startS, 20);
  // The loaded plan itself is untouched (it is checked as written).
  t.is(was.binding.rate, 50);
  t.is(was.binding.nemesis[0]?.startS, 5);
  t.is(scalePlanTime(plan, 1), plan);
});

test("an arm's own overrides are scaled as the parent's fields are", async (t) => {
  const plan = await loadPlan(demo);
  const s1 = plan.resolved.find((r) => r.id === 'S1');
  if (!s1?.binding) return t.fail('S1 has no binding');
  const withArm: Binding = {
    ...s1.binding,
    arms: { api: { rate: 20, opTimeout: 3000, nemesis: [{ ...s1.binding.nemesis[0]!, startS: 7 }] } },
  };
  const scaled = scalePlanTime({ ...plan, resolved: [{ ...s1, binding: withArm }] }, 2.5);
  const arm = armBinding(scaled.resolved[0]!.binding!, 'api');
  t.is(arm.rate, 8);
  t.is(arm.opTimeout, 7500);
  t.is(arm.nemesis[0]?.startS, 17.5);
  t.is(arm.nemesis[0]?.durationS, 20);
});

test('--time-scale: bounds checked in one line; dry-run shows the stretched schedule', async (t) => {
  t.throws(() => parseTimeScale('0.5'), { message: /--time-scale 0\.5: expected a number from 1 to 20/ });
  t.throws(() => parseTimeScale('x'));
  t.is(parseTimeScale('4'), 4);
  const env = { ...process.env, FAULTLINE_FROM_SOURCE: '1' };
  const r = await execa('node', [bin, 'run', demo, '--local', '3', '--dry-run', '--time-scale', '4'], {
    env,
    reject: false,
  });
  t.is(r.exitCode, 0, r.stderr);
  t.regex(r.stderr, /time scale 4×/);
  t.regex(
    r.stderr,
    /S1: .*3 nodes × 120s × 2 fault window\(s\).*partition asymmetric 20–52s, process kill 60–72s/,
  );
  const bad = await execa('node', [bin, 'run', demo, '--local', '3', '--dry-run', '--time-scale', '50'], {
    env,
    reject: false,
  });
  t.is(bad.exitCode, 254);
  t.is(bad.stderr.trim().split('\n').length, 1, bad.stderr);
});
