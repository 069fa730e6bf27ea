import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { diskNemesis } from '../../nemeses/disk.ts';
import { localShellRemote } from '../helpers/local-shell.ts';

/**
 * A plan's disk fault names paths relative to the database's data directory: `plan check` refuses an
 * absolute one (file:line), and on the node the path is checked again after symlinks, so a link inside
 * the data directory cannot carry the fault onto a host file.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;

function planWith(dir: string, params: string, action: string): string {
  const text = readFileSync(planPath, 'utf8').replace(
    'nemesis:\n',
    `nemesis:\n  - kind: disk\n    action: ${action}\n    targets: one\n    startS: 5\n    durationS: 5\n    params: ${params}\n`,
  );
  const p = join(dir, `${action}-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(p, text);
  return p;
}

test('plan check refuses disk-fault paths outside the data directory, naming file:line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-disk-'));
  for (const [params, action] of [
    ['{ file: /etc/passwd, mode: zero }', 'corrupt'],
    ['{ dir: / }', 'disk-full'],
    ['{ dir: /var/lib }', 'corrupt'],
  ] as const) {
    const plan = planWith(dir, params, action);
    const r = await execa('node', [bin, 'plan', 'check', plan], {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    });
    t.is(r.exitCode, 3, r.stdout + r.stderr);
    t.regex(
      r.stdout,
      /\.md:\d+: error: S1: binding\.nemesis\.0\.params\.(file|dir): ".*" is outside the database's data directory/,
    );
  }
  for (const params of ['{ file: ../../etc/passwd }', '{ dir: "a/../../b" }']) {
    const r = await execa('node', [bin, 'plan', 'check', planWith(dir, params, 'corrupt')], {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    });
    t.not(r.exitCode, 0);
    t.regex(r.stdout + r.stderr, /no "\.\." in the path/);
  }
  const ok = await execa(
    'node',
    [bin, 'plan', 'check', planWith(dir, '{ file: member/wal/0.wal }', 'corrupt')],
    {
      reject: false,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    },
  );
  t.is(ok.exitCode, 0, ok.stdout);
});

test('on the node, a relative path that leads out of the data directory through a symlink is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-disk-'));
  const data = join(dir, 'data');
  mkdirSync(data);
  const host = join(dir, 'host-file');
  writeFileSync(host, 'precious');
  symlinkSync(dir, join(data, 'escape'));
  const shell = localShellRemote('c29-disk');
  await t.throwsAsync(
    diskNemesis.inject(
      shell,
      {
        kind: 'disk',
        action: 'corrupt',
        targets: ['n1'],
        params: { files: { n1: join(data, 'escape', 'host-file') }, within: { n1: data }, mode: 'zero' },
      },
      'w1',
    ),
    { message: /outside the data directory .*: refused/ },
  );
  t.is(readFileSync(host, 'utf8'), 'precious');
});
