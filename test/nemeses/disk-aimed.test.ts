import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { diskNemesis } from '../../nemeses/disk.ts';
import { fileGlobProblem, matchFiles } from '../../nemeses/file-glob.ts';
import { localShellRemote } from '../helpers/local-shell.ts';

// Disk corruption aimed at files by pattern, on this host through a shell standing in for a node.

const shell = localShellRemote('h36-aim');

function dataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'fl-aim-'));
  const data = join(dir, 'data');
  mkdirSync(join(data, 'appendonlydir'), { recursive: true });
  const bytes = (n: number, c: string) => Buffer.alloc(n, c);
  writeFileSync(join(data, 'appendonlydir', 'appendonly.aof.1.incr.aof'), bytes(1000, 'a'));
  writeFileSync(join(data, 'appendonlydir', 'appendonly.aof.2.incr.aof'), bytes(2000, 'b'));
  writeFileSync(join(data, 'appendonlydir', 'appendonly.aof.manifest'), bytes(100, 'm'));
  writeFileSync(join(data, 'dump.rdb'), bytes(500, 'r'));
  writeFileSync(join(dir, 'outside.aof'), bytes(50, 'o'));
  symlinkSync(join(dir, 'outside.aof'), join(data, 'appendonlydir', 'linked.incr.aof'));
  return { dir, data, file: (rel: string) => join(data, rel) };
}

const corrupt = (data: string, params: Record<string, unknown>, id: string) =>
  diskNemesis.inject(
    shell,
    {
      kind: 'disk',
      action: 'corrupt',
      targets: ['n1'],
      params: { dirs: { n1: data }, within: { n1: data }, ...params },
    },
    id,
  );

test('file patterns: * stays in a directory, ** crosses them; nothing leaves the directory', (t) => {
  const paths = ['a.aof', 'dir/b.aof', 'dir/sub/c.aof', 'dir/b.rdb'];
  t.deepEqual(matchFiles(paths, ['*.aof']), ['a.aof']);
  t.deepEqual(matchFiles(paths, ['dir/*.aof']), ['dir/b.aof']);
  t.deepEqual(matchFiles(paths, ['**/*.aof']), ['a.aof', 'dir/b.aof', 'dir/sub/c.aof']);
  t.deepEqual(matchFiles(paths, ['dir/?.rdb']), ['dir/b.rdb']);
  t.deepEqual(matchFiles(['a+b.(x)'], ['a+b.(x)']), ['a+b.(x)'], 'regex characters are literal');
  t.regex(fileGlobProblem('/etc/*') ?? '', /absolute/);
  t.regex(fileGlobProblem('../x') ?? '', /"\.\."/);
  t.regex(fileGlobProblem('a/./b') ?? '', /"\."/);
  t.is(fileGlobProblem('appendonlydir/*.incr.aof'), null);
});

test('corrupt every file a pattern matches, located by fraction; evidence lists each file before and after', async (t) => {
  const d = dataDir();
  const rec = await corrupt(
    d.data,
    { globs: ['appendonlydir/*.incr.aof'], mode: 'zero', bytes: 10, fraction: 0.5 },
    'w1',
  );
  const ev = await diskNemesis.evidence(shell, rec);
  t.true(ev.landed, ev.reason);
  const files = ev.signals.filter((s) => s.side === 'victim').map((s) => s.signal);
  t.deepEqual(files, [
    `sha256/size of ${d.file('appendonlydir/appendonly.aof.1.incr.aof')}`,
    `sha256/size of ${d.file('appendonlydir/appendonly.aof.2.incr.aof')}`,
  ]);
  const one = readFileSync(d.file('appendonlydir/appendonly.aof.1.incr.aof'));
  t.true(one.subarray(500, 510).every((b) => b === 0));
  t.is(one[499], 'a'.charCodeAt(0));
  t.is(one[510], 'a'.charCodeAt(0));
  const two = readFileSync(d.file('appendonlydir/appendonly.aof.2.incr.aof'));
  t.true(two.subarray(1000, 1010).every((b) => b === 0));
  t.is(readFileSync(join(d.dir, 'outside.aof'), 'utf8'), 'o'.repeat(50), 'a symlink is never followed');
  t.is(statSync(d.file('dump.rdb')).size, 500, 'a file no pattern names is untouched');
  const notes = ev.signals.filter((s) => s.side === 'injector').map((s) => s.note);
  t.deepEqual(notes, ['zeroed 10 byte(s) at offset 500', 'zeroed 10 byte(s) at offset 1000']);
});

test('truncate to an offset, random bytes and located bit flips; backup restores every file', async (t) => {
  const d = dataDir();
  const cut = await corrupt(
    d.data,
    { globs: ['dump.rdb'], mode: 'truncate', offset: 123, backup: true },
    'w2',
  );
  t.is(statSync(d.file('dump.rdb')).size, 123);
  const ev = await diskNemesis.evidence(shell, cut);
  t.true(ev.landed);
  t.like(ev.signals[1], { before: { size: 500 }, during: { size: 123 } });
  await diskNemesis.heal(shell, cut);
  t.is(statSync(d.file('dump.rdb')).size, 500, 'heal put the backup back');

  const rnd = await corrupt(
    d.data,
    { globs: ['**/*.manifest'], mode: 'random', bytes: 20, offset: 10, seed: 4 },
    'w3',
  );
  const m = readFileSync(d.file('appendonlydir/appendonly.aof.manifest'));
  t.is(m.length, 100);
  t.true(m.subarray(10, 30).some((b) => b !== 'm'.charCodeAt(0)));
  t.true(
    m.subarray(0, 10).every((b) => b === 'm'.charCodeAt(0)) &&
      m.subarray(30).every((b) => b === 'm'.charCodeAt(0)),
  );
  t.true((await diskNemesis.evidence(shell, rnd)).landed);

  await corrupt(
    d.data,
    { globs: ['appendonlydir/appendonly.aof.2.incr.aof'], mode: 'bitflip', flips: 5, offset: 1500, bytes: 4 },
    'w4',
  );
  const two = readFileSync(d.file('appendonlydir/appendonly.aof.2.incr.aof'));
  const changed = [...two.entries()].filter(([, b]) => b !== 'b'.charCodeAt(0)).map(([i]) => i);
  t.true(changed.length >= 1 && changed.every((i) => i >= 1500 && i < 1504), JSON.stringify(changed));
});

test('a pattern that matches nothing is refused, naming the node and the patterns', async (t) => {
  const d = dataDir();
  await t.throwsAsync(corrupt(d.data, { globs: ['nothing/*'], mode: 'zero' }, 'w5'), {
    message: /n1: no non-empty file under .* matches nothing\/\*/,
  });
});
