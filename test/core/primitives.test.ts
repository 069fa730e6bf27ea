import test from 'ava';
import { formatDuration, parseDuration } from '../../src/core/util/duration.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { BUILT_IN, Registry, RegistryError } from '../../src/core/util/registry.ts';
import { pollFor, retry, waitFor } from '../../src/core/util/retry.ts';

test('durations: every unit, one parser; a bare number names the flag and asks for a unit', (t) => {
  t.is(parseDuration('250ms', 'x'), 250);
  t.is(parseDuration('30s', 'x'), 30_000);
  t.is(parseDuration('1.5s', 'x'), 1500);
  t.is(parseDuration('5m', 'x'), 300_000);
  t.is(parseDuration('1h', 'x'), 3_600_000);
  t.is(parseDuration('30min', 'x'), 1_800_000);
  const bare = t.throws(() => parseDuration('30', '--timeout'), { instanceOf: UserError });
  t.is(bare?.message, '--timeout: "30" has no unit; write 30s, 30ms or 30m');
  t.throws(() => parseDuration('soon', 'field'), { message: /^field: "soon" is not a duration/ });
  t.throws(() => parseDuration('3 parsecs', 'f'), { message: /unknown unit "parsecs"/ });
  t.is(formatDuration(90_000), '90s');
  t.is(formatDuration(120_000), '2m');
  t.is(formatDuration(250), '250ms');
});

test('registry: names once, duplicates name both origins, unknown names list the choices', (t) => {
  const r = new Registry<{ v: number }>('widget');
  r.register('alpha', { v: 1 });
  r.register('beta', { v: 2 }, '/plugins/b.ts');
  r.alias('a', 'alpha');
  t.deepEqual(r.names(), ['alpha', 'beta']);
  t.is(r.get('a')?.v, 1);
  t.is(r.canonical('a'), 'alpha');
  t.is(r.originOf('beta'), '/plugins/b.ts');
  t.is(r.originOf('alpha'), BUILT_IN);
  const dup = t.throws(() => r.register('beta', { v: 3 }, '/plugins/c.ts'), { instanceOf: RegistryError });
  t.is(
    dup?.message,
    'widget "beta" is registered twice: by plugin /plugins/b.ts and by plugin /plugins/c.ts',
  );
  t.throws(() => r.register('alpha', { v: 3 }, '/p.ts'), {
    message: /by faultline itself and by plugin \/p\.ts/,
  });
  t.throws(() => r.require('gamma', '--widget'), {
    message: '--widget: unknown widget "gamma" (one of alpha, beta)',
  });
  t.throws(() => r.register('Bad Name', { v: 0 }), { message: /lower-case letters/ });
  const before = r.version;
  r.register('delta', { v: 4 });
  t.true(r.version > before);
});

test('retry: bounded attempts, only retryable errors, the last error thrown', async (t) => {
  let calls = 0;
  const ok = await retry(
    async (attempt) => {
      calls++;
      if (attempt < 3) throw new Error('flaky');
      return 'done';
    },
    { attempts: 3, retryable: () => true, delayMs: () => 1 },
  );
  t.is(ok, 'done');
  t.is(calls, 3);
  calls = 0;
  await t.throwsAsync(
    retry(
      async () => {
        calls++;
        throw new TypeError('not worth it');
      },
      { attempts: 5, retryable: (e) => !(e instanceof TypeError), delayMs: () => 1 },
    ),
    { instanceOf: TypeError },
  );
  t.is(calls, 1, 'a non-retryable error is thrown at once');
  calls = 0;
  await t.throwsAsync(
    retry(
      async () => {
        calls++;
        throw new Error(`attempt ${calls}`);
      },
      { attempts: 2, retryable: () => true, delayMs: () => 1 },
    ),
    { message: 'attempt 2' },
  );
});

test('pollFor: reads until the value is accepted, or returns the last value read when time runs out', async (t) => {
  let n = 0;
  const third = await pollFor(
    async () => ++n,
    (v) => v === 3,
    { timeoutMs: 5_000, stepMs: 1 },
  );
  t.is(third, 3, 'stops at the first accepted value');
  t.is(n, 3);
  n = 0;
  const last = await pollFor(
    async () => ++n,
    () => false,
    { timeoutMs: 30, stepMs: 5 },
  );
  t.true(last >= 2, 'read again until the time ran out');
  t.is(last, n, 'the last value read is returned');
  t.true(await waitFor(async () => n++ > last + 1, 5_000, 1));
  t.false(await waitFor(async () => false, 20, 5));
});

test('pollFor: a signal stops it between reads, even in a long pause; periodic reads keep their pace', async (t) => {
  const stop = new AbortController();
  let reads = 0;
  const polling = pollFor(
    async () => ++reads,
    () => false,
    { timeoutMs: Number.POSITIVE_INFINITY, stepMs: 60_000, signal: stop.signal },
  );
  await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  t.is(await polling, 1, 'one read, then stopped inside the minute-long pause');
  // A read that takes the whole period leaves no pause after it: reads start a period apart, not two.
  const starts: number[] = [];
  await pollFor(
    async () => {
      starts.push(performance.now());
      await new Promise((r) => setTimeout(r, 100));
      return starts.length;
    },
    (n) => n === 3,
    { timeoutMs: 5_000, stepMs: 100, periodic: true },
  );
  const gaps = starts.slice(1).map((s, i) => s - (starts[i] as number));
  t.true(
    gaps.every((g) => g >= 99 && g < 190),
    `read starts ${gaps.map((g) => g.toFixed(0)).join(', ')} ms apart, not 200 (100 read + 100 pause)`,
  );
});
