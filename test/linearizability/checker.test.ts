import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { checkOperations } from '../../checkers/linearizability/check.ts';
import { generateCasRegisterHistory } from '../../checkers/linearizability/generate.ts';
import { renderHtml } from '../../checkers/linearizability/html.ts';
import {
  linearizabilityChecker,
  linearizabilityOptionsSchema,
} from '../../checkers/linearizability/index.ts';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { UserError } from '../../src/core/util/errors.ts';
import { conformance } from '../helpers/conformance.ts';
import { history } from './helpers.ts';
import { loadFixtureOps, porcupineFixtures } from './porcupine-fixtures.ts';

const fixtureTest = conformance('Porcupine histories: the linearizability checker');

const fixture = (path: string) => {
  const f = porcupineFixtures().find((x) => x.path === path);
  if (!f) throw new Error(path);
  return f;
};

fixtureTest('valid history: evidence line, scope, stats', async (t) => {
  const ops = await loadFixtureOps(fixture('kv/c10-ok.txt'));
  const r = await linearizabilityChecker.check(ops, { model: 'kv' });
  t.is(r.checker, 'linearizable');
  t.is(r.valid, true);
  t.regex(r.evidence, /^linearizability \(kv\): 337 ops over 10 keys, 0 anomalies/);
  t.regex(r.scope, /independently/);
  t.is(r.stats.opsConsumed, 337);
  t.is(r.stats.partitions, 10);
  t.is(r.stats.partitionsChecked, 10);
  t.deepEqual(r.anomalies, []);
});

fixtureTest(
  'invalid history: failing key, longest prefix, blocked op and the states it could have seen',
  async (t) => {
    const ops = await loadFixtureOps(fixture('kv/c10-bad.txt'));
    const r = await linearizabilityChecker.check(ops, { model: 'kv' });
    t.is(r.valid, false);
    t.true(r.anomalies.length >= 1);
    const a = r.anomalies[0];
    if (!a) throw new Error('no anomaly');
    t.is(a.type, 'nonlinearizable');
    t.is(typeof a.key, 'string');
    t.regex(a.explanation, /^key "[^"]+": .+ \(op \d+\) cannot be linearized: /);
    t.regex(a.explanation, /longest linearizable prefix \(\d+ of \d+ ops\)/);
    const first = a.firstUnlinearizable as { op: number; description: string };
    t.is(a.ops?.[0], first.op);
    t.true(Array.isArray(a.statesSeen) && (a.statesSeen as string[]).length > 0);
    t.true((a.longestPrefixLength as number) > 0);
    t.deepEqual(r.stats.failingPartitions, [a.key]);
    t.regex(r.evidence, /not linearizable: key "/);
  },
);

test('the blocked op really cannot follow the reported prefix', async (t) => {
  // write 1; write 2 completes; then a read of 1: the read is what cannot be linearized.
  const ops = history([
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [0, 'invoke', 'write', 2],
    [0, 'ok', 'write', 2],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', 1],
  ]);
  const r = await linearizabilityChecker.check(ops, { model: 'register' });
  t.is(r.valid, false);
  const a = r.anomalies[0];
  // Ops are named by the event index of their invocation: the read (event 4), then write 2 (event 2).
  t.deepEqual(a?.ops, [4, 2]);
  t.is(
    a?.explanation,
    'read → 1 (op 4) cannot be linearized: it must come right after the longest linearizable prefix (2 of 3 ops), where the register can only hold 2, last set by write(2) (op 2)',
  );
  t.deepEqual(a?.statesSeen, ['2']);
  t.is(a?.longestPrefixLength, 2);
});

fixtureTest('a budget that runs out yields unknown and names the undecided partitions', async (t) => {
  const ops = await loadFixtureOps(fixture('kv/c50-ok.txt'));
  const r = await linearizabilityChecker.check(ops, { model: 'kv', timeoutMs: 1 });
  t.is(r.valid, 'unknown');
  t.true((r.stats.undecidedPartitions as unknown[]).length > 0);
  t.regex(r.evidence, /undecided \(the 1 ms budget ran out\): key "/);
});

test('an abort signal stops the search with unknown', async (t) => {
  // A hard 10k-op history (20 processes, 10 % crashed writes, unique values: no twins to order), which
  // takes a few hundred ms; aborting after 5 ms must leave it undecided.
  const ops = pairEvents(
    generateCasRegisterHistory({ ops: 10_000, processes: 20, infoRate: 0.1, values: 0, seed: 7 }),
  ).ops;
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 5);
  const r = await linearizabilityChecker.check(
    ops,
    { model: 'cas-register', timeoutMs: 0 },
    { signal: controller.signal },
  );
  t.is(r.valid, 'unknown');
  t.regex(r.evidence, /the check was cancelled/);
});

/** The checker's promise (its contract allows a plain result; this one is always async). */
const run = async (...args: Parameters<typeof linearizabilityChecker.check>) =>
  linearizabilityChecker.check(...args);

test('bad options and bad ops are UserErrors (exit 254)', async (t) => {
  await t.throwsAsync(run([], { model: 'nope' }), {
    instanceOf: UserError,
    message: /model: unknown model/,
  });
  await t.throwsAsync(run([], { model: 'kv', timeoutMs: -1 } as never), {
    instanceOf: UserError,
  });
  await t.throwsAsync(run([], { model: 'counter', initialValue: 'x' }), {
    instanceOf: UserError,
    message: /initialValue/,
  });
  const ops = history([
    [0, 'invoke', 'frobnicate', 1],
    [0, 'ok', 'frobnicate', 1],
  ]);
  await t.throwsAsync(run(ops, { model: 'cas-register' }), {
    instanceOf: UserError,
    message: /op 0 \(process 0, f "frobnicate"\)/,
  });
  t.false(linearizabilityOptionsSchema.safeParse({ model: 'kv', extra: 1 }).success);
});

fixtureTest('worker threads give the same verdicts as the inline engine', async (t) => {
  for (const path of ['kv/c10-ok.txt', 'kv/c10-bad.txt', 'kv/c50-bad.txt']) {
    const f = fixture(path);
    const model = createModel('kv');
    if (!model) throw new Error('kv');
    const outcome = await checkOperations(model, await loadFixtureOps(f), {
      workers: 2,
      parallelThreshold: 0,
    });
    t.is(outcome.workers, 2, path);
    t.is(outcome.valid, f.linearizable, path);
  }
});

fixtureTest('the failing partition reported is the same inline and on any number of workers', async (t) => {
  const f = fixture('kv/c50-bad.txt');
  const model = createModel('kv');
  if (!model) throw new Error('kv');
  const ops = await loadFixtureOps(f);
  const firstFailing = (o: Awaited<ReturnType<typeof checkOperations>>) =>
    o.failing.map((i) => o.partitions[i]?.key)[0];
  const inline = await checkOperations(model, ops, {});
  t.is(inline.valid, false);
  const expected = firstFailing(inline);
  t.truthy(expected);
  for (const workers of [2, 3]) {
    for (let run = 0; run < 2; run++) {
      const o = await checkOperations(model, ops, { workers, parallelThreshold: 0 });
      t.is(firstFailing(o), expected, `workers=${workers} run=${run}`);
    }
  }
});

fixtureTest('HTML for kv/c50-bad is produced within its own budget and marks the failing op', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-lin-'));
  try {
    const html = join(dir, 'out.html');
    const ops = await loadFixtureOps(fixture('kv/c50-bad.txt'));
    const started = Date.now();
    const r = await linearizabilityChecker.check(ops, { model: 'kv', htmlPath: html, htmlBudgetMs: 1000 });
    t.true(Date.now() - started < 20_000);
    t.is(r.valid, false);
    t.deepEqual(r.artifacts, [html]);
    const text = await readFile(html, 'utf8');
    t.true(text.startsWith('<!doctype html>'));
    t.false(
      /<script[^>]+src=|<link[^>]+href=|<img|url\(|fetch\(|import\(/.test(text),
      'no external resources',
    );
    t.is(text.match(/https?:\/\/[^'"]+/g), null, 'no URL at all');
    const data = JSON.parse(
      /<script type="application\/json" id="data">([\s\S]*?)<\/script>/.exec(text)?.[1] ?? '{}',
    ) as {
      partitions: {
        name: string;
        status: string;
        explanation: string;
        data: { focus: number; c: number[]; n: number[] };
      }[];
    };
    t.is(data.partitions.length, 10);
    const first = data.partitions[0];
    t.is(first?.status, 'illegal', 'failing partitions come first');
    // The page opens on the op that cannot be linearized, numbered as the anomaly numbers it.
    const focus = first?.data.focus ?? -1;
    t.true(focus >= 0);
    t.is(first?.data.n[focus], (r.anomalies[0]?.ops ?? [])[0]);
    t.is(first?.data.c[focus], 1, 'drawn as the blocked op');
    t.true((first?.data.c.filter((c) => c === 0).length ?? 0) > 0, 'a linearized prefix is drawn');
    t.regex(first?.explanation ?? '', /cannot be linearized/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

fixtureTest('HTML of a valid single register history shows the full linearization', async (t) => {
  const model = createModel('cas-register');
  if (!model) throw new Error('cas-register');
  const outcome = await checkOperations(model, await loadFixtureOps(fixture('jepsen/etcd_005.log')));
  const text = renderHtml(model, outcome, { budgetMs: 0 });
  const data = JSON.parse(/id="data">([\s\S]*?)<\/script>/.exec(text)?.[1] ?? '{}') as {
    partitions: { status: string; data: { c: number[]; focus: number } }[];
  };
  t.is(data.partitions[0]?.status, 'ok');
  const scripts = [...text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
  t.is(scripts.length, 2);
  t.true((scripts[0] ?? '').length > 1000);
  for (const s of scripts) t.notThrows(() => new Function(s), 'the drawing scripts parse');
  const classes = data.partitions[0]?.data.c ?? [];
  t.true(classes.length > 0);
  t.true(
    classes.filter((c) => c === 0 || c === 3).length >= classes.length - 20,
    'completed ops are all linearized',
  );
  t.is(data.partitions[0]?.data.focus, -1, 'nothing to open at');
});
