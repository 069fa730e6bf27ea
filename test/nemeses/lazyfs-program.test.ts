import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { PYTHON } from '../../nemeses/commands/lazyfs.ts';
import { LAZYFS_PROGRAM } from '../../nemeses/lazyfs-program.ts';

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
