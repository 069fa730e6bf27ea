import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { simulate, toEvents } from '../../checkers/elle/simulate.ts';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('Elle reference histories: the elle CLI');

/** `faultline check HISTORY --checker elle …`: exit codes 0 valid, 1 invalid, 2 unknown, 254 bad input. */
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;

function faultline(...args: string[]) {
  return execa('node', [bin, 'check', ...args], { reject: false, env: { FAULTLINE_FROM_SOURCE: '1' } });
}

function elleResult(stdout: string): Record<string, unknown> {
  const out = JSON.parse(stdout) as { results: Record<string, Record<string, unknown>> };
  return out.results.elle!;
}

fixtureTest('invalid EDN history: exit 1, anomaly types and not in the JSON result', async (t) => {
  const r = await faultline(
    fixture('elle/histories/elle/paper-example.edn'),
    '--checker',
    'elle',
    '--workload',
    'list-append',
    '--json',
  );
  t.is(r.exitCode, 1, r.stderr);
  const e = elleResult(r.stdout);
  t.deepEqual(e.anomalyTypes, ['G-single-item']);
  t.deepEqual(e.not, ['consistent-view', 'repeatable-read']);
});

fixtureTest('valid elle-cli JSON history: exit 0', async (t) => {
  const r = await faultline(
    fixture('elle/histories/elle/rw-register.json'),
    '--checker',
    'elle',
    '--workload',
    'rw-register',
  );
  t.is(r.exitCode, 0, r.stderr);
  t.regex(r.stdout, /elle: VALID/);
  t.regex(r.stdout, /evidence: elle rw-register: 3 transactions/);
});

fixtureTest(
  '--consistency-models decides: G2-item is allowed by snapshot isolation, not by serializable',
  async (t) => {
    const h = fixture('elle/histories/elle/list-append-gh-30.edn');
    const si = await faultline(
      h,
      '--checker',
      'elle',
      '--workload',
      'list-append',
      '--consistency-models',
      'snapshot-isolation',
    );
    t.is(si.exitCode, 0, si.stdout + si.stderr);
    const ser = await faultline(
      h,
      '--checker',
      'elle',
      '--workload',
      'list-append',
      '--consistency-models',
      'serializable',
    );
    t.is(ser.exitCode, 1);
    t.regex(ser.stdout, /G2-item/);
  },
);

test('faultline JSONL history from the SI simulator: exit 1 with G2-item; --out writes explanations and SVGs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'elle-cli-'));
  const file = join(dir, 'history.jsonl');
  const events = toEvents(
    simulate({ isolation: 'snapshot-isolation', txns: 200, concurrency: 5, seed: 7, activeKeys: 4 }),
  );
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const out = join(dir, 'out');
  const r = await faultline(
    file,
    '--checker',
    'elle',
    '--workload',
    'list-append',
    '--out',
    out,
    '--cycle-search-timeout',
    '2s',
    '--json',
  );
  t.is(r.exitCode, 1, r.stderr);
  const e = elleResult(r.stdout);
  t.true((e.anomalyTypes as string[]).includes('G2-item'));
  const text = readFileSync(join(out, 'elle', 'anomalies.txt'), 'utf8');
  t.regex(text, /^G2-item #0\nLet:/m);
  t.regex(text, /a contradiction!/);
  t.true(readdirSync(join(out, 'elle', 'G2-item')).some((f) => f.endsWith('.svg')));
  t.regex(readFileSync(join(out, 'elle', 'index.html'), 'utf8'), /<svg /);
});

test('no dependencies inferred: exit 2 (unknown)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'elle-cli-'));
  const file = join(dir, 'history.jsonl');
  const ev = (index: number, type: string, value: unknown) =>
    JSON.stringify({ index, type, f: 'txn', value, process: 0, time: index, node: null, faultEpoch: null });
  writeFileSync(file, `${ev(0, 'invoke', [['r', 'x', null]])}\n${ev(1, 'ok', [['r', 'x', []]])}\n`);
  const r = await faultline(file, '--checker', 'elle', '--workload', 'list-append');
  t.is(r.exitCode, 2, r.stdout + r.stderr);
  t.regex(r.stdout, /empty-transaction-graph/);
});

fixtureTest('bad input exits 254 with a one-line message', async (t) => {
  const h = fixture('elle/histories/elle/paper-example.edn');
  const badWorkload = await faultline(h, '--checker', 'elle', '--workload', 'bank');
  t.is(badWorkload.exitCode, 254);
  t.regex(badWorkload.stderr, /workload/);
  const badModel = await faultline(
    h,
    '--checker',
    'elle',
    '--workload',
    'list-append',
    '--consistency-models',
    'nonsense',
  );
  t.is(badModel.exitCode, 254);
  t.regex(badModel.stderr, /consistencyModels/);
});
