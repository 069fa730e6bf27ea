import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { FaultRecord } from '../../nemeses/types.ts';
import { runTest } from '../../src/app/test/test-run.ts';
import { loadInventory } from '../../src/core/control/inventory.ts';
import { EtcdClient } from '../../src/lib/clients/etcd.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * Nodes that log in as a non-root user and reach root through sudo, as on Vagrant boxes and most labs:
 * one cluster whose sudo asks for a password (given through an environment variable), one with NOPASSWD.
 * The password cluster runs the whole path: install, start, partitions and kills, uploads to root-owned
 * paths, heal.
 */
const PASSWORD_ENV = 'FAULTLINE_TEST_SUDO_PW';
process.env[PASSWORD_ENV] = 'correct horse $battery';
const withPassword = withCluster(test, {
  nodes: 3,
  name: 'lab-e2e-sudo',
  loginUser: { name: 'fltops', sudoPasswordEnv: PASSWORD_ENV },
});
const noPassword = withCluster(test, { nodes: 1, name: 'lab-e2e-nopw', loginUser: { name: 'fltlab' } });
const tmp = mkdtempSync(join(tmpdir(), 'faultline-non-root-'));

withPassword.test.serial('the inventory logs in as the user, sudo takes the password', async (t) => {
  const inv = loadInventory(withPassword.cluster().inventoryPath);
  for (const n of inv.nodes) t.like(n, { user: 'fltops', sudoPasswordEnv: PASSWORD_ENV });
  const remote = await withPassword.remote();
  t.is((await remote.exec('n1', 'id -un')).stdout.trim(), 'fltops');
  t.is((await remote.exec('n1', 'id -u', { sudo: true })).stdout.trim(), '0');
  // Without the password sudo refuses: the password really is required.
  const bare = await remote.exec('n1', 'sudo -n true', { check: false });
  t.not(bare.code, 0);
});

withPassword.test.serial('sudo is asked once per root runner, not once per command', async (t) => {
  const logDir = mkdtempSync(join(tmp, 'ssh-log-'));
  const remote = await withPassword.connect({ logDir });
  const before = await remote.exec('n3', 'echo warm', { sudo: true });
  t.is(before.code, 0);
  const started = Date.now();
  const ids = await Promise.all(
    Array.from({ length: 30 }, (_, i) => remote.exec('n3', `id -u; echo ${i}`, { sudo: true })),
  );
  t.log(`30 sudo commands with a password on one node: ${Date.now() - started} ms`);
  for (const [i, r] of ids.entries()) t.is(r.stdout, `0\n${i}\n`);
  t.is((await remote.exec('n3', 'id -un')).stdout.trim(), 'fltops', 'plain commands stay the login user');
  // Mixed work: root runners keep to all but one of the runner slots, so plain commands keep a runner.
  const mixed = await Promise.all(
    Array.from({ length: 24 }, (_, i) => remote.exec('n3', 'id -u', { sudo: i % 2 === 0 })),
  );
  for (const [i, r] of mixed.entries())
    if (i % 2 === 0) t.is(r.stdout.trim(), '0', 'a sudo command is root');
    else t.not(r.stdout.trim(), '0', 'a plain command is not root');
  // Whether a plain command in that burst found the user runner free depends on timing (one that finds
  // it busy takes an exec channel); run one after another, each must find it: the slot was kept.
  for (let i = 0; i < 6; i++) t.is((await remote.exec('n3', 'id -un')).stdout.trim(), 'fltops');
  const sudoers = await remote.exec('n3', 'pgrep -c -f "^sudo -S -p faultline-sudo-" || true');
  t.true(
    Number(sudoers.stdout.trim()) <= 2,
    `${sudoers.stdout.trim()} root runners on the connection (at most 2 of 3 slots)`,
  );
  await remote.close();
  const entries = readFileSync(join(logDir, 'n3.commands.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { sudo: boolean; via?: string });
  const sudoVia = entries.filter((e) => e.sudo).map((e) => e.via);
  // Root runners are at most three per connection; a command finding them all busy takes an exec channel.
  const viaRunner = sudoVia.filter((v) => v === 'root runner').length;
  t.true(viaRunner >= 20, `${viaRunner} of ${sudoVia.length} sudo commands through a root runner`);
  const plainVia = entries.filter((e) => !e.sudo).map((e) => e.via);
  t.is(plainVia[0], 'runner');
  // The six run one at a time after the mixed burst, and the pgrep after them.
  t.deepEqual(plainVia.slice(-7), Array(7).fill('runner'), plainVia.join(', '));
});

withPassword.test.serial(
  'a wrong sudo password: root runners refused, the command fails naming sudo',
  async (t) => {
    const right = process.env[PASSWORD_ENV];
    const remote = await withPassword.connect();
    process.env[PASSWORD_ENV] = 'not the password';
    try {
      const started = Date.now();
      const r = await remote.exec('n2', 'id -u', { sudo: true, check: false, timeoutMs: 60_000 });
      t.not(r.code, 0);
      t.regex(r.stderr, /sorry|incorrect|password/i);
      t.true(Date.now() - started < 30_000, `answered in ${Date.now() - started} ms`);
    } finally {
      process.env[PASSWORD_ENV] = right;
      await remote.close();
    }
  },
);

withPassword.test.serial('uploads and downloads reach root-owned paths through sudo', async (t) => {
  const remote = await withPassword.remote();
  const local = join(tmp, 'payload.txt');
  writeFileSync(local, 'root-owned payload\n');
  const target = '/root/faultline-upload.txt';
  await t.throwsAsync(remote.upload('n2', local, target), undefined, 'plain SFTP cannot write /root');
  await remote.upload('n2', local, target, { sudo: true });
  const stat = await remote.exec('n2', `stat -c '%U %a' ${target}`, { sudo: true });
  t.is(stat.stdout.trim().split(' ')[0], 'root');
  await remote.exec('n2', `chmod 600 ${target}`, { sudo: true });
  const back = join(tmp, 'back.txt');
  await remote.download('n2', target, back, { sudo: true });
  t.is(readFileSync(back, 'utf8'), 'root-owned payload\n');
});

withPassword.test.serial(
  'etcd installs, starts, survives partitions and kills, and heals as a non-root user',
  async (t) => {
    const remote = await withPassword.remote();
    const nodes = remote.nodes.map((n) => n.name);
    const db = new EtcdDb();
    const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress({ remote, nodes }, n)]));
    const started = Date.now();
    const r = await runTest({
      remote,
      db,
      makeClient: (opts) => new EtcdClient({ workload: 'multi-register', urls, ...opts }),
      workload: 'multi-register',
      faults: ['partition', 'kill'],
      nemesisIntervalS: 4,
      nemesisDelayS: 2,
      timeLimitS: 15,
      concurrency: 6,
      rate: 60,
      seed: 3,
      outDir: mkdtempSync(join(tmp, 'run-')),
      opTimeoutMs: 3000,
      recoveryS: 3,
    });
    t.log(`etcd run as a non-root user: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const byName = Object.fromEntries(r.results.map((c) => [c.checker, c]));
    t.is(byName.linearizable?.valid, true, byName.linearizable?.evidence);
    t.is(byName.faults?.valid, true, byName.faults?.evidence);
    const faults = JSON.parse(readFileSync(join(r.runDir, 'faults.json'), 'utf8')) as FaultRecord[];
    t.true(faults.length >= 2, `${faults.length} faults`);
    for (const f of faults) {
      t.true(f.evidence?.landed, `${f.id} ${f.spec.kind}: ${f.evidence?.reason ?? ''}`);
      t.truthy(f.healedAt, `${f.id} healed`);
    }
    // Healed: no FAULTLINE rule is left on any node.
    for (const n of nodes) {
      const rules = await remote.exec(n, 'iptables -w -S | grep -c FAULTLINE || true', { sudo: true });
      t.is(rules.stdout.trim(), '0', `${n} has no fault rules left`);
    }
    const files = readdirSync(r.runDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    for (const f of files)
      t.false(
        readFileSync(join(f.parentPath, f.name), 'utf8').includes(process.env[PASSWORD_ENV] as string),
        `${f.name} never holds the sudo password`,
      );
    t.is(r.valid, true);
  },
);

noPassword.test.serial(
  'NOPASSWD sudo: root rights without a password, uploads to root-owned paths',
  async (t) => {
    const inv = loadInventory(noPassword.cluster().inventoryPath);
    t.like(inv.nodes[0], { user: 'fltlab' });
    t.is(inv.nodes[0]?.sudoPasswordEnv, undefined);
    const remote = await noPassword.remote();
    t.is((await remote.exec('n1', 'id -un')).stdout.trim(), 'fltlab');
    t.is((await remote.exec('n1', 'sudo -n id -u')).stdout.trim(), '0');
    const local = join(tmp, 'nopw.txt');
    writeFileSync(local, 'x');
    await remote.upload('n1', local, '/root/faultline-nopw.txt', { sudo: true });
    t.is((await remote.exec('n1', 'cat /root/faultline-nopw.txt', { sudo: true })).stdout, 'x');
  },
);
