import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { clusterAddress } from '../../src/core/control/addresses.ts';
import type { NodeSpec } from '../../src/core/control/types.ts';
import { parseOptions } from '../../src/core/util/options.ts';
import { fileSha256, resolveArtifactPaths, versionReport } from '../../src/lib/databases/artifact.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { databases } from '../../src/lib/databases/registry.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * The user's own build of etcd and Redis: a tarball built here from Debian's binaries in the upstream
 * layout (etcd-vX.Y.Z-linux-amd64/{etcd,etcdctl}; redis-X.Y.Z/bin/{redis-server,redis-cli}), uploaded over
 * SFTP, its sha256 checked on the node, run from the node's faultline directory, and the version the
 * database reports recorded (and a mismatch reported).
 */
const dir = mkdtempSync(join(tmpdir(), 'faultline-db-artifact-'));
const ZEROS = '0'.repeat(64);

function which(bin: string): string | null {
  for (const d of (process.env.PATH ?? '').split(':')) if (existsSync(join(d, bin))) return join(d, bin);
  return null;
}

/** A .tar.gz of `files` under `top/` (and `sub`), as a release would ship them. */
async function tarball(name: string, top: string, sub: string, files: string[]): Promise<string> {
  const root = join(dir, `${name}-src`);
  mkdirSync(join(root, top, sub), { recursive: true });
  for (const f of files) copyFileSync(f, join(root, top, sub, f.split('/').pop() as string));
  const out = join(dir, `${name}.tar.gz`);
  await execa('tar', ['-czf', out, '-C', root, top]);
  return out;
}

/** etcd's release layout from Debian's binaries, built once for the tests that need it. */
let etcdTgz: Promise<string> | undefined;
function etcdTarball(): Promise<string> {
  const etcd = which('etcd');
  const etcdctl = which('etcdctl');
  if (!etcd || !etcdctl) throw new Error('etcd-server and etcd-client are needed on this host');
  etcdTgz ??= tarball('etcd', 'etcd-v3.4.23-linux-amd64', '', [etcd, etcdctl]);
  return etcdTgz;
}

test('artifact options: a tarball needs its sha256, tarball and binary exclude each other, bad hex refused', (t) => {
  const etcd = databases.require('etcd', 'db');
  t.throws(() => parseOptions(etcd.options, { tarball: '/x.tar.gz' }, '--db'), {
    message: /sha256: a tarball needs its sha256/,
  });
  t.throws(() => parseOptions(etcd.options, { tarball: '/x', binary: '/y', sha256: ZEROS }, '--db'), {
    message: /tarball and binary exclude each other/,
  });
  t.throws(() => parseOptions(etcd.options, { tarball: '/x', sha256: 'abc' }, '--db'), {
    message: /64 hex digits/,
  });
  t.throws(() => parseOptions(etcd.options, { sha256: ZEROS }, '--db'), { message: /goes with a tarball/ });
  t.like(parseOptions(databases.require('redis', 'db').options, { version: '7.2.4' }, '--db'), {
    version: '7.2.4',
  });
  t.deepEqual(resolveArtifactPaths({ tarball: 'b/x.tgz', binary: 'etcd', version: '1' }, '/plans'), {
    tarball: '/plans/b/x.tgz',
    binary: '/plans/etcd',
    version: '1',
  });
  t.is(resolveArtifactPaths({ tarball: 'https://h/x.tgz' }, '/p').tarball, 'https://h/x.tgz');
});

test('version report: v-prefix ignored, a node that reports another version or none is a mismatch', (t) => {
  const ok = versionReport('etcd', 'v3.4.23', 'x', [{ node: 'n1', reported: '3.4.23' }]);
  t.deepEqual(ok.mismatched, []);
  const bad = versionReport('etcd', '3.5.17', 'x', [
    { node: 'n1', reported: '3.4.23' },
    { node: 'n2', reported: null, error: 'x' },
  ]);
  t.deepEqual(bad.mismatched, ['n1', 'n2']);
  t.deepEqual(versionReport('etcd', undefined, 'x', [{ node: 'n1', reported: '1' }]).mismatched, []);
});

const fx = withCluster(test, { nodes: 2, name: 'db-artifact' });
const cli = (args: string[]) =>
  execa('node', ['bin/faultline.js', ...args], {
    reject: false,
    env: { ...process.env, FAULTLINE_FROM_SOURCE: '1' },
  });

fx.test.serial('etcd tarball: a wrong sha256 is refused on the node and nothing is installed', async (t) => {
  const tgz = await etcdTarball();
  const c = fx.cluster();
  const r = await cli([
    'test',
    '--inventory',
    c.inventoryPath,
    '--db',
    'etcd',
    '--db-tarball',
    tgz,
    '--db-sha256',
    ZEROS,
    '--time-limit',
    '2s',
    '--out',
    join(dir, 'bad-sum'),
  ]);
  t.is(r.exitCode, 254, r.stderr);
  const actual = await fileSha256(tgz);
  t.regex(
    r.stderr,
    new RegExp(
      `n[12]: etcd: ${tgz.replace(/[.]/g, '\\.')}: sha256 is ${actual}, expected ${ZEROS}; refused, nothing installed`,
    ),
  );
  const remote = await fx.remote();
  const left = await remote.exec('n1', 'ls -A /var/lib/faultline/etcd/dist 2>/dev/null || true', {
    sudo: true,
  });
  t.false(left.stdout.includes(ZEROS), 'no install directory for the refused checksum');
  t.false(left.stdout.includes('.stage-'), `no staging copy left: ${left.stdout}`);
  t.false(left.stdout.includes(actual), 'the tarball was not installed under its real checksum either');
});

fx.test.serial(
  'etcd tarball: uploaded, verified, run from the node directory; --db-version mismatch reported',
  async (t) => {
    const tgz = await etcdTarball();
    const sha = await fileSha256(tgz);
    const c = fx.cluster();
    const out = join(dir, 'etcd-run');
    const started = Date.now();
    const r = await cli([
      'test',
      '--inventory',
      c.inventoryPath,
      '--db',
      'etcd',
      '--db-tarball',
      tgz,
      '--db-sha256',
      sha,
      '--db-version',
      '3.5.17',
      '--time-limit',
      '3s',
      '--recovery',
      '1s',
      '--rate',
      '20',
      '--leave-db-running',
      '--out',
      out,
    ]);
    t.log(
      `etcd from a tarball (upload, verify, unpack on 2 nodes, 3 s run): ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    t.is(r.exitCode, 0, r.stderr);
    t.regex(r.stderr, /VERSION MISMATCH: expected 3\.5\.17, n1 reports 3\.4\.23, n2 reports 3\.4\.23/);
    const results = readdirSync(out, { recursive: true }).find((f) => String(f).endsWith('results.json'));
    const doc = JSON.parse(readFileSync(join(out, String(results)), 'utf8')) as {
      dbVersion: {
        expected: string;
        source: string;
        nodes: { node: string; reported: string }[];
        mismatched: string[];
      };
    };
    t.log(`recorded: ${JSON.stringify(doc.dbVersion)}`);
    t.is(doc.dbVersion.expected, '3.5.17');
    t.deepEqual(
      doc.dbVersion.nodes.map((n) => n.reported),
      ['3.4.23', '3.4.23'],
    );
    t.deepEqual(doc.dbVersion.mismatched, ['n1', 'n2']);
    t.regex(doc.dbVersion.source, new RegExp(`tarball .*etcd\\.tar\\.gz sha256 ${sha}`));
    // The member really runs the installed binary, not /usr/bin/etcd.
    const remote = await fx.remote();
    const db = new EtcdDb();
    const ctx = { remote, nodes: ['n1', 'n2'] };
    for (const n of ctx.nodes) {
      const exe = await remote.exec(n, `readlink /proc/$(cat ${db.pidFile(ctx, n)})/exe`, { sudo: true });
      t.is(exe.stdout.trim(), `/var/lib/faultline/etcd/dist/${sha}/etcd`);
    }
    const ctl = await remote.exec('n1', `test -x /var/lib/faultline/etcd/dist/${sha}/etcdctl && echo yes`, {
      sudo: true,
    });
    t.is(ctl.stdout.trim(), 'yes', 'etcdctl from the tarball too');
    for (const n of ctx.nodes) await db.teardown(ctx, n);
    await remote.exec('n1', `rm -rf /var/lib/faultline/etcd/dist/${sha}`, { sudo: true });
  },
);

fx.test.serial(
  'redis tarball in a plan: report.json and report.md record the version Redis reports (a match)',
  async (t) => {
    const server = which('redis-server');
    const client = which('redis-cli');
    if (!server || !client) return t.fail('redis-server and redis-tools are needed on this host');
    const tgz = await tarball('redis', 'redis-7.0.15', 'bin', [server, client]);
    const sha = await fileSha256(tgz);
    const planDir = join(dir, 'plan');
    mkdirSync(planDir, { recursive: true });
    copyFileSync(tgz, join(planDir, 'redis-build.tar.gz'));
    const plan = readFileSync('plans/redis-replication.md', 'utf8')
      .replace(
        'dbOptions: { readFrom: replicas }',
        `dbOptions: { tarball: ./redis-build.tar.gz, sha256: ${sha}, version: "7.0.15" }`,
      )
      .replace('3 nodes × 30s × 2 faults × 1 seed', '2 nodes × 5s × 0 faults × 1 seed')
      .replace(/nemesis:\n(?: {2}- kind:[^\n]*\n(?: {4}[^\n]*\n)*)+/, 'nemesis: []\n')
      .replace(
        'smoke: { nodes: 3, durationS: 30, faultWindows: 2, seeds: 1 }',
        'smoke: { nodes: 2, durationS: 5, faultWindows: 0, seeds: 1 }',
      )
      // A fault-free scenario's hardening tier asks for no fault window either (plan check refuses one
      // that does: it could never be met).
      .replace('5 nodes × 5min × 10 faults × 3 seeds', '5 nodes × 5min × 0 faults × 3 seeds')
      .replace(
        'hardening: { nodes: 5, durationS: 300, faultWindows: 10, seeds: 3 }',
        'hardening: { nodes: 5, durationS: 300, faultWindows: 0, seeds: 3 }',
      );
    const planPath = join(planDir, 'redis-own-build.md');
    writeFileSync(planPath, plan);
    const c = fx.cluster();
    const out = join(dir, 'plan-sessions');
    const started = Date.now();
    const r = await cli([
      'run',
      planPath,
      '--inventory',
      c.inventoryPath,
      '--yes',
      '--seed',
      '1',
      '--out',
      out,
    ]);
    t.log(`plan with a Redis tarball: ${((Date.now() - started) / 1000).toFixed(1)} s, exit ${r.exitCode}`);
    const reportPath = readdirSync(out, { recursive: true }).find((f) =>
      String(f).endsWith('findings/report.json'),
    );
    if (!reportPath) return t.fail(`no report.json: ${r.stderr}`);
    const report = JSON.parse(readFileSync(join(out, String(reportPath)), 'utf8')) as {
      scenarios: {
        id: string;
        dbVersion: { expected: string; nodes: { reported: string }[]; mismatched: string[] } | null;
      }[];
    };
    const s1 = report.scenarios.find((s) => s.id === 'S1');
    t.truthy(s1?.dbVersion, r.stderr);
    t.log(`recorded: ${JSON.stringify(s1?.dbVersion)}`);
    t.is(s1?.dbVersion?.expected, '7.0.15');
    t.deepEqual(
      s1?.dbVersion?.nodes.map((n) => n.reported),
      ['7.0.15', '7.0.15'],
    );
    t.deepEqual(s1?.dbVersion?.mismatched, []);
    const md = readFileSync(join(out, String(reportPath).replace(/report\.json$/, 'report.md')), 'utf8');
    t.regex(
      md,
      /## Database under test\n\n- S1: redis 7\.0\.15 \(tarball .*redis-build\.tar\.gz sha256 [0-9a-f]{64}\): matches the expected 7\.0\.15/,
    );
    const remote = await fx.remote();
    await remote.exec('n1', `rm -rf /var/lib/faultline/redis/dist/${sha}`, { sudo: true });
  },
);

fx.test.serial(
  'redis --db-binary: one binary uploaded (sha256 computed here, checked there) and run',
  async (t) => {
    const server = which('redis-server');
    if (!server) return t.fail('redis-server is needed on this host');
    const c = fx.cluster();
    const out = join(dir, 'redis-binary');
    const r = await cli([
      'test',
      '--inventory',
      c.inventoryPath,
      '--db',
      'redis',
      '--db-binary',
      server,
      '--db-version',
      '7.0.15',
      '--time-limit',
      '2s',
      '--recovery',
      '1s',
      '--rate',
      '20',
      '--out',
      out,
    ]);
    t.is(r.exitCode, 0, r.stderr);
    t.notRegex(r.stderr, /MISMATCH/);
    const results = readdirSync(out, { recursive: true }).find((f) => String(f).endsWith('results.json'));
    const doc = JSON.parse(readFileSync(join(out, String(results)), 'utf8')) as {
      dbVersion: { source: string; mismatched: string[] };
    };
    const sha = await fileSha256(server);
    t.is(doc.dbVersion.source, `binary ${server} sha256 ${sha}`);
    t.deepEqual(doc.dbVersion.mismatched, []);
    const remote = await fx.remote();
    await remote.exec('n1', `rm -rf /var/lib/faultline/redis/dist/${sha}`, { sudo: true });
  },
);

fx.test.serial(
  'etcd tarball from a URL: the node downloads it (from a server on the cluster bridge), then the same check',
  async (t) => {
    const tgz = await etcdTarball();
    const sha = await fileSha256(tgz);
    // The control host's address on the cluster's own bridge: nothing outside this host is reached.
    const bridge = fx.cluster().subnet.replace(/\.0\/24$/, '.1');
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(`${req.socket.remoteAddress} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/gzip' });
      res.end(readFileSync(tgz));
    });
    await new Promise<void>((ok) => server.listen(0, bridge, ok));
    const url = `http://${bridge}:${(server.address() as AddressInfo).port}/etcd-v3.4.23-linux-amd64.tar.gz`;
    const remote = await fx.remote();
    const ctx = { remote, nodes: ['n1'] };
    try {
      await t.throwsAsync(new EtcdDb({ artifact: { tarball: url, sha256: ZEROS } }).install(ctx, 'n1'), {
        message: `n1: etcd: ${url}: sha256 is ${sha}, expected ${ZEROS}; refused, nothing installed`,
      });
      const db = new EtcdDb({ artifact: { tarball: url, sha256: sha, version: '3.4.23' } });
      await db.install(ctx, 'n1');
      t.is(requests.length, 2, requests.join('; '));
      const n1 = clusterAddress(fx.cluster().nodes[0] as NodeSpec);
      t.true(
        requests.every((r) => r.startsWith(`${n1} `)),
        `every request came from n1 itself: ${requests.join('; ')}`,
      );
      const v = await remote.exec('n1', `/var/lib/faultline/etcd/dist/${sha}/etcd --version`);
      t.regex(v.stdout, /etcd Version: 3\.4\.23/);
    } finally {
      server.close();
      await remote.exec('n1', `rm -rf /var/lib/faultline/etcd/dist/${sha}`, { sudo: true });
    }
  },
);
