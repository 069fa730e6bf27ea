import fc from 'fast-check';
import type { HistoryEvent } from '../../src/core/history/event.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import type { RefOp } from './reference-linearizability.ts';

/**
 * Random and adversarial histories for the differential tests. Three client threads invoke and complete
 * ops as Jepsen's processes do (a crashed process is retired); each completion is ok, fail or info. Values
 * come from tiny domains, so histories are full of concurrent writes of the same value, duplicates, reads
 * of values never written, nil reads, failed cas and crashed ops. A read usually returns what a
 * sequential copy of the system holds at that moment (so about half the histories are valid), otherwise
 * a random value from the domain.
 */
export interface Action {
  thread: number;
  pick: number;
  value: number;
  outcome: number;
}

export const actionArb: fc.Arbitrary<Action> = fc.record({
  thread: fc.nat(2),
  pick: fc.nat(9),
  value: fc.nat(5),
  outcome: fc.nat(11),
});

export const actionsArb = (max: number) => fc.array(actionArb, { minLength: 1, maxLength: max });

type Truth = { state: unknown };

interface Shape {
  invoke(a: Action): { f: string; input: unknown; key?: string };
  /** What the op returns when it completes ok against the sequential copy (which it may update). */
  apply(t: Truth, op: RefOp, a: Action): unknown;
  /** A wrong or arbitrary result. */
  random(op: RefOp, a: Action): unknown;
  init: unknown;
  /**
   * A final read at quiescence, after every op ended: its f and what it returns (the system's state, or,
   * when `honest` is false and `a` says so, a corrupted one). Shapes without it end with the last op.
   */
  final?: (t: Truth, a: Action, honest: boolean) => { f: string; output: unknown };
  /**
   * A crash that leaves a partial result: what the op did to the copy and the value its info completion
   * carries. Undefined: the crash took effect or not, and the completion echoes the input.
   */
  crash?: (t: Truth, op: RefOp, a: Action) => { output: unknown } | undefined;
}

const pickOf = <T>(xs: readonly T[], n: number): T => xs[n % xs.length] as T;
const small = [null, 0, 1, 2] as const;

const registerShape = (cas: boolean): Shape => ({
  init: null,
  invoke: (a) =>
    a.pick < 4
      ? { f: 'read', input: null }
      : a.pick < 7 || !cas
        ? { f: 'write', input: a.value % 3 }
        : { f: 'cas', input: [pickOf(small, a.value), (a.value + 1) % 3] },
  apply(t, op) {
    if (op.f === 'write') t.state = op.input;
    if (op.f === 'cas') {
      const [from, to] = op.input as [unknown, unknown];
      if ((t.state ?? null) !== from) return 'mismatch';
      t.state = to;
    }
    return op.f === 'read' ? t.state : op.input;
  },
  random: (op, a) => (op.f === 'read' ? pickOf(small, a.value + a.outcome) : op.input),
});

const MULTI_REGISTER_KEYS: readonly unknown[] = ['x', 1, '1'];

const SHAPES: Record<string, Shape> = {
  register: registerShape(false),
  'cas-register': registerShape(true),
  'multi-register': {
    // Keys 1 and "1" are two registers (as in Knossos): a checker that merged them would fail here.
    init: new Map(),
    invoke: (a) => {
      const k = MULTI_REGISTER_KEYS[a.pick % MULTI_REGISTER_KEYS.length];
      return a.pick < 5 ? { f: 'read', input: [k, null] } : { f: 'write', input: [k, a.value % 3] };
    },
    apply(t, op) {
      const [k, v] = op.input as [unknown, unknown];
      const m = t.state as Map<unknown, unknown>;
      if (op.f === 'write') m.set(k, v);
      return op.f === 'read' ? [k, m.get(k) ?? null] : op.input;
    },
    random: (op, a) =>
      op.f === 'read' ? [(op.input as [string])[0], pickOf(small, a.value + a.outcome)] : op.input,
  },
  mutex: {
    init: false,
    invoke: (a) => ({ f: a.pick < 5 ? 'acquire' : 'release', input: null }),
    apply(t, op) {
      t.state = op.f === 'acquire';
      return null;
    },
    random: () => null,
  },
  counter: {
    init: 0,
    invoke: (a) =>
      a.pick < 4 ? { f: 'read', input: null } : { f: 'add', input: a.pick === 9 ? null : (a.value % 2) + 1 },
    apply(t, op) {
      if (op.f === 'add') t.state = (t.state as number) + ((op.input as number | null) ?? 1);
      return op.f === 'read' ? t.state : op.input;
    },
    random: (op, a) => (op.f === 'read' ? (a.value + a.outcome) % 6 : op.input),
  },
  set: {
    init: [],
    invoke: (a) => (a.pick < 4 ? { f: 'read', input: null } : { f: 'add', input: a.value % 4 }),
    apply(t, op) {
      const s = t.state as number[];
      if (op.f === 'add' && !s.includes(op.input as number)) s.push(op.input as number);
      return op.f === 'read' ? [...s] : op.input;
    },
    // Random subsets of the domain, sometimes with a duplicate or a never-added 9.
    random: (op, a) => {
      if (op.f !== 'read') return op.input;
      const out = [0, 1, 2, 3].filter((x) => ((a.value * 7 + a.outcome) >> x) & 1);
      if (a.outcome === 11) out.push(out[0] ?? 9, 9);
      return out;
    },
  },
  'fifo-queue': {
    init: [],
    invoke: (a) => (a.pick < 5 ? { f: 'dequeue', input: null } : { f: 'enqueue', input: a.value % 3 }),
    apply(t, op) {
      const q = t.state as unknown[];
      if (op.f === 'enqueue') q.push(op.input);
      return op.f === 'dequeue' ? (q.shift() ?? null) : op.input;
    },
    random: (op, a) => (op.f === 'dequeue' ? pickOf(small, a.value + a.outcome) : op.input),
  },
  kv: {
    init: {},
    invoke: (a) => {
      const key = a.pick % 2 === 0 ? 'a' : 'b';
      const arg = pickOf(['x', 'y', ''], a.value);
      if (a.pick < 4) return { f: 'get', input: null, key };
      return { f: a.pick < 7 ? 'put' : 'append', input: arg, key };
    },
    apply(t, op) {
      const m = t.state as Record<string, string>;
      const k = op.key as string;
      if (op.f === 'put') m[k] = op.input as string;
      if (op.f === 'append') m[k] = (m[k] ?? '') + (op.input as string);
      return op.f === 'get' ? (m[k] ?? '') : op.input;
    },
    random: (op, a) =>
      op.f === 'get' ? pickOf(['', 'x', 'y', 'xy', 'yx', null], a.value + a.outcome) : op.input,
  },
};

// Shapes for the catalogue checkers (their op names, no linearizability model).
/**
 * A register of EDN sets (`{"#set": [...]}`): each read lists the members in an order of its own, as a
 * Clojure set prints them. Equal sets in any order are one value; a checker comparing them as lists
 * fails correct histories here.
 */
const setOf = (n: number, rotate: number): { '#set': number[] } => {
  const members = [0, 1, 2].slice(0, 1 + (n % 3));
  return {
    '#set': [...members.slice(rotate % members.length), ...members.slice(0, rotate % members.length)],
  };
};
const reordered = (v: unknown, a: Action): unknown => {
  if (v === null || typeof v !== 'object') return v;
  const m = (v as { '#set': number[] })['#set'];
  return setOf(m.length - 1, a.outcome + a.pick);
};
SHAPES['register-sets'] = {
  init: null,
  invoke: (a) => (a.pick < 4 ? { f: 'read', input: null } : { f: 'write', input: setOf(a.value, a.pick) }),
  apply(t, op, a) {
    if (op.f === 'write') t.state = op.input;
    return op.f === 'read' ? reordered(t.state, a) : op.input;
  },
  random: (op, a) => (op.f === 'read' ? (a.value % 4 === 3 ? null : setOf(a.value, a.outcome)) : op.input),
};

SHAPES['counter-bounds'] = {
  ...(SHAPES.counter as Shape),
  invoke: (a) => (a.pick < 4 ? { f: 'read', input: null } : { f: 'add', input: (a.value % 2) + 1 }),
};
// Increments and decrements (deltas -2, -1, 1, 2).
SHAPES['counter-signed'] = {
  ...(SHAPES.counter as Shape),
  invoke: (a) =>
    a.pick < 4
      ? { f: 'read', input: null }
      : { f: 'add', input: ((a.value % 2) + 1) * (a.pick % 2 ? -1 : 1) },
};
SHAPES['total-queue'] = {
  init: [],
  invoke: (a) =>
    a.pick < 3
      ? { f: 'dequeue', input: null }
      : a.pick < 5
        ? { f: 'drain', input: null }
        : { f: 'enqueue', input: a.value % 4 },
  apply(t, op) {
    const q = t.state as unknown[];
    if (op.f === 'enqueue') q.push(op.input);
    if (op.f === 'dequeue') return q.shift() ?? null;
    if (op.f === 'drain') return q.splice(0, q.length);
    return op.input;
  },
  random: (op, a) =>
    op.f === 'dequeue'
      ? pickOf(small, a.value + a.outcome)
      : op.f === 'drain'
        ? [0, 1, 2, 3, 9].filter((x) => ((a.value * 5 + a.outcome) >> x) & 1)
        : op.input,
  // A drain cut off after a few takes (drainQueue): its info completion lists what it took, except
  // the last take when that answer was lost; a listing of nothing is no listing (the input echoed).
  // (The thread, outcome and value vary how many it took and whether the last answer was lost; a
  // quarter of the time the drain crashes as any op does.)
  crash(t, op, a) {
    if (op.f !== 'drain' || (a.value + a.outcome) % 4 === 0) return undefined;
    const q = t.state as unknown[];
    const took = q.splice(0, Math.min(q.length, (a.thread + a.outcome + Math.floor(a.value / 2)) % 4));
    const listed = a.thread === 1 ? took : took.slice(0, -1);
    return { output: listed.length > 0 ? listed : op.input };
  },
};
// Keyed writes of a few values, then a final read of the whole map at quiescence (no-lost-ack). A
// corrupted final read loses key x or holds a value for it that nobody wrote.
SHAPES['kv-writes'] = {
  init: {},
  invoke: (a) => ({ f: 'write', input: [a.pick % 2 ? 'y' : 'x', a.value % 4] }),
  apply(t, op) {
    const [k, v] = op.input as [string, number];
    (t.state as Record<string, number>)[k] = v;
    return op.input;
  },
  random: (op) => op.input,
  final(t, a, honest) {
    const state = { ...(t.state as Record<string, number>) };
    if (!honest && a.outcome % 3 === 1) delete state.x;
    if (!honest && a.outcome % 3 === 2) state.x = 9;
    return { f: 'final-read', output: state };
  },
};
// A register whose store numbers its versions: a write returns the version it made, a read the value and
// version it saw (the session checker); a wrong read returns an arbitrary version.
SHAPES['versioned-register'] = {
  init: { value: null, version: 0 },
  invoke: (a) => (a.pick < 5 ? { f: 'read', input: null } : { f: 'write', input: a.value % 4 }),
  apply(t, op) {
    const s = t.state as { value: unknown; version: number };
    if (op.f === 'write') {
      s.value = op.input;
      s.version++;
      return { version: s.version };
    }
    return { value: s.value, version: s.version };
  },
  random: (op, a) =>
    op.f === 'read' ? { value: a.value % 4, version: (a.value + a.outcome) % 5 } : { version: a.value % 5 },
};
// Jepsen's long-fork: single-write transactions over six keys, reads of one of two groups of three
// (mostly the first, so two reads of one group, the only ones compared, are common).
const LONG_FORK_GROUPS = [
  ['k0', 'k1', 'k2'],
  ['k3', 'k4', 'k5'],
] as const;
SHAPES['long-fork'] = {
  init: {},
  invoke: (a) =>
    a.pick < 5
      ? { f: 'txn', input: pickOf(LONG_FORK_GROUPS, Number(a.value === 5)).map((k) => ['r', k, null]) }
      : { f: 'txn', input: [['w', `k${a.value}`, 1 + a.outcome]] },
  apply(t, op) {
    const m = t.state as Record<string, unknown>;
    const mops = op.input as [string, string, unknown][];
    if (mops[0]?.[0] === 'w') {
      m[mops[0][1]] = mops[0][2];
      return mops;
    }
    return mops.map(([, k]) => ['r', k, m[k] ?? null]);
  },
  // Each key of the group seen or not, at random.
  random: (op, a) => {
    const mops = op.input as [string, string, unknown][];
    if (mops[0]?.[0] === 'w') return mops;
    return mops.map(([, k], j) => ['r', k, ((a.value + 3 * a.outcome + 7 * a.pick) >> j) & 1 ? 1 : null]);
  },
};
SHAPES['unique-ids'] = {
  init: 0,
  invoke: () => ({ f: 'generate', input: null }),
  apply(t) {
    t.state = (t.state as number) + 1;
    return t.state;
  },
  random: (_op, a) => a.value % 3,
};

export const MODELS = Object.keys(SHAPES);

/**
 * Interpret actions as a history: the ops with their event indices (what the reference reads) and the
 * same history as faultline's paired Operations (events through the real pairer).
 */
export function simulate(
  model: string,
  actions: readonly Action[],
  leaveOpen: boolean,
  /** Every ok result is what the sequential copy returned: a correct system, linearizable by construction. */
  honest = false,
): RefOp[] {
  const shape = SHAPES[model];
  if (!shape) throw new Error(`no shape for ${model}`);
  const truth: Truth = { state: structuredClone(shape.init) };
  const threads = [0, 1, 2].map((p) => ({ process: p, busy: null as RefOp | null }));
  const ops: RefOp[] = [];
  let clock = 0;
  for (const a of actions) {
    const th = threads[a.thread] as (typeof threads)[number];
    if (!th.busy) {
      const inv = shape.invoke(a);
      th.busy = { process: th.process, ...inv, output: null, type: 'info', call: clock++, ret: null };
      ops.push(th.busy);
      continue;
    }
    const op = th.busy;
    th.busy = null;
    op.ret = clock++;
    if (a.outcome < 8) {
      const out = shape.apply(truth, op, a);
      if (out === 'mismatch') {
        op.type = 'fail';
        op.output = op.input;
      } else {
        op.type = 'ok';
        op.output = honest || a.outcome < 5 ? out : shape.random(op, a);
      }
    } else if (a.outcome < 10) {
      op.type = 'fail';
      op.output = op.input;
    } else {
      // Crashed: it may have happened; the copy applies it half the time.
      const partial = shape.crash?.(truth, op, a);
      if (partial) op.output = partial.output;
      else {
        if (a.outcome === 11) shape.apply(truth, op, a);
        op.output = op.input;
      }
      op.type = 'info';
      // A partial result is always recorded: its completion is what carries it.
      if (a.value % 2 === 0 && !partial) op.ret = null;
      th.process += 3;
    }
  }
  if (!leaveOpen) {
    for (const th of threads) {
      if (!th.busy) continue;
      const op = th.busy;
      op.ret = clock++;
      op.type = 'ok';
      const out = shape.apply(truth, op, actions[0] as Action);
      if (out === 'mismatch') {
        op.type = 'fail';
        op.output = op.input;
      } else op.output = out;
    }
  }
  if (shape.final) {
    const { f, output } = shape.final(truth, actions[0] as Action, honest);
    ops.push({ process: 99, f, input: null, output, type: 'ok', call: clock++, ret: clock++ });
  }
  return ops;
}

/**
 * The history as faultline reads it: events (an info op may have an info completion, or none) paired.
 * Event i's time is i / `tick`, rounded down: with a tick above 1, neighbouring events share a timestamp.
 */
export function toOperations(ops: readonly RefOp[], tick = 1): Operation[] {
  const points: { at: number; ev: Omit<HistoryEvent, 'index'> }[] = [];
  for (const op of ops) {
    const base = {
      process: op.process,
      f: op.f,
      node: null,
      faultEpoch: null,
      ...(op.key !== undefined && { key: op.key }),
    };
    const time = (at: number) => Math.floor(at / tick);
    points.push({
      at: op.call,
      ev: { ...base, type: 'invoke', value: op.input, time: time(op.call) } as never,
    });
    if (op.ret !== null)
      points.push({
        at: op.ret,
        ev: { ...base, type: op.type, value: op.output, time: time(op.ret) } as never,
      });
  }
  points.sort((x, y) => x.at - y.at);
  const events = points.map((p, index) => ({ ...p.ev, index }) as HistoryEvent);
  return pairEvents(events).ops;
}

/** A history as JSON lines, the form `faultline check` reads: printed with every disagreement. */
export function historyText(ops: readonly RefOp[], tick = 1): string {
  const points: [number, Record<string, unknown>][] = [];
  for (const op of ops) {
    const base = { process: op.process, f: op.f, ...(op.key !== undefined && { key: op.key }) };
    points.push([op.call, { type: 'invoke', ...base, value: op.input }]);
    if (op.ret !== null) points.push([op.ret, { type: op.type, ...base, value: op.output }]);
  }
  return points
    .sort((a, b) => a[0] - b[0])
    .map(([at, e], index) =>
      JSON.stringify({ index, time: Math.floor(at / tick), node: null, faultEpoch: null, ...e }),
    )
    .join('\n');
}
