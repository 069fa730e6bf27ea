import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { loadPlan } from '../../src/app/plan/load.ts';

/**
 * Plugins through the CLI: `--plugin PATH` (a .mjs plain object, a .ts module built with the define
 * helpers) and `module:` in a plan binding. Names from plugins show in --help choices, `check --list`
 * and plan check; a module that fails to load, has the wrong shape or takes a name gets exit 254
 * naming the module and the reason.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const apiIndex = new URL('../../src/index.ts', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const repoRoot = new URL('../../', import.meta.url).pathname;
const run = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
const dir = mkdtempSync(join(tmpdir(), 'fl-plugin-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
/** etcd-register.md with S1's binding opening with `head` instead of its db and workload lines. */
const S1_BINDING = '```faultline\ndb: etcd\nworkload: multi-register\n';
const rebound = (name: string, head: string) =>
  file(name, readFileSync(planPath, 'utf8').replace(S1_BINDING, `\`\`\`faultline\n${head}`));
// A plugin's own package says its modules are ES modules (as examples/memcached's does).
file('package.json', '{"type":"module"}');

/** No imports at all: the plugin contract is plain data and functions. */
const plain = file(
  'plain.mjs',
  `export default {
  name: 'plain',
  databases: [{ name: 'toydb', summary: 'a toy', defaultClient: 'toy', create: () => ({}) }],
  clients: [{ name: 'toy', summary: 'toy client', workloads: ['register'], hiddenRetries: false, create: () => ({}) }],
  workloads: [{ name: 'toy-load', summary: 'toy ops', ops: ['poke'], create: () => ({}) }],
  checkers: [{ name: 'always-valid', summary: 'says valid', load: async () => ({ checker: { name: 'always-valid',
    check: (ops) => ({ checker: 'always-valid', valid: true, evidence: ops.length + ' ops', scope: 'nothing', anomalies: [], stats: { opsConsumed: ops.length } }) } }) }],
};
`,
);

const typed = file(
  'typed.ts',
  `import { defineChecker, definePlugin, defineModel } from ${JSON.stringify(apiIndex)};
const counted: number = 0;
export const plugin = definePlugin({
  checkers: [defineChecker({ name: 'count-ops', summary: 'counts ops', consumes: ['poke'],
    checker: { name: 'count-ops', check: (ops) => ({ checker: 'count-ops', valid: ops.length > counted ? true : 'unknown', evidence: \`\${ops.length} ops\`, scope: 'counting only', anomalies: [], stats: { opsConsumed: ops.length } }) } })],
  models: [defineModel({ name: 'toggle', ops: ['flip'], create: () => { throw new Error('unused'); } })],
});
`,
);

test('--plugin: names join --help choices and check --list; a .ts plugin checks a history', async (t) => {
  const help = await run('test', '--plugin', plain, '--help');
  t.is(help.exitCode, 0, help.stderr);
  t.regex(help.stdout.replace(/\s+/g, ' '), /--db <name>.*"toydb"/);
  t.regex(help.stdout.replace(/\s+/g, ' '), /"toy-load"/);
  const list = await run('check', '--list', `--plugin=${plain}`, '--plugin', typed);
  t.is(list.exitCode, 0, list.stderr);
  t.regex(list.stdout, /always-valid\s+says valid \(.*plain\.mjs\)/);
  t.regex(list.stdout, /count-ops\s+counts ops/);
  const history = file(
    'h.jsonl',
    `${[
      { index: 0, type: 'invoke', f: 'poke', value: null, process: 0, time: 1, node: 'n1', faultEpoch: null },
      { index: 1, type: 'ok', f: 'poke', value: null, process: 0, time: 2, node: 'n1', faultEpoch: null },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n')}\n`,
  );
  const checked = await run(
    'check',
    history,
    '--checker',
    'count-ops,always-valid',
    '--plugin',
    typed,
    '--plugin',
    plain,
    '--json',
  );
  t.is(checked.exitCode, 0, checked.stderr);
  t.like(JSON.parse(checked.stdout), { valid: true, results: { 'count-ops': { evidence: '1 ops' } } });
  // The model a plugin defines is a --model choice.
  const models = await run('check', '--help', '--plugin', typed);
  t.regex(models.stdout.replace(/\s+/g, ' '), /--model <model>.*"toggle"/);
});

test('a plugin that fails to load, has the wrong shape or takes a name: exit 254 naming the module', async (t) => {
  const cases: [string, RegExp][] = [
    [join(dir, 'missing.mjs'), /missing\.mjs: plugin module not found/],
    [file('broken.mjs', 'export default {{;\n'), /broken\.mjs: cannot load the plugin: /],
    [
      file('shape.mjs', 'export default { databases: [{ name: "x" }] };\n'),
      /shape\.mjs: not a faultline plugin: databases\.0\.create: /,
    ],
    [file('none.mjs', 'export const other = 1;\n'), /none\.mjs: exports no plugin/],
    [
      file(
        'taken.mjs',
        `export default { clients: [{ name: 'etcd-http', workloads: ['register'], create: () => ({}) }] };\n`,
      ),
      /taken\.mjs: client "etcd-http" is registered twice: by faultline itself and by plugin .*taken\.mjs/,
    ],
    [file('plugin.txt', 'x'), /plugin\.txt: a plugin is a \.ts, \.js or \.mjs module/],
  ];
  for (const [path, re] of cases) {
    const r = await run('check', '--list', '--plugin', path);
    t.is(r.exitCode, 254, `${path}: ${r.stderr}`);
    t.regex(r.stderr, re);
  }
  // Two plugins registering the same name: the second names both modules.
  const twin = file('twin.mjs', (await import('node:fs')).readFileSync(plain, 'utf8'));
  const dup = await run('check', '--list', '--plugin', plain, '--plugin', twin);
  t.is(dup.exitCode, 254);
  t.regex(
    dup.stderr,
    /twin\.mjs: database "toydb" is registered twice: by plugin .*plain\.mjs and by plugin .*twin\.mjs/,
  );
});

test('module: in a plan binding (relative to the plan, given with --plugin) makes its names valid; without it they are plan errors', async (t) => {
  const original = (await import('node:fs')).readFileSync(planPath, 'utf8');
  const withModule = original.replace(
    '```faultline\ndb: etcd\nworkload: multi-register\n',
    '```faultline\nmodule: ./plain.mjs\ndb: toydb\nworkload: register\n',
  );
  t.not(withModule, original);
  const planFile = file('plugin-plan.md', withModule);
  const plan = await loadPlan(planFile, { trustPlanModules: true });
  const problems = checkPlan(plan);
  t.false(
    problems.some((p) => p.scenario === 'S1' && p.field.startsWith('binding') && p.severity === 'error'),
    JSON.stringify(problems.filter((p) => p.scenario === 'S1')),
  );
  t.is(plan.resolved.find((r) => r.id === 'S1')?.binding?.db, 'toydb');
  const check = await run('plan', 'check', '--plugin', plain, planFile);
  t.is(check.exitCode, 0, check.stdout + check.stderr);
  const without = file(
    'no-module.md',
    withModule.replace('module: ./plain.mjs\n', '').replace('db: toydb', 'db: otherdb'),
  );
  const bad = await run('plan', 'check', without);
  t.is(bad.exitCode, 3);
  t.regex(bad.stdout, /binding\.db.*unknown database "otherdb" \(one of etcd, redis/);
  const gone = file('gone-module.md', withModule.replace('./plain.mjs', './nowhere.mjs'));
  const r = await run('plan', 'check', '--plugin', join(dir, 'nowhere.mjs'), gone);
  t.is(r.exitCode, 254);
  t.regex(r.stderr, /nowhere\.mjs: plugin module not found/);
});

test('a plan whose plugin imports a package that is not installed: plan check names the plugin, the package and the install command', async (t) => {
  const needs = file('needs-pkg.mjs', "import 'faultline-no-such-package/sub';\nexport default {};\n");
  const plan = rebound('needs-pkg.md', 'module: ./needs-pkg.mjs\ndb: etcd\nworkload: multi-register\n');
  const r = await run('plan', 'check', '--plugin', needs, plan);
  t.is(r.exitCode, 254);
  t.is(
    r.stderr,
    `faultline: ${needs}: cannot load the plugin: the package "faultline-no-such-package" is not installed (install it: npm install faultline-no-such-package)`,
  );
  // A plugin shipped in the checkout's examples/ is a workspace: the checkout's npm ci installs it.
  const inExamples = join(repoRoot, 'examples', `.needs-pkg-${process.pid}.mjs`);
  writeFileSync(inExamples, "import 'faultline-no-such-package';\nexport default {};\n");
  try {
    const ex = await run('check', '--list', '--plugin', inExamples);
    t.is(ex.exitCode, 254);
    t.regex(ex.stderr, /is not installed \(install it: cd .* && npm ci\)$/);
    t.is(ex.stderr.split('\n').length, 1, 'one line');
  } finally {
    rmSync(inExamples, { force: true });
  }
});

test('a daemon described without code: --plugin FILE.yaml, daemon: inline or by file in a binding', async (t) => {
  const yaml = file(
    'kvd.yaml',
    'name: kvd\npackages: [memcached]\nstart: memcached -l {address} -p {port}\nport: 7400\nclient: etcd-http\n',
  );
  const help = await run('test', '--plugin', yaml, '--help');
  t.is(help.exitCode, 0, help.stderr);
  t.regex(help.stdout.replace(/\s+/g, ' '), /--db <name>.*"kvd"/);
  const inline = rebound(
    'daemon-inline.md',
    'daemon: { name: kvd2, start: "kvd2 --port {port}", port: 7401, client: etcd-http }\nworkload: register\n',
  );
  const plan = await loadPlan(inline);
  t.is(plan.resolved.find((r) => r.id === 'S1')?.binding?.db, 'kvd2', 'db defaults to the inline daemon');
  t.false(
    checkPlan(plan).some(
      (p) => p.scenario === 'S1' && p.severity === 'error' && p.field.startsWith('binding'),
    ),
  );
  const byFile = rebound('daemon-file.md', 'daemon: ./kvd.yaml\ndb: kvd\nworkload: register\n');
  const r = await run('plan', 'check', byFile);
  t.is(r.exitCode, 0, r.stdout + r.stderr);
  // A description that breaks the format is bad input naming the plan and the field.
  const broken = rebound(
    'daemon-broken.md',
    'daemon: { name: kvd3, start: "x {secret}" }\nworkload: register\n',
  );
  const bad = await run('plan', 'check', broken);
  t.is(bad.exitCode, 254);
  const lineOf = (p: string, text: string) =>
    readFileSync(p, 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(text)) + 1;
  t.true(
    bad.stderr.startsWith(
      `faultline: ${broken}:${lineOf(broken, 'name: kvd3')}: binding.daemon.start: unknown placeholder {secret} (`,
    ),
    bad.stderr,
  );
  t.false(bad.stderr.trim().includes('\n'), 'one line');
  // A block over several lines: each problem at its own line of the plan.
  const block = (field: string) =>
    rebound(
      `daemon-${field}.md`,
      `daemon:\n  name: kvd4\n  start: kvd4 {port}\n  ${field}\nworkload: register\n`,
    );
  for (const [field, said] of [
    ['stopSignal: NOPE', /: binding\.daemon\.stopSignal: /],
    ['ports: [1]', /: binding\.daemon\.ports: unknown field$/],
    ['args: ["{secret}"]', /: binding\.daemon\.args\.0: unknown placeholder \{secret\}/],
  ] as const) {
    const p = block(field);
    const r = await run('plan', 'check', p);
    t.is(r.exitCode, 254, field);
    t.true(r.stderr.startsWith(`faultline: ${p}:${lineOf(p, field)}: `), `${field}: ${r.stderr}`);
    t.regex(r.stderr, said);
  }
  // A native YAML plan names its lines too.
  const yamlPlan = file(
    'daemon-plan.yaml',
    'scenarios:\n  - id: S1\n    binding:\n      workload: register\n      daemon:\n        name: kvd5\n        start: "x {secret}"\n',
  );
  const y = await run('plan', 'check', yamlPlan);
  t.is(y.exitCode, 254);
  t.regex(y.stderr, /daemon-plan\.yaml:7: binding\.daemon\.start: unknown placeholder \{secret\}/);
});
