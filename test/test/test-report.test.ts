import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa, execaSync } from 'execa';
import { freePort, listening } from '../helpers/ports.ts';

/**
 * `faultline test` writes the findings report `faultline run` writes (report.md, report.html,
 * report.json under findings/), for its one scenario S1. Run client-only (`--no-ssh`) against a
 * redis-server this test starts on loopback: no cluster, no root, a few seconds.
 */

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const hasRedis = (() => {
  try {
    return execaSync('redis-server', ['--version']).exitCode === 0;
  } catch {
    return false;
  }
})();
const maybe = hasRedis ? test : test.skip;
if (!hasRedis)
  test('faultline test report: skipped: redis-server is not installed (scripts/install-deps.sh)', (t) =>
    t.pass());

maybe('faultline test writes findings/report.{md,html,json} naming S1 and its verdict', async (t) => {
  const port = await freePort();
  const server = execa(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      reject: false,
    },
  );
  try {
    await listening(port, 10_000);
    const out = mkdtempSync(join(tmpdir(), 'fl-test-report-'));
    // prettier-ignore
    const args = [
      'test',
      '--no-ssh',
      '--nodes',
      `127.0.0.1:${port}`,
      '--db',
      'redis',
      '-w',
      'register',
      '--time-limit',
      '3s',
      '--recovery',
      '1s',
      '--rate',
      '20',
      '--seed',
      '5',
      '--out',
      out,
    ];
    const r = await execa('node', [bin, ...args], {
      reject: false,
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
    });
    t.is(r.exitCode, 0, r.stderr);
    const session = realpathSync(join(out, 'redis-register', 'latest'));
    t.regex(r.stderr, /S1: PASS-smoke — no fault; no anomaly/);
    t.regex(r.stderr, new RegExp(`report: ${session}/findings/report.html`));
    for (const f of ['report.md', 'report.html', 'report.json', 'S1.md'])
      t.true(existsSync(join(session, 'findings', f)), f);
    t.true(existsSync(join(session, 'session-log.md')));
    t.true(existsSync(join(session, 'junit.xml')));
    const json = JSON.parse(readFileSync(join(session, 'findings', 'report.json'), 'utf8')) as {
      sessionVerdict: string;
      scenarios: { id: string; verdict: string; tierMet: string | null }[];
    };
    t.is(json.sessionVerdict, 'DONE');
    t.is(json.scenarios.length, 1);
    t.like(json.scenarios[0], { id: 'S1', verdict: 'PASS-smoke', tierMet: 'smoke' });
    const md = readFileSync(join(session, 'findings', 'report.md'), 'utf8');
    t.regex(md, /^# Findings: redis-register @ /);
    t.regex(md, /\| S1 \| redis register, nemesis none \| PASS-smoke \| linearizable \|/);
    // The run's own files are the session's: the report links them where they are.
    t.regex(md, /\[history\]\(\.\.\/history\.jsonl\)/);
    const html = readFileSync(join(session, 'findings', 'report.html'), 'utf8');
    t.regex(html, /PASS-smoke/);
    t.regex(html, /redis register, nemesis none/);
    // Still a test session in the store: summarised per checker from results.json.
    const listed = await execa('node', [bin, 'sessions', 'list', '--root', out], {
      reject: false,
      env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
    });
    t.is(listed.exitCode, 0, listed.stderr);
    t.regex(listed.stdout, /valid/);
  } finally {
    server.kill('SIGTERM');
    await server;
  }
});
