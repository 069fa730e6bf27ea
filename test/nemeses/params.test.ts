import test from 'ava';
import { dropRuleArgs } from '../../nemeses/commands/iptables.ts';
import { netemArgs, tbfScript } from '../../nemeses/commands/tc.ts';
import { nemesisStepSchema } from '../../nemeses/schedule.ts';
import { bindingSchema } from '../../src/app/plan/binding.ts';

const step = (raw: Record<string, unknown>) =>
  nemesisStepSchema.safeParse({ startS: 1, durationS: 2, ...raw });
const firstIssue = (r: ReturnType<typeof step>) =>
  r.success ? '' : `${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}`;

test('packet params: numbers must be numbers in range, durations carry units, rates carry units', (t) => {
  const injected = step({ kind: 'packet', behaviour: 'delay', params: { timeMs: '1; touch pwned' } });
  t.false(injected.success);
  t.regex(firstIssue(injected), /^params\.timeMs: /);
  t.false(step({ kind: 'packet', behaviour: 'loss', params: { percent: 140 } }).success);
  t.false(step({ kind: 'packet', behaviour: 'loss', params: { percent: 0 } }).success);
  t.false(step({ kind: 'packet', behaviour: 'rate', params: { rate: '1mbit; reboot' } }).success);
  t.false(step({ kind: 'packet', behaviour: 'delay', params: { time: '50' } }).success, 'no unit');
  t.false(step({ kind: 'packet', behaviour: 'delay', params: { bogus: 1 } }).success, 'unknown key');
  const delay = step({ kind: 'packet', behaviour: 'delay', params: { time: '50ms', jitter: '1s' } });
  t.true(delay.success, firstIssue(delay));
  if (delay.success) t.like(delay.data.params, { timeMs: 50, jitterMs: 1000 });
  // The parsed step parses again unchanged (a reduced schedule replays).
  if (delay.success) t.deepEqual(nemesisStepSchema.parse(delay.data), delay.data);
  const rate = step({ kind: 'packet', behaviour: 'rate', params: { rate: '500kbit' } });
  t.true(rate.success);
});

test('the tc and iptables builders refuse non-numeric values even when handed them directly', (t) => {
  t.throws(() => netemArgs({ delay: { timeMs: '1; touch pwned' as unknown as number } }), {
    instanceOf: RangeError,
  });
  t.throws(() => netemArgs({ loss: { percent: '5; reboot' as unknown as number } }), {
    instanceOf: RangeError,
  });
  t.throws(() => netemArgs({ rate: '1mbit; reboot' }), { instanceOf: RangeError });
  t.throws(() => tbfScript('eth0', ['10.0.0.2'], '$(reboot)', true), { instanceOf: RangeError });
  t.throws(() => dropRuleArgs({ source: '10.0.0.2', probability: '0.5' as unknown as number }, 'w1'), {
    instanceOf: RangeError,
  });
  t.is(netemArgs({ delay: { timeMs: 50, jitterMs: 10 }, loss: { percent: 5 } }), 'delay 50ms 10ms loss 5%');
});

test('partition params fit the topology; grudge, from/to and node take node names', (t) => {
  t.true(step({ kind: 'partition', topology: 'grudge', params: { grudge: { n1: ['n2'] } } }).success);
  t.regex(firstIssue(step({ kind: 'partition', topology: 'grudge' })), /needs params\.grudge/);
  t.regex(
    firstIssue(step({ kind: 'partition', topology: 'halves', params: { from: ['n1'], to: ['n2'] } })),
    /only for topology asymmetric/,
  );
  t.true(
    step({ kind: 'partition', topology: 'asymmetric', params: { from: ['n1'], to: ['n2', 'n3'] } }).success,
  );
  t.false(step({ kind: 'partition', topology: 'asymmetric', params: { from: ['n1'] } }).success);
  t.false(step({ kind: 'partition', topology: 'grudge', params: { grudge: { 'n1;x': ['n2'] } } }).success);
});

test('clock: scramble and strobe need an offset with a unit; strobe runs for its window by default', (t) => {
  t.true(step({ kind: 'clock', action: 'scramble', delta: '-2s' }).success);
  t.false(step({ kind: 'clock', action: 'bump' }).success);
  t.false(step({ kind: 'clock', action: 'reset', delta: '1s' }).success);
  t.false(step({ kind: 'clock', action: 'bump', delta: '5' }).success, 'no unit');
  const s = step({ kind: 'clock', action: 'bump', delta: '-1500ms' });
  t.true(s.success);
  if (s.success) t.is(s.data.deltaMs, -1500);
});

test('disk: slow and fsync-fail are refused naming what is missing; paths have no ".." (relative ones are inside the data directory)', (t) => {
  t.regex(firstIssue(step({ kind: 'disk', action: 'fsync-fail' })), /^action: .*I\/O interception/);
  t.regex(firstIssue(step({ kind: 'disk', action: 'slow' })), /^action: .*slow disk/);
  t.true(step({ kind: 'disk', action: 'disk-full', params: { dir: 'relative/dir' } }).success);
  t.false(step({ kind: 'disk', action: 'disk-full', params: { dir: '../../etc' } }).success);
  t.false(step({ kind: 'disk', action: 'corrupt', params: { file: '/var/../etc/passwd' } }).success);
  t.false(step({ kind: 'disk', action: 'flakey', params: { device: 'x; reboot' } }).success);
  t.true(step({ kind: 'disk', action: 'flakey', params: { device: 'db0', down: '2s' } }).success);
  t.true(step({ kind: 'disk', action: 'corrupt', params: { file: '/var/lib/x', mode: 'truncate' } }).success);
});

test('a plan naming a node its smallest tier does not have is an error at the node', (t) => {
  const binding = (nemesis: unknown[]) =>
    bindingSchema.safeParse({
      db: 'etcd',
      workload: 'register',
      model: 'register',
      checkers: ['linearizable'],
      nemesis,
      tiers: { smoke: { nodes: 3, durationS: 10, faultWindows: 1, seeds: 1 } },
    });
  const bad = binding([
    { kind: 'partition', topology: 'grudge', params: { grudge: { n1: ['n7'] } }, startS: 1, durationS: 1 },
  ]);
  t.false(bad.success);
  if (!bad.success) {
    t.deepEqual(bad.error.issues[0]?.path, ['nemesis', 0, 'params', 'grudge', 'n1', 0]);
    t.regex(bad.error.issues[0]?.message ?? '', /n7.*3-node/);
  }
  t.false(binding([{ kind: 'process', action: 'kill', targets: ['n4'], startS: 1, durationS: 1 }]).success);
  t.true(binding([{ kind: 'process', action: 'kill', targets: ['n3'], startS: 1, durationS: 1 }]).success);
  // Names that are not a local cluster's (an inventory's hosts) are checked when the run starts.
  t.true(binding([{ kind: 'process', action: 'kill', targets: ['db-a'], startS: 1, durationS: 1 }]).success);
});

test('aimed faults: file patterns stay inside the data directory; each action takes only its own params', (t) => {
  const lazy = (action: string, params: Record<string, unknown>) => step({ kind: 'lazyfs', action, params });
  t.true(lazy('torn-seq', { files: ['appendonlydir/*.incr.aof'], seed: 1 }).success);
  t.true(lazy('torn-op', { keep: 'pages', seed: 2 }).success);
  t.true(lazy('eio-write', { files: ['member/wal/*.wal'] }).success);
  t.regex(firstIssue(lazy('eio-read', {})), /^params\.files: eio-read needs params\.files/);
  t.regex(firstIssue(lazy('torn-op', { files: ['/etc/*'] })), /^params\.files\.0: .*absolute/);
  t.regex(firstIssue(lazy('lose-unfsynced', { files: ['../x'] })), /"\.\."/);
  t.regex(firstIssue(lazy('fsync-fail', { files: ['a'] })), /takes no files/);
  t.regex(firstIssue(lazy('lose-unfsynced', { seed: 1 })), /seed is for torn-op and torn-seq/);
  t.regex(firstIssue(lazy('torn-seq', { fraction: 0.5 })), /torn-seq keeps whole writes/);
  t.regex(firstIssue(lazy('torn-op', { keep: 'pages', fraction: 0.5 })), /fraction is for keep: prefix/);
  t.false(lazy('torn-op', { fraction: 1 }).success, 'a torn write never keeps all of it');
  t.true(lazy('lose-unfsynced', { move: 'rolling' }).success);
  t.regex(
    firstIssue(lazy('eio-write', { files: ['a'], move: 'rolling' })),
    /^params\.move: eio-write starts/,
  );
  t.false(lazy('torn-seq', { move: 'one-by-one' }).success);
  const corrupt = (params: Record<string, unknown>) => step({ kind: 'disk', action: 'corrupt', params });
  t.true(corrupt({ files: ['**/*.log'], mode: 'random', bytes: 8, fraction: 0.25 }).success);
  t.regex(firstIssue(corrupt({ files: ['a'], file: 'b' })), /files \(patterns\) or file\/dir, not both/);
  t.regex(firstIssue(corrupt({ offset: 1, fraction: 0.5 })), /offset or fraction, not both/);
  t.false(corrupt({ files: ['a/../../etc/passwd'] }).success);
});
