/**
 * An independent reference for Knossos's verdicts, written from the definitions in `knossos.model` and
 * `knossos.history` (not from faultline's models), used to check that faultline gives the same verdict
 * for the same history, model and initial value.
 *
 * - History preparation (`history/complete`, `with-synthetic-infos`, `without-failures`): an ok
 *   completion's value replaces its invocation's; a failed op is removed; an op completed with info, or
 *   never completed, keeps its invocation's value and may take effect at any point after its invocation,
 *   or never. Nemesis ops (info with no invocation of their own) are ignored.
 * - Models (`knossos.model`): Register, CASRegister, Mutex and MultiRegister, as the `step` functions
 *   there: a nil read value is always legal.
 * - Search: brute force over every order consistent with real time (an op that completed before another
 *   was invoked comes first), with memoisation on (ops placed, model state). Small histories only.
 *
 * The `strict` variants are the options faultline adds for clients that mean more: `nilRead: 'value'` (a
 * nil read must see nil) and `failedCas: 'mismatch'` (a failed cas is a required compare that saw
 * another value).
 */
export type Kw = `:${string}`;
export type EdnValue = null | number | Kw | EdnValue[];

export interface JepsenOp {
  process: number | ':nemesis';
  type: ':invoke' | ':ok' | ':fail' | ':info';
  f: Kw;
  value: EdnValue;
}

export type ModelName = 'register' | 'cas-register' | 'mutex' | 'multi-register';

export interface ReferenceOptions {
  model: ModelName;
  /** register/cas-register: the register's value; multi-register: a map of keyword → value. */
  initial: EdnValue | Record<string, EdnValue>;
  nilReadIsValue?: boolean;
  failedCasMismatch?: boolean;
}

type State = EdnValue | boolean | Record<string, EdnValue>;
const INCONSISTENT = Symbol('inconsistent');

/** Clojure `=` on the values these histories use (numbers, keywords, nil, vectors). */
function eq(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

interface Entry {
  f: Kw;
  value: EdnValue;
  call: number;
  ret: number;
  required: boolean;
  /** A failed cas kept as an observation (strict variant only). */
  failedCas: boolean;
  /** Completed ok: its reads are what the client saw (a crashed op's reads are its invocation's). */
  observed: boolean;
}

function prepare(history: readonly JepsenOp[], o: ReferenceOptions): Entry[] {
  const open = new Map<JepsenOp['process'], Entry>();
  const out: Entry[] = [];
  history.forEach((op, i) => {
    const p = op.process;
    if (op.type === ':invoke') {
      const e: Entry = {
        f: op.f,
        value: op.value,
        call: i,
        ret: Number.POSITIVE_INFINITY,
        required: false,
        failedCas: false,
        observed: false,
      };
      open.set(p, e);
      out.push(e);
      return;
    }
    const e = open.get(p);
    if (!e) return; // a nemesis info, or an info with no invocation: Knossos ignores it
    open.delete(p);
    if (op.type === ':ok') {
      e.value = op.value;
      e.ret = i;
      e.required = true;
      e.observed = true;
    } else if (op.type === ':fail') {
      if (o.failedCasMismatch && e.f === ':cas') {
        e.ret = i;
        e.required = true;
        e.failedCas = true;
      } else {
        out.splice(out.indexOf(e), 1);
      }
    }
    // :info leaves the op crashed: optional, with its invocation's value.
  });
  return out;
}

function step(state: State, e: Entry, o: ReferenceOptions): State | typeof INCONSISTENT {
  // A nil read constrains nothing (Knossos), unless the client meant nil and this op's result was seen.
  const nilOk = (v: EdnValue) => v === null && !(o.nilReadIsValue && e.observed);
  switch (o.model) {
    case 'register':
    case 'cas-register':
      if (e.f === ':write') return e.value;
      if (e.f === ':read') return nilOk(e.value) || eq(state, e.value) ? state : INCONSISTENT;
      if (e.f === ':cas' && o.model === 'cas-register') {
        const [cur, next] = e.value as [EdnValue, EdnValue];
        if (e.failedCas) return eq(cur, state) ? INCONSISTENT : state;
        return eq(cur, state) ? next : INCONSISTENT;
      }
      throw new Error(`reference: ${o.model} has no ${e.f}`);
    case 'mutex':
      if (e.f === ':acquire') return state ? INCONSISTENT : true;
      if (e.f === ':release') return state ? false : INCONSISTENT;
      throw new Error(`reference: mutex has no ${e.f}`);
    case 'multi-register': {
      if (e.f !== ':txn') throw new Error('reference: multi-register ops are :txn');
      let s = { ...(state as Record<string, EdnValue>) };
      for (const [f, k, v] of e.value as [Kw, Kw, EdnValue][]) {
        if (f === ':read') {
          if (!(nilOk(v) || eq(s[k] ?? null, v))) return INCONSISTENT;
        } else if (f === ':write') {
          s = { ...s, [k]: v };
        } else throw new Error(`reference: micro-op ${f}`);
      }
      return s;
    }
  }
}

/** Knossos's verdict (true: linearizable) for a history, by exhaustive search. */
export function knossosVerdict(history: readonly JepsenOp[], o: ReferenceOptions): boolean {
  const entries = prepare(history, o);
  const n = entries.length;
  if (n > 20) throw new Error('reference: history too long for brute force');
  const seen = new Set<string>();
  const search = (placed: number, state: State): boolean => {
    if (entries.every((e, i) => !e.required || placed & (1 << i))) return true;
    const memo = `${placed}:${JSON.stringify(state)}`;
    if (seen.has(memo)) return false;
    seen.add(memo);
    for (let i = 0; i < n; i++) {
      if (placed & (1 << i)) continue;
      const e = entries[i] as Entry;
      // e may take effect now only if no op still unplaced had completed before e was invoked.
      if (entries.some((x, j) => j !== i && !(placed & (1 << j)) && x.ret < e.call)) continue;
      const next = step(state, e, o);
      if (next !== INCONSISTENT && search(placed | (1 << i), next)) return true;
    }
    return false;
  };
  const init: State =
    o.model === 'mutex'
      ? false
      : o.model === 'multi-register'
        ? { ...((o.initial ?? {}) as Record<string, EdnValue>) }
        : (o.initial as EdnValue);
  return search(0, init);
}

/** EDN text of a value (keywords are strings starting with ':'). */
export function edn(v: EdnValue | Record<string, EdnValue>): string {
  if (v === null) return 'nil';
  if (typeof v === 'number' || typeof v === 'string') return String(v);
  if (Array.isArray(v)) return `[${v.map(edn).join(' ')}]`;
  return `{${Object.entries(v)
    .map(([k, x]) => `${k} ${edn(x)}`)
    .join(', ')}}`;
}

/** A history as Jepsen writes history.edn: one op map per line, with :index. */
export function historyEdn(history: readonly JepsenOp[]): string {
  return history
    .map(
      (op, i) =>
        `{:index ${i}, :type ${op.type}, :process ${op.process}, :f ${op.f}, :value ${edn(op.value)}}\n`,
    )
    .join('');
}
