import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { execa } from 'execa';
import fc from 'fast-check';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { parsePlanText } from '../../src/app/plan/load.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { FUZZ_CLASSES, fuzzClass, makeSandbox } from './fixtures/fuzz-classes.ts';
import { CASE_TIMEOUT_MS, FuzzRunner } from './fixtures/fuzz-runner.ts';

/**
 * Abuse suite: every input class faultline reads from strangers (histories in every format and their
 * EDN conversion, plans, inventories, ledgers, schedules, session stores as `sessions` and `serve`
 * read them, CLI names), generated with a fixed seed, FAULTLINE_FUZZ_RUNS per class (default 1,000;
 * ./fixtures/fuzz-classes.ts). Every case must end in a result or a one-line input error naming its
 * file (exit 254), never another exception (exit 255); nothing may change outside the case directory
 * and no command an input names may run (a canary). A few generated cases also go through the CLI,
 * which must exit in {0,1,2,3,254}, with no stack trace. Each in-process case runs on a worker thread
 * with a hang timeout (./fixtures/fuzz-runner.ts). `npm run fuzz` runs the same classes for longer.
 */
const SEED = 1515;
const RUNS = Number(process.env.FAULTLINE_FUZZ_RUNS ?? 1000);
const dir = mkdtempSync(join(tmpdir(), 'fl-sec-fuzz-'));
const bin = new URL('../../bin/faultline.js', import.meta.url).pathname;
const planPath = new URL('../../plans/etcd-register.md', import.meta.url).pathname;
const PLAN = readFileSync(planPath, 'utf8');
const JSONL_LINE =
  '{"index":0,"type":"invoke","f":"write","value":1,"process":0,"time":0,"node":null,"faultEpoch":null}';
const JSONL = `${JSONL_LINE}\n${JSONL_LINE.replace('"index":0', '"index":1').replace('invoke', 'ok')}\n`;
const NASTY = [
  '\0',
  '\xff',
  '[[[[',
  '9007199254740993',
  '1e400',
  '"',
  '\\',
  '\n',
  '../../etc',
  '$(id)',
  '`id`',
  '; rm -rf /',
  '🙂',
  '\ud800',
];

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

// Two workers (the classes alternate between them), one case at a time on each.
const runners = [new FuzzRunner(), new FuzzRunner()];
test.after.always(() => Promise.all(runners.map((r) => r.close())));

let n = 0;
function file(ext: string, text: string): string {
  const p = join(dir, `case-${n++}.${ext}`);
  writeFileSync(p, text);
  return p;
}

test('every class mutates an input that reads cleanly, so the mutations reach past the first check', async (t) => {
  const sandbox = join(dir, 'seeds');
  const { caseDir } = makeSandbox(sandbox);
  const outcomes = await runners[0]?.runBatch(FUZZ_CLASSES.map((c, k) => c.prepare(c.seed, caseDir, k)));
  for (const [k, cls] of FUZZ_CLASSES.entries()) t.deepEqual(outcomes?.[k], { outcome: 'ok' }, cls.name);
});

for (const [k, cls] of FUZZ_CLASSES.entries()) {
  test(`${cls.name}: ${RUNS} generated inputs, each a result or a one-line error naming the file; no write outside, no command run`, async (t) => {
    const sandbox = join(dir, `class-${k}`);
    mkdirSync(sandbox);
    const started = Date.now();
    const r = await fuzzClass(runners[k % 2] as FuzzRunner, cls, { count: RUNS, seed: SEED, sandbox });
    t.is(r.cases, RUNS);
    t.deepEqual(r.crashes, []);
    t.log(
      `${cls.name}: ${r.cases} cases, ${r.handled} handled, ${r.crashes.length} crashes, ${Date.now() - started} ms`,
    );
  });
}

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
  const history = file('jsonl', JSONL);
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
