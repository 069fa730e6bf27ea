import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('Porcupine histories: the linearizable CLI');

/**
 * `faultline check HISTORY --checker linearizable --model M …`: exit 0 valid, 1 invalid, 2 unknown,
 * 254 bad input.
 */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

function faultline(...args: string[]) {
  return execa('node', [bin, 'check', ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
}

const etcd = (n: string) => fixture(`porcupine/jepsen/etcd_${n}.log`);
const kv = (name: string) => fixture(`porcupine/kv/${name}.txt`);

fixtureTest('linearizable etcd log: exit 0 with the evidence line', async (t) => {
  const r = await faultline(
    etcd('005'),
    '--checker',
    'linearizable',
    '--model',
    'cas-register',
    '--format',
    'porcupine-etcd',
  );
  t.is(r.exitCode, 0, r.stderr);
  t.regex(r.stdout, /linearizability \(cas-register\): \d+ ops over one history, 0 anomalies/);
});

fixtureTest('non-linearizable etcd log: exit 1, JSON names the op that cannot be linearized', async (t) => {
  const r = await faultline(
    etcd('000'),
    '--checker',
    'linearizable',
    '--model',
    'cas-register',
    '--format',
    'porcupine-etcd',
    '--json',
  );
  t.is(r.exitCode, 1, r.stderr);
  const out = JSON.parse(r.stdout) as {
    results: Record<
      string,
      { anomalies: { type: string; ops: number[]; firstUnlinearizable: { op: number } }[] }
    >;
  };
  const res = out.results.linearizable;
  const a = res?.anomalies[0];
  t.is(a?.type, 'nonlinearizable');
  // The op that cannot be linearized first, then the op that last set the state it could not follow.
  t.is(a?.ops[0], a?.firstUnlinearizable.op);
  t.true((a?.ops.length ?? 0) >= 1 && (a?.ops.length ?? 0) <= 2);
});

fixtureTest('kv/c50-bad with an HTML file: exit 1 and a self-contained page', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lin-cli-'));
  const html = join(dir, 'c50-bad.html');
  const r = await faultline(kv('c50-bad'), '--checker', 'linearizable', '--model', 'kv', '--html', html);
  t.is(r.exitCode, 1, r.stderr);
  t.regex(readFileSync(html, 'utf8'), /^<!doctype html>/);
  t.regex(r.stdout, /artifact: .*c50-bad\.html/);
});

fixtureTest('a budget that runs out: exit 2', async (t) => {
  const r = await faultline(kv('c50-ok'), '--checker', 'linearizable', '--model', 'kv', '--timeout', '1ms');
  t.is(r.exitCode, 2, r.stderr);
  t.regex(r.stdout, /undecided/);
});

test('--initial-value changes the verdict of a cas-register history', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lin-cli-'));
  const file = join(dir, 'h.jsonl');
  const ev = (index: number, type: string, f: string, value: unknown) =>
    JSON.stringify({ index, type, f, value, process: 0, time: index * 1000, node: null, faultEpoch: null });
  writeFileSync(file, `${[ev(0, 'invoke', 'cas', [0, 1]), ev(1, 'ok', 'cas', [0, 1])].join('\n')}\n`);
  const nil = await faultline(file, '--checker', 'linearizable', '--model', 'cas-register');
  t.is(nil.exitCode, 1, nil.stderr);
  const zero = await faultline(
    file,
    '--checker',
    'linearizable',
    '--model',
    'cas-register',
    '--initial-value',
    '0',
  );
  t.is(zero.exitCode, 0, zero.stderr);
});

fixtureTest('bad input: unknown model, an op the model does not know, a broken file: exit 254', async (t) => {
  const unknownModel = await faultline(
    etcd('005'),
    '--checker',
    'linearizable',
    '--model',
    'btree',
    '--format',
    'porcupine-etcd',
  );
  t.is(unknownModel.exitCode, 254);
  t.regex(unknownModel.stderr, /model/);
  const wrongModel = await faultline(kv('c01-ok'), '--checker', 'linearizable', '--model', 'cas-register');
  t.is(wrongModel.exitCode, 254);
  t.regex(wrongModel.stderr, /has no function "(append|put|get)"/);
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lin-cli-'));
  const broken = join(dir, 'broken.log');
  writeFileSync(broken, 'INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - zz\n');
  const r = await faultline(
    broken,
    '--checker',
    'linearizable',
    '--model',
    'cas-register',
    '--format',
    'porcupine-etcd',
  );
  t.is(r.exitCode, 254);
  t.regex(r.stderr, /broken\.log:2/);
});

test('--nil-read and --failed-cas: Knossos semantics by default, the clients’ meaning on request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lin-cli-'));
  const file = join(dir, 'history.edn');
  // A write of 1, then a read that found nothing (nil), then a cas from 1 that failed.
  writeFileSync(
    file,
    [
      '{:index 0, :type :invoke, :process 0, :f :write, :value 1}',
      '{:index 1, :type :ok, :process 0, :f :write, :value 1}',
      '{:index 2, :type :invoke, :process 1, :f :read, :value nil}',
      '{:index 3, :type :ok, :process 1, :f :read, :value nil}',
    ].join('\n'),
  );
  const lin = ['--checker', 'linearizable', '--model', 'cas-register'];
  const knossos = await faultline(file, ...lin);
  t.is(knossos.exitCode, 0, knossos.stderr);
  t.regex(knossos.stdout, /nil reads constrain nothing, a failed cas did not happen/);
  const value = await faultline(file, ...lin, '--nil-read', 'value');
  t.is(value.exitCode, 1, value.stderr);
  t.regex(value.stdout, /nil reads are values/);

  const casFile = join(dir, 'cas.edn');
  writeFileSync(
    casFile,
    '[{:type :invoke, :process 0, :f :cas, :value [0 1]} {:type :fail, :process 0, :f :cas, :value [0 1]}]',
  );
  const casArgs = ['--checker', 'linearizable', '--model', 'cas-register', '--initial-value', '0'];
  t.is((await faultline(casFile, ...casArgs)).exitCode, 0);
  t.is((await faultline(casFile, ...casArgs, '--failed-cas', 'mismatch')).exitCode, 1);
  const bad = await faultline(file, ...lin, '--nil-read', 'maybe');
  t.not(bad.exitCode, 0);
  t.regex(bad.stderr, /--nil-read/);
});

test("multi-register-txn: Knossos's transactional multi-register from the command line", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-lin-cli-'));
  const file = join(dir, 'txn.edn');
  writeFileSync(
    file,
    [
      '{:type :invoke, :process 0, :f :txn, :value [[:write :x 1] [:write :y 1]]}',
      '{:type :ok, :process 0, :f :txn, :value [[:write :x 1] [:write :y 1]]}',
      '{:type :invoke, :process 1, :f :txn, :value [[:read :x nil] [:read :y nil]]}',
      '{:type :ok, :process 1, :f :txn, :value [[:read :x 1] [:read :y 0]]}',
    ].join('\n'),
  );
  const args = ['--checker', 'linearizable', '--model', 'multi-register-txn', '--initial-value'];
  const torn = await faultline(file, ...args, '{"x": 0, "y": 0}', '--json');
  t.is(torn.exitCode, 1, torn.stderr);
  const anomaly = (
    JSON.parse(torn.stdout) as { results: Record<string, { anomalies: { explanation: string }[] }> }
  ).results.linearizable?.anomalies[0];
  t.regex(anomaly?.explanation ?? '', /txn \[\[read x 1\] \[read y 0\]\]/);
  const notAMap = await faultline(file, ...args, '3');
  t.is(notAMap.exitCode, 254);
  t.regex(notAMap.stderr, /initial value must be a map/);
  const perKey = await faultline(file, '--checker', 'linearizable', '--model', 'multi-register');
  t.is(perKey.exitCode, 254);
  t.regex(perKey.stderr, /multi-register-txn/);
});
