import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { OutputExistsError, writeFileAtomicSync } from '../../src/core/util/atomic-write.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { clusterDir } from '../../src/lib/clusters/state-dir.ts';

/**
 * Cluster names go through the one path-name validator wherever they enter (`cluster up|down|status
 * --name`, `--vm`, `test|run --local N --cluster-name`), before anything on the host is touched; cluster
 * state files are written by the one atomic writer (a subnet claim exclusively).
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const stateDir = mkdtempSync(join(tmpdir(), 'fl-sec-state-'));
const env = { FAULTLINE_FROM_SOURCE: '1', FAULTLINE_STATE_DIR: stateDir };
const run = (...args: string[]) => execa('node', [bin, ...args], { reject: false, env });

const HOSTILE = ['../sec-x', 'sec/x', '.sec', '-sec', 'sec x', 'sec,x', 'sec;x'];

test('clusterDir: every path built from a cluster name stays under the clusters directory', (t) => {
  for (const n of HOSTILE)
    t.throws(() => clusterDir(n), { instanceOf: UserError, message: /cluster name/ }, n);
  t.true(clusterDir('sec-ok').endsWith('/clusters/sec-ok'));
});

for (const args of [
  ['cluster', 'up', '--nodes', '2', '--name'],
  ['cluster', 'up', '--vm', '--nodes', '1', '--name'],
  ['cluster', 'down', '--name'],
  ['cluster', 'status', '--name'],
  ['test', '--db', 'etcd', '--workload', 'register', '--local', '2', '--cluster-name'],
]) {
  test(`${args.slice(0, 3).join(' ')} … ${args.at(-1)} with a hostile name: one line, exit 254, nothing created`, async (t) => {
    for (const name of ['../sec-x', 'sec x', 'sec,x']) {
      const r = await run(...args, name);
      t.is(r.exitCode, 254, `${name}: ${r.stderr}`);
      t.regex(r.stderr, /cluster name ".*" cannot be used in a path/);
      t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    t.false(existsSync(join(stateDir, 'clusters')) && readdirSync(join(stateDir, 'clusters')).length > 0);
    t.false(existsSync(join(stateDir, 'sec-x')));
  });
}

test('a corrupt cluster state file is a one-line error naming it (exit 254), never a parser crash', async (t) => {
  const own = mkdtempSync(join(tmpdir(), 'fl-sec-corrupt-'));
  const dir = join(own, 'clusters', 'sec-corrupt');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'state.json'), '{"name": "sec-corr');
  const r = await execa('node', [bin, 'cluster', 'status', '--name', 'sec-corrupt'], {
    reject: false,
    env: { ...env, FAULTLINE_STATE_DIR: own },
  });
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stderr, /state\.json: corrupt cluster state/);
  t.notRegex(r.stderr, /\n\s+at /);
});

test('exclusive atomic write: the first writer wins, a second is refused and the first content stays', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-excl-'));
  const claim = join(dir, '10.213.9');
  writeFileAtomicSync(claim, 'sec-a\n', { exclusive: true });
  t.throws(() => writeFileAtomicSync(claim, 'sec-b\n', { exclusive: true }), {
    instanceOf: OutputExistsError,
  });
  t.is(readFileSync(claim, 'utf8'), 'sec-a\n');
  t.deepEqual(readdirSync(dir), ['10.213.9'], 'no temporary file left behind');
});

test('a subnet claim is published whole and only once', async (t) => {
  process.env.FAULTLINE_STATE_DIR = mkdtempSync(join(tmpdir(), 'fl-sec-subnet-'));
  const { claimSubnet, releaseSubnetsOf } = await import('../../src/lib/clusters/subnet.ts');
  const { subnetClaimsDir } = await import('../../src/lib/clusters/state-dir.ts');
  const s = await claimSubnet('sec-claim', '10.213.250.0/24');
  t.teardown(() => releaseSubnetsOf('sec-claim'));
  // Claims are host-wide; the file names the owner: the cluster and its state directory.
  const owner = `sec-claim\t${process.env.FAULTLINE_STATE_DIR}\n`;
  t.is(readFileSync(join(subnetClaimsDir(), s.prefix), 'utf8'), owner);
  await t.throwsAsync(claimSubnet('sec-other', '10.213.250.0/24'), {
    instanceOf: UserError,
    message: /claimed by another faultline cluster/,
  });
  t.is(readFileSync(join(subnetClaimsDir(), s.prefix), 'utf8'), owner);
  t.false(
    readdirSync(subnetClaimsDir()).some((f) => f.startsWith('.')),
    'no temporary file left in the claims directory',
  );
});

test('no cluster state file is written with a plain writeFileSync', (t) => {
  const root = new URL('../../src/lib/clusters/', import.meta.url).pathname;
  for (const f of ['local.ts', 'vm.ts', 'subnet.ts', 'vm-accel.ts', 'vagrant.ts', 'ssh-forward-main.ts']) {
    const text = readFileSync(join(root, f), 'utf8');
    for (const m of text.matchAll(/writeFileSync\(([^,]+),/g))
      t.notRegex(
        m[1] ?? '',
        /state|statePath|inventory|cachePath|portsFile|known_hosts|subnet/i,
        `${f}: ${m[0]}`,
      );
  }
});
