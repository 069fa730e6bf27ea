/**
 * Brute-force linearizability, written from the definitions (not from faultline's models or search),
 * small enough to be read in one sitting:
 *
 * - an op that completed ok must take effect exactly once, between its invocation and its completion;
 * - an op whose outcome is unknown (info, or never completed) may take effect once at any point after its
 *   invocation, or never (Knossos's semantics); a read with an unknown outcome constrains nothing;
 * - an op that failed did not happen, except a failed cas under `failedCas: 'mismatch'`, which compared
 *   inside its interval and saw another value;
 * - the search tries every order consistent with real time (an op that completed before another was
 *   invoked comes first), memoised on (ops placed, model state). Keys of partitioned models (kv,
 *   multi-register) are checked one by one, which is sound because linearizability is local.
 */
export interface RefOp {
  process: number;
  f: string;
  input: unknown;
  output: unknown;
  type: 'ok' | 'fail' | 'info';
  /** Event index of the invocation. */
  call: number;
  /** Event index of the completion, null when the op never completed. */
  ret: number | null;
  key?: string;
}

export const ILLEGAL = Symbol('illegal');
export interface RefModel<S = unknown> {
  init: S;
  step(state: S, op: RefOp): S | typeof ILLEGAL;
  /** The partition an op belongs to (kv and multi-register); one partition otherwise. */
  key?: (op: RefOp) => string;
  /** A failed op that still constrains (a failed cas read as a mismatch). */
  keepsFailed?: (op: RefOp) => boolean;
}

export interface RefOptions {
  initialValue?: unknown;
  nilRead?: 'unknown' | 'value';
  failedCas?: 'ignored' | 'mismatch';
}

/** Values as Clojure compares them: nil is nil, and a set (`{"#set": [...]}`) is its members in any order. */
const same = (a: unknown, b: unknown) => JSON.stringify(normal(a)) === JSON.stringify(normal(b));

function normal(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(normal);
  if (typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  if (keys.length === 1 && keys[0] === '#set' && Array.isArray(o['#set']))
    return { '#set': o['#set'].map((x) => JSON.stringify(normal(x))).sort() };
  return Object.fromEntries(keys.map((k) => [k, normal(o[k])]));
}

/** A read whose result is known: only an ok completion says what it saw. */
const seen = (op: RefOp) => op.type === 'ok';

function register(cas: boolean, o: RefOptions): RefModel<unknown> {
  const nilFree = (v: unknown) => (v === null || v === undefined) && o.nilRead !== 'value';
  return {
    init: o.initialValue ?? null,
    keepsFailed: (op) => cas && op.f === 'cas' && o.failedCas === 'mismatch',
    step(s, op) {
      if (op.f === 'write') return op.input;
      if (op.f === 'read') return !seen(op) || nilFree(op.output) || same(s, op.output) ? s : ILLEGAL;
      if (op.f === 'cas' && cas) {
        const [from, to] = op.input as [unknown, unknown];
        if (op.type === 'fail') return same(s, from) ? ILLEGAL : s;
        return same(s, from) ? to : ILLEGAL;
      }
      throw new Error(`reference: no ${op.f}`);
    },
  };
}

export function referenceModel(name: string, o: RefOptions = {}): RefModel {
  const models: Record<string, () => RefModel> = {
    register: () => register(false, o),
    'cas-register': () => register(true, o),
    'multi-register': () => {
      const nilFree = (v: unknown) => (v === null || v === undefined) && o.nilRead !== 'value';
      return {
        init: null,
        // A key's type is part of it: 1 and "1" are two registers.
        key: (op) => {
          const k = (op.input as [unknown, unknown])[0];
          return `${typeof k}:${JSON.stringify(k)}`;
        },
        step(s: unknown, op: RefOp) {
          if (op.f === 'write') return (op.input as [string, unknown])[1];
          if (!seen(op)) return s;
          const v = (op.output as [string, unknown])[1];
          return nilFree(v) || same(s, v) ? s : ILLEGAL;
        },
      };
    },
    mutex: () => ({
      init: false,
      step: (held: boolean, op: RefOp) =>
        op.f === 'acquire' ? (held ? ILLEGAL : true) : held ? false : ILLEGAL,
    }),
    counter: () => ({
      init: (o.initialValue as number | undefined) ?? 0,
      step(n: number, op: RefOp) {
        if (op.f === 'add') return n + ((op.input as number | null) ?? 1);
        return !seen(op) || n === op.output ? n : ILLEGAL;
      },
    }),
    set: () => ({
      init: [] as string[],
      step(s: string[], op: RefOp) {
        const k = JSON.stringify(op.input);
        if (op.f === 'add') return s.includes(k) ? s : [...s, k].sort();
        if (!seen(op)) return s;
        const read = ((op.output as unknown[] | null) ?? []).map((x) => JSON.stringify(x)).sort();
        return same(read, s) ? s : ILLEGAL;
      },
    }),
    'fifo-queue': () => ({
      init: [] as unknown[],
      step(q: unknown[], op: RefOp) {
        if (op.f === 'enqueue') return [...q, op.input];
        // A dequeue whose result is unknown took the head, if there was one.
        if (!seen(op)) return q.slice(1);
        if (op.output === null || op.output === undefined) return q.length === 0 ? q : ILLEGAL;
        return q.length > 0 && same(q[0], op.output) ? q.slice(1) : ILLEGAL;
      },
    }),
    kv: () => ({
      init: (o.initialValue as string | undefined) ?? '',
      key: (op: RefOp) => op.key ?? '',
      step(s: string, op: RefOp) {
        if (op.f === 'put') return op.input as string;
        if (op.f === 'append') return s + (op.input as string);
        return !seen(op) || ((op.output as string | null) ?? '') === s ? s : ILLEGAL;
      },
    }),
  };
  const make = models[name];
  if (!make) throw new Error(`reference: no model ${name}`);
  return make();
}

interface Entry {
  op: RefOp;
  call: number;
  /** Completion index of an op that must take effect; +∞ for one that may or may not. */
  ret: number;
  required: boolean;
}

/** True when the history is linearizable for the model. */
export function referenceLinearizable(model: RefModel, ops: readonly RefOp[]): boolean {
  const parts = new Map<string, RefOp[]>();
  for (const op of ops) {
    const k = model.key?.(op) ?? '';
    parts.set(k, [...(parts.get(k) ?? []), op]);
  }
  return [...parts.values()].every((p) => searchPartition(model, p));
}

function searchPartition(model: RefModel, ops: readonly RefOp[]): boolean {
  const entries: Entry[] = [];
  for (const op of ops) {
    if (op.type === 'fail' && !model.keepsFailed?.(op)) continue;
    const required = op.type !== 'info' && op.ret !== null;
    entries.push({
      op,
      call: op.call,
      ret: required ? (op.ret as number) : Number.POSITIVE_INFINITY,
      required,
    });
  }
  const n = entries.length;
  if (n > 24) throw new Error(`reference: ${n} ops in one partition is too many for brute force`);
  const all = entries.reduce((m, e, i) => (e.required ? m | (1 << i) : m), 0);
  const failed = new Set<string>();
  const search = (placed: number, state: unknown): boolean => {
    if ((placed & all) === all) return true;
    const memo = `${placed}:${JSON.stringify(state)}`;
    if (failed.has(memo)) return false;
    for (let i = 0; i < n; i++) {
      if (placed & (1 << i)) continue;
      const e = entries[i] as Entry;
      // e can take effect now only if no unplaced op completed before e was invoked.
      if (entries.some((x, j) => !(placed & (1 << j)) && x.ret < e.call)) continue;
      const next = model.step(state, e.op);
      if (next !== ILLEGAL && search(placed | (1 << i), next)) return true;
    }
    failed.add(memo);
    return false;
  };
  return search(0, model.init);
}
