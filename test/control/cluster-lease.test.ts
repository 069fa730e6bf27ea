import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import {
  clearStaleLock,
  describeHolder,
  lockHolder,
  processStartTicks,
  releaseLock,
  takeLock,
  tryTakeLock,
} from '../../src/core/util/pid-lock.ts';
import { connectCluster } from '../../src/lib/clusters/connect-cluster.ts';
import { localClusterUnavailableReason } from '../../src/lib/clusters/host-tools.ts';
import { localClusterDown } from '../../src/lib/clusters/local.ts';
import { clusterDir, clusterLeasePath } from '../../src/lib/clusters/state-dir.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const lockModule = join(root, 'src/core/util/pid-lock.ts');
const leaseModule = join(root, 'src/lib/clusters/cluster-lease.ts');

/** A child node process running `code` (an ES module with top-level await), with tsx for the sources. */
function child(code: string, args: string[] = []): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The first line the child prints (it says when it holds the lock), or its stderr if it ends first. */
function firstLine(c: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    c.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    c.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    c.on('exit', (code) => reject(new Error(`child exited ${code} before saying anything: ${err}`)));
  });
}

function exited(c: ChildProcess): Promise<number | null> {
  return c.exitCode !== null
    ? Promise.resolve(c.exitCode)
    : new Promise((r) => c.on('exit', (code) => r(code)));
}

/** A child that takes the lock at `path` through the one lock module, says "held", and holds it `ms`. */
function holder(path: string, ms: number): ChildProcess {
  return child(
    `const { tryTakeLock } = await import(${JSON.stringify(lockModule)});
     const h = tryTakeLock(process.argv[1], 'a test holder');
     console.log(h === null ? 'held' : 'refused ' + h.pid);
     setTimeout(() => {}, Number(process.argv[2]));`,
    [path, String(ms)],
  );
}

function scratch(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'fl-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a lock is taken once; a live holder is named; a dead one is taken over', async (t) => {
  const path = join(scratch(t), 'x.lock');
  const c = holder(path, 60_000);
  t.teardown(() => c.kill('SIGKILL'));
  t.is(await firstLine(c), 'held');
  const h = tryTakeLock(path, 'this test');
  t.is(h?.pid, c.pid);
  t.is(h?.what, 'a test holder');
  t.is(h?.startTicks, processStartTicks(c.pid!));
  t.is(lockHolder(path)?.pid, c.pid);
  t.deepEqual(clearStaleLock(path), { removed: false, holder: h });
  // Releasing someone else's lock does nothing.
  releaseLock(path);
  t.is(lockHolder(path)?.pid, c.pid);
  c.kill('SIGKILL');
  await exited(c);
  t.is(lockHolder(path), null, 'a killed holder holds nothing');
  t.is(tryTakeLock(path, 'this test'), null, 'taken over');
  t.is(lockHolder(path)?.pid, process.pid);
  releaseLock(path);
  t.false(existsSync(path));
});

test('a pid now used by another process, an unreadable file and the old pid-only form', (t) => {
  const path = join(scratch(t), 'x.lock');
  // pid 1 runs, but not since the start time this lock names: the pid was reused.
  const ticks = processStartTicks(1);
  if (ticks !== null) {
    writeFileSync(path, JSON.stringify({ pid: 1, startTicks: ticks + 1, what: 'gone', since: '' }));
    t.is(lockHolder(path), null);
    writeFileSync(path, JSON.stringify({ pid: 1, startTicks: ticks, what: 'init', since: '' }));
    t.is(lockHolder(path)?.what, 'init');
  }
  for (const text of [
    '',
    '{"pid": 1',
    '{"pid": -4, "startTicks": null, "what": "", "since": ""}',
    'x'.repeat(5000),
  ]) {
    writeFileSync(path, text);
    t.is(lockHolder(path), null, `unreadable: ${text.slice(0, 20)}`);
    t.is(tryTakeLock(path, 'this test'), null);
    releaseLock(path);
  }
  // Image locks written before holders were described held the pid alone.
  writeFileSync(path, `${process.ppid}\n`);
  t.is(lockHolder(path)?.pid, process.ppid);
  t.is(tryTakeLock(path, 'this test')?.pid, process.ppid);
  t.regex(
    describeHolder({
      pid: 7,
      startTicks: null,
      what: 'faultline run p.md',
      since: '2026-12-07T14:05:01.123Z',
    }),
    /^pid 7 \(faultline run p\.md\) since 2026-12-07T14:05:01Z$/,
  );
  // A lock file is data: what it says reaches the terminal escaped, on one line.
  t.is(
    describeHolder({ pid: 7, startTicks: null, what: 'x\u001b[2J\ny', since: '' }),
    'pid 7 (x\\x1b[2J\\ny)',
  );
});

test('eight processes race for one free lock and for one stale lock: one wins each time', async (t) => {
  const dir = scratch(t);
  for (const stale of [false, true]) {
    const path = join(dir, `race-${stale}.lock`);
    if (stale)
      writeFileSync(path, JSON.stringify({ pid: 2 ** 22 + 1, startTicks: null, what: 'dead', since: '' }));
    const go = join(dir, `go-${stale}`);
    const done = join(dir, `done-${stale}`);
    // Every racer lives until all have answered: a winner that exited before a slow racer looked would
    // leave a stale lock, rightly taken over.
    const racers = Array.from({ length: 8 }, () =>
      child(
        `const { existsSync } = await import('node:fs');
         const { tryTakeLock } = await import(${JSON.stringify(lockModule)});
         while (!existsSync(process.argv[1])) await new Promise((r) => setTimeout(r, 2));
         const h = tryTakeLock(process.argv[2], 'racer');
         console.log(h === null ? 'held' : 'refused');
         while (!existsSync(process.argv[3])) await new Promise((r) => setTimeout(r, 20));`,
        [go, path, done],
      ),
    );
    t.teardown(() => {
      for (const r of racers) r.kill('SIGKILL');
    });
    const lines = racers.map(firstLine);
    await new Promise((r) => setTimeout(r, 1500)); // every racer loaded and polling
    writeFileSync(go, '');
    const said = await Promise.all(lines);
    t.is(said.filter((l) => l === 'held').length, 1, `${stale ? 'stale' : 'free'} lock: ${said.join(', ')}`);
    const winner = racers[said.indexOf('held')]!;
    t.is(lockHolder(path)?.pid, winner.pid);
    writeFileSync(done, '');
    await Promise.all(racers.map(exited));
    t.deepEqual(
      readdirSync(dir).filter((f) => f.startsWith(`race-${stale}.lock.`)),
      [],
      'no draft or claim is left beside the lock',
    );
  }
});

test('a stale lock is removed by the one process holding its claim; an abandoned claim is cleared', (t) => {
  const dir = scratch(t);
  const path = join(dir, 'x.lock');
  const dead = JSON.stringify({ pid: 2 ** 22 + 1, startTicks: null, what: 'dead', since: '' });
  const claimOf = () => `${path}.stale-${lstatSync(path).ino}`;
  // A remover at work (a live process holds the claim): the stale lock is left to it, and nobody else
  // takes the lock meanwhile.
  writeFileSync(path, dead);
  const claim = claimOf();
  writeFileSync(claim, JSON.stringify({ pid: process.ppid, startTicks: null, what: 'remover', since: '' }));
  t.throws(() => tryTakeLock(path, 'this test'), { message: /changed hands too often/ });
  t.true(existsSync(path), 'the stale lock is the claim holder’s to remove');
  t.is(clearStaleLock(path).removed, true, 'it is gone or going');
  t.true(existsSync(path));
  // The same claim, left by a process killed while it held it, and old: cleared, then the lock is taken.
  writeFileSync(claim, dead);
  const old = new Date(Date.now() - 60_000);
  utimesSync(claim, old, old);
  t.is(tryTakeLock(path, 'this test'), null);
  t.is(lockHolder(path)?.pid, process.pid);
  t.false(existsSync(claim));
  releaseLock(path);
  // A fresh claim whose maker is already gone is still given its moment: not cleared before it is old.
  writeFileSync(path, dead);
  writeFileSync(claimOf(), dead);
  t.throws(() => tryTakeLock(path, 'this test'), { message: /changed hands too often/ });
  t.true(existsSync(claimOf()));
});

test('takeLock waits for a live holder to finish, and gives up with the holder named', async (t) => {
  const path = join(scratch(t), 'x.lock');
  const c = holder(path, 1200);
  t.is(await firstLine(c), 'held');
  const waited: number[] = [];
  const short = await takeLock(path, 'impatient', { timeoutMs: 0, onWait: (h) => waited.push(h.pid) });
  t.is(short.holder?.pid, c.pid);
  t.deepEqual(waited, [], 'no wait announced when not waiting');
  const started = Date.now();
  const long = await takeLock(path, 'patient', {
    timeoutMs: 20_000,
    stepMs: 100,
    onWait: (h) => waited.push(h.pid),
  });
  t.is(long.holder, null);
  t.deepEqual(waited, [c.pid], 'the wait is announced once');
  t.true(Date.now() - started >= 500, 'it waited for the holder');
  t.is(lockHolder(path)?.what, 'patient');
  long.release?.();
  t.false(existsSync(path));
});

// A local cluster's lease: a second run, `cluster up` and `cluster down` leave a held cluster alone.
const reason = localClusterUnavailableReason();
const clusterTest = reason ? test.serial.skip : test.serial;
const title = (s: string) => (reason ? `${s} (skipped: ${reason})` : s);

function cli(...args: string[]) {
  return cliIn({}, ...args);
}

function cliIn(env: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, ['bin/faultline.js', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, FAULTLINE_FROM_SOURCE: '1', FAULTLINE_LOG_LEVEL: 'warn', ...env },
  });
}

/** A child holding cluster `name`'s lease as `faultline run plans/etcd-register.md …` would, for `ms`. */
function leaseHolder(name: string, ms: number): ChildProcess {
  return child(
    `const { leaseLocalCluster } = await import(${JSON.stringify(leaseModule)});
     process.argv = [process.argv[0], 'faultline', 'run', 'plans/etcd-register.md', '--local', '1'];
     const release = await leaseLocalCluster(${JSON.stringify(name)});
     console.log('held');
     setTimeout(release, ${ms});`,
  );
}

clusterTest(
  title('a held cluster: run, cluster up and cluster down refuse; --force and a dead holder do not'),
  async (t) => {
    const name = `lease-a${process.pid % 1000}`;
    const c = leaseHolder(name, 120_000);
    t.teardown(() => c.kill('SIGKILL'));
    t.is(await firstLine(c), 'held');
    const inUse = new RegExp(
      `^faultline: local cluster ${name} is in use by pid ${c.pid} \\(faultline run plans/etcd-register\\.md --local 1\\) since \\S+Z; `,
    );
    const out = scratch(t);
    const run = cli(
      'run',
      'plans/etcd-register.md',
      '--local',
      '1',
      '--cluster-name',
      name,
      '--yes',
      '--out',
      out,
    );
    t.is(run.status, 254, run.stderr);
    t.regex(run.stderr, inUse);
    t.regex(run.stderr, /; wait for it \(--cluster-wait SECONDS\) or use another --cluster-name\n$/);
    t.is(run.stderr.trim().split('\n').length, 1, run.stderr);
    t.false(existsSync(clusterDir(name)), 'nothing was brought up');
    const up = cli('cluster', 'up', '--nodes', '1', '--name', name);
    t.is(up.status, 254);
    t.regex(up.stderr, inUse);
    const down = cli('cluster', 'down', '--name', name);
    t.is(down.status, 254);
    t.regex(down.stderr, /not removed \(--force removes it anyway, and that run fails\)\n$/);
    const forced = cli('cluster', 'down', '--name', name, '--force');
    t.is(forced.status, 0, forced.stderr);
    t.regex(forced.stdout, new RegExp(`^${name}: nothing to remove`));
    c.kill('SIGKILL');
    await exited(c);
    t.true(existsSync(clusterLeasePath(name)), 'a killed holder leaves its lease file');
    const after = cli('cluster', 'down', '--name', name);
    t.is(after.status, 0, after.stderr);
    t.false(existsSync(clusterLeasePath(name)), 'cluster down clears a dead run’s lease');
  },
);

clusterTest(
  title('a connection holds the lease until it closes; cluster down leaves it alone meanwhile'),
  async (t) => {
    const name = `lease-b${process.pid % 1000}`;
    t.teardown(() => localClusterDown(name, { force: true }).then(() => undefined));
    const cluster = await connectCluster({ local: 1, clusterName: name });
    try {
      t.is(lockHolder(clusterLeasePath(name))?.pid, process.pid);
      t.is((await cluster.remote.exec('n1', 'hostname')).stdout.trim(), 'n1');
      // A second hold in this process is counted, not refused.
      const again = await connectCluster({ local: 1, clusterName: name });
      await again.close({ keepCluster: true });
      t.is(lockHolder(clusterLeasePath(name))?.pid, process.pid, 'still held by the first connection');
      const down = cli('cluster', 'down', '--name', name);
      t.is(down.status, 254);
      t.regex(down.stderr, new RegExp(`in use by pid ${process.pid} `));
      t.true(existsSync(clusterDir(name)));
      const status = cli('cluster', 'status', '--name', name);
      t.regex(status.stdout, new RegExp(`^held by pid ${process.pid} \\(.*\\) since \\S+Z$`, 'm'));
      const json = JSON.parse(cli('cluster', 'status', '--name', name, '--json').stdout) as {
        heldBy: { pid: number } | null;
      };
      t.is(json.heldBy?.pid, process.pid);
    } finally {
      await cluster.close();
    }
    t.false(existsSync(clusterDir(name)), 'brought up for the session, down at close');
    t.false(existsSync(clusterLeasePath(name)), 'the lease went with it');
  },
);

clusterTest(
  title('faultline test --cluster-wait waits for the run holding the cluster, then runs'),
  async (t) => {
    const name = `lease-e${process.pid % 1000}`;
    t.teardown(() => localClusterDown(name, { force: true }).then(() => undefined));
    const c = leaseHolder(name, 8000);
    t.teardown(() => c.kill('SIGKILL'));
    t.is(await firstLine(c), 'held');
    const out = scratch(t);
    const run = cli('test', '--local', '1', '--cluster-name', name, '--time-limit', '2s', '--out', out);
    t.is(run.status, 254, 'without --cluster-wait: refused at once');
    t.is(run.stderr.trim().split('\n').length, 1, run.stderr);
    t.deepEqual(readdirSync(out), [], 'a refused command leaves no session');
    const waited = cli(
      'test',
      '--local',
      '1',
      '--cluster-name',
      name,
      '--cluster-wait',
      '60',
      '--time-limit',
      '2s',
      '--out',
      out,
    );
    t.is(waited.status, 0, waited.stderr);
    t.regex(
      waited.stderr,
      new RegExp(
        `^local cluster ${name} is in use by pid ${c.pid} \\(faultline run plans/etcd-register\\.md --local 1\\) since \\S+; waiting up to 60 s$`,
        'm',
      ),
    );
    t.regex(waited.stdout, /^verdict: valid$/m);
    t.is(await exited(c), 0);
    t.false(existsSync(clusterLeasePath(name)), 'given back when the command ended');
    t.true(existsSync(clusterDir(name)), '`faultline test` leaves its cluster up for the next run');
  },
);

clusterTest(title('cluster down --all removes the free clusters and names the held ones'), async (t) => {
  // A state directory of its own: --all must not reach the clusters of tests running beside this one.
  // Leases are host-wide whatever the state directory, as the namespaces they stand for are.
  const env = { FAULTLINE_STATE_DIR: scratch(t) };
  const free = `lease-c${process.pid % 1000}`;
  const held = `lease-d${process.pid % 1000}`;
  for (const n of [free, held]) t.is(cliIn(env, 'cluster', 'up', '--nodes', '1', '--name', n).status, 0);
  const c = leaseHolder(held, 120_000);
  t.teardown(async () => {
    c.kill('SIGKILL');
    await exited(c);
    for (const n of [free, held]) cliIn(env, 'cluster', 'down', '--name', n);
  });
  t.is(await firstLine(c), 'held');
  const all = cliIn(env, 'cluster', 'down', '--all');
  t.is(all.status, 254);
  t.regex(all.stdout, new RegExp(`^${free}: removed 1 namespaces`, 'm'));
  t.regex(all.stderr, new RegExp(`^faultline: local cluster ${held} is in use by pid ${c.pid} `, 'm'));
  t.false(existsSync(join(env.FAULTLINE_STATE_DIR, 'clusters', free)));
  t.true(existsSync(join(env.FAULTLINE_STATE_DIR, 'clusters', held)));
  t.is(JSON.parse(readFileSync(clusterLeasePath(held), 'utf8')).pid, c.pid);
});
