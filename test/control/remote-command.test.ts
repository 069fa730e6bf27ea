import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import test from 'ava';
import { parseProbe, USER_PROBE } from '../../src/core/control/doctor-probe.ts';
import { interpretProbe, renderDoctorTable } from '../../src/core/control/node-doctor.ts';
import { buildRemoteCommand, looksTimedOut } from '../../src/core/control/remote-command.ts';
import { Semaphore } from '../../src/core/control/semaphore.ts';
import type { NodeSpec } from '../../src/core/control/types.ts';

const root: NodeSpec = { name: 'n1', host: 'h', port: 22, user: 'root' };
const admin: NodeSpec = { ...root, user: 'admin' };

/** What a login shell on the node would do with the wire command. */
const sh = (wire: string) => spawnSync('/bin/sh', ['-c', wire], { encoding: 'utf8' });

test('the wire command runs the user command with env and cwd under timeout', (t) => {
  const wire = buildRemoteCommand(
    root,
    'printf "%s|%s" "$A" "$(pwd)"',
    { env: { A: "x'y" }, cwd: '/usr' },
    5000,
    false,
  );
  t.regex(wire, /^exec timeout -k 2 5\.000 sh -c /);
  const r = sh(wire);
  t.is(r.stdout, "x'y|/usr");
});

test('a timed-out wire command is killed with its children and exits 124', (t) => {
  const start = Date.now();
  const r = sh(buildRemoteCommand(root, 'sleep 30 & sleep 30; wait', {}, 300, false));
  t.is(r.status, 124);
  t.true(Date.now() - start < 5000);
  t.true(looksTimedOut(124, 310, 300));
  t.false(looksTimedOut(124, 10, 300), 'a command that itself exits 124 early is not a timeout');
  t.false(looksTimedOut(124, 9999, 0));
});

test('sudo wraps outside timeout, uses -n without a password and -S with one; root needs no sudo', (t) => {
  t.regex(
    buildRemoteCommand(admin, 'id', { sudo: true }, 1000, false),
    /^exec sudo -n -- timeout -k 2 1\.000 sh -c id$/,
  );
  t.regex(buildRemoteCommand(admin, 'id', { sudo: true }, 1000, true), /^exec sudo -S -p '' -- timeout /);
  t.is(buildRemoteCommand(root, 'id', { sudo: true }, 0, false), 'exec sh -c id');
});

test('the semaphore never exceeds its permits and serves waiters in order', async (t) => {
  const sem = new Semaphore(3);
  let inFlight = 0;
  let peak = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      sem.with(async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        order.push(i);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
      }),
    ),
  );
  t.is(peak, 3);
  t.deepEqual(
    order,
    Array.from({ length: 12 }, (_, i) => i),
  );
  t.throws(() => new Semaphore(0));
});

test('doctor: a bare node gets a fix for every missing item and fails the sudo requirement', (t) => {
  const checks = interpretProbe(
    admin,
    {
      user: 'admin',
      sudo: 'no',
      os: '',
      kernel: '6.1.0',
      boot_id: 'b',
      container: 'none',
      devfuse: 'no',
      disk_free_kb: '524288',
    },
    null,
    'a',
  );
  const by = (item: string) => checks.find((c) => c.item === item);
  t.is(by('sudo')?.status, 'missing');
  t.true(by('sudo')?.required);
  t.regex(by('tc')?.fix ?? '', /apt-get install -y iproute2/);
  t.regex(by('libfaketime')?.fix ?? '', /apt-get install -y libfaketime/);
  t.regex(by('dmsetup')?.fix ?? '', /apt-get install -y dmsetup/);
  t.regex(by('fuse')?.fix ?? '', /fuse/);
  t.is(by('own clock')?.status, 'ok', 'different boot id, no container, not declared shared');
  t.is(by('disk free')?.status, 'warn');
  t.is(by('iptables')?.status, 'unknown');
  const table = renderDoctorTable({ nodes: [{ node: 'n1', host: 'h', checks }], ok: false });
  t.regex(table, /^\s+n1\n/);
  t.regex(table, /n1: sudo: missing .*NOPASSWD/);
});

test('doctor: the probe script itself runs and yields the keys the interpreter reads', (t) => {
  const out = parseProbe(sh(USER_PROBE).stdout);
  for (const key of [
    'user',
    'sudo',
    'os',
    'kernel',
    'boot_id',
    'container',
    'timeout',
    'tc',
    'devfuse',
    'disk_free_kb',
  ]) {
    t.true(key in out, key);
  }
  t.regex(out.disk_free_kb ?? '', /^\d+$/);
});

test('doctor: the probe finds sbin tools under a non-root login’s PATH (Debian’s has no sbin)', (t) => {
  const r = spawnSync('/bin/sh', ['-c', USER_PROBE], {
    encoding: 'utf8',
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
  });
  const out = parseProbe(r.stdout);
  // tc lives only in /usr/sbin (iproute2): before, a vagrant login's doctor reported it missing.
  if (!existsSync('/usr/sbin/tc') || existsSync('/usr/bin/tc')) return t.pass('no /usr/sbin-only tc here');
  t.regex(out.tc ?? '', /sbin\/tc$/);
});
