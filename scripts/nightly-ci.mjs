#!/usr/bin/env node
// The nightly GitHub Actions example (examples/nightly/github-actions.yml), its steps run in order on
// this host without act: the YAML is read, each `run:` step runs in bash with the workflow's env, and
// each action is done by its local equivalent (checkout: a copy; setup-node: the Node version is
// checked; upload-artifact, cache/save and the JUnit report: the paths they take must exist; cache/restore:
// nothing, as on a first night, whose diff step must say it has no previous night). A step after a
// failed one runs only under `if: always()`, as on GitHub.
// The "user's repository" holds the plan and an inventory whose nodes are a closed loopback port
// (nothing leaves this host), so the plan's run is BLOCKED (exit 2) within seconds and still writes the
// session, the step summary and junit.xml that the later steps use. Every other step must exit 0: the
// package is built from the checkout and the tarball it made is installed, never one from the registry.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const workflowFile = join(root, 'examples/nightly/github-actions.yml');
const workflow = parse(readFileSync(workflowFile, 'utf8'));
const steps = workflow.jobs.nightly.steps;
const work = mkdtempSync('/tmp/faultline-nightly-');
const repo = join(work, 'repo');
mkdirSync(repo);
const summary = join(work, 'step-summary.md');
const env = { ...process.env, ...workflow.env, GITHUB_STEP_SUMMARY: summary, GITHUB_WORKSPACE: repo };
// The installed package runs as a user's would: from its dist/, not this checkout's sources.
delete env.FAULTLINE_FROM_SOURCE;
const say = (line) => process.stdout.write(`nightly-ci: ${line}\n`);
const problems = [];
const started = Date.now();

function copyCheckout(to) {
  const files = spawnSync('git', ['-C', root, 'ls-files', '-co', '--exclude-standard', '-z'], { encoding: 'utf8' })
    .stdout.split('\0')
    .filter((f) => f && existsSync(join(root, f)));
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    cpSync(join(root, f), join(to, f), { verbatimSymlinks: true });
  }
}

function action(step) {
  const uses = step.uses.split('@')[0];
  const w = step.with ?? {};
  if (uses === 'actions/checkout' && !w.repository) {
    mkdirSync(join(repo, 'plans'));
    cpSync(join(root, env.PLAN), join(repo, env.PLAN));
    mkdirSync(dirname(join(repo, env.INVENTORY)), { recursive: true });
    const node = '{ host: 127.0.0.1, port: 1 }';
    writeFileSync(join(repo, env.INVENTORY), `nodes:\n  n1: ${node}\n  n2: ${node}\n  n3: ${node}\n`);
    return `checkout of the user's repository: ${env.PLAN}, ${env.INVENTORY} (a closed port)`;
  }
  if (uses === 'actions/checkout') {
    copyCheckout(join(repo, w.path));
    return `checkout of ${w.repository}: a copy of this checkout's files in ${w.path}`;
  }
  if (uses === 'actions/setup-node') {
    const major = process.versions.node.split('.')[0];
    if (String(w['node-version']) !== major) problems.push(`setup-node wants ${w['node-version']}, this is ${major}`);
    return `node ${process.versions.node}`;
  }
  if (uses === 'actions/upload-artifact' || uses === 'mikepenz/action-junit-report') {
    const path = join(repo, w.path ?? w.report_paths);
    if (!existsSync(path)) problems.push(`${uses}: ${w.path ?? w.report_paths} does not exist`);
    if (w.report_paths && !/<testsuite/.test(readFileSync(path, 'utf8'))) problems.push(`${path}: not JUnit`);
    return `${w.path ?? w.report_paths} exists`;
  }
  // A runner's first night: the cache holds no earlier sessions.
  if (uses === 'actions/cache/restore') return `${w.path}: nothing cached (a first night)`;
  if (uses === 'actions/cache/save') {
    if (!existsSync(join(repo, w.path))) problems.push(`${uses}: ${w.path} does not exist`);
    return `${w.path} exists`;
  }
  throw new Error(`${workflowFile}: no local equivalent for ${step.uses}`);
}

let failed = false;
try {
  for (const [i, step] of steps.entries()) {
    const name = step.name ?? step.uses ?? step.run;
    if (failed && step.if !== 'always()') {
      say(`step ${i + 1} (${name}): skipped, an earlier step failed`);
      continue;
    }
    const t0 = Date.now();
    if (step.uses) {
      say(`step ${i + 1} (${name}): ${action(step)}`);
      continue;
    }
    const r = spawnSync('bash', ['-eo', 'pipefail', '-c', step.run], {
      cwd: repo,
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 20 * 60_000,
    });
    const rc = r.status ?? 1;
    const runsPlan = /faultline run /.test(step.run);
    say(`step ${i + 1} (${name}): exit ${rc} in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
    // No lab here: BLOCKED (exit 2) is the plan step's honest outcome; anything else is wrong.
    if (runsPlan ? rc !== 2 : rc !== 0) problems.push(`step ${i + 1} (${name}): exit ${rc}`);
    if (rc !== 0) failed = true;
  }
  const tarballs = spawnSync('bash', ['-c', 'ls faultline-*.tgz'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
  if (!tarballs) problems.push('no tarball was built in the workspace');
  const text = existsSync(summary) ? readFileSync(summary, 'utf8') : '';
  if (!/BLOCKED/.test(text)) problems.push('the step summary does not carry the session verdict');
  if (!/No previous night/.test(text)) problems.push('a first night does not say it has no previous night');
  say(`installed from ${tarballs}; step summary ${text.length} bytes; ${((Date.now() - started) / 1000).toFixed(0)}s`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
for (const p of problems) process.stderr.write(`nightly-ci: ${p}\n`);
say(problems.length ? 'FAILED' : 'every step ran in order as the workflow says');
process.exit(problems.length ? 1 : 0);
