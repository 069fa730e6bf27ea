import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { withCluster } from '../helpers/cluster.ts';

/**
 * The proxy between etcd's members, against a real 3-member etcd on a local cluster: plans/etcd-proxy.md
 * S2 (serializable reads, one member cut from its peers by the proxy) must FAIL and reproduce, S3 (the
 * same fault, linearizable reads) must PASS, with no iptables on any node; and a client-only run refuses
 * the peer step in one line, before anything runs.
 */

const env = { ...process.env, FAULTLINE_FROM_SOURCE: '1' };
const dir = mkdtempSync(join(tmpdir(), 'faultline-etcd-proxy-peers-'));

test('client-only: a proxy partition on peer links is refused in one line, exit 254', async (t) => {
  const r = await execa(
    'node',
    [
      'bin/faultline.js',
      'run',
      'plans/etcd-proxy.md',
      '--no-ssh',
      '--nodes',
      '127.0.0.1:1,127.0.0.1:2,127.0.0.1:3',
      '--scenario',
      'S2',
      '--out',
      join(dir, 'refused'),
    ],
    { reject: false, env },
  );
  t.is(r.exitCode, 254, r.stderr);
  t.is(
    r.stderr.trim(),
    "faultline: plans/etcd-proxy.md: S2: nemesis step 1 (kind: proxy, links: peers) needs the database's peer addresses configured on the nodes; a client-only run (--no-ssh) allows only proxy steps on client links (leave it out with --scenario)",
  );
});

const fx = withCluster(test, { nodes: 3, name: 'etcd-proxy-peers' });

fx.test.serial(
  'etcd-proxy S2 FAIL-reproducible and S3 PASS-smoke through a partition of peer links, exit 0',
  async (t) => {
    const c = fx.cluster();
    const out = join(dir, 'sessions');
    const r = await execa(
      'node',
      [
        'bin/faultline.js',
        'run',
        'plans/etcd-proxy.md',
        '--inventory',
        c.inventoryPath,
        '--scenario',
        'S2,S3',
        '--seed',
        '3',
        '--out',
        out,
      ],
      { reject: false, env },
    );
    const table = `${r.stdout}\n${r.stderr}`;
    t.is(r.exitCode, 0, table.slice(-3000));
    t.regex(table, /S2\s+FAIL-reproducible\s+FAIL-reproducible \(met\)/);
    t.regex(table, /S3\s+PASS-smoke\s+PASS-smoke \(met\)/);
    // Landing evidence of every peer partition: bytes dropped into and out of the member, its clients
    // unanswered, peer traffic back after heal.
    const session = join(
      out,
      'etcd-proxy',
      readdirSync(join(out, 'etcd-proxy')).filter((d) => /^\d{4}-/.test(d))[0] as string,
    );
    for (const s of ['S2', 'S3']) {
      const run = readdirSync(join(session, 'artifacts', s)).find((d) => d.startsWith('01-run')) as string;
      const faults = JSON.parse(readFileSync(join(session, 'artifacts', s, run, 'faults.json'), 'utf8')) as {
        spec: { params?: { links?: string } };
        evidence?: { landed: boolean; signals: { signal: string; during?: unknown }[] };
        afterHeal?: { landed: boolean };
      }[];
      t.is(faults.length, 2, `${s}: two windows`);
      for (const f of faults) {
        t.is(f.spec.params?.links, 'peers');
        t.true(f.evidence?.landed, JSON.stringify(f.evidence));
        t.true(f.afterHeal?.landed, JSON.stringify(f.afterHeal));
        for (const sig of f.evidence?.signals ?? []) t.log(`${s} ${sig.signal}: ${String(sig.during)}`);
      }
    }
  },
);
