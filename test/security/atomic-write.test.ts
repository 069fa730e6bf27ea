import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { openAtomic, writeFileAtomic, writeFileAtomicSync } from '../../src/core/util/atomic-write.ts';
import { UserError } from '../../src/core/util/errors.ts';

/**
 * One atomic writer for every result file: a unique O_EXCL|O_NOFOLLOW temporary file beside OUT, fsync,
 * and a rename only over a regular file or a missing path. The `history convert` holes of the security
 * review each have a test here.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const run = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
const tmp = () => mkdtempSync(join(tmpdir(), 'fl-sec-atomic-'));

function jsonl(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const type = i % 2 === 0 ? 'invoke' : 'ok';
    lines.push(
      `{"index":${i},"type":"${type}","f":"write","value":${i >> 1},"process":0,"time":${i},"node":null,"faultEpoch":null}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function oneLine254(t: import('ava').ExecutionContext, r: { exitCode?: number; stderr: string }, re: RegExp) {
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stderr, re);
  t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.notRegex(r.stderr, /\n\s+at /);
}

test('convert refuses a device, a directory, a FIFO, a symlink and a missing directory as OUT (254, one line)', async (t) => {
  const d = tmp();
  const input = join(d, 'h.jsonl');
  writeFileSync(input, jsonl(4));
  await execa('mkfifo', [join(d, 'fifo')]);
  symlinkSync(join(d, 'elsewhere'), join(d, 'link'));
  const cases: [string, RegExp][] = [
    ['/dev/null', /\/dev\/null: refusing to write: it is a device/],
    [d, /refusing to write: it is a directory/],
    [join(d, 'fifo'), /refusing to write: it is a FIFO/],
    [join(d, 'link'), /refusing to write: it is a symbolic link/],
    [join(d, 'missing', 'x.edn'), /cannot write: directory .*missing does not exist/],
  ];
  for (const [out, re] of cases)
    oneLine254(t, await run('history', 'convert', input, out, '--to', 'edn'), re);
  t.true(statSync('/dev/null').isCharacterDevice());
  t.false(existsSync(join(d, 'elsewhere')), 'the symlink was not followed');
});

test('convert refuses IN == OUT, also through a hard link, and leaves the input whole', async (t) => {
  const d = tmp();
  const input = join(d, 'h.jsonl');
  const text = jsonl(6);
  writeFileSync(input, text);
  linkSync(input, join(d, 'same.jsonl'));
  oneLine254(t, await run('history', 'convert', input, input), /it is the input file/);
  oneLine254(t, await run('history', 'convert', input, join(d, 'same.jsonl')), /it is the input file/);
  t.is(readFileSync(input, 'utf8'), text);
});

test('no fixed .partial name: IN named OUT.partial converts, a user’s own OUT.partial is untouched', async (t) => {
  const d = tmp();
  const out = join(d, 'h.jsonl');
  const input = `${out}.partial`;
  const text = jsonl(6);
  writeFileSync(input, text);
  const r = await run('history', 'convert', input, out);
  t.is(r.exitCode, 0, r.stderr);
  t.is(readFileSync(input, 'utf8'), text);
  t.is(readFileSync(out, 'utf8').trim().split('\n').length, 6);
  // And a pre-existing OUT.partial of the user's survives a conversion to OUT.
  const other = join(d, 'o.edn');
  writeFileSync(`${other}.partial`, 'mine\n');
  t.is((await run('history', 'convert', input, other, '--to', 'edn')).exitCode, 0);
  t.is(readFileSync(`${other}.partial`, 'utf8'), 'mine\n');
  t.deepEqual(
    readdirSync(d).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('bad input leaves the previous OUT exactly as it was', async (t) => {
  const d = tmp();
  const input = join(d, 'bad.jsonl');
  writeFileSync(input, `${jsonl(4)}{"index":4,"type":"nonsense"}\n`);
  const out = join(d, 'out.edn');
  writeFileSync(out, 'previous\n');
  const r = await run('history', 'convert', input, out, '--to', 'edn');
  t.is(r.exitCode, 254, r.stderr);
  t.is(readFileSync(out, 'utf8'), 'previous\n');
  t.deepEqual(readdirSync(d).sort(), ['bad.jsonl', 'out.edn']);
});

test('a conversion killed mid-way leaves the previous OUT, never a shorter valid-looking history', async (t) => {
  const d = tmp();
  const input = join(d, 'big.jsonl');
  writeFileSync(input, jsonl(400_000));
  const out = join(d, 'out.jsonl');
  writeFileSync(out, 'previous\n');
  const child = execa('node', [bin, 'history', 'convert', input, out], {
    reject: false,
    env: { FAULTLINE_FROM_SOURCE: '1' },
  });
  // Kill once the temporary file exists (the conversion has started writing).
  const started = Date.now();
  while (!readdirSync(d).some((f) => f.endsWith('.tmp')) && Date.now() - started < 60_000) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  await child;
  const leftovers = readdirSync(d).filter((f) => f !== 'big.jsonl' && f !== 'out.jsonl');
  const content = readFileSync(out, 'utf8');
  if (content !== 'previous\n') {
    // The conversion won the race: then OUT must be the whole history.
    t.is(content.trim().split('\n').length, 400_000);
  } else t.pass();
  for (const f of leftovers)
    t.regex(f, /^\.out\.jsonl\.[0-9a-f]+\.tmp$/, 'only a hidden temporary file may remain');
});

test('writeFileAtomic: a new file, a replaced regular file, and refusals as UserErrors', async (t) => {
  const d = tmp();
  const p = join(d, 'r.json');
  writeFileAtomicSync(p, 'one');
  t.is(readFileSync(p, 'utf8'), 'one');
  await writeFileAtomic(p, 'two');
  t.is(readFileSync(p, 'utf8'), 'two');
  mkdirSync(join(d, 'dir'));
  t.throws(() => writeFileAtomicSync(join(d, 'dir'), 'x'), { instanceOf: UserError, message: /directory/ });
  await t.throwsAsync(writeFileAtomic(join(d, 'nope', 'x'), 'x'), { instanceOf: UserError });
  const f = await openAtomic(join(d, 'streamed.txt'));
  await f.write('a');
  await f.abort();
  t.false(existsSync(join(d, 'streamed.txt')));
  t.deepEqual(readdirSync(d).sort(), ['dir', 'r.json']);
});

test('faultline test --out naming a file is a 254 one-liner before any node is contacted', async (t) => {
  const d = tmp();
  const file = join(d, 'file');
  writeFileSync(file, '');
  const inv = join(d, 'inv.yaml');
  // An address nothing answers on: the error must come before any connection attempt.
  writeFileSync(inv, 'nodes:\n  n1: 192.0.2.1\n');
  const r = await run('test', '--inventory', inv, '--out', join(file, 'sub'), '--time-limit', '1s');
  oneLine254(t, r, /file\/sub: cannot .*not a directory/);
  const missing = await run('test', '--inventory', inv, '--replay', join(d, 'missing.json'));
  t.is(missing.exitCode, 254, missing.stderr);
  t.regex(missing.stderr, /missing\.json/);
  t.notRegex(missing.stderr, /192\.0\.2\.1|connect/i);
});
