import test from 'ava';
import { canonicalJson, valueKey } from '../../src/core/history/values.ts';

test('equal JSON values share a key whatever the order of object keys and set members', (t) => {
  t.is(valueKey({ a: 1, b: [2, { c: 3, d: 4 }] }), valueKey({ b: [2, { d: 4, c: 3 }], a: 1 }));
  t.is(valueKey({ '#set': [3, 1, { y: 1, x: 2 }] }), valueKey({ '#set': [{ x: 2, y: 1 }, 3, 1] }));
  t.is(canonicalJson({ b: 1, a: { '#set': ['z', 'a'] } }), '{"a":{"#set":["a","z"]},"b":1}');
  t.is(valueKey(null), valueKey(undefined));
});

test('different values never share a key', (t) => {
  const values: unknown[] = [
    1,
    '1',
    true,
    'true',
    null,
    'null',
    [1, 2],
    [2, 1],
    '[1,2]',
    '\u0000[1,2]',
    { a: 1 },
    '{"a":1}',
    '\u0000{"a":1}',
    { a: '1' },
    { '#set': [1, 2] },
    [{ '#set': [1] }],
    '',
    '\u0000',
  ];
  const keys = values.map(valueKey);
  t.is(new Set(keys).size, values.length, JSON.stringify(keys));
});

test('numbers and plain strings stay themselves: no text is built per op on a history of them', (t) => {
  t.is(valueKey(42), 42);
  t.is(valueKey('x'), 'x');
  t.is(valueKey(10n), 10n);
});
