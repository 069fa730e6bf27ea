import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import test from 'ava';
import { execa } from 'execa';

/**
 * `plan check` refuses what the run would refuse: every shipped plan (plans/*.md), every plan example
 * in README.md and docs/, and plans the run refuses (a threshold-less SLO or fairness checker, a
 * fault-free scenario expected to PASS-hardening) go through `plan check` and `run --dry-run`, and
 * both must end alike: 0 ok to run, 3 must not run, 254 bad input (a plugin that cannot load).
 */
const root = resolve(new URL('../..', import.meta.url).pathname);
const bin = join(root, 'bin', 'faultline.js');
const env = { ...process.env, FAULTLINE_FROM_SOURCE: '1' };

/** `--plugin` for every `module:` the plan names (relative to the plan), as plan check asks a user to. */
function pluginArgsFor(plan: string): string[] {
  const file = resolve(root, plan);
  const modules = new Set(
    [...readFileSync(file, 'utf8').matchAll(/^module: *([^\s#]+)/gm)].map((m) => m[1] as string),
  );
  return [...modules].flatMap((m) => ['--plugin', resolve(dirname(file), m)]);
}

async function exits(plan: string): Promise<{ check: number; dry: number; out: string }> {
  const plugins = pluginArgsFor(plan);
  const check = await execa('node', [bin, 'plan', 'check', ...plugins, plan], {
    reject: false,
    env,
    cwd: root,
  });
  const dry = await execa('node', [bin, 'run', ...plugins, plan, '--dry-run'], {
    reject: false,
    env,
    cwd: root,
  });
  return {
    check: check.exitCode ?? -1,
    dry: dry.exitCode ?? -1,
    out: `${check.stdout}\n${check.stderr}\n---\n${dry.stdout}\n${dry.stderr}`,
  };
}

function docPlans(): { where: string; body: string }[] {
  const files = [
    join(root, 'README.md'),
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(root, 'docs', f)),
  ];
  const out: { where: string; body: string }[] = [];
  for (const f of files) {
    const lines = readFileSync(f, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const fence = lines[i]?.match(/^(```+|~~~+)/);
      if (!fence) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith(fence[1] as string));
      const body = lines.slice(i + 1, end).join('\n');
      if (/^# Test Plan: /.test(body)) out.push({ where: `${f.slice(root.length + 1)}:${i + 1}`, body });
      i = end;
    }
  }
  return out;
}

const refused = (binding: string) =>
  readFileSync(join(root, 'plans', 'etcd-register.md'), 'utf8').replace(
    'checkers: [linearizable]\nrecoveryBudgetS: 10',
    binding,
  );

test('every shipped plan: plan check and run --dry-run agree', async (t) => {
  const plans = readdirSync(join(root, 'plans')).filter((f) => f.endsWith('.md'));
  t.true(plans.length >= 8);
  for (const p of plans) {
    const r = await exits(join('plans', p));
    t.is(r.dry, r.check, `${p}: plan check ${r.check}, run --dry-run ${r.dry}\n${r.out}`);
    t.true([0, 3, 254].includes(r.check), `${p}: ${r.out}`);
    // The root npm ci installs every example plugin's packages (workspaces): every shipped plan is ok to run.
    t.is(r.check, 0, `${p}: ${r.out}`);
  }
});

test('every plan example in README and docs: plan check and run --dry-run agree, and are ok to run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-agree-'));
  try {
    const examples = docPlans();
    t.true(examples.length > 0);
    for (const [i, ex] of examples.entries()) {
      const file = join(dir, `${i}.md`);
      writeFileSync(file, `${ex.body}\n`);
      const r = await exits(file);
      t.is(r.check, 0, `${ex.where}: ${r.out}`);
      t.is(r.dry, r.check, `${ex.where}: ${r.out}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('what the run refuses, plan check refuses, with file:line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-refuse-'));
  try {
    const cases: [string, string, RegExp][] = [
      [
        'slo',
        refused('checkers: [linearizable, slo]\nrecoveryBudgetS: 10'),
        /:\d+: error: S1: binding\.checkerOptions\.slo: an SLO needs a threshold/,
      ],
      [
        'fairness',
        refused('checkers: [linearizable, fairness]\nrecoveryBudgetS: 10'),
        /:\d+: error: S1: binding\.checkerOptions\.fairness: fairness needs a threshold/,
      ],
    ];
    // A fault-free scenario expected to PASS-hardening: step 8 of the decision tree can never give it.
    const s1 = readFileSync(join(root, 'plans', 'etcd-register.md'), 'utf8');
    const nemesis = s1.slice(
      s1.indexOf('nemesis:\n  - kind: partition\n    topology: asymmetric'),
      s1.indexOf('tiers:\n  smoke: { nodes: 3, durationS: 30, faultWindows: 2'),
    );
    cases.push([
      'fault-free hardening',
      s1
        .replace(nemesis, '')
        .replace('- **Expected verdict:** PASS-smoke', '- **Expected verdict:** PASS-hardening')
        .replace(
          'smoke: { nodes: 3, durationS: 30, faultWindows: 2, seeds: 1 }',
          'smoke: { nodes: 3, durationS: 30, faultWindows: 0, seeds: 1 }',
        )
        .replace(
          'hardening: { nodes: 5, durationS: 600, faultWindows: 20, seeds: 3 }',
          'hardening: { nodes: 5, durationS: 600, faultWindows: 0, seeds: 3 }',
        ),
      /:\d+: error: S1: Expected verdict: PASS-hardening can never be reached by a fault-free scenario/,
    ]);
    for (const [name, text, error] of cases) {
      const file = join(dir, `${name.replace(/ /g, '-')}.md`);
      writeFileSync(file, text);
      const r = await exits(file);
      t.is(r.check, 3, `${name}: ${r.out}`);
      t.is(r.dry, 3, `${name}: ${r.out}`);
      t.regex(r.out, error, name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
