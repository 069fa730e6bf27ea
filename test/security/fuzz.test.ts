import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import fc from 'fast-check';
import { checkPlan, parsePlanText } from '../../src/app/plan/index.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { CASE_TIMEOUT_MS, type FuzzCase, FuzzRunner } from './fixtures/fuzz-runner.ts';

/**
 * Abuse suite: malformed histories (every format), plans, inventories and ledgers, generated with a fixed
 * seed and bounded counts. Every case must end in a result or a UserError (exit 254) — never another
 * exception (exit 255) — and nothing may be written outside the case's own directory. A few generated
 * cases also go through the CLI, which must exit in {0,1,2,3,254}, with no stack trace. Each in-process
 * case runs on a worker thread with a hang timeout (./fixtures/fuzz-runner.ts): one that never settles
 * fails the test with its input instead of hanging the suite.
 */
const SEED = 1515;
const RUNS = Number(process.env.FAULTLINE_FUZZ_RUNS ?? 150);
const dir = mkdtempSync(join(tmpdir(), 'fl-sec-fuzz-'));
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const PLAN = readFileSync(planPath, 'utf8');

const JSONL_LINE =
  '{"index":0,"type":"invoke","f":"write","value":1,"process":0,"time":0,"node":null,"faultEpoch":null}';
const SEEDS: Record<string, string> = {
  jsonl: `${JSONL_LINE}\n${JSONL_LINE.replace('"index":0', '"index":1').replace('invoke', 'ok')}\n`,
  edn: '{:type :invoke, :f :write, :value 1, :process 0, :index 0}\n{:type :ok, :f :write, :value 1, :process 0, :index 1}\n',
  json: '[{"type":"invoke","f":"write","value":1,"process":0},\n{"type":"ok","f":"write","value":1,"process":0}]\n',
  porcupine:
    'INFO: 2017/11/23 23:09:11 jepsen worker 0 - :invoke :write 1\nINFO: 2017/11/23 23:09:11 jepsen worker 0 - :ok :write 1\n',
};
const NASTY = [
  '\0',
  '\xff',
  '[[[[[[[[[[',
  '{{{{{{{{',
  '#{#{#{',
  '9007199254740993',
  '1e309',
  '-0',
  '"',
  '\\',
  '\n',
  '&a [*a]',
  '*b',
  '{"#bigint":"x"}',
  '../../etc',
  '$(id)',
  '`id`',
  '; rm -rf /',
  '🙂',
  '\ud800',
];

/** A seed text with a generated mutation: splice nasty fragments or random text at random offsets. */
function mutated(seed: string) {
  return fc
    .array(
      fc.tuple(
        fc.nat({ max: seed.length }),
        fc.nat({ max: 8 }),
        fc.oneof(
          fc.constantFrom(...NASTY),
          fc.string({ maxLength: 12 }),
          fc.string({ unit: 'binary', maxLength: 6 }),
        ),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((edits) => {
      let s = seed;
      for (const [at, del, ins] of edits) s = s.slice(0, at) + ins + s.slice(at + del);
      return s;
    });
}

interface Tally {
  cases: number;
  handled: number;
  crashes: string[];
}
const tallies = new Map<string, Tally>();
function tally(cls: string): Tally {
  let t = tallies.get(cls);
  if (!t) {
    t = { cases: 0, handled: 0, crashes: [] };
    tallies.set(cls, t);
  }
  return t;
}

const runner = new FuzzRunner();
test.after.always(() => runner.close());

/**
 * Runs one case on the worker: a normal return or a one-line UserError is handled; any other exception,
 * or no answer within the hang timeout, is a crash reported with the input.
 */
async function classify(cls: string, input: string, c: FuzzCase): Promise<void> {
  const t = tally(cls);
  t.cases++;
  const r = await runner.run(c);
  if (r.outcome === 'ok' || r.outcome === 'input-error') t.handled++;
  else t.crashes.push(`${r.outcome}: ${r.message} on ${JSON.stringify(input).slice(0, 200)}`);
}

let n = 0;
function file(ext: string, text: string): string {
  const p = join(dir, `case-${n++}.${ext}`);
  writeFileSync(p, text);
  return p;
}

for (const [format, seed] of Object.entries(SEEDS)) {
  test(`histories (${format}): every mutation reads or is a one-line input error`, async (t) => {
    const ext = format === 'porcupine' ? 'log' : format;
    await fc.assert(
      fc.asyncProperty(mutated(seed), async (text) => {
        await classify(`history ${format}`, text, { kind: 'history', input: file(ext, text) });
      }),
      { seed: SEED, numRuns: RUNS },
    );
    const r = tally(`history ${format}`);
    t.deepEqual(r.crashes, []);
    t.log(`history ${format}: ${r.cases} cases, ${r.handled} handled, ${r.crashes.length} crashes`);
  });
}

test('plans (Markdown, YAML, JSON): every mutation loads or is a one-line input error', async (t) => {
  const yamlPlan = 'slug: p\nscenarios: []\nclaims: []\n';
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        mutated(PLAN).map((s) => ['md', s] as const),
        mutated(yamlPlan).map((s) => ['yaml', s] as const),
        mutated(JSON.stringify({ slug: 'p', scenarios: [], claims: [] })).map((s) => ['json', s] as const),
      ),
      async ([ext, text]) => {
        await classify('plan', text, { kind: 'plan', input: text, name: `p.${ext}` });
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
  const r = tally('plan');
  t.deepEqual(r.crashes, []);
  t.log(`plans: ${r.cases} cases, ${r.handled} handled`);
});

test('inventories: every mutation loads or is a one-line input error', async (t) => {
  const inv =
    'hostKeyCheck: strict\ndefaults: { user: root, port: 22 }\nnodes:\n  n1: 127.0.0.1\n  n2: { host: 127.0.0.2, labels: { cluster: sec-a } }\n';
  await fc.assert(
    fc.asyncProperty(mutated(inv), async (text) => {
      await classify('inventory', text, { kind: 'inventory', input: text, name: 'inv.yaml' });
    }),
    { seed: SEED, numRuns: RUNS },
  );
  const r = tally('inventory');
  t.deepEqual(r.crashes, []);
  t.log(`inventories: ${r.cases} cases, ${r.handled} handled`);
});

test('ledgers: every mutation reads or is a one-line input error', async (t) => {
  const ledger =
    '{"event":"inject","id":"f1","kind":"partition","at":"2026-01-01T00:00:00Z","heal":{"kind":"partition"}}\n{"event":"healed","id":"f1","at":"2026-01-01T00:00:01Z"}\n';
  await fc.assert(
    fc.asyncProperty(mutated(ledger), async (text) => {
      await classify('ledger', text, { kind: 'ledger', input: file('jsonl', text) });
    }),
    { seed: SEED, numRuns: RUNS },
  );
  const r = tally('ledger');
  t.deepEqual(r.crashes, []);
  t.log(`ledgers: ${r.cases} cases, ${r.handled} handled`);
});

const ALLOWED_EXITS = [0, 1, 2, 3, 254];

test('CLI flags and files: exit in {0,1,2,3,254}, no stack trace, nothing written outside the case directory', async (t) => {
  const before = new Set(readdirSync(tmpdir()));
  const cases = fc.sample(
    fc.oneof(
      fc.tuple(
        fc.constantFrom('check'),
        fc.constantFrom('--checker', '--model', '--anomalies', '--format'),
        fc.constantFrom(...NASTY, 'G9', '-1', ''),
      ),
      fc.tuple(
        fc.constantFrom('history'),
        fc.constantFrom('stats', 'convert'),
        fc.constantFrom(...NASTY, '/dev/null'),
      ),
      fc.tuple(fc.constantFrom('plan'), fc.constantFrom('check'), fc.constantFrom(...NASTY)),
      fc.tuple(fc.constantFrom('doctor'), fc.constantFrom('--inventory'), fc.constantFrom(...NASTY)),
    ),
    { seed: SEED, numRuns: Number(process.env.FAULTLINE_FUZZ_CLI_RUNS ?? 8) },
  );
  const history = file('jsonl', SEEDS.jsonl as string);
  for (const [cmd, a, b] of cases) {
    const args =
      cmd === 'check'
        ? ['check', history, a, b]
        : cmd === 'history'
          ? a === 'stats'
            ? ['history', 'stats', file('jsonl', b)]
            : ['history', 'convert', history, b]
          : cmd === 'plan'
            ? ['plan', 'check', file('md', PLAN.replace('etcd', b))]
            : ['doctor', '--inventory', file('yaml', `nodes:\n  n1: "${b}"\n`)];
    const r = await execa('node', [bin, ...args.map((x) => x.replace(/\0/g, ''))], {
      reject: false,
      cwd: dir,
      timeout: 120_000,
      env: { FAULTLINE_FROM_SOURCE: '1' },
    });
    const c = tally('CLI flags');
    c.cases++;
    if (ALLOWED_EXITS.includes(r.exitCode ?? -1) && !/\n\s+at /.test(r.stderr)) c.handled++;
    else c.crashes.push(`${args.join(' ')} → ${r.exitCode} ${r.stderr.slice(0, 300)}`);
  }
  const after = readdirSync(tmpdir()).filter(
    (f) => !before.has(f) && !f.startsWith('fl-') && !f.startsWith('faultline-'),
  );
  const c = tally('CLI flags');
  t.deepEqual(c.crashes, []);
  t.log(`CLI: ${c.cases} cases, ${c.handled} handled; new entries in tmpdir: ${after.join(', ') || 'none'}`);
  t.false(existsInCwdOf(dir, '/dev/null'));
});

function existsInCwdOf(d: string, name: string): boolean {
  return readdirSync(d).includes(name);
}

test('regression: plan packet params cannot reach a shell (the binding refuses non-numeric values)', (t) => {
  // Needs the typed nemesis parameters; the builder must never paste plan text into tc/iptables.
  const text = PLAN.replace(
    '  - kind: partition\n    topology: asymmetric',
    "  - kind: packet\n    behaviour: delay\n    params: { timeMs: '1; touch /tmp/fl-sec-pwned;', percent: '$(id)' }",
  );
  let problems: string[];
  try {
    problems = checkPlan(parsePlanText(text, 'p.md'))
      .filter((p) => p.severity === 'error')
      .map((p) => p.reason);
  } catch (err) {
    t.true(err instanceof UserError, String(err));
    return;
  }
  t.true(
    problems.some((p) => /timeMs|percent|number/i.test(p)),
    `packet params with shell text must be a plan error; got: ${problems.join(' | ')}`,
  );
});

test('a fuzz case that never settles fails with its input, and the next case still runs', async (t) => {
  const quick = new FuzzRunner(3000);
  t.teardown(() => quick.close());
  for (const kind of ['never-settles', 'spin'] as const) {
    await quick.warm();
    const started = Date.now();
    const r = await quick.run({ kind, input: `the ${kind} input` });
    t.is(r.outcome, 'hang', kind);
    t.true(Date.now() - started < 30_000, `${kind}: the timeout ended it`);
    const c = tally(`hang ${kind}`);
    c.cases++;
    if (r.outcome === 'hang') c.crashes.push(`${r.outcome}: ${r.message} on the ${kind} input`);
    t.regex(c.crashes[0] ?? '', new RegExp(`hang: did not settle within 3000 ms on the ${kind} input`));
    await quick.warm();
    const next = await quick.run({ kind: 'inventory', input: 'nodes:\n  n1: 127.0.0.1\n', name: 'inv.yaml' });
    t.is(next.outcome, 'ok', JSON.stringify(next));
  }
  t.true(CASE_TIMEOUT_MS >= 1000, 'the suite runs with a real per-case limit');
});
