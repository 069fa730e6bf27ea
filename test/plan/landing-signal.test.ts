import test from 'ava';
import { metricValue, moved, readDeclared } from '../../nemeses/declared-signal.ts';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { parseLandingSignals } from '../../src/app/plan/landing-signal.ts';
import { parsePlanText } from '../../src/app/plan/load.ts';
import { gatePlanCommands, PLAN_COMMAND_REFUSED } from '../../src/app/plugin/trust.ts';
import type { Remote } from '../../src/core/control/types.ts';

/** A one-scenario plan whose §7.M (its heading at line 19) declares `landing`. */
const declaredPlan = (landing: string) =>
  parsePlanText(
    `# Test Plan: declared

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | registers are linearizable | safety | docs | no |

## 7. Scenarios

### Scenario S1: linearizable_register

- Falsifies if it FAILs: C1
- Oracle: linearizability per key
- Smoke budget: 3 nodes × 60s × 1 fault × 1 seed
- Hardening budget: 5 nodes × 10min × 3 faults × 3 seeds
- Release budget: 5 nodes × 24h × 30 faults × 30 seeds

#### §7.M — Model / history / checker discipline

- Model under test: register
- Operation history: 11 fields
- Checker: linearizable
- Nemesis + landing evidence: ${landing}
- Ambiguous outcomes: default
- Reduction plan: minimise
`,
    'declared.md',
  );

test('a §7.M landing field: backquoted command/metric/log spans are typed signals, prose is left alone', (t) => {
  const r = parseLandingSignals(
    'kill: pid gone (`/proc/PID/status`), then `log(kill): lost leader|no leader`; the leader count ' +
      '`metric: etcd_server_leader_changes_seen_total at http://{address}:2379/metrics` and `command: etcdctl endpoint health`',
  );
  t.deepEqual(r.errors, []);
  t.deepEqual(
    r.signals.map((s) => [s.type, s.only]),
    [
      ['log', 'kill'],
      ['metric', null],
      ['command', null],
    ],
  );
  t.like(r.signals[1], {
    name: 'etcd_server_leader_changes_seen_total',
    url: 'http://{address}:2379/metrics',
  });
  t.like(r.signals[0], { pattern: 'lost leader|no leader' });
  t.deepEqual(parseLandingSignals('FAULTLINE chain DROP counter 0→N').signals, []);
});

test('an unreadable declared signal is named', (t) => {
  const r = parseLandingSignals('`metric: leader_changes` and `log: (unclosed` and `command:`');
  t.is(r.signals.length, 0);
  t.is(r.errors.length, 3);
  t.regex(r.errors[0] as string, /metric: NAME at http/);
  t.regex(r.errors[1] as string, /not a regular expression/);
  t.regex(r.errors[2] as string, /names nothing to read/);
});

test('plan check: an unreadable declared signal, or one for an unknown fault, is an error at the §7.M line', (t) => {
  const landingErrors = (landing: string) =>
    checkPlan(declaredPlan(landing)).filter(
      (p) => p.severity === 'error' && /landing evidence/.test(p.field),
    );
  t.deepEqual(landingErrors('partition: iptables counter 0→N and `log(partition): lost leader`'), []);
  const bad = landingErrors('partition counter and `log: (unclosed`');
  t.is(bad.length, 1);
  t.is(bad[0]?.line, 19, "the §7.M heading's line");
  t.regex(bad[0]?.reason ?? '', /not a regular expression/);
  const unknown = landingErrors('partition counter and `log(explode): lost leader`');
  t.regex(unknown[0]?.reason ?? '', /"explode" is no fault kind or action/);
});

test('readings: a metric sums its samples; a log count must grow, a metric or output must change', (t) => {
  const text = '# HELP x\nleader_changes{a="1"} 2\nleader_changes{a="2"} 3\nleader_changes_total 9\n';
  t.is(metricValue(text, 'leader_changes'), 5);
  t.is(metricValue(text, 'missing'), null);
  const log = { type: 'log', pattern: 'x', only: null, text: 'log: x' } as const;
  t.true(moved(log, 1, 3));
  t.false(moved(log, 3, 3));
  t.false(moved(log, 'unreadable', 3));
  const cmd = { type: 'command', command: 'x', only: null, text: 'command: x' } as const;
  t.true(moved(cmd, 'exit 0: healthy', 'exit 1: unhealthy'));
  t.false(moved(cmd, 'exit 0: healthy', 'exit 0: healthy'));
});

test("a declared command names its node and the node's cluster address; the output is the reading", async (t) => {
  const sent: string[] = [];
  const remote = {
    node: (name: string) => ({
      name,
      host: '127.0.0.1',
      port: 22,
      address: name === 'n1' ? '10.9.0.11' : '10.9.0.12',
    }),
    exec: async (_node: string, command: string) => {
      sent.push(command);
      return { stdout: 'Mode: follower FLDECL rc=0', stderr: '', code: 0 };
    },
  } as unknown as Remote;
  const s = { type: 'command', command: 'zk-view {node} {address}:2181', only: null, text: '' } as const;
  const r = await readDeclared(remote, s, ['n1', 'n2'], undefined);
  t.true(sent[0]?.includes('zk-view n1 10.9.0.11:2181'), sent[0]);
  t.true(sent[1]?.includes('zk-view n2 10.9.0.12:2181'), sent[1]);
  t.deepEqual(r, { n1: 'exit 0: Mode: follower', n2: 'exit 0: Mode: follower' });
});

test("a plan's command runs only on run --trust-plan-commands; refused, it is never sent and says why", async (t) => {
  const { signals } = parseLandingSignals(
    '`command: etcdctl endpoint health` and `log: lost leader` and `metric: x at http://{address}:1/m`',
  );
  t.deepEqual(gatePlanCommands(signals, true), signals, 'trusted: as written');
  const gated = gatePlanCommands(signals, false);
  t.is(gated.length, 3);
  t.like(gated[0], { type: 'command', refused: PLAN_COMMAND_REFUSED });
  t.deepEqual(gated.slice(1), signals.slice(1), 'metric and log spans are data: untouched');
  const sent: string[] = [];
  const remote = {
    node: (name: string) => ({ name, host: '127.0.0.1', port: 22, address: '10.9.0.11' }),
    exec: async (_node: string, command: string) => {
      sent.push(command);
      return { stdout: ' FLDECL rc=0', stderr: '', code: 0 };
    },
  } as unknown as Remote;
  const r = await readDeclared(remote, gated[0] as (typeof gated)[number], ['n1', 'n2'], undefined);
  t.deepEqual(sent, [], 'nothing reached a node');
  t.deepEqual(r, { n1: `not run: ${PLAN_COMMAND_REFUSED}`, n2: `not run: ${PLAN_COMMAND_REFUSED}` });
  t.false(moved(gated[0] as (typeof gated)[number], r.n1, r.n1), 'a signal not run never moves');
  t.regex(PLAN_COMMAND_REFUSED, /--trust-plan-commands/);
});

test('plan check warns, at the §7.M line, that a declared command runs only with --trust-plan-commands', (t) => {
  const problems = checkPlan(declaredPlan('partition counter and `command: etcdctl endpoint health`')).filter(
    (p) => /landing evidence/.test(p.field),
  );
  t.is(problems.length, 1);
  t.is(problems[0]?.severity, 'warning');
  t.is(problems[0]?.line, 19);
  t.regex(
    problems[0]?.reason ?? '',
    /`command: etcdctl endpoint health` is a shell command run with sudo on the nodes: run executes it only with --trust-plan-commands/,
  );
});
