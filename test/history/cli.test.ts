import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { ednHistoryValues } from '../../src/core/history/edn.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('reference histories: the history CLI');

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'faultline-history-cli-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) =>
  execa('node', [bin, '--log-json', ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });

fixtureTest('convert EDN → JSONL → EDN gives back the same EDN data', async (t) => {
  const src = fixture('elle/histories/jepsen/bank.edn');
  const jsonl = join(dir, 'bank.jsonl');
  const edn = join(dir, 'bank.edn');
  t.is((await run('history', 'convert', src, jsonl)).exitCode, 0);
  t.is((await run('history', 'convert', jsonl, edn, '--to', 'edn')).exitCode, 0);
  const values = (p: string) => [...ednHistoryValues(readFileSync(p, 'utf8'))].map((x) => x.value);
  t.deepEqual(values(edn), values(src));
  t.is(readFileSync(jsonl, 'utf8').trim().split('\n').length, 680);
});

fixtureTest('convert to ops-json writes the operation records', async (t) => {
  const out = join(dir, 'etcd.ops.json');
  const r = await run(
    'history',
    'convert',
    fixture('porcupine/jepsen/etcd_002.log'),
    out,
    '--to',
    'ops-json',
  );
  t.is(r.exitCode, 0, r.stderr);
  const ops = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>[];
  t.is(ops.length, 77);
  t.deepEqual(Object.keys(ops[0]!).slice(0, 12), [
    'op_id',
    'process_id',
    'invoke_ts',
    'complete_ts',
    'op_type',
    'key',
    'input',
    'output',
    'error',
    'timeout_marker',
    'node_seen',
    'fault_epoch',
  ]);
});

fixtureTest('stats --json describes a history', async (t) => {
  const r = await run('history', 'stats', fixture('elle/histories/jepsen/bank.edn'), '--json');
  t.is(r.exitCode, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  t.is(s.events.total, 680);
  t.is(s.ops.total, 340);
  t.deepEqual(s.ops.byF.transfer, { ok: 53, fail: 99, info: 0 });
  t.is(s.nemesisEvents, 38);
  t.is(s.retiredProcesses, 1);
  t.false(s.time.synthetic);
  t.true(s.opsPerSecond > 0);
  const text = await run('history', 'stats', fixture('porcupine/kv/c01-ok.txt'));
  t.is(text.exitCode, 0);
  t.regex(text.stdout, /^events {4}116 /m);
  t.regex(text.stdout, /time {6}synthetic/);
});

const malformed: [string, string, string, RegExp][] = [
  [
    'bad JSON',
    'bad.jsonl',
    '{"index":0,"type":"invoke"\n',
    /bad\.jsonl:1: (torn last line \(no newline\): )?bad JSON/,
  ],
  [
    'unknown type',
    'type.jsonl',
    '{"index":0,"type":"started","f":"read","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}\n',
    /type\.jsonl:1: type: expected one of invoke, ok, fail, info, got "started"$/,
  ],
  [
    'missing field',
    'missing.jsonl',
    '{"index":0,"type":"invoke","value":null,"process":0,"time":0,"node":null,"faultEpoch":null}\n',
    /missing\.jsonl:1: f: missing \(expected a string\)$/,
  ],
  [
    'truncated EDN',
    'trunc.edn',
    '{:type :invoke, :f :read, :process 0}\n{:type :ok, :f :read, :value [1 2',
    /trunc\.edn:2: EDN: unterminated/,
  ],
  [
    'EDN op without type',
    'notype.edn',
    '{:type :invoke :f :read :process 0}\n\n{:f :read :process 0}\n',
    /notype\.edn:3: type: missing$/,
  ],
  ['unrecognised format', 'what.txt', 'hello world\n', /what\.txt:1: unrecognised history format/],
];

for (const [name, file, content, re] of malformed) {
  test(`malformed input (${name}) → one-line error, exit 254`, async (t) => {
    const p = join(dir, file);
    writeFileSync(p, content);
    for (const args of [
      ['history', 'stats', p],
      ['history', 'convert', p, join(dir, `${file}.out`)],
    ]) {
      const r = await run(...args);
      t.is(r.exitCode, 254, r.stderr);
      const lines = r.stderr.trim().split('\n');
      t.is(lines.length, 1, r.stderr);
      t.regex(lines[0]!, /^faultline: /);
      t.regex(lines[0]!, re);
    }
  });
}

test('a missing input file and a bad --from are input errors too', async (t) => {
  const r = await run('history', 'stats', join(dir, 'nope.jsonl'));
  t.is(r.exitCode, 254);
  t.regex(r.stderr, /nope\.jsonl: no such file/);
  const bad = await run('history', 'stats', join(dir, 'nope.jsonl'), '--from', 'xml');
  t.is(bad.exitCode, 254);
});

test('a failed conversion leaves no output behind', async (t) => {
  const p = join(dir, 'half.edn');
  writeFileSync(p, '{:type :invoke, :f :read, :process 0}\n{:type :nope}\n');
  const out = join(dir, 'half.jsonl');
  const r = await run('history', 'convert', p, out);
  t.is(r.exitCode, 254);
  t.throws(() => readFileSync(out));
  t.throws(() => readFileSync(`${out}.partial`));
});
