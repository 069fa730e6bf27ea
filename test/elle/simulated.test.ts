import test from 'ava';
import { elleChecker, elleHistoryBuilder, runElleOn } from '../../checkers/elle/index.ts';
import {
  asRegisterHistory,
  type SimIsolation,
  simulate,
  simulateStream,
} from '../../checkers/elle/simulate.ts';
import type { Operation } from '../../src/core/history/operation.ts';

/**
 * Histories from simulated databases with known isolation, many seeds each (random interleavings,
 * concurrency 3–12, 2% of txns end info): the checker must find exactly what each level permits.
 */
const SEEDS = Array.from({ length: 30 }, (_, i) => i + 1);

function run(isolation: SimIsolation, seed: number) {
  const ops = simulate({
    isolation,
    txns: 300,
    concurrency: 3 + (seed % 10),
    seed,
    activeKeys: 5,
    maxWritesPerKey: 64,
    infoRate: 0.02,
  });
  return elleChecker.check(ops, { workload: 'list-append' });
}

test('serializable (strictly): no anomaly at all, for every seed', (t) => {
  for (const seed of SEEDS) {
    const r = run('serializable', seed);
    t.is(r.valid, true, `seed ${seed}: ${r.evidence}`);
    t.deepEqual(r.anomalyTypes, [], `seed ${seed}`);
  }
});

test('snapshot isolation: G2-item, but never G-single or G-nonadjacent, for every seed', (t) => {
  for (const seed of SEEDS) {
    const r = run('snapshot-isolation', seed);
    t.is(r.valid, false, `seed ${seed}`);
    t.true(r.anomalyTypes.includes('G2-item'), `seed ${seed}: ${r.anomalyTypes}`);
    const forbidden = r.anomalyTypes.filter((a) =>
      /^G-single|^G-nonadjacent|^G0|^G1|internal|lost-update/.test(a),
    );
    t.deepEqual(forbidden, [], `seed ${seed}`);
    t.true(r.not.includes('repeatable-read'));
    t.false([...r.not, ...r.alsoNot].includes('snapshot-isolation'), `seed ${seed}`);
  }
});

test('read committed: G-single, and never a G0/G1 anomaly, for every seed', (t) => {
  for (const seed of SEEDS) {
    const r = run('read-committed', seed);
    t.is(r.valid, false, `seed ${seed}`);
    t.true(r.anomalyTypes.includes('G-single-item'), `seed ${seed}: ${r.anomalyTypes}`);
    t.deepEqual(
      r.anomalyTypes.filter((a) => /^G0|^G1/.test(a)),
      [],
      `seed ${seed}`,
    );
    t.false([...r.not, ...r.alsoNot].includes('read-committed'), `seed ${seed}`);
  }
});

test('rw-register: the strictly serializable simulator is valid even assuming sequential and linearizable keys', (t) => {
  for (const seed of SEEDS.slice(0, 10)) {
    const ops = asRegisterHistory(
      simulate({
        isolation: 'serializable',
        txns: 300,
        concurrency: 3 + (seed % 10),
        seed,
        activeKeys: 5,
        infoRate: 0.02,
      }),
    );
    const r = elleChecker.check(ops, {
      workload: 'rw-register',
      sequentialKeys: true,
      linearizableKeys: true,
      wfrKeys: true,
    });
    t.is(r.valid, true, `seed ${seed}: ${r.anomalyTypes}`);
    t.true(Number(r.stats.dependencyEdges) > 0);
  }
});

test('rw-register: read committed (per-key linearizable) shows G-single or lost-update, for every seed', (t) => {
  for (const seed of SEEDS.slice(0, 10)) {
    const ops = asRegisterHistory(
      simulate({ isolation: 'read-committed', txns: 400, concurrency: 3 + (seed % 10), seed, activeKeys: 3 }),
    );
    const r = elleChecker.check(ops, { workload: 'rw-register', linearizableKeys: true });
    t.is(r.valid, false, `seed ${seed}`);
    t.true(
      r.anomalyTypes.some((a) => a.startsWith('G-single') || a === 'lost-update'),
      `seed ${seed}: ${r.anomalyTypes}`,
    );
  }
});

/** A result without its timings, for comparing two checks of the same history. */
function untimed(r: ReturnType<typeof elleChecker.check>) {
  const { seconds: _s, phaseSeconds: _p, ...stats } = r.stats;
  return { ...r, stats };
}

test('streaming: ops fed as they complete (out of invocation order) give the same result as the op array', async (t) => {
  for (const isolation of ['snapshot-isolation', 'read-committed'] as const) {
    const o = { isolation, txns: 400, concurrency: 7, seed: 5, activeKeys: 5, infoRate: 0.05 };
    const options = { workload: 'list-append' as const, consistencyModels: ['strict-serializable'] };
    const sink = elleChecker.stream(options);
    const completed: Operation[] = [];
    simulateStream(o, (op) => {
      completed.push(op);
      sink.add(op);
    });
    t.true(
      completed.some((op, i) => i > 0 && op.id < completed[i - 1]!.id),
      'the stream really arrives out of invocation order',
    );
    const streamed = await sink.finish();
    const whole = elleChecker.check(simulate(o), options);
    t.is(whole.valid, false, isolation);
    t.truthy(whole.stats.minimalHistory, 'the FAIL is shrunk');
    t.deepEqual(untimed(streamed), untimed(whole), isolation);
  }
});

test('streaming with a replay: nothing held, the FAIL shrunk from the ops fed again, as the op array shrinks it', async (t) => {
  const o = { isolation: 'snapshot-isolation' as const, txns: 400, concurrency: 7, seed: 5, activeKeys: 5 };
  const options = { workload: 'list-append' as const, consistencyModels: ['strict-serializable'] };
  let replays = 0;
  const feed = async (add: (op: Operation) => void) => {
    let n = 0;
    simulateStream(o, (op) => {
      n++;
      add(op);
    });
    return n;
  };
  const sink = await elleChecker.stream(options, {
    replay: (add) => {
      replays++;
      return feed(add);
    },
  });
  await feed((op) => sink.add(op));
  const streamed = await sink.finish();
  const whole = elleChecker.check(simulate(o), options);
  t.is(replays, 1, 'the FAIL asked for the ops once');
  t.truthy(whole.stats.minimalHistory);
  t.deepEqual(untimed(streamed), untimed(whole));

  // A valid history never asks for them again.
  const valid = { ...o, isolation: 'serializable' as const };
  replays = 0;
  const validSink = await elleChecker.stream(options, {
    replay: async () => {
      replays++;
      return 0;
    },
  });
  simulateStream(valid, (op) => validSink.add(op));
  t.is((await validSink.finish()).valid, true);
  t.is(replays, 0);
});

test('streaming with a replay that feeds other ops: the FAIL stands, not shrunk, and says why', async (t) => {
  const o = { isolation: 'snapshot-isolation' as const, txns: 400, concurrency: 7, seed: 5, activeKeys: 5 };
  const options = { workload: 'list-append' as const, consistencyModels: ['strict-serializable'] };
  const sink = await elleChecker.stream(options, {
    replay: async (add) => {
      const ops = simulate(o).slice(0, 10);
      for (const op of ops) add(op);
      return ops.length;
    },
  });
  simulateStream(o, (op) => sink.add(op));
  const r = await sink.finish();
  t.is(r.valid, false);
  t.is(r.stats.minimalHistory, undefined);
  t.regex(r.evidence, /no minimal failing sub-history \(the history read again had 10 ops, not \d+\)/);
  const failing = await elleChecker.stream(options, {
    replay: async () => {
      throw new Error('gone');
    },
  });
  simulateStream(o, (op) => failing.add(op));
  const f = await failing.finish();
  t.is(f.valid, false);
  t.regex(f.evidence, /reading the history again failed: gone/);
});

test('streaming: a malformed micro-op anywhere in the stream stops the analysis, every op still counted', (t) => {
  const options = { workload: 'list-append' as const };
  const builder = elleHistoryBuilder(options);
  const ops = simulate({ isolation: 'serializable', txns: 50, concurrency: 3, seed: 9 });
  ops[10] = { ...ops[10]!, output: [['inc', 'x', 1]], type: 'ok' };
  for (const op of [...ops].reverse()) builder.add(op);
  const r = runElleOn(builder, options);
  t.is(r.valid, 'unknown');
  t.deepEqual(r.anomalyTypes, ['unexpected-txn-micro-op-types']);
  t.is(r.stats.opsConsumed, ops.length);
});
