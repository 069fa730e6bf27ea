import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { execa } from 'execa';
import { reachEndpoint } from '../../src/lib/clusters/client-only.ts';
import { freePort, listening } from '../helpers/ports.ts';

/**
 * Client-only runs against real databases started here, outside faultline, as a managed service would be:
 * a redis-server and a 3-member etcd cluster on loopback, reached only at their ports. faultline opens no
 * SSH connection (there is no sshd to open one to on these ports), installs nothing, and every fault is
 * the proxy's: the histories are checked and every fault proven from the proxy's counters and the clients.
 */

const FAULTLINE = join(process.cwd(), 'bin', 'faultline.js');
const env = { ...process.env, FAULTLINE_FROM_SOURCE: '1' };
const which = (bin: string) =>
  ['/usr/bin', '/usr/sbin', '/usr/local/bin'].map((d) => join(d, bin)).find((p) => existsSync(p));

// An etcd started by hand while the whole suite runs beside it took over 20 s once: a minute is the bound.
const waitReachable = (port: number, ms = 60_000) => listening(port, ms);

function stop(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null) return Promise.resolve();
  return new Promise((r) => {
    p.once('exit', () => r());
    p.kill('SIGTERM');
  });
}

/** The session directory a command printed (`session: DIR` or `run directory: DIR`). */
const sessionOf = (out: string) => /(?:^|\n)(?:session|run directory): (\S+)/.exec(out)?.[1] ?? '';

const redis = which('redis-server');
const etcd = which('etcd');

(redis ? test.serial : test.serial.skip)(
  'redis started outside faultline: latency + reset through the proxy, history checked, no SSH',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'fl-client-only-redis-'));
    const port = await freePort();
    const server = spawn(
      redis as string,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    try {
      await waitReachable(port);
      const r = await execa(
        'node',
        [
          FAULTLINE,
          'test',
          '--no-ssh',
          '--nodes',
          `127.0.0.1:${port}`,
          '--db',
          'redis',
          '--workload',
          'register',
          '--nemesis',
          'proxy-latency,proxy-reset',
          '--nemesis-interval',
          '5s',
          '--time-limit',
          '20s',
          '--concurrency',
          '4',
          '--seed',
          '7',
          '--out',
          join(dir, 'sessions'),
        ],
        { env, reject: false, all: true, timeout: 240_000 },
      );
      t.log(r.all?.split('\n').slice(-8).join('\n'));
      t.is(r.exitCode, 0, 'VALID: a single Redis is linearizable under proxy latency and resets');
      const run = sessionOf(r.all ?? '');
      const results = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8'));
      t.true(results.valid === true);
      const faults = JSON.parse(readFileSync(join(run, 'faults.json'), 'utf8')) as {
        spec: { action: string };
        evidence?: { landed: boolean; signals: { side: string; landed: boolean }[] };
      }[];
      const actions = new Set(faults.map((f) => f.spec.action));
      t.true(actions.has('latency') || actions.has('reset'), JSON.stringify([...actions]));
      for (const f of faults) {
        t.true(f.evidence?.landed, `${f.spec.action} landed`);
        t.truthy(f.evidence?.signals.find((s) => s.side === 'injector' && s.landed));
        t.truthy(f.evidence?.signals.find((s) => s.side === 'victim' && s.landed));
      }
      const heal = JSON.parse(readFileSync(join(run, 'heal.json'), 'utf8'));
      t.true(heal.clean);
      t.false(existsSync(join(run, 'logs', 'ssh')), 'no SSH connection was logged');
    } finally {
      await stop(server);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** A 3-member etcd cluster on loopback, started here: the client ports of its members. */
async function etcdCluster(dir: string): Promise<{ clients: number[]; stop: () => Promise<void> }> {
  const members = await Promise.all(
    ['e1', 'e2', 'e3'].map(async (name) => ({ name, client: await freePort(), peer: await freePort() })),
  );
  const initial = members.map((m) => `${m.name}=http://127.0.0.1:${m.peer}`).join(',');
  const procs = members.map((m) =>
    spawn(
      etcd as string,
      [
        '--name',
        m.name,
        '--data-dir',
        join(dir, m.name),
        '--listen-client-urls',
        `http://127.0.0.1:${m.client}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${m.client}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${m.peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${m.peer}`,
        '--initial-cluster',
        initial,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        'fl-client-only',
      ],
      {
        stdio: 'ignore',
        env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.arch === 'x64' ? '' : process.arch },
      },
    ),
  );
  const stopAll = () => Promise.all(procs.map(stop)).then(() => undefined);
  try {
    for (const m of members) await waitReachable(m.client);
    // Ready when a write through the first member is acknowledged (a leader is elected).
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${members[0]?.client}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({ key: Buffer.from('ready').toString('base64'), value: '' }),
      }).then(
        (x) => x.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error('etcd cluster elected no leader in 30 s');
      await sleep(300);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { clients: members.map((m) => m.client), stop: stopAll };
}

(etcd ? test.serial : test.serial.skip)(
  'faultline run --no-ssh: the proxy plan against an etcd cluster started outside faultline; node-side plans refused',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'fl-client-only-etcd-'));
    const cluster = await etcdCluster(dir);
    const nodes = cluster.clients.map((p) => `127.0.0.1:${p}`).join(',');
    try {
      // Nothing listens for SSH on these endpoints' host ports: the run never needs it.
      t.log(
        `sshd on 127.0.0.1:22: ${(await reachEndpoint({ host: '127.0.0.1', port: 22 }, 500)) ?? 'listening'}`,
      );
      const inventory = join(dir, 'managed.yaml');
      writeFileSync(
        inventory,
        `ssh: false\nnodes:\n${cluster.clients.map((p, i) => `  m${i + 1}: 127.0.0.1:${p}\n`).join('')}`,
      );
      const doctor = await execa('node', [FAULTLINE, 'doctor', '--inventory', inventory], {
        env,
        reject: false,
        all: true,
      });
      t.is(doctor.exitCode, 0, doctor.all);
      t.regex(doctor.all ?? '', /client-only: 3 endpoint\(s\) reachable/);

      const refused = await execa(
        'node',
        [FAULTLINE, 'run', 'plans/etcd-register.md', '--inventory', inventory, '--out', join(dir, 's')],
        { env, reject: false, all: true },
      );
      t.is(refused.exitCode, 254);
      t.regex(
        refused.all ?? '',
        /S1: nemesis step 1 \(kind: partition\) acts on the nodes; a client-only run/,
      );

      const r = await execa(
        'node',
        [
          FAULTLINE,
          'run',
          'plans/etcd-proxy.md',
          '--no-ssh',
          '--nodes',
          nodes,
          '--scenario',
          'S1',
          '--seed',
          '11',
          '--out',
          join(dir, 'sessions'),
        ],
        { env, reject: false, all: true, timeout: 480_000 },
      );
      t.log(r.all?.split('\n').slice(-10).join('\n'));
      t.is(r.exitCode, 0, 'S1 ends PASS-smoke as the plan expects');
      t.regex(r.stdout, /S1\s+PASS-smoke/);
      const session = sessionOf(r.all ?? '');
      t.false(
        existsSync(join(session, 'logs', 'ssh')) && readdirSync(join(session, 'logs', 'ssh')).length > 0,
        'no SSH connection was logged',
      );
    } finally {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
