import test from 'ava';
import { deepEqual, type Refutation, show } from '../../checkers/linearizability/model.ts';
import { refuteStaleObservation } from '../../checkers/linearizability/models/stale-read.ts';
import { EncodedOps, type OpLike } from '../../checkers/linearizability/op-columns.ts';

/**
 * The stale-observation refutation works per interned class (ops sharing an encoding). It must give
 * exactly what the rule gives applied op by op, written here as plainly as it reads: the first
 * observation (in op order) that no single producer can explain, with the same witnesses and reason.
 */
interface In {
  f: 'read' | 'write' | 'cas';
  a: unknown;
  b: unknown;
}
interface Out {
  known: boolean;
  value: unknown;
  ok: boolean;
}

function reference(ops: EncodedOps, initialValue: unknown): Refutation | null {
  const n = ops.length;
  const { call, ret } = ops;
  const producers = (v: unknown): number[] => {
    const out: number[] = deepEqual(v, initialValue) ? [-1] : [];
    for (let i = 0; i < n; i++) {
      const input = ops.inputOf(i) as In;
      const output = ops.outputOf(i) as Out;
      if (input.f === 'write' && deepEqual(input.a, v)) out.push(i);
      else if (input.f === 'cas' && (output.ok || !output.known) && deepEqual(input.b, v)) out.push(i);
    }
    return out;
  };
  const definite = (i: number): boolean => {
    const input = ops.inputOf(i) as In;
    const output = ops.outputOf(i) as Out;
    return input.f !== 'read' && output.known && output.ok && Number.isFinite(ret[i] as number);
  };
  for (let r = 0; r < n; r++) {
    const input = ops.inputOf(r) as In;
    const output = ops.outputOf(r) as Out;
    if (!output.known || !output.ok || !Number.isFinite(ret[r] as number)) continue;
    if (input.f === 'write') continue;
    const seen = input.f === 'read' ? output.value : input.a;
    const ps = producers(seen);
    if (ps.length === 0)
      return {
        op: r,
        witnesses: [],
        reason: `#0 saw ${show(seen)}, a value no op wrote and not the initial value`,
      };
    if (ps.length > 1 || ps[0] === r) continue;
    const p = ps[0] as number;
    const producedBy = p === -1 ? Number.NEGATIVE_INFINITY : (ret[p] as number);
    if (!Number.isFinite(producedBy) && p !== -1) continue;
    // Among definite writers invoked after p returned: the one returning first (earliest call on ties).
    let x = -1;
    const byCall = [...Array(n).keys()]
      .filter(definite)
      .sort((a, b) => (call[a] as number) - (call[b] as number));
    for (const d of byCall)
      if ((call[d] as number) > producedBy && (x < 0 || (ret[d] as number) < (ret[x] as number))) x = d;
    if (x < 0 || (ret[x] as number) >= (call[r] as number)) continue;
    if (p === -1)
      return {
        op: r,
        witnesses: [x],
        reason: `#0 saw ${show(seen)}, the initial value, but #1 had already replaced it before #0 was invoked, and no op writes ${show(seen)}`,
      };
    return {
      op: r,
      witnesses: [p, x],
      reason: `#0 saw ${show(seen)}, which only #1 writes, but #2 (invoked after #1 returned) replaced it before #0 was invoked`,
    };
  }
  return null;
}

function randomOps(seed: number, n: number): OpLike[] {
  let s = seed;
  const rand = (k: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % k;
  };
  const values: unknown[] = [0, 1, 2, 3, 'x', [1, 2], null];
  const ops: OpLike[] = [];
  // Encodings seen so far, so equal encodings share a class (as the preparer interns them).
  const classes: { input: In; output: Out }[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const f = (['read', 'write', 'cas'] as const)[rand(3)] ?? 'read';
    const v = () => values[rand(values.length)];
    const input: In = { f, a: f === 'read' ? null : v(), b: f === 'cas' ? v() : null };
    const known = rand(5) !== 0;
    const output: Out = { known, value: f === 'read' ? v() : null, ok: f === 'cas' ? rand(3) !== 0 : true };
    const callAt = at + rand(3);
    const ret = known ? callAt + 1 + rand(4) : Number.POSITIVE_INFINITY;
    at = callAt + 1;
    const op: OpLike = { id: i, process: i % 5, call: callAt, ret, input, output };
    // Most ops share a class; some keep their own encoding (a preparer past its class limit).
    if (rand(4) !== 0) {
      let c = classes.findIndex((k) => deepEqual(k.input, input) && deepEqual(k.output, output));
      if (c < 0) {
        c = classes.length;
        classes.push({ input, output });
      }
      op.io = c;
    }
    ops.push(op);
  }
  return ops;
}

/**
 * The same ops in columns whose class table also holds `extra` classes no op uses (a partition of a
 * history with many keys: the table is the history's), so the refutation takes the ops one by one.
 */
function amongManyClasses(list: OpLike[], extra: number): EncodedOps {
  const d = EncodedOps.from(list).data();
  const pad = (a: unknown[], unused: unknown) => [...Array.from({ length: extra }, () => unused), ...a];
  return new EncodedOps({
    ...d,
    io: d.io.map((c) => (c < 0 ? c : c + extra)),
    ioInputs: pad(d.ioInputs, { f: 'write', a: 'unused', b: null }),
    ioOutputs: pad(d.ioOutputs, { known: true, value: null, ok: true }),
  });
}

test('the per-class refutation equals the rule applied op by op on random histories', (t) => {
  let refuted = 0;
  let passed = 0;
  for (let seed = 1; seed <= 600; seed++) {
    const list = randomOps(seed, 4 + (seed % 40));
    const ops = seed % 5 === 0 ? amongManyClasses(list, 5000) : EncodedOps.from(list);
    if (seed % 5 === 0) t.false(ops.fewClasses);
    for (const initial of [null, 0, 'x']) {
      const want = reference(ops, initial);
      t.deepEqual(refuteStaleObservation(ops, initial), want, `seed ${seed}, initial ${show(initial)}`);
      if (want) refuted++;
      else passed++;
    }
  }
  // Both outcomes are exercised, each reason among the refutations.
  t.true(refuted > 100 && passed > 100, `${refuted} refuted, ${passed} not`);
});
