import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { createSessionDir } from '../../src/app/report/session-dir.ts';
import { generateStore } from '../helpers/store.ts';

/**
 * One safe writer for what faultline writes into a store or an output directory: a symbolic link
 * planted where faultline writes is refused, never followed, and `--name` is a name, not a path. Each
 * case plants a link to a canary file (or directory) outside the store; the canary must stay as it was.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const fl = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' }, timeout: 120_000 });

function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'fl-sec-write-'));
  const root = join(dir, 'store');
  mkdirSync(root);
  generateStore(root, { names: ['nightly'], perName: 3, rowOf: () => ({ verdict: 'PASS-smoke' }) });
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  const canary = join(outside, 'canary');
  writeFileSync(canary, 'precious');
  return { dir, root, outside, canary };
}

test('sessions prune/compress/index/list/show/diff: --name is validated like a cluster name', async (t) => {
  const s = sandbox();
  mkdirSync(join(s.dir, 'x'));
  writeFileSync(join(s.dir, 'x', 'keep'), 'keep');
  for (const name of ['../x', '..', '/etc', 'a/b', '.index.jsonl']) {
    for (const args of [
      ['prune', '--keep', '1'],
      ['compress', '--min-size', '0'],
      ['index'],
      ['list'],
      ['show'],
      ['diff'],
    ]) {
      const r = await fl('sessions', ...args, '--root', s.root, '--name', name);
      t.is(r.exitCode, 254, `${args.join(' ')} --name ${name}: ${r.stderr}`);
      t.regex(r.stderr, /--name .* cannot be used in a path|--name/);
    }
  }
  t.is(readFileSync(join(s.dir, 'x', 'keep'), 'utf8'), 'keep');
});

test('a symlinked .index.jsonl is never written through (append or rewrite)', async (t) => {
  const s = sandbox();
  const index = join(s.root, 'nightly', '.index.jsonl');
  try {
    (await import('node:fs')).rmSync(index);
  } catch {}
  symlinkSync(s.canary, index);
  const r = await fl('sessions', 'index', '--root', s.root, '--name', 'nightly');
  t.is(r.exitCode, 254, r.stdout + r.stderr);
  t.regex(r.stderr, /\.index\.jsonl: refusing to write: it is a symbolic link/);
  t.is(readFileSync(s.canary, 'utf8'), 'precious');
  t.true(lstatSync(index).isSymbolicLink());
});

test('compress refuses a planted history.jsonl.gz symlink and leaves no temporary file', async (t) => {
  const s = sandbox();
  const session = join(s.root, 'nightly', readdirSync(join(s.root, 'nightly')).find((d) => /^\d/.test(d))!);
  const history = join(session, 'history.jsonl');
  writeFileSync(history, `${'{"type":"invoke","f":"read","process":0}\n'.repeat(2000)}`);
  symlinkSync(s.canary, `${history}.gz`);
  const r = await fl('sessions', 'compress', '--root', s.root, '--min-size', '1K');
  t.is(r.exitCode, 254, r.stdout + r.stderr);
  t.regex(r.stderr, /history\.jsonl\.gz: refusing to write: it is a symbolic link/);
  t.is(readFileSync(s.canary, 'utf8'), 'precious');
  t.true(existsSync(history));
  t.deepEqual(
    readdirSync(session).filter((f) => f.endsWith('.tmp') || f.includes('.tmp-')),
    [],
  );
});

test('a session directory is never created through a symlinked <out>/<slug>', async (t) => {
  const s = sandbox();
  symlinkSync(s.outside, join(s.root, 'etcd-register'));
  await t.throwsAsync(createSessionDir(s.root, 'etcd-register', new Date()), {
    message: /refusing to write: it leads to .*outside/,
  });
  t.deepEqual(readdirSync(s.outside), ['canary']);
});

test('check -c timeline never writes through a symlinked timeline.html', async (t) => {
  const s = sandbox();
  const history = join(s.dir, 'h.edn');
  writeFileSync(
    history,
    '{:type :invoke, :f :write, :value 1, :process 0, :time 1, :index 0}\n{:type :ok, :f :write, :value 1, :process 0, :time 2, :index 1}\n',
  );
  const out = join(s.dir, 'out');
  mkdirSync(out);
  symlinkSync(s.canary, join(out, 'timeline.html'));
  const r = await fl('check', history, '--checker', 'timeline', '--out', out);
  t.is(r.exitCode, 254, r.stdout + r.stderr);
  t.regex(r.stderr, /timeline\.html: refusing to write: it is a symbolic link/);
  t.is(readFileSync(s.canary, 'utf8'), 'precious');
});
