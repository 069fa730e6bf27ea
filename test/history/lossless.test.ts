import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { linearizabilityChecker } from '../../checkers/linearizability/index.ts';
import { convertHistory } from '../../src/core/history/convert.ts';
import { decimalHeldByDouble, mayHoldInexactNumber } from '../../src/core/history/json-text.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';

/**
 * Integers beyond 2^53 survive JSON and JSONL histories exactly (as `{"#bigint": "…"}`, like EDN's), and
 * values nested past the limit are a one-line input error (exit 254), never a stack overflow.
 */
const dir = mkdtempSync(join(tmpdir(), 'faultline-lossless-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const run = (...args: string[]) =>
  execa('node', [bin, ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });

function jsonlLine(index: number, type: string, f: string, value: string, process = 0): string {
  return `{"index":${index},"type":"${type}","f":"${f}","value":${value},"process":${process},"time":${index},"node":null,"faultEpoch":null}`;
}

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('the one-scan test for inexact numbers flags every number a double cannot hold, in any JSON text', (t) => {
  // Inexact: beyond 2^53, outside the double range, or more significant digits than a double keeps.
  const inexact = [
    '9007199254740993',
    '-123456789012345678',
    '1e400',
    '-1E+400',
    '1e-400',
    '0.30000000000000001',
    '1.00000000000000001',
    '0.1234567890123456789',
    '100000000000000000001e-5',
    '9.007199254740993E15',
  ];
  // Exact as doubles (the common case must stay on JSON.parse); keys and strings with e and digits.
  const exact = ['0', '-7', '0.1', '1.5', '2e3', '123456789012345', '1e-5'];
  for (const n of inexact) {
    t.false(decimalHeldByDouble(n, Number(n)) && !/^-?\d{16,}$/.test(n), `${n} is inexact`);
    for (const text of [n, `[${n}]`, `{"value":${n},"type":"ok"}`, `{"a":"e123","v":[1,${n}]}`])
      t.true(mayHoldInexactNumber(text), text);
  }
  for (const n of exact) {
    t.true(decimalHeldByDouble(n, Number(n)), `${n} is exact`);
    t.false(
      mayHoldInexactNumber(
        `{"index":1,"type":"invoke","value":[${n.includes('.') || n.includes('e') ? 0 : n},"node1"],"time":12}`,
      ),
    );
  }
  // What the regex scans see only in strings is no number: such text stays on the fast path.
  t.false(mayHoldInexactNumber('{"f":"xe123","node":"n.1","key":"Ee-999"}'));
});

const BIG = [
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '123456789012345678901234567890',
];

test('JSONL keeps integers beyond 2^53 exactly; safe integers, floats and digit strings are unchanged', async (t) => {
  const p = write(
    'big.jsonl',
    `${[
      jsonlLine(0, 'invoke', 'write', `[${BIG.join(',')}]`),
      jsonlLine(
        1,
        'ok',
        'write',
        '[9007199254740991, -9007199254740991, 1.5e300, 0.1, "12345678901234567890"]',
      ),
    ].join('\n')}\n`,
  );
  const events = await loadHistory(p);
  t.deepEqual(
    events[0]?.value,
    BIG.map((b) => ({ '#bigint': b })),
  );
  t.deepEqual(events[1]?.value, [9007199254740991, -9007199254740991, 1.5e300, 0.1, '12345678901234567890']);
});

test('elle-cli JSON keeps integers beyond 2^53 exactly', async (t) => {
  const p = write(
    'big.json',
    `[{"type":"invoke","f":"write","value":9007199254740993,"process":0},\n{"type":"ok","f":"write","value":9007199254740991,"process":0}]\n`,
  );
  const events = await loadHistory(p);
  t.deepEqual(events[0]?.value, { '#bigint': '9007199254740993' });
  t.is(events[1]?.value, 9007199254740991);
});

test('JSONL → EDN → JSONL keeps big integers (written as N literals in EDN)', async (t) => {
  const src = write(
    'conv.jsonl',
    `${[jsonlLine(0, 'invoke', 'write', BIG[0] as string), jsonlLine(1, 'ok', 'write', BIG[1] as string)].join('\n')}\n`,
  );
  const edn = join(dir, 'conv.edn');
  const back = join(dir, 'conv-back.jsonl');
  await convertHistory(src, edn, { to: 'edn' });
  t.regex(readFileSync(edn, 'utf8'), /9007199254740993N/);
  await convertHistory(edn, back, { to: 'jsonl' });
  const events = await loadHistory(back);
  t.deepEqual(events[0]?.value, { '#bigint': BIG[0] });
  t.deepEqual(events[1]?.value, { '#bigint': BIG[1] });
});

/** One process writes `a`, then another reads `b`: linearizable exactly when a equals b. */
function staleReadHistory(f: { write: string; read: string }, a: string, b: string): string {
  return `${[
    jsonlLine(0, 'invoke', f.write, a),
    jsonlLine(1, 'ok', f.write, a),
    jsonlLine(2, 'invoke', f.read, 'null', 1),
    jsonlLine(3, 'ok', f.read, b, 1),
  ].join('\n')}\n`;
}

const NEAR = [
  ['9007199254740993', '9007199254740992'],
  ['9223372036854775807', '9223372036854775806'],
] as const;

const cases: { model: string; history: (a: string, b: string) => string }[] = [
  { model: 'register', history: (a, b) => staleReadHistory({ write: 'write', read: 'read' }, a, b) },
  { model: 'cas-register', history: (a, b) => staleReadHistory({ write: 'write', read: 'read' }, a, b) },
  {
    model: 'multi-register',
    history: (a, b) => staleReadHistory({ write: 'write', read: 'read' }, `["k", ${a}]`, `["k", ${b}]`),
  },
  { model: 'counter', history: (a, b) => staleReadHistory({ write: 'add', read: 'read' }, a, b) },
  {
    model: 'set',
    history: (a, b) => staleReadHistory({ write: 'add', read: 'read' }, a, `{"#set": [${b}]}`),
  },
  { model: 'fifo-queue', history: (a, b) => staleReadHistory({ write: 'enqueue', read: 'dequeue' }, a, b) },
  {
    model: 'kv',
    history: (a, b) => staleReadHistory({ write: 'put', read: 'get' }, `["k", ${a}]`, `["k", ${b}]`),
  },
];

async function verdict(model: string, file: string): Promise<unknown> {
  const ops = pairEvents(await loadHistory(file)).ops;
  const r = await linearizabilityChecker.check(ops, { model });
  return [r.valid, r.anomalies.map((a) => a.explanation).join('\n')];
}

for (const c of cases) {
  for (const [a, b] of NEAR) {
    test(`${c.model}: ${a} and ${b} are different values, equal ones agree`, async (t) => {
      // Reads of kv/multi-register name their key.
      const fix = (text: string) =>
        text
          .replace(
            '"f":"read","value":null',
            c.model === 'multi-register' ? '"f":"read","value":["k",null]' : '$&',
          )
          .replace('"f":"get","value":null', '"f":"get","value":["k",null]');
      const [bad, why] = (await verdict(
        c.model,
        write(`${c.model}-${a}-bad.jsonl`, fix(c.history(a, b))),
      )) as [unknown, string];
      t.is(bad, false);
      if (c.model !== 'fifo-queue') t.regex(why, new RegExp(b.slice(-6)));
      const [good] = (await verdict(c.model, write(`${c.model}-${a}-good.jsonl`, fix(c.history(a, a))))) as [
        unknown,
      ];
      t.is(good, true);
    });
  }
}

test('the CLI check exits 1 on a read that differs from the write only beyond 2^53', async (t) => {
  const p = write(
    'cli-big.jsonl',
    staleReadHistory({ write: 'write', read: 'read' }, '9007199254740993', '9007199254740992'),
  );
  const r = await run('check', p, '--checker', 'linearizable', '--model', 'register');
  t.is(r.exitCode, 1, r.stderr);
});

const DEPTH = 5000;
const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;

for (const [name, text] of [
  ['deep.jsonl', `${jsonlLine(0, 'invoke', 'write', '1')}\n${jsonlLine(1, 'ok', 'write', deep)}\n`],
  [
    'deep.edn',
    `{:type :invoke, :f :write, :value 1, :process 0}\n{:type :ok, :f :write, :value ${deep}, :process 0}\n`,
  ],
  [
    'deep.json',
    `[{"type":"invoke","f":"write","value":1,"process":0},\n{"type":"ok","f":"write","value":${deep},"process":0}]\n`,
  ],
  ['deep-tags.edn', `{:type :invoke, :f :write, :value ${'#x '.repeat(DEPTH)}1, :process 0}\n`],
] as const) {
  test(`${name}: ${DEPTH} levels of nesting are a one-line input error naming the line (exit 254)`, async (t) => {
    const p = write(name, text);
    for (const args of [
      ['check', p, '--checker', 'linearizable', '--model', 'register'],
      ['history', 'stats', p],
    ]) {
      const r = await run(...args);
      t.is(r.exitCode, 254, r.stderr);
      t.regex(r.stderr, new RegExp(`${name}:\\d+: .*nested deeper than 1000 levels`));
      t.notRegex(r.stderr, /\n\s+at /);
    }
  });
}

test('values nested up to the limit are read', async (t) => {
  const ok = `${'['.repeat(999)}${']'.repeat(999)}`;
  const p = write('ok-depth.jsonl', `${jsonlLine(0, 'invoke', 'write', ok)}\n`);
  const events = await loadHistory(p);
  t.is(events.length, 1);
});

test('elle list-append: appends that differ only beyond 2^53 are distinct elements', async (t) => {
  const { elleChecker } = await import('../../checkers/elle/index.ts');
  const txn = (i: number, type: string, value: string, process: number) =>
    jsonlLine(i, type, 'txn', value, process);
  const p = write(
    'elle-big.jsonl',
    `${[
      txn(0, 'invoke', '[["append","x",9007199254740993]]', 0),
      txn(1, 'ok', '[["append","x",9007199254740993]]', 0),
      txn(2, 'invoke', '[["append","x",9007199254740992]]', 0),
      txn(3, 'ok', '[["append","x",9007199254740992]]', 0),
      txn(4, 'invoke', '[["r","x",null]]', 1),
      txn(5, 'ok', '[["r","x",[9007199254740993,9007199254740992]]]', 1),
    ].join('\n')}\n`,
  );
  const ops = pairEvents(await loadHistory(p)).ops;
  const r = elleChecker.check(ops, { workload: 'list-append' });
  t.is(r.valid, true, r.evidence);
});
