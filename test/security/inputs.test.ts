import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { parsePlanText } from '../../src/app/plan/load.ts';
import { parseInventory } from '../../src/core/control/inventory.ts';
import { parseEdn, toEdn } from '../../src/core/history/edn.ts';
import { readJsonlBatchesInWorker } from '../../src/core/history/jsonl-parallel.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { UserError } from '../../src/core/util/errors.ts';

/**
 * Inputs that cannot hurt (issue 29, item 4): numbers a double cannot hold, the line-length cap, EDN
 * output that cannot be forged, the YAML nesting limit, a torn multi-byte tail. Each bad input is one
 * line naming the file (exit 254 through the CLI), never a rounding, a hang or a stack trace.
 */
const dir = mkdtempSync(join(tmpdir(), 'fl-sec-inputs-'));
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const cli = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' }, timeout: 180_000 });

const ev = (i: number, type: string, f: string, value: string) =>
  `{"index":${i},"type":"${type}","f":"${f}","value":${value},"process":0,"time":${i},"node":null,"faultEpoch":null}`;
/** Write `written`, then read back `read`: a register history. */
const register = (written: string, read: string) =>
  `${[ev(0, 'invoke', 'write', written), ev(1, 'ok', 'write', written), ev(2, 'invoke', 'read', 'null'), ev(3, 'ok', 'read', read)].join('\n')}\n`;
let n = 0;
const file = (name: string, text: string | Buffer) => {
  const p = join(dir, `${n++}-${name}`);
  writeFileSync(p, text);
  return p;
};

for (const [written, read] of <[string, string][]>[
  ['1e400', '2e400'],
  ['1e-400', '0'],
  ['0.30000000000000001', '0.3'],
  ['-1e400', '-2e400'],
  ['123456789012.34567', '123456789012.34568'],
]) {
  test(`a register written ${written} and read ${read} is INVALID, never rounded into equality`, async (t) => {
    const checkRegister = (path: string) => cli('check', path, '-c', 'linearizable', '--model', 'register');
    const bad = await checkRegister(file('h.jsonl', register(written, read)));
    t.is(bad.exitCode, 1, bad.stdout + bad.stderr);
    const edn = join(dir, `${n++}-h.edn`);
    const conv = await cli(
      'history',
      'convert',
      file('h.jsonl', register(written, read)),
      edn,
      '--to',
      'edn',
    );
    t.is(conv.exitCode, 0, conv.stderr);
    const viaEdn = await checkRegister(edn);
    t.is(viaEdn.exitCode, 1, `the converted EDN too: ${viaEdn.stdout}`);
    const same = await checkRegister(file('h.jsonl', register(written, written)));
    t.is(same.exitCode, 0, `the same number read back is VALID: ${same.stdout}`);
  });
}

test('numbers a double holds exactly stay numbers; the others keep their text', async (t) => {
  const h = await loadHistory(file('h.jsonl', register('0.1', '1e400')));
  t.is(h[0]?.value, 0.1);
  t.deepEqual(h[3]?.value, { '#bigdec': '1e400' });
  t.deepEqual(parseEdn('[0.1 1e-400 0.30000000000000001 2.5]', { mode: 'lossless' })[0], [
    0.1,
    { '#double': '1e-400' },
    { '#double': '0.30000000000000001' },
    2.5,
  ]);
});

test('a line over --max-line-bytes is one line naming file:line, exit 254; the default cap refuses a huge line fast', async (t) => {
  const long = file(
    'long.jsonl',
    `${ev(0, 'invoke', 'write', '1')}\n${ev(1, 'ok', 'write', `"${'x'.repeat(5000)}"`)}\n`,
  );
  for (const cmd of [
    ['check', long, '-c', 'linearizable', '--model', 'register'],
    ['history', 'stats', long],
  ]) {
    const r = await cli(...cmd, '--max-line-bytes', '4k');
    t.is(r.exitCode, 254, r.stderr);
    t.regex(
      r.stderr,
      /^faultline: .*long\.jsonl:2: line longer than 4096 bytes \(the cap for one history line; raise it with --max-line-bytes\)\n?$/,
    );
    const ok = await cli(...cmd, '--max-line-bytes', '8k');
    t.not(ok.exitCode, 254, ok.stderr);
  }
  const bad = await cli('history', 'stats', long, '--max-line-bytes', 'lots');
  t.is(bad.exitCode, 254);
  t.regex(bad.stderr, /--max-line-bytes: expected a positive size/);
  // 70 MB without a newline: refused at the 64 MiB default, not read whole (it took 66 s before).
  const huge = file('huge.jsonl', `{"index":0,"value":"${'y'.repeat(70 << 20)}`);
  const started = Date.now();
  const r = await cli('history', 'stats', huge);
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stderr, /huge\.jsonl:1: line longer than 67108864 bytes/);
  t.log(`70 MB one-line history refused in ${Date.now() - started} ms`);
});

test('the two-thread reader applies the same cap, naming the same line', async (t) => {
  const lines: string[] = [];
  for (let i = 0; i < 200; i++) lines.push(ev(i, i % 2 ? 'ok' : 'invoke', 'write', String(i >> 1)));
  lines[150] = ev(150, 'invoke', 'write', `"${'z'.repeat(3000)}"`);
  const p = file('seg.jsonl', `${lines.join('\n')}\n`);
  const err = await t.throwsAsync(async () => {
    for await (const _ of readJsonlBatchesInWorker(
      p,
      Buffer.byteLength(lines.join('\n')) + 1,
      { maxLineBytes: 2048 },
      4096,
    ));
  });
  t.regex(String(err?.message), /seg\.jsonl:151: line longer than 2048 bytes/);
});

test('a file ending inside a UTF-8 character is a torn last line: reported, or dropped with --allow-torn-tail', async (t) => {
  const whole = Buffer.from(
    `${ev(0, 'invoke', 'write', '"é"')}\n${ev(1, 'ok', 'write', '"é"')}\n{"index":2,"type":"invoke","value":"é`,
  );
  const torn = file('torn.jsonl', whole.subarray(0, whole.length - 1));
  const strict = await cli('history', 'stats', torn);
  t.is(strict.exitCode, 254);
  t.regex(strict.stderr, /^faultline: .*torn\.jsonl:3: torn last line .*\n?$/);
  t.notRegex(strict.stderr, /UTF-8/);
  const lenient = await cli('history', 'stats', torn, '--allow-torn-tail', '--json');
  t.is(lenient.exitCode, 0, lenient.stderr);
  t.is((JSON.parse(lenient.stdout) as { events: { total: number } }).events.total, 2);
  // The two-thread reader agrees.
  const dropped: number[] = [];
  const events: unknown[] = [];
  for await (const b of readJsonlBatchesInWorker(
    torn,
    whole.length - 1,
    { tornTail: 'drop', onTornTail: (x) => dropped.push(x.line) },
    64,
  ))
    events.push(...b);
  t.is(events.length, 2);
  t.deepEqual(dropped, [3]);
  // Invalid bytes before the end are still invalid text.
  const mid = Buffer.concat([whole.subarray(0, 20), Buffer.from([0xc3]), whole.subarray(21)]);
  const r = await cli('history', 'stats', file('mid.jsonl', mid), '--allow-torn-tail');
  t.is(r.exitCode, 254);
  t.regex(r.stderr, /mid\.jsonl:1: invalid UTF-8/);
});

test('EDN output escapes strings and refuses tagged values it cannot write as one token', async (t) => {
  for (const s of ['a"b', 'back\\slash', 'nl\nand\ttab', '\u0000\u0001\u001f\u007f', '"} {:type :ok']) {
    t.deepEqual(parseEdn(toEdn(s), { mode: 'lossless' })[0], s, JSON.stringify(s));
  }
  for (const v of [
    { '#char': '"' },
    { '#char': '\u0000' },
    { '#char': 'é' },
    { '#kw': '0' },
    { '#tag': ['inst', 'x'] },
  ])
    t.deepEqual(parseEdn(toEdn(v), { mode: 'lossless' })[0], v, JSON.stringify(v));
  const forged = [
    { '#char': 'a}\n{:index 9, :type :ok, :f :read, :value 3}' },
    { '#tag': ['_', 1] },
    { '#kw': 'a b' },
    { '#sym': 'x}' },
    { '#sym': 'nil' },
  ];
  for (const v of forged) t.throws(() => toEdn(v), { instanceOf: TypeError }, JSON.stringify(v));
  const h = file(
    'forged.jsonl',
    `${ev(0, 'invoke', 'read', 'null')}\n${ev(1, 'ok', 'read', JSON.stringify(forged[0]))}\n`,
  );
  const out = join(dir, 'forged.edn');
  const r = await cli('history', 'convert', h, out, '--to', 'edn');
  t.is(r.exitCode, 254, r.stderr);
  t.regex(r.stderr, /^faultline: .*forged\.jsonl: event 1: malformed tagged value [^\n]*\n?$/);
});

test('YAML nested past the limit says so, in plans and inventories, however deep', (t) => {
  for (const depth of [300, 5000, 200_000]) {
    const flow = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    for (const [what, parse] of [
      ['plan', () => parsePlanText(`slug: p\nscenarios: ${flow}\n`, 'deep.yaml')],
      ['inventory', () => parseInventory(`nodes: ${flow}\n`, 'deep-inv.yaml')],
    ] as const) {
      const err = t.throws(parse, undefined, `${what} ${depth}`);
      t.true(err instanceof UserError, `${what} ${depth}: ${String(err)}`);
      if (depth * 2 < 4 << 20)
        t.regex(String(err?.message), /nested deeper than 254 levels/, `${what} ${depth}: ${err?.message}`);
      t.notRegex(String(err?.message), /call stack/i);
    }
  }
});

test('a YAML key that is a list, a map or an alias is one line at its line, with no warning beside it', async (t) => {
  const cases: [string, string, number][] = [
    ['list key', 'nodes:\n  n1: { host: 10.0.0.11, ? [a, b] : 1 }\n', 2],
    ['map key', 'nodes:\n  n1: 10.0.0.11\n  ? { n2: 1 }\n  : 10.0.0.12\n', 3],
    ['alias key', 'nodes:\n  n1: &h 10.0.0.11\n  *h : 10.0.0.12\n', 3],
  ];
  for (const [what, text, line] of cases) {
    const inv = file(`${what.replace(' ', '-')}.yaml`, text);
    const r = await cli('doctor', '--inventory', inv);
    t.is(r.exitCode, 254, `${what}: ${r.stderr}`);
    // Only the error: the yaml library's process warning ("Keys with collection values …") would be more.
    t.regex(
      r.stderr,
      new RegExp(
        `^faultline: [^\\n]*\\.yaml:${line}: YAML: a key must be a plain name or number[^\\n]*\\n?$`,
      ),
      what,
    );
    t.throws(() => parsePlanText(`slug: p\nscenarios:\n  ? [S1]\n  : {}\n`, 'p.yaml'), {
      message: /p\.yaml:3: YAML: a key must be/,
    });
  }
});

test('any string survives EDN output and input, through a file (property, 2,000 strings)', async (t) => {
  const { default: fc } = await import('fast-check');
  const { readFileSync } = await import('node:fs');
  const p = join(dir, 'strings.edn');
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc
          .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 20 })
          .map((u) => String.fromCharCode(...u)),
        fc.constantFrom('"', '\\', '\\"', '"}\n{:type :ok', '\u0000', '\ud800', 'a\udc00b'),
      ),
      (s) => {
        writeFileSync(p, toEdn(s));
        t.deepEqual(parseEdn(readFileSync(p, 'utf8'), { mode: 'lossless' }), [s]);
      },
    ),
    { seed: 29, numRuns: 2000 },
  );
});
