import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import { conformance } from '../helpers/conformance.ts';
import { fixture } from '../helpers/fixtures.ts';

const fixtureTest = conformance('Jepsen reference histories: the check CLI');

const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const env = { FAULTLINE_FROM_SOURCE: '1' };
const jepsen = (f: string) => fixture(`elle/histories/jepsen/${f}`);

async function check(...args: string[]) {
  return execa('node', [bin, 'check', ...args], { reject: false, env });
}

fixtureTest('faultline check: valid exits 0 with one evidence and scope line per checker', async (t) => {
  const r = await check(jepsen('bank.edn'), '--checker', 'bank,stats');
  t.is(r.exitCode, 0, r.stderr);
  t.regex(r.stdout, /^bank: VALID$/m);
  t.regex(r.stdout, /^ {2}evidence: bank: 168 ok reads/m);
  t.regex(r.stdout, /^ {2}scope: /m);
  t.regex(r.stdout, /^stats: VALID$/m);
});

fixtureTest('faultline check: invalid exits 1, --json prints one object', async (t) => {
  const r = await check(jepsen('set_full.json'), '--checker', 'set-full', '--json');
  t.is(r.exitCode, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  t.is(out.valid, false);
  t.is(out.results['set-full'].stats.lostCount, 293);
});

fixtureTest(
  'faultline check: unknown exits 2; --options file feeds checker options; --out gets plots',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'check-'));
    try {
      const opts = join(dir, 'opts.json');
      writeFileSync(opts, JSON.stringify({ counter: { requireReads: true } }));
      const r = await check(
        jepsen('counter.edn'),
        '--checker',
        'counter,perf',
        '--options',
        opts,
        '--out',
        join(dir, 'out'),
      );
      t.is(r.exitCode, 2, r.stdout + r.stderr);
      t.regex(r.stdout, /^counter: UNKNOWN$/m);
      t.deepEqual(readdirSync(join(dir, 'out')).sort(), ['latency.svg', 'rate.svg']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

fixtureTest('faultline check: bad input exits 254 with one line', async (t) => {
  const unknown = await check(jepsen('bank.edn'), '--checker', 'no-such');
  t.is(unknown.exitCode, 254);
  t.regex(unknown.stderr, /unknown checker "no-such"/);
  const dir = mkdtempSync(join(tmpdir(), 'check-'));
  try {
    const opts = join(dir, 'opts.json');
    writeFileSync(opts, JSON.stringify({ bank: { totalAmount: 'lots' } }));
    const badOpt = await check(jepsen('bank.edn'), '--checker', 'bank', '--options', opts);
    t.is(badOpt.exitCode, 254);
    t.regex(badOpt.stderr, /bank: totalAmount: /);
    writeFileSync(opts, '{"bank": ');
    const badJson = await check(jepsen('bank.edn'), '--checker', 'bank', '--options', opts);
    t.is(badJson.exitCode, 254);
    t.regex(badJson.stderr, /opts\.json:1: invalid JSON/);
    const refused = await check(jepsen('bank.edn'), '--checker', 'slo');
    t.is(refused.exitCode, 254);
    t.regex(refused.stderr, /slo: an SLO needs a threshold fixed before the run/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const missing = await check('/nonexistent/history.edn', '--checker', 'set');
  t.is(missing.exitCode, 254);
  const timeout = await check(jepsen('bank.edn'), '--checker', 'bank', '--timeout', 'soon');
  t.is(timeout.exitCode, 254);
  t.regex(timeout.stderr, /--timeout: "soon" is not a duration/);
});

test('faultline check --list names every checker', async (t) => {
  const r = await execa('node', [bin, 'check', '--list'], { reject: false, env });
  t.is(r.exitCode, 0);
  for (const name of ['set-full', 'no-lost-ack', 'fairness', 'elle'])
    t.regex(r.stdout, new RegExp(`^${name} `, 'm'));
});

fixtureTest(
  'faultline check: --model/--timeout reach linearizable, --workload/--consistency-models reach elle',
  async (t) => {
    const lin = await check(
      fixture('porcupine/jepsen/etcd_000.log'),
      '--checker',
      'linearizable',
      '--model',
      'cas-register',
      '--timeout',
      '30s',
    );
    t.is(lin.exitCode, 1, lin.stderr);
    t.regex(lin.stdout, /^linearizable: INVALID$/m);
    const elle = await check(
      fixture('elle/histories/elle/paper-example.edn'),
      '--checker',
      'elle',
      '--workload',
      'list-append',
      '--consistency-models',
      'strict-serializable',
      '--cycle-search-timeout',
      '1s',
    );
    t.is(elle.exitCode, 1, elle.stderr);
    t.regex(elle.stdout, /G-single-item/);
    const noWorkload = await check(fixture('elle/histories/elle/rw-register.json'), '--checker', 'elle');
    t.is(noWorkload.exitCode, 254);
    t.regex(noWorkload.stderr, /elle: workload: /);
  },
);

test('faultline check: a history with no client op is vacuously valid (exit 0) and says so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'check-'));
  try {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const nemesisOnly = join(dir, 'nemesis.jsonl');
    writeFileSync(
      nemesisOnly,
      `${JSON.stringify({ index: 0, type: 'info', process: 'nemesis', f: 'start-partition', value: null, time: 0, node: null, faultEpoch: null })}\n`,
    );
    for (const [file, checker] of [
      [empty, 'linearizable'],
      [nemesisOnly, 'linearizable'],
      [empty, 'set,total-queue,elle'],
    ] as const) {
      const extra = checker === 'linearizable' ? ['--model', 'cas-register'] : ['--workload', 'list-append'];
      const r = await check(file, '--checker', checker, ...extra);
      t.is(r.exitCode, 0, `${file} ${checker}: ${r.stdout}${r.stderr}`);
      t.regex(r.stdout, /vacuously valid: the history has 0 client operations/);
      t.regex(r.stdout, /^VALID: .* \(vacuous: 0 client ops, nothing was checked\)$/m);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
