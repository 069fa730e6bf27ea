import test from 'ava';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import { EventColumnsDecoder, EventColumnsEncoder } from '../../src/core/history/event-columns.ts';
import { lineStats, parseLines } from '../../src/core/history/jsonl.ts';
import { EventLineScanner } from '../../src/core/history/jsonl-scan.ts';

/**
 * The scanner turns lines straight into event columns without JSON.parse. It must give exactly the
 * events the ordinary reader gives (parse, check, encode) for every line it accepts, and accept no line
 * whose meaning could differ: those make it give up on the block, which is then parsed.
 */

/** Lines in the scanner's grammar: every field it carries, in any order, with awkward but plain values. */
function plainLines(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const value = [
      [
        ['append', i % 7, i],
        ['r', i % 3, null],
      ],
      [['r', 5, [1, 2, 3, -4, 2147483647, -2147483648]]],
      [],
      [[['deep', [1]], null, 'x']],
      null,
      -123456789012345,
      'text with spaces, commas: and [brackets] {braces}',
      [['r', 'k"', []]].length, // a number
    ][i % 8];
    const e: Record<string, unknown> = {
      f: ['txn', 'read', 'write'][i % 3],
      process: i % 9 === 4 ? 'nemesis' : i % 5,
      node: i % 4 === 0 ? null : `n${i % 3}`,
      faultEpoch: i % 6 === 0 ? ['w1', `w${i % 3}`] : i % 6 === 1 ? [] : null,
      index: i,
      type: ['invoke', 'ok', 'fail', 'info'][i % 4],
      value,
      time: i * 1_000_003 + (i % 2 ? 99_999_999_999_000 : 0),
    };
    if (i % 10 === 1) e.key = `k${i % 4}`;
    if (i % 11 === 2) e.error = i % 2 ? 'timeout' : [1, 'x'];
    if (i % 13 === 4) e.intendedTime = i * 999;
    out.push(JSON.stringify(e));
  }
  return out;
}

function ordinary(lines: string[], first: number | null): HistoryEvent[] {
  const text = lines.join('\n');
  const { lines: n, longest } = lineStats(text);
  return parseLines(text, n, longest, 'h.jsonl', 0, first).events;
}

function scanned(scanner: EventLineScanner, lines: string[], next: number | null) {
  const bytes = Buffer.from(lines.join('\n'));
  return scanner.scan(bytes, 0, bytes.length, lines.length, next);
}

test('lines in the grammar: the same events as parsing them, batch after batch', (t) => {
  const lines = plainLines(400);
  const encoder = new EventColumnsEncoder();
  const scanner = new EventLineScanner(encoder);
  const decoder = new EventColumnsDecoder();
  const got: HistoryEvent[] = [];
  for (let at = 0; at < lines.length; at += 100) {
    const columns = scanned(scanner, lines.slice(at, at + 100), at === 0 ? null : at);
    if (columns === null) return t.fail(`batch at ${at} was not scanned`);
    got.push(...decoder.decode(columns));
  }
  t.deepEqual(got, ordinary(lines, 0));
});

test('fields in a different order on every line: all scanned, each field read as itself', (t) => {
  // The scanner first looks for a name where the previous line's name at that place ended; names of the
  // same length (type, time, node) and optional fields shifting the rest must not be mistaken.
  const lines = plainLines(240).map((line, i) => {
    const e = JSON.parse(line) as Record<string, unknown>;
    const names = Object.keys(e);
    const order = names.map((_, k) => names[(k * 5 + i) % names.length] as string);
    const unique = new Set(order).size === names.length ? order : [...names].reverse();
    return JSON.stringify(Object.fromEntries(unique.map((k) => [k, e[k]])));
  });
  t.true(new Set(lines.map((l) => l.slice(0, 12))).size > 5, 'the lines do start with different fields');
  const scanner = new EventLineScanner(new EventColumnsEncoder());
  const decoder = new EventColumnsDecoder();
  const columns = scanned(scanner, lines, 0);
  if (columns === null) return t.fail('the block was not scanned');
  t.deepEqual(decoder.decode(columns), ordinary(lines, 0));
});

test('a list long enough to grow the tree inside a nested list, then more nodes after it', (t) => {
  const long = Array.from({ length: 5_000 }, (_, k) => (k % 3 === 0 ? -k : k));
  const value = [
    ['r', 1, long],
    ['append', 2, 3],
    ['r', 'k', [null, 'x', [7]]],
  ];
  const lines = [0, 1, 2].map((i) =>
    JSON.stringify({
      f: 'txn',
      process: i,
      node: null,
      faultEpoch: null,
      index: i,
      type: 'ok',
      value: i === 1 ? value : [['append', i, i]],
      time: i,
    }),
  );
  const scanner = new EventLineScanner(new EventColumnsEncoder());
  const columns = scanned(scanner, lines, 0);
  if (columns === null) return t.fail('the block was not scanned');
  t.deepEqual(new EventColumnsDecoder().decode(columns), ordinary(lines, 0));
});

/** Each breaks the grammar in one place; the ordinary reader accepts most of them. */
const offGrammar: [string, string][] = [
  [
    'a decimal',
    '{"index":0,"type":"ok","f":"txn","value":1.5,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'an exponent',
    '{"index":0,"type":"ok","f":"txn","value":1e3,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'a big integer',
    '{"index":0,"type":"ok","f":"txn","value":[["r",1,[9007199254740993]]],"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    '16 digits',
    '{"index":0,"type":"ok","f":"txn","value":1234567890123456,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'beyond int32 in a list',
    '{"index":0,"type":"ok","f":"txn","value":[["append",1,2147483648]],"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  ['-0', '{"index":0,"type":"ok","f":"txn","value":[-0],"process":0,"time":0,"node":null,"faultEpoch":null}'],
  // Numbers in lists are read by the list's own loop, not by the one for fields: each rule again there.
  ...[
    ['a decimal in a list', '1.5'],
    ['an exponent in a list', '1e3'],
    ['a leading zero in a list', '01'],
    ['-0 in a list', '-0'],
    ['a leading zero after a minus in a list', '-01'],
    ['a lone minus in a list', '-'],
    ['eleven digits in a list', '12345678901'],
    ['below int32 in a list', '-2147483649'],
    ['a plus sign in a list', '+1'],
  ].map(([what, n]): [string, string] => [
    what as string,
    `{"index":0,"type":"ok","f":"txn","value":[["r",1,[3,${n},4]]],"process":0,"time":0,"node":null,"faultEpoch":null}`,
  ]),
  [
    'a leading zero',
    '{"index":0,"type":"ok","f":"txn","value":01,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'an escape',
    '{"index":0,"type":"ok","f":"t\\"xn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'an escaped key',
    '{"ind\\u0065x":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'not ASCII',
    '{"index":0,"type":"ok","f":"tx\u00e9","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'whitespace',
    '{"index": 0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'a CR',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}\r',
  ],
  ['a blank line', ''],
  [
    'an extra field',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null,"x":1}',
  ],
  [
    'a duplicate field',
    '{"index":0,"type":"ok","f":"txn","value":null,"value":[],"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  ['no value', '{"index":0,"type":"ok","f":"txn","process":0,"time":0,"node":null,"faultEpoch":null}'],
  [
    'a boolean',
    '{"index":0,"type":"ok","f":"txn","value":[true],"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'an object',
    '{"index":0,"type":"ok","f":"txn","value":{"a":1},"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'too deep',
    '{"index":0,"type":"ok","f":"txn","value":[[[[[1]]]]],"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'a bad type',
    '{"index":0,"type":"okay","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'a negative process',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":-1,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'a process name',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":"nemesis2","time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'a decimal time',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":1.5,"node":null,"faultEpoch":null}',
  ],
  [
    'a number node',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":3,"faultEpoch":null}',
  ],
  [
    'a fault epoch of numbers',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":[1]}',
  ],
  [
    'a null key',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null,"key":null}',
  ],
  [
    'trailing text',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}x',
  ],
  [
    'a trailing comma',
    '{"index":0,"type":"ok","f":"txn","value":[1,],"process":0,"time":0,"node":null,"faultEpoch":null}',
  ],
  [
    'two values',
    '{"index":0,"type":"ok","f":"txn","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}{}',
  ],
];

for (const [what, line] of offGrammar) {
  test(`a line with ${what} is not scanned, and leaves nothing behind`, (t) => {
    const good = plainLines(3).map((l) => l.replace(/"index":\d+/, '"index":0'));
    const encoder = new EventColumnsEncoder();
    const scanner = new EventLineScanner(encoder);
    const decoder = new EventColumnsDecoder();
    const lines = [good[1]!.replace('"index":0', '"index":5'), line.replace('"index":0', '"index":6')];
    t.is(scanned(scanner, lines, 5), null);
    // The strings the abandoned block interned are gone: the next block decodes on the same tables.
    const after = [good[1]!.replace('"index":0', '"index":7'), good[2]!.replace('"index":0', '"index":8')];
    const columns = scanned(scanner, after, 7);
    if (columns === null) return t.fail('the next block was not scanned');
    t.deepEqual(decoder.decode(columns), ordinary(after, 7));
  });
}

test('a line that closes on the next line is not scanned: the parse, not a newline search, ends each line', (t) => {
  const good = plainLines(3);
  const scanner = new EventLineScanner(new EventColumnsEncoder());
  const event = good[1]!;
  // Before the closing brace, between a name and its colon, inside a name, inside a string value.
  const cuts = [
    event.length - 1,
    event.indexOf(':', event.indexOf('faultEpoch')),
    event.indexOf('process') + 3,
    event.indexOf('"f":"') + 6,
  ];
  for (const cut of cuts) {
    // Three lines by count: the first, then the second cut in two.
    const lines = [good[0]!, event.slice(0, cut), event.slice(cut)];
    t.is(scanned(scanner, lines, 0), null, `cut at ${cut}: ${lines[1]}`);
  }
  // A block whose last line stops inside a list's number: the reads past the text's end stop it.
  const open =
    '{"index":1,"type":"ok","f":"txn","process":0,"time":0,"node":null,"faultEpoch":null,"value":[["r",1,[12';
  t.is(scanned(scanner, [good[0]!, open], 0), null);
  t.is(scanned(scanner, [good[0]!, `${open.slice(0, -2)}-`], 0), null);
  t.not(scanned(scanner, good, 0), null);
});

test('an index out of sequence is not scanned (the ordinary reader names it)', (t) => {
  const lines = plainLines(3);
  const scanner = new EventLineScanner(new EventColumnsEncoder());
  t.not(scanned(scanner, lines, 0), null);
  t.is(scanned(scanner, lines, 1), null);
  t.is(scanned(scanner, [lines[0]!, lines[2]!], null), null);
});

test('property: a block the scanner accepts is one the reader accepts, with the same events (mutated lines)', async (t) => {
  // The scanner's soundness: it may refuse anything, but what it accepts must mean what parsing means.
  // Valid lines are cut, spliced and sprinkled with the bytes its grammar turns on; every block the
  // scanner still takes is compared with the ordinary reader's events, or with its error when it has one.
  const { default: fc } = await import('fast-check');
  // Mostly values in the grammar (so that many blocks are scanned), some just outside it.
  const int = fc.oneof(
    { arbitrary: fc.integer({ min: -20, max: 2000 }), weight: 8 },
    fc.constantFrom(2147483647, -2147483648, 2147483648, -2147483649, 999999999999999, -999999999999999),
    fc.integer(),
  );
  const text = fc.oneof(
    { arbitrary: fc.constantFrom('r', 'append', 'w', 'txn', 'x y', 'n1', ''), weight: 8 },
    fc.stringMatching(/^[a-z0-9 ,:[\]{}-]{0,5}$/),
    fc.constantFrom('k"', 'é', 'a\\b', '\t'),
  );
  const leaf = fc.oneof(int, text, fc.constant(null));
  const value = fc.oneof(
    leaf,
    fc.array(
      fc.tuple(
        fc.constantFrom('r', 'append'),
        fc.oneof(int, text),
        fc.oneof(leaf, fc.array(int, { maxLength: 6 })),
      ),
      {
        maxLength: 4,
      },
    ),
    fc.array(fc.oneof(leaf, fc.array(fc.oneof(leaf, fc.array(leaf, { maxLength: 2 })), { maxLength: 3 })), {
      maxLength: 3,
    }),
  );
  const event = fc.record(
    {
      type: fc.constantFrom('invoke', 'ok', 'fail', 'info'),
      f: text,
      value,
      process: fc.oneof(fc.nat({ max: 12 }), fc.constant('nemesis')),
      time: fc.nat(),
      node: fc.oneof(fc.constant(null), text),
      faultEpoch: fc.oneof(fc.constant(null), fc.array(text, { maxLength: 2 })),
      key: text,
      error: leaf,
      intendedTime: fc.nat(),
    },
    { requiredKeys: ['type', 'f', 'value', 'process', 'time', 'node', 'faultEpoch'] },
  );
  const mutation = fc.tuple(
    fc.nat(),
    fc.nat({ max: 3 }),
    fc.constantFrom(
      '0',
      '1',
      '-',
      '.',
      'e',
      'E',
      ',',
      '[',
      ']',
      '{',
      '}',
      '"',
      ':',
      ' ',
      '\\',
      '\n',
      'n',
      'null',
      '+',
      '-0',
      '00',
    ),
  );
  let accepted = 0;
  let acceptedMutated = 0;
  fc.assert(
    fc.property(
      fc.array(event, { minLength: 1, maxLength: 3 }),
      fc.array(mutation, { maxLength: 3 }),
      (events, cuts) => {
        let body = events.map((e, i) => JSON.stringify({ index: i, ...e })).join('\n');
        for (const [at, remove, insert] of cuts) {
          const p = at % (body.length + 1);
          body = body.slice(0, p) + insert + body.slice(p + remove);
        }
        const mutated = cuts.length > 0;
        const lines = body.split('\n');
        const bytes = Buffer.from(body);
        const columns = new EventLineScanner(new EventColumnsEncoder()).scan(
          bytes,
          0,
          bytes.length,
          lines.length,
          0,
        );
        if (columns === null) return true;
        if (mutated) acceptedMutated++;
        else accepted++;
        t.deepEqual(new EventColumnsDecoder().decode(columns), ordinary(lines, 0), body);
        return true;
      },
    ),
    { seed: 61, numRuns: 40_000 },
  );
  // Not vacuous: the scanner took many blocks, mutated ones among them.
  t.log(`${accepted} blocks scanned as written, ${acceptedMutated} scanned after a mutation`);
  t.true(accepted > 2000 && acceptedMutated > 150, `${accepted} / ${acceptedMutated}`);
});
