import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  ControlLog,
  createSessionDir,
  latestSession,
  sessionTimestamp,
} from '../../src/app/report/session-dir.ts';

test('the session directory honours the root and lays out the §6 subdirectories', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'faultline-sessions-'));
  const dir = await createSessionDir(join(root, 'out'), 'kv-store', new Date('2026-11-30T03:19:09.123Z'));
  t.is(dir, join(root, 'out', 'kv-store', '2026-11-30T03-19-09Z'));
  t.deepEqual((await readdir(dir)).sort(), ['artifacts', 'findings', 'logs', 'metrics']);
  t.deepEqual(await readdir(join(dir, 'artifacts')), ['harness']);
  await t.throwsAsync(createSessionDir(root, '../escape', new Date()), {
    message: /plan slug name "..\/escape" cannot be used in a path/,
  });
  t.is(sessionTimestamp(new Date('2026-01-02T03:04:05Z')), '2026-01-02T03-04-05Z');
  await rm(root, { recursive: true });
});

test('one layout for run and test: a `latest` link per name, and sessions in one second never share a dir', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'faultline-sessions-'));
  const at = new Date('2026-11-30T03:19:09Z');
  const a = await createSessionDir(root, 'etcd-register', at, ['logs']);
  const b = await createSessionDir(root, 'etcd-register', at, ['logs']);
  t.is(b, `${a}-2`);
  t.deepEqual(await readdir(a), ['logs']);
  t.is(await latestSession(join(root, 'etcd-register')), b);
  t.is(await readlink(join(root, 'etcd-register', 'latest')), '2026-11-30T03-19-09Z-2', 'a relative link');
  const log = new ControlLog(b);
  log.write('first line');
  log.write('second line\n');
  t.is(await readFile(join(b, 'logs/control.log'), 'utf8'), 'first line\nsecond line\n');
  await rm(root, { recursive: true });
});
