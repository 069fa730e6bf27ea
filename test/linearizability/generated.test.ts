import test from 'ava';
import fc from 'fast-check';
import { checkOperations } from '../../checkers/linearizability/check.ts';
import { type GeneratedInfo, generateCasRegisterHistory } from '../../checkers/linearizability/generate.ts';
import { createModel } from '../../checkers/linearizability/models/index.ts';
import { prepareHistory } from '../../checkers/linearizability/prepare.ts';
import { pairEvents } from '../../src/core/history/pair.ts';

/**
 * Generated cas-register histories (checkers/linearizability/generate.ts): linearizable by
 * construction, and not linearizable once a stale read is injected. The 10k-op, 20-process, 10%-info
 * cases are timed by `npm run bench:linearizability`; here the verdicts are checked on many seeds.
 */
const genArb = fc.record({
  ops: fc.integer({ min: 20, max: 600 }),
  processes: fc.integer({ min: 1, max: 20 }),
  infoRate: fc.constantFrom(0, 0.1, 0.3),
  values: fc.constantFrom(0, 3, 5),
  seed: fc.integer({ min: 1, max: 1_000_000 }),
});

async function verdict(o: Parameters<typeof generateCasRegisterHistory>[0]): Promise<unknown> {
  const model = createModel('cas-register');
  if (!model) throw new Error('cas-register');
  const ops = pairEvents(generateCasRegisterHistory(o)).ops;
  return (await checkOperations(model, ops, { timeoutMs: 0 })).valid;
}

test('generated histories are linearizable, and the model never refutes them', async (t) => {
  const model = createModel('cas-register');
  await fc.assert(
    fc.asyncProperty(genArb, async (o) => {
      const ops = pairEvents(generateCasRegisterHistory(o)).ops;
      const part = prepareHistory(model!, ops).partitions[0];
      if (part && model?.refute?.(part.ops)) return false;
      return (await verdict(o)) === true;
    }),
    { numRuns: 60, seed: 22 },
  );
  t.pass();
});

test('generated histories with one injected stale read are not linearizable', async (t) => {
  await fc.assert(
    fc.asyncProperty(genArb, async (o) => {
      const info: GeneratedInfo = {};
      generateCasRegisterHistory({ ...o, values: 0, staleRead: true }, info);
      // The injection needs two real-time-ordered ok writes and a later read in the second half.
      fc.pre(info.staleReadInvoke !== undefined);
      return (await verdict({ ...o, values: 0, staleRead: true })) === false;
    }),
    { numRuns: 60, seed: 22 },
  );
  t.pass();
});

test('a 10k-op, 20-process history with 10% indeterminate writes is decided both ways', async (t) => {
  const base = { ops: 10_000, processes: 20, infoRate: 0.1, seed: 7 };
  t.is(await verdict(base), true);
  t.is(await verdict({ ...base, staleRead: true }), false);
});

test('the refutation names the stale read, its writer and the overwrite', async (t) => {
  const ops = pairEvents(
    generateCasRegisterHistory({ ops: 4_000, processes: 20, infoRate: 0.1, seed: 3, staleRead: true }),
  ).ops;
  const { linearizabilityChecker } = await import('../../checkers/linearizability/index.ts');
  const r = await linearizabilityChecker.check(ops, { model: 'cas-register' });
  t.is(r.valid, false);
  const a = r.anomalies[0];
  t.regex(
    a?.explanation ?? '',
    /read → (\d+) \(op \d+\) saw \1, which only write\(\1\) \(op \d+\) writes, but write\(\d+\) \(op \d+\)/,
  );
  t.is(a?.ops?.length, 3);
});

test('register refutation: the initial value after a definite write, and a value nobody wrote', async (t) => {
  const { history } = await import('./helpers.ts');
  const model = createModel('register');
  // Under Knossos's semantics an ok nil read constrains nothing, so the initial-value case needs
  // nil to be a real value (as faultline's own register workloads declare it).
  const nilIsValue = createModel('register', { nilRead: 'value' });
  const refuteWith = (m: typeof model) => (evs: Parameters<typeof history>[0]) => {
    const part = prepareHistory(m!, history(evs)).partitions[0];
    return part ? m?.refute?.(part.ops) : null;
  };
  const refute = refuteWith(model);
  // Knossos: a nil read after a definite write is unconstrained, never refuted.
  t.is(
    refute([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', null],
    ]),
    null,
  );
  // write 1 returns, then a read invoked later sees nil (the initial value): refuted when nil is a value.
  const initial = refuteWith(nilIsValue)([
    [0, 'invoke', 'write', 1],
    [0, 'ok', 'write', 1],
    [1, 'invoke', 'read', null],
    [1, 'ok', 'read', null],
  ]);
  t.deepEqual(initial?.witnesses, [0]);
  t.regex(initial?.reason ?? '', /the initial value/);
  // A read of 7, which no op wrote: refuted.
  const never = refute([
    [0, 'invoke', 'read', null],
    [0, 'ok', 'read', 7],
  ]);
  t.regex(never?.reason ?? '', /no op wrote/);
  // An indeterminate write of 7 may have happened: not refuted, and the history is linearizable.
  const maybe = [
    [2, 'invoke', 'write', 7],
    [2, 'info', 'write', 7],
    [0, 'invoke', 'read', null],
    [0, 'ok', 'read', 7],
  ] as Parameters<typeof history>[0];
  t.is(refute(maybe), null);
  t.is((await checkOperations(model!, history(maybe))).valid, true);
});
