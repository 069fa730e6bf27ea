import test from 'ava';
import { execa } from 'execa';
import {
  exitCode,
  parseConcurrency,
  parseFlags,
  summaryTable,
} from '../../src/app/cli/commands/test-action.ts';
import { parseDuration } from '../../src/core/util/duration.ts';

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const run = (...args: string[]) =>
  execa('node', [bin, 'test', ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });

test('bad input exits 254 with one line naming the flag', async (t) => {
  for (const [args, re] of [
    [['--local', '5', '--workload', 'teleport'], /--workload: unknown workload "teleport"/],
    [['--local', '5', '--db', 'mongo'], /--db: unknown database "mongo"/],
    [['--local', '5', '--nemesis', 'flood'], /--nemesis: unknown fault "flood"/],
    [['--local', '5', '--time-limit', 'soon'], /--time-limit: "soon" is not a duration/],
    [['--local', '5', '--time-limit', '30'], /--time-limit: "30" has no unit; write 30s/],
    [['--local', '5', '--client', 'telnet'], /--client: unknown client "telnet"/],
    [['--workload', 'register'], /--inventory FILE, --local N or --nodes/],
    [['--inventory', '/no/such/inventory.yaml'], /inventory/i],
    [
      ['--local', '5', '--db', 'etcd', '--workload', 'queue'],
      /--db: workload queue is not supported by the etcd-http client on etcd/,
    ],
  ] as const) {
    const r = await run(...args);
    t.is(r.exitCode, 254, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, re);
    t.is(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('faultline:')).length,
      1,
    );
    // Refused from the flags alone (an inventory is read once the session exists): nothing else said,
    // no session directory, no cluster brought up first.
    if (!(args as readonly string[]).includes('--inventory'))
      t.is(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${r.stderr}`);
    t.is(r.stdout.trim(), '', `${args.join(' ')}: ${r.stdout}`);
  }
});

test('flags: durations, Jepsen concurrency, exit codes', (t) => {
  t.is(parseDuration('60s', 'x'), 60_000);
  t.is(parseDuration('500ms', 'x'), 500);
  t.is(parseDuration('2m', 'x'), 120_000);
  // A bare number used to mean seconds here and milliseconds in `check --timeout`: now it names the flag
  // and asks for a unit.
  t.throws(() => parseDuration('7', '--time-limit'), { message: /--time-limit: "7" has no unit; write 7s/ });
  t.is(parseConcurrency('10', 5), 10);
  t.is(parseConcurrency('3n', 5), 15);
  t.throws(() => parseConcurrency('0', 5));
  t.throws(() => parseConcurrency('x', 5));
  const f = parseFlags({ local: '5', nemesis: 'partition,kill', seed: '42', timeLimit: '30s' });
  t.deepEqual(f.faults, ['partition', 'kill']);
  t.is(f.seed, 42);
  t.is(f.timeLimitS, 30);
  t.is(exitCode(true), 0);
  t.is(exitCode(false), 1);
  t.is(exitCode('unknown'), 2);
});

test('the summary table shows each checker, the run directory and the verdict', (t) => {
  const text = summaryTable({
    valid: false,
    runDir: '/tmp/run',
    results: [
      {
        checker: 'linearizable',
        valid: false,
        evidence: '120 ops, nonlinearizable read',
        scope: '',
        anomalies: [],
        stats: { opsConsumed: 120 },
      },
      {
        checker: 'workload',
        valid: true,
        evidence: '120 client ops, 100 ok',
        scope: '',
        anomalies: [],
        stats: { opsConsumed: 120 },
      },
    ],
    stats: { invoked: 120, ok: 100, fail: 10, info: 10, timeouts: 2, nemesisOps: 4, inFlight: 0 },
    faults: [],
    heal: null,
    elapsedS: 12,
  });
  t.regex(text, /linearizable\s+INVALID\s+120 ops/);
  t.regex(text, /run directory: \/tmp\/run/);
  t.regex(text, /verdict: INVALID/);
});
