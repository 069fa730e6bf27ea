import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { sweepNodes } from '../../nemeses/heal.ts';
import { loadReplayFile } from '../../nemeses/schedule.ts';
import { parseRunFlags } from '../../src/app/cli/commands/run-action.ts';
import { REPORT_SECTIONS } from '../../src/app/report/findings-markdown.ts';
import { SESSION_LOG_SECTIONS } from '../../src/app/report/session-log.ts';
import { runPlan } from '../../src/app/run/plan-run.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * The demo plan end to end on a 3-node local cluster: S1 PASS-smoke, S2 INCONCLUSIVE-fault-not-proven
 * (libfaketime cannot move a Go binary's clock: no landing signal), S3 FAIL-reproducible with a reduced
 * schedule; a report with every section. Then a capability that is missing gives INCONCLUSIVE-env naming it.
 */
const fx = withCluster(test, { nodes: 3, name: 'run-e2e' });
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

function options(extra: Record<string, unknown>, lines: string[]) {
  const out = mkdtempSync(join(tmpdir(), 'fl-e2e-'));
  return {
    ...parseRunFlags(planPath, { inventory: fx.cluster().inventoryPath, out, yes: true, ...extra }),
    print: (l: string) => lines.push(l),
  };
}

fx.test.serial(
  'the demo plan at smoke tier: the verdict each scenario must get, and a complete report',
  async (t) => {
    t.timeout(15 * 60_000);
    const lines: string[] = [];
    const r = await runPlan(options({ seed: 7, maxReductionRuns: 1 }, lines));
    t.log(lines.filter((l) => !/ ops \(/.test(l)).join('\n'));
    const row = (id: string) => r.rows.find((x) => x.scenario === id);
    t.is(row('S1')?.verdict, 'PASS-smoke');
    t.is(row('S2')?.verdict, 'INCONCLUSIVE-fault-not-proven');
    t.regex(row('S2')?.reason ?? '', /landing not proven: w1 \(clock/);
    t.is(row('S3')?.verdict, 'FAIL-reproducible');
    // every row as the plan's Expected verdict says (S3 is the negative control): exit 0
    for (const id of ['S1', 'S2', 'S3']) t.regex(row(id)?.expected ?? '', /\(met\)$/, id);
    t.is(r.verdict, 'DONE');
    t.is(r.exitCode, 0);

    const dir = r.sessionDir as string;
    const report = readFileSync(join(dir, 'findings/report.md'), 'utf8');
    for (const s of REPORT_SECTIONS) t.true(report.includes(`## ${s}`), `report.md has ## ${s}`);
    t.regex(report, /### Finding F1: S3 /);
    t.regex(report, /\d→\d events over \d+ re-runs/);
    const sessionLog = readFileSync(join(dir, 'session-log.md'), 'utf8');
    for (const s of SESSION_LOG_SECTIONS)
      t.true(sessionLog.includes(`## ${s}`), `session-log.md has ## ${s}`);
    t.regex(sessionLog, /\| libfaketime \| yes \|/);
    t.regex(sessionLog, /fault injected: partition one/);
    for (const f of [
      'findings/S1.md',
      'findings/S2.md',
      'findings/S3.md',
      'findings/report.json',
      'junit.xml',
    ])
      t.true(existsSync(join(dir, f)), f);
    for (const s of ['S1', 'S2', 'S3'])
      t.true(existsSync(join(dir, 'metrics', `${s}.json`)), `metrics/${s}.json`);
    t.true(existsSync(join(dir, 'logs/S1/n1/etcd.log')));
    const reduced = await loadReplayFile(join(dir, 'artifacts/S3/reduced-schedule.json'));
    t.is(reduced.scenario, 'S3');
    t.true(reduced.windows.length <= 2);
  },
);

fx.test.serial('a missing capability gives INCONCLUSIVE-env naming it; nothing runs for it', async (t) => {
  t.timeout(5 * 60_000);
  const dir = mkdtempSync(join(tmpdir(), 'fl-e2e-plan-'));
  const plan = join(dir, 'etcd-register.md');
  writeFileSync(
    plan,
    readFileSync(planPath, 'utf8').replace(
      '| libfaketime | 0.9 | S2 | apt-get install -y libfaketime faketime |',
      '| libfaketime | 0.9 | S2 | apt-get install -y libfaketime faketime |\n| toxiproxy-server | 2.5 | S1 | apt-get install -y toxiproxy |',
    ),
  );
  const lines: string[] = [];
  const o = options({ scenario: ['S1', 'S2'], skip: ['libfaketime'] }, lines);
  const r = await runPlan({ ...o, plan });
  const row = (id: string) => r.rows.find((x) => x.scenario === id);
  t.is(row('S1')?.verdict, 'INCONCLUSIVE-env');
  t.regex(row('S1')?.reason ?? '', /missing capability: toxiproxy-server/);
  t.is(row('S2')?.verdict, 'INCONCLUSIVE-env');
  t.regex(row('S2')?.reason ?? '', /libfaketime \(skipped by the operator/);
  t.is(row('S3')?.verdict, 'NOT-RUN');
  t.is(row('S3')?.expected, '—', 'a scenario left out by --scenario is not judged');
  // S1 and S2 declare expected verdicts an INCONCLUSIVE-env does not meet
  t.is(r.verdict, 'FAIL');
  t.is(r.exitCode, 1);
  const log = readFileSync(join(r.sessionDir as string, 'session-log.md'), 'utf8');
  t.regex(
    log,
    /\| toxiproxy-server \| no \| — \| command -v toxiproxy-server: missing on n1, n2, n3; install: apt-get install -y toxiproxy \|/,
  );
});

fx.test.serial(
  'a fault an earlier run left is undone and printed; the global deadline stops the running scenario and leaves the rest NOT-RUN, never a hang',
  async (t) => {
    t.timeout(5 * 60_000);
    // A partition chain an earlier run left on n2: the scenario's pre-run sweep undoes it and says so.
    const remote = await fx.remote();
    await remote.exec('n2', 'iptables -w -N FAULTLINE && iptables -w -A INPUT -j FAULTLINE', { sudo: true });
    const lines: string[] = [];
    const started = Date.now();
    const r = await runPlan(options({ scenario: ['S1', 'S3'], deadline: '12s', seed: 3 }, lines));
    const row = (id: string) => r.rows.find((x) => x.scenario === id);
    t.true(
      lines.some((l) => /^S1 left by an earlier run: n2 partition: .*FAULTLINE.*; undone/.test(l)),
      lines.join('\n'),
    );
    t.false(
      lines.some((l) => /no fault left by an earlier run/.test(l)),
      'only what the sweep found is printed',
    );
    t.notRegex((await remote.exec('n2', 'iptables -w -S', { sudo: true })).stdout, /FAULTLINE/);
    t.true(Date.now() - started < 120_000, 'the session ended soon after its deadline');
    t.not(row('S1')?.verdict, 'PASS-smoke', 'a run cut short does not meet the smoke budget');
    t.not(row('S1')?.verdict, 'NOT-RUN');
    t.is(row('S3')?.verdict, 'NOT-RUN');
    t.regex(row('S3')?.reason ?? '', /deadline/);
    t.true(existsSync(join(r.sessionDir as string, 'findings/report.md')));
    // Cut short, the plan's expectations are unknown rather than unmet: exit 2, never a FAIL.
    t.not(r.verdict, 'FAIL');
    t.is(r.exitCode, 2);
    t.regex(
      readFileSync(join(r.sessionDir as string, 'findings/report.md'), 'utf8'),
      /stopped early: the session deadline of 12s was reached/,
    );
  },
);

fx.test.serial(
  'Ctrl-C during a fault window: heals every node, writes the report, exit 2 (stopped early, not a FAIL)',
  async (t) => {
    t.timeout(5 * 60_000);
    const out = mkdtempSync(join(tmpdir(), 'fl-e2e-int-'));
    const child = execa(
      'node',
      [bin, 'run', planPath, '--inventory', fx.cluster().inventoryPath, '--out', out, '--scenario', 'S1'],
      { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' }, all: true },
    );
    // A progress line naming an open fault window: the fault is on the cluster now.
    let sent = false;
    for await (const line of child.iterable({ from: 'all' })) {
      if (!sent && /S1 .*faults: (?!none)\S/.test(String(line))) {
        child.kill('SIGINT');
        sent = true;
      }
    }
    const r = await child;
    t.true(sent, `no fault window opened:\n${r.all}`);
    t.regex(String(r.all), /interrupt: stopping the workload, healing faults, writing the report/);
    t.is(r.exitCode, 2, String(r.all));
    const session = /^report: (.+)\/findings\/report\.(?:md|html)\b/m.exec(String(r.all))?.[1];
    t.truthy(session, String(r.all));
    const report = readFileSync(join(session as string, 'findings/report.md'), 'utf8');
    t.regex(report, /stopped early: interrupted \(SIGINT\)/);
    t.regex(report, /expected PASS-smoke \(unknown: stopped early\)/);
    // Nothing left on any node: no partition rule, no stopped process, no faketime wrapper.
    const remote = await fx.remote();
    const sweep = await sweepNodes(
      remote,
      remote.nodes.map((n) => n.name),
    );
    for (const s of sweep) t.deepEqual(s.found, [], `${s.node} ${s.kind} left: ${s.found.join('; ')}`);
  },
);
