import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { diskNemesis } from '../../nemeses/disk.ts';
import { nodeStateDir, STATE_ROOT, writeMarkerCommand } from '../../nemeses/node-state.ts';
import type { FaultRecord } from '../../nemeses/types.ts';
import type { ExecResult, NodeSpec, Remote } from '../../src/core/control/types.ts';

/**
 * A ledger is data: a disk fault's undo read from it may only remove, restore or remap what the node's
 * own markers say faultline created for that fault id. The "node" here is this host, reached by a shell
 * (the commands heal sends are run for real), so a canary file outside the node state must survive.
 */
const CLUSTER = `c29-ledger-${process.pid}`;
const spec: NodeSpec = {
  name: 'n1',
  host: '127.0.0.1',
  port: 22,
  user: 'root',
  labels: { cluster: CLUSTER },
};
const shell: Remote = {
  nodes: [spec],
  node: () => spec,
  exec: async (_node: string, command: string): Promise<ExecResult> => {
    const r = await execa('bash', ['-c', command], { reject: false });
    return { code: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr } as ExecResult;
  },
} as unknown as Remote;

test.after.always(() => rm(join(STATE_ROOT, CLUSTER), { recursive: true, force: true }));

const record = (id: string, undo: Record<string, unknown>): FaultRecord => ({
  id,
  spec: { kind: 'disk', action: String(undo.action), targets: ['n1'] } as FaultRecord['spec'],
  nodes: ['n1'],
  injectedAt: new Date().toISOString(),
  undo,
});

const root = process.getuid?.() === 0;

test('a ledger cannot make heal rm or cp files faultline did not create', async (t) => {
  if (!root) return t.pass('needs root (/run/faultline)');
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-heal-'));
  const canary = join(dir, 'host-file');
  writeFileSync(canary, 'precious');
  const decoy = join(dir, 'decoy');
  writeFileSync(decoy, 'attacker bytes');
  // disk-full: the ledger names a host file as the junk file; no marker on the node.
  await diskNemesis.heal(
    shell,
    record('w1', { action: 'disk-full', perNode: { n1: { dir, junk: canary } } }),
  );
  t.is(readFileSync(canary, 'utf8'), 'precious');
  // ... and with a real marker for another path: refused, naming both.
  await shell.exec(
    'n1',
    writeMarkerCommand(nodeStateDir(spec, 'junk'), 'w2', join(dir, '.faultline-junk-w2')),
  );
  await t.throwsAsync(
    diskNemesis.heal(shell, record('w2', { action: 'disk-full', perNode: { n1: { dir, junk: canary } } })),
    { message: /the node recorded .*faultline-junk-w2: left untouched/ },
  );
  t.is(readFileSync(canary, 'utf8'), 'precious');
  // corrupt: a backup path outside faultline's own backups, or a target the node never recorded.
  await t.throwsAsync(
    diskNemesis.heal(
      shell,
      record('w3', { action: 'corrupt', perNode: { n1: { file: canary, backup: decoy } } }),
    ),
    { message: /not faultline's backup/ },
  );
  const backup = `${nodeStateDir(spec, 'backups')}/w4`;
  await shell.exec('n1', `mkdir -p ${nodeStateDir(spec, 'backups')} && echo attacker > ${backup}`);
  await diskNemesis.heal(
    shell,
    record('w4', { action: 'corrupt', perNode: { n1: { file: canary, backup } } }),
  );
  t.is(readFileSync(canary, 'utf8'), 'precious');
  // A fault id that is not a name cannot steer marker paths.
  await t.throwsAsync(
    diskNemesis.heal(
      shell,
      record('../../x', { action: 'disk-full', perNode: { n1: { dir, junk: canary } } }),
    ),
  );
  t.is(readFileSync(canary, 'utf8'), 'precious');
});

test('what faultline did create is still healed from the ledger', async (t) => {
  if (!root) return t.pass('needs root (/run/faultline)');
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-heal-'));
  const junk = join(dir, '.faultline-junk-w7');
  writeFileSync(junk, 'junk');
  await shell.exec('n1', writeMarkerCommand(nodeStateDir(spec, 'junk'), 'w7', junk));
  await diskNemesis.heal(shell, record('w7', { action: 'disk-full', perNode: { n1: { dir, junk } } }));
  t.false(existsSync(junk));
  const file = join(dir, 'data.db');
  writeFileSync(file, 'corrupted');
  const backup = `${nodeStateDir(spec, 'backups')}/w8`;
  await shell.exec('n1', `mkdir -p ${nodeStateDir(spec, 'backups')} && printf original > ${backup}`);
  await shell.exec('n1', writeMarkerCommand(nodeStateDir(spec, 'backups'), 'w8.target', file));
  await diskNemesis.heal(shell, record('w8', { action: 'corrupt', perNode: { n1: { file, backup } } }));
  t.is(readFileSync(file, 'utf8'), 'original');
  t.false(existsSync(backup));
  // The same through the ledger's current shape (a list of corrupted files), and refused the same way.
  writeFileSync(file, 'corrupted');
  const backup9 = `${nodeStateDir(spec, 'backups')}/w9`;
  await shell.exec('n1', `printf original > ${backup9}`);
  await shell.exec('n1', writeMarkerCommand(nodeStateDir(spec, 'backups'), 'w9.target', file));
  const list = (b: string) => ({
    action: 'corrupt',
    perNode: { n1: { corrupted: [{ file, before: null, backup: b }] } },
  });
  await t.throwsAsync(diskNemesis.heal(shell, record('w9', list(join(dir, 'decoy')))), {
    message: /not faultline's backup/,
  });
  t.is(readFileSync(file, 'utf8'), 'corrupted');
  await diskNemesis.heal(shell, record('w9', list(backup9)));
  t.is(readFileSync(file, 'utf8'), 'original');
});
