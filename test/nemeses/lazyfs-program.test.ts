import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  ioErrorLogCommand,
  PYTHON,
  parseIoErrorLog,
  stopDaemonCommand,
} from '../../nemeses/commands/lazyfs-commands.ts';
import { fileGlobRegex } from '../../nemeses/file-glob.ts';
import { LAZYFS_PROGRAM } from '../../nemeses/lazyfs-program.ts';
import { killPidsCommand, signalTreeCommand } from '../../src/core/control/process-tree.ts';
import { shellQuote } from '../../src/core/control/quote.ts';

// The lazy filesystem itself, on this host: a tiny program writes, fsyncs some writes and not others,
// and after `lose-unfsynced` exactly the un-fsynced ones must be gone.

interface Mounted {
  dir: string;
  mnt: string;
  back: string;
  ctl(...words: string[]): Record<string, unknown>;
  unmount(): void;
}

function mount(): Mounted {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lazyfs-'));
  const program = join(dir, 'lazyfs.py');
  const back = join(dir, 'back');
  const mnt = join(dir, 'mnt');
  const sock = join(dir, 'ctl.sock');
  writeFileSync(program, LAZYFS_PROGRAM);
  mkdirSync(back);
  mkdirSync(mnt);
  const child = spawn(PYTHON, [program, 'mount', back, mnt, sock], { detached: true, stdio: 'ignore' });
  child.unref();
  const until = Date.now() + 15_000;
  while (!readFileSync('/proc/self/mounts', 'utf8').includes(` ${mnt} fuse.faultline-lazyfs `)) {
    if (Date.now() > until) throw new Error('the lazy filesystem did not mount');
    spawnSync('sleep', ['0.05']);
  }
  return {
    dir,
    mnt,
    back,
    ctl: (...words) => {
      const r = spawnSync(PYTHON, [program, 'ctl', sock, ...words], { encoding: 'utf8' });
      return JSON.parse(r.stdout) as Record<string, unknown>;
    },
    unmount: () => {
      spawnSync('umount', [mnt]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Python, so each write and fsync is one system call on the mount. */
function py(script: string, ...args: string[]) {
  const r = spawnSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

test.serial('lose-unfsynced drops exactly the writes not fsynced; fsynced data, metadata survive', (t) => {
  const m = mount();
  t.teardown(() => m.unmount());
  py(
    `
import os, sys
d = sys.argv[1]
fd = os.open(d + '/wal', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'A' * 5000); os.fsync(fd)           # durable
os.write(fd, b'B' * 3000)                          # lost
os.close(fd)
fd = os.open(d + '/appended', os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
os.write(fd, b'one\\n'); os.fdatasync(fd)          # durable
os.write(fd, b'two\\n')                             # lost
os.close(fd)
fd = os.open(d + '/never-synced', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'gone')                              # lost; the file itself (metadata) stays
os.close(fd)
fd = os.open(d + '/cut', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'0123456789'); os.fsync(fd)
os.ftruncate(fd, 4)                                # a truncation not fsynced is lost too
os.close(fd)
`,
    m.mnt,
  );
  t.is(statSync(join(m.mnt, 'wal')).size, 8000, 'before the fault the cache serves every write');
  t.is(readFileSync(join(m.mnt, 'cut'), 'utf8'), '0123');
  const dropped = m.ctl('lose-unfsynced') as { bytes: number; files: { path: string }[] };
  t.is(dropped.bytes, 3000 + 4 + 4 + 1);
  t.deepEqual(dropped.files.map((f) => f.path).sort(), ['/appended', '/cut', '/never-synced', '/wal']);
  t.is(readFileSync(join(m.mnt, 'wal'), 'latin1'), 'A'.repeat(5000));
  t.is(readFileSync(join(m.mnt, 'appended'), 'utf8'), 'one\n');
  t.is(readFileSync(join(m.mnt, 'never-synced'), 'utf8'), '');
  t.is(readFileSync(join(m.mnt, 'cut'), 'utf8'), '0123456789');
  // The backing directory holds exactly what survived.
  t.is(statSync(join(m.back, 'wal')).size, 5000);
});

test.serial(
  'after the power failure nothing reaches the disk: a process still running gets EIO',
  async (t) => {
    // A database of several processes (PostgreSQL's WAL writer outlives its postmaster's SIGKILL for a
    // moment) must not write and fsync past the drop: what it fsynced would survive the power failure.
    const m = mount();
    t.teardown(() => m.unmount());
    const script = `
import os, sys, time
d = sys.argv[1]
fd = os.open(d + '/wal', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'A' * 100); os.fsync(fd)
os.write(fd, b'B' * 100)                           # not fsynced at the power failure
print('ready', flush=True)
while not os.path.exists(sys.argv[2]): time.sleep(0.01)
out = []
for name, call in [('write', lambda: os.write(fd, b'C' * 100)), ('fsync', lambda: os.fsync(fd)),
                   ('create', lambda: os.open(d + '/late', os.O_CREAT | os.O_WRONLY, 0o644)),
                   ('unlink', lambda: os.unlink(d + '/wal'))]:
    try:
        call(); out.append(name + ' ok')
    except OSError as e:
        out.append(name + ' ' + str(e.errno))
print(' '.join(out), flush=True)
`;
    const go = join(m.dir, 'go');
    const child = spawn(PYTHON, ['-c', script, m.mnt, go], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const until = Date.now() + 10_000;
    const tick = () => new Promise((r) => setTimeout(r, 20));
    while (!out.includes('ready') && Date.now() < until) await tick();
    const dropped = m.ctl('lose-unfsynced') as { bytes: number };
    t.is(dropped.bytes, 100);
    writeFileSync(go, '');
    const done = Date.now() + 10_000;
    while (child.exitCode === null && Date.now() < done) await tick();
    t.is(out.trim().split('\n').at(-1), 'write 5 fsync 5 create 5 unlink 5', out);
    // The backing directory holds the fsynced bytes only, and no file created after the power failure.
    t.is(readFileSync(join(m.back, 'wal'), 'latin1'), 'A'.repeat(100));
    t.false(existsSync(join(m.back, 'late')));
  },
);

test.serial('rename keeps the cache; fsync after rename persists under the new name', (t) => {
  const m = mount();
  t.teardown(() => m.unmount());
  py(
    `
import os, sys
d = sys.argv[1]
fd = os.open(d + '/tmp', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'snapshot'); os.close(fd)
os.rename(d + '/tmp', d + '/snap')
fd = os.open(d + '/snap', os.O_WRONLY); os.fsync(fd); os.close(fd)
fd = os.open(d + '/snap2', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'x' * 10000); os.write(fd, b'y'); os.close(fd)
`,
    m.mnt,
  );
  const dropped = m.ctl('lose-unfsynced') as { bytes: number };
  t.is(dropped.bytes, 10001);
  t.is(readFileSync(join(m.mnt, 'snap'), 'utf8'), 'snapshot');
  t.is(statSync(join(m.mnt, 'snap2')).size, 0);
});

test.serial(
  'fsync-fail answers EIO and keeps the data cached; fsync-delay and io-delay slow the calls',
  (t) => {
    const m = mount();
    t.teardown(() => m.unmount());
    t.is(m.ctl('fsync-fail', 'on').fsyncFail, true);
    const probe = `
import os, sys, time, errno
fd = os.open(sys.argv[1] + '/f', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'data')
t = time.monotonic()
try:
    os.fsync(fd); r = 'ok'
except OSError as e:
    r = errno.errorcode[e.errno]
print(r, int((time.monotonic() - t) * 1000))
`;
    t.regex(py(probe, m.mnt), /^EIO /);
    t.is(m.ctl('stats').fsyncsFailed, 1);
    t.is(m.ctl('stats').unsyncedBytes, 4, 'a failed fsync persisted nothing');
    m.ctl('fsync-fail', 'off');
    m.ctl('fsync-delay', '300');
    const [r, ms] = py(probe, m.mnt).trim().split(' ');
    t.is(r, 'ok');
    t.true(Number(ms) >= 290, `fsync took ${ms} ms`);
    m.ctl('fsync-delay', '0');
    m.ctl('io-delay', '200');
    const slow = py(
      `
import os, sys, time
t = time.monotonic()
fd = os.open(sys.argv[1] + '/g', os.O_CREAT | os.O_RDWR, 0o644); os.write(fd, b'z'); os.close(fd)
print(int((time.monotonic() - t) * 1000))
`,
      m.mnt,
    );
    t.true(Number(slow) >= 190, `write took ${slow} ms`);
    t.deepEqual(m.ctl('bogus'), { error: 'unknown command: bogus' });
  },
);

/** The aim command's argument: patterns as the nemesis sends them. */
function aim(globs: string[], eio: 'read' | 'write' | null = null): string {
  return Buffer.from(JSON.stringify({ patterns: globs.map(fileGlobRegex), eio })).toString('base64');
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');

interface Piece {
  write: number;
  at: number;
  bytes: number;
}
interface Hit {
  path: string;
  writes: number;
  sizeBefore: number;
  sizeAfter: number | null;
  kept?: Piece[];
  lost?: Piece[];
}

test.serial('aimed: only the named files lose their un-fsynced writes; the others reach the disk', (t) => {
  const m = mount();
  t.teardown(() => m.unmount());
  m.ctl('aim', aim(['log/*.aof']));
  py(
    `
import os, sys
d = sys.argv[1]
os.mkdir(d + '/log')
for name in ('log/a.aof', 'log/b.rdb', 'other'):
    fd = os.open(d + '/' + name, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b'x' * 100); os.close(fd)
`,
    m.mnt,
  );
  const r = m.ctl('lose-unfsynced') as { files: Hit[]; flushed: { path: string; size: number }[] };
  t.deepEqual(
    r.files.map((f) => [f.path, f.sizeBefore, f.sizeAfter]),
    [['/log/a.aof', 100, 0]],
  );
  t.deepEqual(r.flushed.map((f) => f.path).sort(), ['/log/b.rdb', '/other']);
  t.is(statSync(join(m.back, 'log/a.aof')).size, 0);
  t.is(statSync(join(m.back, 'log/b.rdb')).size, 100);
  t.is(statSync(join(m.back, 'other')).size, 100);
});

test.serial('EIO on read or write of the aimed files only, counted per file', (t) => {
  const m = mount();
  t.teardown(() => m.unmount());
  writeFileSync(join(m.back, 'data.db'), 'durable');
  writeFileSync(join(m.back, 'free'), 'free');
  const probe = `
import os, sys, errno
def tryit(f):
    try:
        f(); return 'ok'
    except OSError as e:
        return errno.errorcode[e.errno]
d = sys.argv[1]
def rd(n):
    fd = os.open(d + '/' + n, os.O_RDONLY)
    try: os.read(fd, 10)
    finally: os.close(fd)
def wr(n):
    fd = os.open(d + '/' + n, os.O_WRONLY)
    try: os.write(fd, b'w')
    finally: os.close(fd)
print(tryit(lambda: rd('data.db')), tryit(lambda: wr('data.db')), tryit(lambda: rd('free')), tryit(lambda: wr('free')))
`;
  m.ctl('aim', aim(['*.db'], 'read'));
  t.is(py(probe, m.mnt).trim(), 'EIO ok ok ok');
  m.ctl('aim', aim(['*.db'], 'write'));
  t.is(py(probe, m.mnt).trim(), 'ok EIO ok ok');
  const s = m.ctl('stats') as { eioReads: number; eioWrites: number; eioFiles: Record<string, number> };
  // The kernel may retry a failed read once: at least one, and only for data.db.
  t.true(s.eioReads >= 1, String(s.eioReads));
  t.is(s.eioWrites, 1);
  t.deepEqual(Object.keys(s.eioFiles), ['data.db']);
  m.ctl('aim', aim([], null));
  t.is(py(probe, m.mnt).trim(), 'ok ok ok ok');
});

/** Write WAL records of distinct bytes, fsync after the first, and never after. */
function writeRecords(m: Mounted, sizes: number[], firstAt = 0) {
  py(
    `
import os, sys, json
d = sys.argv[1]
sizes = json.loads(sys.argv[2])
fd = os.open(d + '/wal', os.O_CREAT | os.O_WRONLY, 0o644)
os.pwrite(fd, b'S' * int(sys.argv[3]), 0); os.fsync(fd)
at = int(sys.argv[3])
for i, n in enumerate(sizes):
    os.pwrite(fd, bytes([ord('a') + i]) * n, at); at += n
os.close(fd)
`,
    m.mnt,
    JSON.stringify(sizes),
    String(firstAt),
  );
}

/** What the evidence says survived, checked byte for byte against the durable file. */
function provesBytes(t: import('ava').ExecutionContext, m: Mounted, hit: Hit, synced: number) {
  const disk = readFileSync(join(m.back, 'wal'));
  t.true(
    disk.subarray(0, synced).every((b) => b === 'S'.charCodeAt(0)),
    'fsynced bytes intact',
  );
  for (const k of hit.kept ?? [])
    t.true(
      disk.subarray(k.at, k.at + k.bytes).every((b) => b === 'a'.charCodeAt(0) + k.write - 0),
      `kept write ${k.write} at ${k.at}+${k.bytes} is on disk`,
    );
  for (const l of hit.lost ?? []) {
    const region = disk.subarray(l.at, l.at + l.bytes);
    t.false(
      region.length > 0 && region.every((b) => b === 'a'.charCodeAt(0) + l.write),
      `lost write ${l.write} at ${l.at}+${l.bytes} is not on disk`,
    );
  }
}

test.serial('torn-op: the write in flight keeps a prefix, the writes before it survive', (t) => {
  const m = mount();
  t.teardown(() => m.unmount());
  writeRecords(m, [100, 200, 1000], 50);
  const r = m.ctl('torn-op', b64({ fraction: 0.25 })) as { files: Hit[] };
  const hit = r.files.find((f) => f.path === '/wal') as Hit;
  t.deepEqual(hit.kept, [
    { write: 0, at: 50, bytes: 100 },
    { write: 1, at: 150, bytes: 200 },
    { write: 2, at: 350, bytes: 250 },
  ]);
  t.deepEqual(hit.lost, [{ write: 2, at: 600, bytes: 750 }]);
  t.is(statSync(join(m.back, 'wal')).size, 600);
  provesBytes(t, m, hit, 50);
});

test.serial('torn-op pages: a multi-page write keeps some of its pages, not all', (t) => {
  const m = mount();
  t.teardown(() => m.unmount());
  writeRecords(m, [4 * 4096], 4096);
  const r = m.ctl('torn-op', b64({ keep: 'pages', seed: 7 })) as { files: Hit[] };
  const hit = r.files[0] as Hit;
  t.true((hit.kept?.length ?? 0) >= 1 && (hit.kept?.length ?? 0) < 4, JSON.stringify(hit.kept));
  t.is((hit.kept?.length ?? 0) + (hit.lost?.length ?? 0) >= 2, true);
  for (const p of [...(hit.kept ?? []), ...(hit.lost ?? [])]) t.is(p.at % 4096, 0, 'page-aligned pieces');
  const total = [...(hit.kept ?? []), ...(hit.lost ?? [])].reduce((a, p) => a + p.bytes, 0);
  t.is(total, 4 * 4096, 'kept and lost cover the write exactly');
  provesBytes(t, m, hit, 4096);
  // The same seed tears the same pages.
  const m2 = mount();
  t.teardown(() => m2.unmount());
  writeRecords(m2, [4 * 4096], 4096);
  t.deepEqual(
    (m2.ctl('torn-op', b64({ keep: 'pages', seed: 7 })) as { files: Hit[] }).files[0]?.kept,
    hit.kept,
  );
});

test.serial(
  'torn-seq: writes since the last fsync persist out of order (a later one without an earlier one)',
  (t) => {
    const m = mount();
    t.teardown(() => m.unmount());
    writeRecords(m, [10, 20, 30, 40, 50, 60], 8);
    const r = m.ctl('torn-seq', b64({ seed: 3 })) as { files: Hit[] };
    const hit = r.files[0] as Hit;
    t.is(hit.writes, 6);
    const kept = new Set((hit.kept ?? []).map((k) => k.write));
    const lost = new Set((hit.lost ?? []).map((k) => k.write));
    t.false(kept.has(0), 'the first write is lost');
    t.true(kept.has(5), 'the last write survives');
    t.is(kept.size + lost.size, 6);
    provesBytes(t, m, hit, 8);
    // A lost write in the middle leaves a hole of zeroes between survivors.
    const disk = readFileSync(join(m.back, 'wal'));
    t.is(disk.length, 8 + 10 + 20 + 30 + 40 + 50 + 60);
    t.true(
      disk.subarray(8, 18).every((b) => b === 0),
      'the first record is a hole',
    );
  },
);

test.serial(
  'a file, directory or link a non-root user creates on the mount is its own, and opens again',
  (t) => {
    const m = mount();
    t.teardown(() => m.unmount());
    // The mount's root is the backing directory: open to every user, as a database's data directory is to its owner.
    chmodSync(m.dir, 0o755);
    chmodSync(m.back, 0o777);
    const asNobody = spawnSync(
      'setpriv',
      [
        '--reuid=nobody',
        '--regid=nogroup',
        '--clear-groups',
        PYTHON,
        '-c',
        `
import os, sys
d = sys.argv[1]
fd = os.open(d + '/pid', os.O_CREAT | os.O_WRONLY, 0o600)
os.write(fd, b'42'); os.close(fd)
os.mkdir(d + '/sub', 0o700)
fd = os.open(d + '/sub/seg', os.O_CREAT | os.O_WRONLY, 0o600); os.close(fd)
os.symlink('pid', d + '/link')
print(open(d + '/pid').read(), open(d + '/link').read(), len(os.listdir(d + '/sub')))
`,
        m.mnt,
      ],
      { encoding: 'utf8' },
    );
    // A file its creator cannot open again (root's, mode 0600) was PostgreSQL's PANIC on the mount.
    t.is(asNobody.status, 0, asNobody.stderr);
    t.is(asNobody.stdout.trim(), '42 42 1');
    for (const name of ['pid', 'sub', 'sub/seg', 'link']) {
      const st = lstatSync(join(m.back, name));
      t.is(st.uid, 65534, `${name} belongs to its creator`);
      t.is(st.gid, 65534, `${name} has its creator's group`);
    }
  },
);

test.serial('the stop command sends the signal it is given: INT reaches a daemon that ignores TERM', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-stop-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = join(dir, 'daemon.pid');
  const got = join(dir, 'got');
  // A daemon that shrugs off TERM, as PostgreSQL's smart shutdown waits for its clients; INT ends it.
  const daemon = spawn(
    PYTHON,
    [
      '-c',
      `
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def stop(n, f):
    open(sys.argv[1], 'w').write(str(n)); sys.exit(0)
signal.signal(signal.SIGINT, stop)
open(sys.argv[2], 'w').write(str(__import__('os').getpid()))
while True: time.sleep(0.05)
`,
      got,
      pidFile,
    ],
    { detached: true, stdio: 'ignore' },
  );
  daemon.unref();
  const until = Date.now() + 10_000;
  while (!existsSync(pidFile) && Date.now() < until) spawnSync('sleep', ['0.05']);
  const started = Date.now();
  const r = spawnSync('bash', ['-c', stopDaemonCommand(pidFile, 'python3', 'INT', 5)], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.is(r.stdout.trim(), String(daemon.pid));
  t.is(readFileSync(got, 'utf8'), '2', 'the daemon ended on SIGINT, not on the KILL after the grace');
  t.true(Date.now() - started < 4000);
});

test('an I/O error is counted in a database log in every usual spelling, strerror capitalised too', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-ioerr-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'db.log');
  writeFileSync(
    log,
    [
      'LOG:  database system is ready to accept connections',
      'PANIC:  could not fdatasync file "000000010000000000000001": Input/output error',
      '{"level":"fatal","msg":"failed to save Raft hard state","error":"input/output error"}',
      'Buffer I/O error on dev sdb, logical block 0',
      'write failed: EIO',
      'GEIOMETRY is not an error',
      '',
    ].join('\n'),
  );
  const r = spawnSync('bash', ['-c', ioErrorLogCommand([log])], { encoding: 'utf8' });
  const found = parseIoErrorLog(r.stdout);
  t.is(found.count, 4);
  t.is(found.last, 'write failed: EIO');
});

test.serial(
  'the power failure stops the daemon and every process it started, each found through /proc; CONT resumes them',
  (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-tree-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const pidFile = join(dir, 'daemon.pid');
    // A daemon with a child and a grandchild, the grandchild's name holding a space and parentheses (a
    // comm that /proc/PID/stat shows between parentheses of its own).
    const odd = join(dir, 'a) (b');
    spawnSync('cp', ['/bin/sleep', odd]);
    const daemon = spawn(
      'bash',
      ['-c', `echo $$ > ${shellQuote(pidFile)}; ( ${shellQuote(odd)} 60 & wait ) & sleep 60 & wait`],
      { detached: true, stdio: 'ignore' },
    );
    daemon.unref();
    const until = Date.now() + 10_000;
    const tree = () =>
      spawnSync('ps', ['-o', 'pid=', '--ppid', String(daemon.pid)], { encoding: 'utf8' }).stdout;
    while (tree().trim().split(/\s+/).length < 2 && Date.now() < until) spawnSync('sleep', ['0.05']);
    t.teardown(() => {
      spawnSync('pkill', ['-KILL', '-s', String(daemon.pid)]);
    });
    const state = (pid: string) =>
      /^State:\s*(\S)/m.exec(spawnSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' }).stdout)?.[1];
    // sh, not bash: a node's shell may be dash.
    const stop = spawnSync('sh', ['-c', signalTreeCommand(pidFile, 'bash', 'STOP')], { encoding: 'utf8' });
    t.is(stop.status, 0, stop.stderr);
    const pids = stop.stdout.trim().split(/\s+/);
    t.is(pids[0], String(daemon.pid), 'the daemon first');
    t.is(pids.length, 4, `the daemon, its subshell, its sleep and the subshell's child: ${stop.stdout}`);
    t.deepEqual(pids.map(state), ['T', 'T', 'T', 'T']);
    const cont = spawnSync('sh', ['-c', signalTreeCommand(pidFile, 'bash', 'CONT')], { encoding: 'utf8' });
    t.deepEqual(cont.stdout.trim().split(/\s+/).sort(), [...pids].sort());
    t.false(pids.map(state).includes('T'), 'every process resumed');
    // Only a process whose comm matches: another name signals nothing.
    t.is(
      spawnSync('sh', ['-c', signalTreeCommand(pidFile, 'postgres', 'STOP')], {
        encoding: 'utf8',
      }).stdout.trim(),
      'none',
    );
    // The pids come back from a node: only digits reach the kill.
    const kill = killPidsCommand([...pids, '1;touch /tmp/x', '0', '-1', '']);
    t.is(/^pids='([^']*)'/.exec(kill)?.[1], pids.join(' '));
    const r = spawnSync('sh', ['-c', kill], { encoding: 'utf8' });
    t.is(r.status, 0, r.stderr);
    for (const p of pids) t.true(state(p) === undefined || state(p) === 'Z', `${p} is gone`);
  },
);
