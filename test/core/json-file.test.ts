import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { InputError } from '../../src/core/util/errors.ts';
import { escapeHtml } from '../../src/core/util/html.ts';
import { parseJsonLines, readJsonLines, readJsonOrNull } from '../../src/core/util/json-file.ts';

const values = (text: string, o = {}) =>
  [...parseJsonLines(text, 'f.jsonl', o)].map((l) => [l.line, l.value]);

test('parseJsonLines: values with their line numbers, blank lines skipped', (t) => {
  t.deepEqual(values('{"a":1}\n\n  \n[2]\n'), [
    [1, { a: 1 }],
    [4, [2]],
  ]);
  t.deepEqual(values(''), []);
});

test('parseJsonLines with reject: a torn last line is dropped, a bad line before it names file:line', (t) => {
  const o = { reject: 'not a JSON object' };
  t.deepEqual(values('{"a":1}\n{"a":', o), [[1, { a: 1 }]]);
  // A complete last line only missing its newline is kept.
  t.deepEqual(values('{"a":1}\n{"a":2}', o), [
    [1, { a: 1 }],
    [2, { a: 2 }],
  ]);
  // The same cut line, but ended by a newline (or followed by more lines): corruption, not a torn append.
  const ended = t.throws(() => values('{"a":1}\n{"a":\n', o), { instanceOf: InputError });
  t.is(ended?.message, 'f.jsonl:2: not a JSON object');
  const middle = t.throws(() => values('{"a":1}\nnope\n{"a":3}', o), { instanceOf: InputError });
  t.is(middle?.message, 'f.jsonl:2: not a JSON object');
  // Trailing blank lines do not hide the torn line.
  t.throws(() => values('nope\n{"a":1}\n  ', o), { message: 'f.jsonl:1: not a JSON object' });
});

test('parseJsonLines without reject skips every line that is not JSON; check sees each line first', (t) => {
  t.deepEqual(values('x\n{"a":1}\ny\n'), [[2, { a: 1 }]]);
  const seen: number[] = [];
  const lines = parseJsonLines('1\n\n2\n', 'f', { check: (_text, line) => seen.push(line) });
  t.deepEqual(seen, [], 'lazy: nothing read before the caller asks');
  t.deepEqual([...lines].length, 2);
  t.deepEqual(seen, [1, 3]);
  const tooLong = (text: string, line: number) => {
    if (text.length > 1) throw new Error(`line ${line} too long`);
  };
  t.throws(() => [...parseJsonLines('1\n[]]\n', 'f', { check: tooLong, reject: 'bad' })], {
    message: 'line 2 too long',
  });
});

test('readJsonLines and readJsonOrNull: a missing file is null, not an error', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'json-file-'));
  t.is(readJsonLines(join(dir, 'none.jsonl')), null);
  t.is(readJsonOrNull(join(dir, 'none.json')), null);
  writeFileSync(join(dir, 'a.jsonl'), '{"x":1}\n{"x"');
  t.deepEqual([...(readJsonLines(join(dir, 'a.jsonl')) ?? [])], [{ line: 1, value: { x: 1 } }]);
  writeFileSync(join(dir, 'a.json'), '{"x":1}');
  t.deepEqual(readJsonOrNull(join(dir, 'a.json')), { x: 1 });
  writeFileSync(join(dir, 'torn.json'), '{"x":');
  t.is(readJsonOrNull(join(dir, 'torn.json')), null);
});

test('escapeHtml: text and attribute values of either quote cannot open markup or close the attribute', (t) => {
  t.is(escapeHtml(`a & b <i> "q" 'p'`), 'a &amp; b &lt;i&gt; &quot;q&quot; &#39;p&#39;');
  t.is(escapeHtml('&amp;'), '&amp;amp;', 'escaped once, as given');
  const v = `x' onload='alert(1)" y="`;
  t.false(/['"<>]/.test(escapeHtml(v)));
});
