import test from 'ava';
import { detectFormatOf } from '../../src/core/history/read.ts';
import { parseHistoryText } from '../../src/core/history/read-foreign.ts';
import { InputError } from '../../src/core/util/errors.ts';

test('format detection looks at the content only', (t) => {
  t.is(detectFormatOf('{"index":0,"type":"invoke"}\n'), 'jsonl');
  t.is(detectFormatOf('\uFEFF  \n{"index":0}'), 'jsonl');
  t.is(detectFormatOf(''), 'jsonl', 'an empty file is an empty history');
  t.is(detectFormatOf('[{"type":"invoke","f":"read"},\n'), 'json');
  t.is(detectFormatOf('[{:type :invoke}]'), 'edn');
  t.is(detectFormatOf('; knossos\n({:type :invoke})'), 'edn');
  t.is(detectFormatOf('{:type :invoke, :f :read, :process 0}'), 'edn');
  t.is(detectFormatOf('{:process 9, :type :invoke, :f :append, :key "0", :value "x 9 0 y"}'), 'porcupine-kv');
  t.is(detectFormatOf('INFO  jepsen.util - 0\t:invoke\t:read\tnil\n'), 'porcupine-etcd');
  t.throws(() => detectFormatOf('hello', 'h.txt'), {
    instanceOf: InputError,
    message: 'h.txt:1: unrecognised history format (expected JSONL, EDN, or a Porcupine log)',
  });
});

test('Jepsen op maps: defaults are marked in #absent, sparse indices kept in #index', (t) => {
  const [a, b] = parseHistoryText(
    '{:index 0 :type :invoke :value [[:r 1 nil]]}\n{:index 962 :type :ok :process 3 :f :txn :time 5 :value [[:r 1 [2]]]}',
    'edn',
  );
  t.deepEqual(a, {
    index: 0,
    type: 'invoke',
    f: 'txn',
    value: [['r', 1, null]],
    process: 0,
    time: 0,
    node: null,
    faultEpoch: null,
    '#absent': ['f', 'process', 'time'],
  });
  t.is(b!.index, 1);
  t.is((b as Record<string, unknown>)['#index'], 962);
  t.is(b!.time, 5);
});

test('bad op maps and log lines are input errors naming file:line and field', (t) => {
  const cases: [string, Parameters<typeof parseHistoryText>[1], string][] = [
    [
      '{:type :invoke :f :read :process 0}\n{:type :ok :f :read :process :foo}',
      'edn',
      'h:2: process: expected a non-negative integer or :nemesis, got "foo"',
    ],
    [
      '{:type :invoke :f :read :process 0 :time -5}',
      'edn',
      'h:1: time: expected non-negative nanoseconds, got -5',
    ],
    [
      '{:type :invoke :process 0 :value 3}',
      'edn',
      'h:1: f: missing (and the value is not a list of micro-ops)',
    ],
    ['[1 2]', 'edn', 'h:1: expected an op map, got 1'],
    [
      'INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - zero :ok :read 1\n',
      'porcupine-etcd',
      'h:2: not a Jepsen op line: expected "INFO jepsen.util - PROCESS :TYPE :F VALUE"',
    ],
    [
      'INFO  jepsen.util - 0\t:invoke\t:write\t[1 2\n',
      'porcupine-etcd',
      "h:1: value: bad EDN value '[1 2': unterminated vector",
    ],
    [
      '[{"type":"invoke","f":"read","process":0},\n{"type":"what","f":"read","process":0}]',
      'json',
      'h:2: type: expected invoke|ok|fail|info, got "what"',
    ],
  ];
  for (const [text, format, message] of cases) {
    t.throws(() => parseHistoryText(text, format, 'h'), { instanceOf: InputError, message }, message);
  }
});

test('Porcupine etcd lines: other log lines are skipped, times are positions', (t) => {
  const h = parseHistoryText(
    'INFO  jepsen.core - starting\nINFO  jepsen.util - 2\t:invoke\t:cas\t[1 2]\nINFO  jepsen.util - 2   :info   :cas   :timed-out\n',
    'porcupine-etcd',
  );
  t.is(h.length, 2);
  t.deepEqual(h[0]!.value, [1, 2]);
  t.is(h[1]!.error, 'timed-out');
  t.deepEqual(
    h.map((e) => e.time),
    [0, 1],
  );
});
