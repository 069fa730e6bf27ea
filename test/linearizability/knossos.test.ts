import test from 'ava';
import fc from 'fast-check';
import { linearizabilityChecker } from '../../checkers/linearizability/index.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { parseHistoryText } from '../../src/core/history/read-foreign.ts';
import { registerWorkload } from '../../src/lib/workloads/register.ts';
import {
  type EdnValue,
  historyEdn,
  type JepsenOp,
  type Kw,
  knossosVerdict,
  type ModelName,
  type ReferenceOptions,
} from './knossos-reference.ts';

/**
 * Knossos semantics: for the same history (as Jepsen's history.edn), model and initial value, faultline's
 * linearizable checker gives Knossos's verdict. Expected verdicts come from the definitions in
 * `knossos.model` (register, cas-register, mutex, multi-register) through an independent reference
 * (knossos-reference.ts), and from histories whose verdict is worked out by hand. Every history goes
 * through the EDN reader, pairing and the checker's option parsing, as `faultline check` does.
 */

const FAULTLINE_MODEL: Record<ModelName, string> = {
  register: 'register',
  'cas-register': 'cas-register',
  mutex: 'mutex',
  'multi-register': 'multi-register-txn',
};

/** EDN keyword → the plain string faultline's reader makes of it. */
function plain(v: unknown): unknown {
  if (typeof v === 'string') return v.startsWith(':') ? v.slice(1) : v;
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [String(plain(k)), plain(x)]));
  return v;
}

async function faultlineVerdict(h: readonly JepsenOp[], o: ReferenceOptions): Promise<boolean> {
  const ops = pairEvents(parseHistoryText(historyEdn(h), 'edn', 'history.edn')).ops;
  const r = await linearizabilityChecker.check(ops, {
    model: FAULTLINE_MODEL[o.model],
    initialValue: plain(o.initial),
    ...(o.nilReadIsValue && { nilRead: 'value' as const }),
    ...(o.failedCasMismatch && { failedCas: 'mismatch' as const }),
  });
  if (r.valid === 'unknown') throw new Error(`undecided: ${r.evidence}`);
  return r.valid;
}

// ---- compact history notation ----

const inv = (process: number, f: Kw, value: EdnValue = null): JepsenOp => ({
  process,
  type: ':invoke',
  f,
  value,
});
const ok = (process: number, f: Kw, value: EdnValue = null): JepsenOp => ({ process, type: ':ok', f, value });
const fail = (process: number, f: Kw, value: EdnValue = null): JepsenOp => ({
  process,
  type: ':fail',
  f,
  value,
});
const info = (process: number | ':nemesis', f: Kw, value: EdnValue = null): JepsenOp => ({
  process,
  type: ':info',
  f,
  value,
});
/** A complete op: invoke then ok (reads invoke with nil and complete with what they saw). */
const op = (process: number, f: Kw, value: EdnValue): JepsenOp[] => [
  inv(process, f, f === ':read' ? null : value),
  ok(process, f, value),
];

interface Case {
  name: string;
  history: JepsenOp[];
  options: ReferenceOptions;
  /** The verdict worked out by hand from knossos.model. */
  expected: boolean;
}

const reg = (initial: EdnValue = null): ReferenceOptions => ({ model: 'register', initial });
const cas = (initial: EdnValue = null): ReferenceOptions => ({ model: 'cas-register', initial });
const multi = (initial: Record<string, EdnValue>): ReferenceOptions => ({ model: 'multi-register', initial });

const CASES: Case[] = [
  // Register: `(if (or (nil? (:value op)) (= value (:value op))) r (inconsistent …))`.
  {
    name: 'register: read of the initial value',
    history: op(0, ':read', 0),
    options: reg(0),
    expected: true,
  },
  { name: 'register: read of another value', history: op(0, ':read', 1), options: reg(0), expected: false },
  {
    name: 'register: nil read of a non-nil register',
    history: op(0, ':read', null),
    options: reg(5),
    expected: true,
  },
  {
    name: 'register: stale read after a completed write',
    history: [...op(0, ':write', 1), ...op(1, ':read', 0)],
    options: reg(0),
    expected: false,
  },
  {
    name: 'register: nil read after a completed write (Knossos: unknown)',
    history: [...op(0, ':write', 1), ...op(1, ':read', null)],
    options: reg(0),
    expected: true,
  },
  {
    name: 'register: nil read after a completed write, nilRead value',
    history: [...op(0, ':write', 1), ...op(1, ':read', null)],
    options: { ...reg(0), nilReadIsValue: true },
    expected: false,
  },
  {
    name: 'register: nil read before any write, nilRead value, initial nil',
    history: op(1, ':read', null),
    options: { ...reg(null), nilReadIsValue: true },
    expected: true,
  },
  {
    name: 'register: concurrent write, read sees either value',
    history: [
      inv(0, ':write', 1),
      inv(1, ':read'),
      ok(1, ':read', 1),
      ok(0, ':write', 1),
      ...op(1, ':read', 1),
    ],
    options: reg(0),
    expected: true,
  },
  {
    name: 'register: read goes back in time',
    history: [
      inv(0, ':write', 1),
      inv(1, ':read'),
      ok(1, ':read', 1),
      inv(2, ':read'),
      ok(2, ':read', 0),
      ok(0, ':write', 1),
    ],
    options: reg(0),
    expected: false,
  },
  {
    name: 'register: a failed write did not happen',
    history: [inv(0, ':write', 1), fail(0, ':write', 1), ...op(1, ':read', 1)],
    options: reg(0),
    expected: false,
  },
  {
    name: 'register: a crashed write may happen late',
    history: [inv(0, ':write', 1), info(0, ':write', 1), ...op(1, ':read', 0), ...op(1, ':read', 1)],
    options: reg(0),
    expected: true,
  },
  {
    name: 'register: a crashed write never takes effect twice',
    history: [
      inv(0, ':write', 1),
      info(0, ':write', 1),
      ...op(1, ':read', 1),
      ...op(2, ':write', 2),
      ...op(1, ':read', 1),
    ],
    options: reg(0),
    expected: false,
  },
  {
    name: 'register: an invocation that never completes is a crash',
    history: [...op(1, ':read', 0), inv(0, ':write', 3), ...op(1, ':read', 3)],
    options: reg(0),
    expected: true,
  },
  {
    name: 'register: nemesis ops are ignored',
    history: [
      info(':nemesis', ':start'),
      ...op(0, ':write', 2),
      info(':nemesis', ':start'),
      ...op(1, ':read', 2),
    ],
    options: reg(0),
    expected: true,
  },
  {
    name: 'register: a read whose invocation guessed a value takes the completion’s',
    history: [inv(0, ':read', 4), ok(0, ':read', 0)],
    options: reg(0),
    expected: true,
  },
  // CASRegister: cas `[cur new]` needs `(= cur value)`.
  {
    name: 'cas-register: cas from the current value',
    history: [...op(0, ':cas', [0, 1]), ...op(1, ':read', 1)],
    options: cas(0),
    expected: true,
  },
  {
    name: 'cas-register: cas from another value',
    history: op(0, ':cas', [1, 2]),
    options: cas(0),
    expected: false,
  },
  {
    name: 'cas-register: cas from nil on the nil register',
    history: [...op(0, ':cas', [null, 3]), ...op(1, ':read', 3)],
    options: cas(null),
    expected: true,
  },
  {
    name: 'cas-register: a failed cas did not happen (even if it could have)',
    history: [inv(0, ':cas', [0, 1]), fail(0, ':cas', [0, 1]), ...op(1, ':read', 0)],
    options: cas(0),
    expected: true,
  },
  {
    name: 'cas-register: a failed cas whose compare would have matched, failedCas mismatch',
    history: [inv(0, ':cas', [0, 1]), fail(0, ':cas', [0, 1]), ...op(1, ':read', 0)],
    options: { ...cas(0), failedCasMismatch: true },
    expected: false,
  },
  {
    name: 'cas-register: a crashed cas applies only when it matches',
    history: [inv(0, ':cas', [0, 5]), info(0, ':cas', [0, 5]), ...op(1, ':read', 5)],
    options: cas(1),
    expected: false,
  },
  {
    name: 'cas-register: nil reads around a cas chain',
    history: [
      ...op(0, ':cas', [0, 1]),
      ...op(1, ':read', null),
      ...op(0, ':cas', [1, 2]),
      ...op(1, ':read', 2),
    ],
    options: cas(0),
    expected: true,
  },
  // Mutex: acquire when free, release when held.
  {
    name: 'mutex: acquire, release, acquire',
    history: [...op(0, ':acquire', null), ...op(0, ':release', null), ...op(1, ':acquire', null)],
    options: { model: 'mutex', initial: null },
    expected: true,
  },
  {
    name: 'mutex: two holders',
    history: [...op(0, ':acquire', null), ...op(1, ':acquire', null)],
    options: { model: 'mutex', initial: null },
    expected: false,
  },
  {
    name: 'mutex: release of a free lock',
    history: op(0, ':release', null),
    options: { model: 'mutex', initial: null },
    expected: false,
  },
  // MultiRegister: txns of [f k v]; reads see the txn's own writes; nil reads are always legal.
  {
    name: 'multi-register: read both initial values',
    history: op(0, ':txn', [
      [':read', ':x', 0],
      [':read', ':y', 0],
    ]),
    options: multi({ ':x': 0, ':y': 0 }),
    expected: true,
  },
  {
    name: 'multi-register: write then read in one txn',
    history: op(0, ':txn', [
      [':write', ':x', 3],
      [':read', ':x', 3],
    ]),
    options: multi({ ':x': 0 }),
    expected: true,
  },
  {
    name: 'multi-register: a read that misses the txn’s own write',
    history: op(0, ':txn', [
      [':write', ':x', 3],
      [':read', ':x', 0],
    ]),
    options: multi({ ':x': 0 }),
    expected: false,
  },
  {
    name: 'multi-register: a read of a key the initial map lacks is nil',
    history: op(0, ':txn', [[':read', ':z', 1]]),
    options: multi({ ':x': 0 }),
    expected: false,
  },
  {
    name: 'multi-register: torn read of a two-key write',
    history: [
      ...op(0, ':txn', [
        [':write', ':x', 1],
        [':write', ':y', 1],
      ]),
      ...op(1, ':txn', [
        [':read', ':x', 1],
        [':read', ':y', 0],
      ]),
    ],
    options: multi({ ':x': 0, ':y': 0 }),
    expected: false,
  },
  {
    name: 'multi-register: torn read hidden by a nil read',
    history: [
      ...op(0, ':txn', [
        [':write', ':x', 1],
        [':write', ':y', 1],
      ]),
      ...op(1, ':txn', [
        [':read', ':x', 1],
        [':read', ':y', null],
      ]),
    ],
    options: multi({ ':x': 0, ':y': 0 }),
    expected: true,
  },
  {
    name: 'multi-register: concurrent txns in either order',
    history: [
      inv(0, ':txn', [[':write', ':x', 1]]),
      inv(1, ':txn', [
        [':read', ':x', null],
        [':write', ':y', 2],
      ]),
      ok(1, ':txn', [
        [':read', ':x', 1],
        [':write', ':y', 2],
      ]),
      ok(0, ':txn', [[':write', ':x', 1]]),
      ...op(2, ':txn', [
        [':read', ':x', 1],
        [':read', ':y', 2],
      ]),
    ],
    options: multi({ ':x': 0, ':y': 0 }),
    expected: true,
  },
  {
    name: 'multi-register: a failed txn did not happen',
    history: [
      inv(0, ':txn', [[':write', ':x', 1]]),
      fail(0, ':txn', [[':write', ':x', 1]]),
      ...op(1, ':txn', [[':read', ':x', 1]]),
    ],
    options: multi({ ':x': 0 }),
    expected: false,
  },
  {
    name: 'multi-register: nil read, nilRead value, after a write',
    history: [...op(0, ':txn', [[':write', ':x', 1]]), ...op(1, ':txn', [[':read', ':x', null]])],
    options: { ...multi({ ':x': 0 }), nilReadIsValue: true },
    expected: false,
  },
];

let compared = 0;

for (const c of CASES) {
  test(`knossos: ${c.name}`, async (t) => {
    t.is(knossosVerdict(c.history, c.options), c.expected, 'reference');
    t.is(await faultlineVerdict(c.history, c.options), c.expected, 'faultline');
    compared++;
  });
}

// ---- nil reads in every position ----

/** Every variant of a history with any subset of its read results replaced by nil. */
function nilVariants(h: readonly JepsenOp[]): JepsenOp[][] {
  const slots: [number, number | null][] = [];
  h.forEach((o, i) => {
    if (o.type !== ':ok') return;
    if (o.f === ':read') slots.push([i, null]);
    if (o.f === ':txn')
      (o.value as EdnValue[][]).forEach((m, j) => {
        if (m[0] === ':read') slots.push([i, j]);
      });
  });
  const out: JepsenOp[][] = [];
  for (let mask = 0; mask < 1 << slots.length; mask++) {
    const copy = h.map((o) => ({ ...o, value: structuredClone(o.value) }));
    slots.forEach(([i, j], bit) => {
      if (!(mask & (1 << bit))) return;
      const o = copy[i] as JepsenOp;
      if (j === null) o.value = null;
      else ((o.value as EdnValue[][])[j] as EdnValue[])[2] = null;
    });
    out.push(copy);
  }
  return out;
}

test('nil reads in every position: same verdicts as Knossos, with and without nilRead value', async (t) => {
  let variants = 0;
  let flipped = 0;
  for (const c of CASES) {
    for (const h of nilVariants(c.history)) {
      for (const nilReadIsValue of [false, true]) {
        const o = { ...c.options, nilReadIsValue };
        const want = knossosVerdict(h, o);
        t.is(
          await faultlineVerdict(h, o),
          want,
          `${c.name} / ${historyEdn(h)} / nilRead value: ${nilReadIsValue}`,
        );
        variants++;
        if (!nilReadIsValue && want !== knossosVerdict(h, { ...o, nilReadIsValue: true })) flipped++;
      }
    }
  }
  compared += variants;
  t.true(variants > 150, `${variants} variants`);
  // The two semantics must disagree somewhere, or this proves nothing about the option.
  t.true(flipped > 10, `${flipped} variants where nilRead changes the verdict`);
});

// ---- random histories ----

const DOMAIN: EdnValue[] = [null, 0, 1, 2];

interface Action {
  thread: number;
  pick: number;
  value: number;
  outcome: number;
}

const actionArb: fc.Arbitrary<Action> = fc.record({
  thread: fc.nat(2),
  pick: fc.nat(9),
  value: fc.nat(3),
  outcome: fc.nat(9),
});

/** Interprets actions as three threads invoking and completing ops (Jepsen's process rules). */
function simulate(model: ModelName, actions: readonly Action[], leaveOpen: boolean): JepsenOp[] {
  const threads = [0, 1, 2].map((p) => ({ process: p, busy: null as JepsenOp | null }));
  const h: JepsenOp[] = [];
  const val = (n: number) => DOMAIN[n % DOMAIN.length] as EdnValue;
  const invoke = (a: Action): JepsenOp => {
    const v = a.value % 3;
    switch (model) {
      case 'register':
        return a.pick < 5 ? inv(0, ':read') : inv(0, ':write', v);
      case 'cas-register':
        return a.pick < 4
          ? inv(0, ':read')
          : a.pick < 7
            ? inv(0, ':write', v)
            : inv(0, ':cas', [v, (v + 1) % 3]);
      case 'mutex':
        return a.pick < 5 ? inv(0, ':acquire') : inv(0, ':release');
      case 'multi-register': {
        const k = a.pick % 2 === 0 ? ':x' : ':y';
        const other = k === ':x' ? ':y' : ':x';
        if (a.pick < 4)
          return inv(0, ':txn', [
            [':read', k, null],
            [':read', other, null],
          ]);
        if (a.pick < 7) return inv(0, ':txn', [[':write', k, v]]);
        return inv(0, ':txn', [
          [':read', k, null],
          [':write', other, v],
        ]);
      }
    }
  };
  const complete = (o: JepsenOp, a: Action): EdnValue => {
    if (o.f === ':read') return val(a.value + a.outcome);
    if (o.f === ':txn')
      return (o.value as EdnValue[][]).map((m) =>
        m[0] === ':read'
          ? [':read', m[1] as EdnValue, val(a.value + a.outcome + (m[1] === ':x' ? 0 : 1))]
          : m,
      );
    return o.value;
  };
  for (const a of actions) {
    const th = threads[a.thread] as (typeof threads)[number];
    if (!th.busy) {
      th.busy = { ...invoke(a), process: th.process };
      h.push(th.busy);
      continue;
    }
    const o = th.busy;
    th.busy = null;
    if (a.outcome < 6) h.push(ok(th.process, o.f, complete(o, a)));
    else if (a.outcome < 8) h.push(fail(th.process, o.f, o.value));
    else {
      h.push(info(th.process, o.f, o.value));
      th.process += 3; // Jepsen retires a crashed process
    }
  }
  if (!leaveOpen)
    for (const th of threads)
      if (th.busy) h.push(ok(th.process, th.busy.f, complete(th.busy, actions[0] as Action)));
  return h;
}

const RANDOM: { model: ModelName; initial: ReferenceOptions['initial']; strict: boolean }[] = [
  { model: 'register', initial: 0, strict: false },
  { model: 'register', initial: null, strict: true },
  { model: 'cas-register', initial: 0, strict: false },
  { model: 'cas-register', initial: null, strict: true },
  { model: 'mutex', initial: null, strict: false },
  { model: 'multi-register', initial: { ':x': 0, ':y': 0 }, strict: false },
  { model: 'multi-register', initial: { ':x': 0 }, strict: true },
];

for (const r of RANDOM) {
  const label = `${r.model}${r.strict ? ' (nilRead value, failedCas mismatch)' : ''}`;
  test(`random histories: ${label} agrees with the Knossos reference`, async (t) => {
    const o: ReferenceOptions = {
      model: r.model,
      initial: r.initial,
      ...(r.strict && { nilReadIsValue: true, failedCasMismatch: true }),
    };
    let valid = 0;
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(actionArb, { minLength: 2, maxLength: 16 }),
        fc.boolean(),
        async (actions, open) => {
          const h = simulate(r.model, actions, open);
          const want = knossosVerdict(h, o);
          if (want) valid++;
          else invalid++;
          compared++;
          return (await faultlineVerdict(h, o)) === want;
        },
      ),
      { numRuns: 250, seed: 18 },
    );
    t.true(valid > 25 && invalid > 25, `valid ${valid}, invalid ${invalid}`);
  });
}

// ---- faultline's own clients ----

test("faultline's register workload checks nil as a value: a write lost back to the missing key is caught", async (t) => {
  const spec = registerWorkload({ nodes: ['n1'], concurrency: 1 }).checkers[0];
  if (!spec) throw new Error('no checker');
  t.like(spec.options, { model: 'cas-register', nilRead: 'value', failedCas: 'mismatch' });
  // The key did not exist (nil), a write of 1 completed, then a read found the key missing again.
  const h = [...op(0, ':write', 1), ...op(1, ':read', null)];
  const ops = pairEvents(parseHistoryText(historyEdn(h), 'edn')).ops;
  const r = await linearizabilityChecker.check(ops, spec.options as never);
  t.is(r.valid, false);
  t.regex(r.evidence, /nil reads are values, a failed cas saw another value/);
  // Checked as a Jepsen history would be, the nil read is a wildcard.
  const knossos = await linearizabilityChecker.check(ops, { model: 'cas-register' });
  t.is(knossos.valid, true);
  t.regex(knossos.evidence, /nil reads constrain nothing, a failed cas did not happen/);
});

test.after(() => {
  // Reported for the record: how many histories were compared with Knossos's verdict.
  process.stdout.write(`knossos semantics: ${compared} histories compared\n`);
});
