import fc from 'fast-check';
import { elleChecker } from '../../checkers/elle/index.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { history } from '../elle/helpers.ts';
import { historyText, minimalHistoryProblem, schedulePoints, txnsByOpId } from './elle.ts';

/**
 * Elle's rw-register verdicts against brute force.
 *
 * Histories of up to 5 transactions over two registers (writes of unique values, nil = the initial
 * state), each ok, failed (aborted) or info (unknown), run by processes that each issue one transaction
 * at a time (a process whose transaction ended info is not reused, as in Jepsen). Reads are those of a
 * serial execution in a random order, sometimes corrupted: a read of another value written to that key
 * (by any transaction, failed ones too), of nil, or of a value never written; and sometimes a
 * transaction writes nil.
 *
 * rw-register infers, it does not search, and without a version order it misses much, so it is held
 * to soundness: where brute force finds a serial order (serializable), or one that also keeps every
 * completed transaction before those invoked after it (strict-serializable), Elle must not say invalid,
 * with each version-order source it offers (initial state and writes-follow-reads for both; process and
 * realtime order, which assume more, for strict-serializable). A history with a written nil must stop with `nil-write` (a read of nil cannot tell it from
 * the initial state). What it must find by definition, it must find: a read of a value only a failed
 * transaction wrote (G1a), a read that contradicts its own transaction's earlier micro-ops (internal),
 * and two committed transactions that read the same version of a key and both wrote it (lost-update).
 * Every invalid history's minimal failing sub-history must fail alone, the same way, and have no serial
 * order by brute force.
 */
interface Mop {
  f: 'r' | 'w';
  k: 'x' | 'y';
  v: number | null;
}
export interface RwTxn {
  mops: Mop[];
  type: 'ok' | 'fail' | 'info';
  call: number;
  ret: number;
  process: number;
}

/** A value no transaction writes. */
const NEVER_WRITTEN = 99;

const txnArb = fc.record({
  mops: fc.array(fc.record({ read: fc.boolean(), key: fc.nat(1) }), { minLength: 1, maxLength: 3 }),
  outcome: fc.nat(9),
  corrupt: fc.nat(15),
  pick: fc.nat(99),
  priority: fc.nat(99),
  start: fc.nat(20),
  len: fc.nat(10),
});
export const rwHistoryArb = fc.array(txnArb, { minLength: 1, maxLength: 5 });
type TxnSpec = typeof txnArb extends fc.Arbitrary<infer T> ? T : never;

export function buildRwTxns(specs: readonly TxnSpec[]): RwTxn[] {
  let next = 1;
  const txns: RwTxn[] = specs.map((s) => ({
    mops: s.mops.map(
      (m): Mop => ({ f: m.read ? 'r' : 'w', k: m.key ? 'y' : 'x', v: m.read ? null : next++ }),
    ),
    type: s.outcome < 7 ? 'ok' : s.outcome === 7 ? 'fail' : 'info',
    call: s.start * 2,
    ret: (s.start + s.len) * 2 + 1,
    process: 0,
  }));
  // corrupt 3: the txn's first write is of nil.
  specs.forEach((s, i) => {
    const w = (txns[i] as RwTxn).mops.find((m) => m.f === 'w');
    if (s.corrupt === 3 && w) w.v = null;
  });
  assignProcesses(txns);
  // Serial execution in priority order: committed txns and half of the unknown ones take effect.
  const state: Record<string, number | null> = { x: null, y: null };
  const order = txns.map((_t, i) => i).sort((a, b) => (specs[a]?.priority ?? 0) - (specs[b]?.priority ?? 0));
  for (const i of order) {
    const t = txns[i] as RwTxn;
    if (t.type === 'fail' || (t.type === 'info' && (specs[i] as TxnSpec).outcome === 9)) continue;
    for (const m of t.mops) {
      if (m.f === 'w') state[m.k] = m.v;
      else m.v = state[m.k] ?? null;
    }
  }
  // corrupt 0–2: an ok txn's first read sees another written value of its key, nil, or a value never written.
  specs.forEach((s, i) => {
    const t = txns[i] as RwTxn;
    const read = t.mops.find((m) => m.f === 'r');
    if (t.type !== 'ok' || !read) return;
    if (s.corrupt === 0) {
      const written = txns.flatMap((u) =>
        u.mops.filter((m) => m.f === 'w' && m.k === read.k && m.v !== null),
      );
      if (written.length > 0) read.v = (written[s.pick % written.length] as Mop).v;
    }
    if (s.corrupt === 1) read.v = null;
    if (s.corrupt === 2) read.v = NEVER_WRITTEN;
  });
  for (const t of txns) if (t.type !== 'ok') for (const m of t.mops) if (m.f === 'r') m.v = null;
  return txns;
}

/**
 * Processes as a client pool has them: each runs one transaction at a time (the next is invoked after
 * the last one completed), and one whose transaction ended info is replaced by a new process.
 */
function assignProcesses(txns: RwTxn[]): void {
  const free: { process: number; ret: number }[] = [];
  let fresh = 0;
  for (const t of [...txns].sort((a, b) => a.call - b.call)) {
    const slot = free.find((p) => p.ret < t.call);
    if (slot) {
      t.process = slot.process;
      free.splice(free.indexOf(slot), 1);
    } else t.process = fresh++;
    if (t.type !== 'info') free.push({ process: t.process, ret: t.ret });
    free.sort((a, b) => a.process - b.process);
  }
}

export function toRwOps(txns: readonly RwTxn[]): Operation[] {
  return history(
    txns.map((t) => ({
      mops: t.mops.map((m) => [m.f, m.k, m.v] as [string, unknown, unknown]),
      type: t.type,
      process: t.process,
    })),
    schedulePoints(txns).map(([, i, done]) => [done ? 'c' : 'i', i]),
  );
}

/**
 * Some serial order of the ok txns (and any of the info ones) in which every ok read sees the register's
 * value at its turn (its own txn's writes included); with `realtime`, one that also puts every ok txn
 * before each txn invoked after it completed.
 */
export function bruteForceRegisters(txns: readonly RwTxn[], realtime: boolean): boolean {
  const live = txns.filter((t) => t.type !== 'fail');
  const go = (placed: Set<RwTxn>, state: Record<string, number | null>): boolean => {
    if (live.every((t) => t.type !== 'ok' || placed.has(t))) return true;
    for (const t of live) {
      if (placed.has(t)) continue;
      if (realtime && live.some((a) => a.type === 'ok' && a.ret < t.call && !placed.has(a))) continue;
      const s = { ...state };
      let fits = true;
      for (const m of t.mops) {
        if (m.f === 'w') s[m.k] = m.v;
        else if (t.type === 'ok' && m.v !== s[m.k]) fits = false;
      }
      if (fits && go(new Set([...placed, t]), s)) return true;
    }
    return false;
  };
  return go(new Set(), { x: null, y: null });
}

/** Anomalies the history shows by definition, which Elle must report (when no nil is written). */
function mustFind(txns: readonly RwTxn[]): string[] {
  const found = new Set<string>();
  const failedValues = new Set(
    txns.flatMap((t) =>
      t.type === 'fail' ? t.mops.filter((m) => m.f === 'w').map((m) => `${m.k}=${m.v}`) : [],
    ),
  );
  const externalReads: { t: RwTxn; k: string; v: number | null }[] = [];
  for (const t of txns) {
    if (t.type !== 'ok') continue;
    const known = new Map<string, number | null>();
    for (const m of t.mops) {
      if (m.f === 'r') {
        if (known.has(m.k) && known.get(m.k) !== m.v) found.add('internal');
        if (!known.has(m.k)) {
          if (m.v !== null && failedValues.has(`${m.k}=${m.v}`)) found.add('G1a');
          if (t.mops.some((w) => w.f === 'w' && w.k === m.k)) externalReads.push({ t, k: m.k, v: m.v });
        }
      }
      known.set(m.k, m.v);
    }
  }
  // Two committed txns read the same version of a key first and then both wrote it.
  for (const a of externalReads)
    if (externalReads.some((b) => b !== a && b.k === a.k && b.v === a.v)) found.add('lost-update');
  return [...found];
}

export interface RwTally {
  histories: number;
  serializable: number;
  strictSerializable: number;
  notSerializable: number;
  elleInvalid: number;
  strictInvalid: number;
  nilWrites: number;
  mustFind: number;
  shrunk: number;
}

/**
 * The version-order sources, each with the weakest model it is sound for: process and realtime order
 * assume each key is sequential or linearizable, which serializability alone does not promise (a
 * process may read nil after its own write, in a serial order that puts the read first).
 */
const SOURCES = [
  { label: 'initial state', options: {}, strictOnly: false },
  { label: 'writes-follow-reads', options: { wfrKeys: true }, strictOnly: false },
  { label: 'process order', options: { sequentialKeys: true }, strictOnly: true },
  { label: 'realtime order', options: { linearizableKeys: true }, strictOnly: true },
] as const;

export async function elleRwDifferential(numRuns: number, seed: number): Promise<RwTally> {
  const tally: RwTally = {
    histories: 0,
    serializable: 0,
    strictSerializable: 0,
    notSerializable: 0,
    elleInvalid: 0,
    strictInvalid: 0,
    nilWrites: 0,
    mustFind: 0,
    shrunk: 0,
  };
  let problem = '';
  const check = (ops: readonly Operation[], model: string, options: object = {}) =>
    elleChecker.check(ops, { workload: 'rw-register', consistencyModels: [model], ...options });
  const details = await fc.check(
    fc.property(rwHistoryArb, (specs) => {
      const txns = buildRwTxns(specs);
      const ops = toRwOps(txns);
      const serial = bruteForceRegisters(txns, false);
      const strict = serial && bruteForceRegisters(txns, true);
      tally.histories++;
      if (serial) tally.serializable++;
      else tally.notSerializable++;
      if (strict) tally.strictSerializable++;
      const nilWritten = txns.some(
        (t) => t.type !== 'fail' && t.mops.some((m) => m.f === 'w' && m.v === null),
      );
      for (const [model, holds] of [
        ['serializable', serial],
        ['strict-serializable', strict],
      ] as const) {
        for (const source of SOURCES) {
          if (source.strictOnly && model === 'serializable') continue;
          const r = check(ops, model, source.options);
          if (nilWritten) {
            if (r.valid !== 'unknown' || !r.anomalyTypes.includes('nil-write')) {
              problem = `a transaction writes nil, but Elle (${model}, ${source.label}) says ${r.evidence}`;
              return false;
            }
            continue;
          }
          if (holds && r.valid === false) {
            problem = `Elle says not ${model} with the ${source.label} as version order (${r.evidence}), brute force found an order`;
            return false;
          }
          if (source.label === 'initial state' && r.valid === false) {
            if (model === 'serializable') tally.elleInvalid++;
            else tally.strictInvalid++;
          }
        }
      }
      if (nilWritten) {
        tally.nilWrites++;
        return true;
      }
      const r = check(ops, 'serializable');
      const wanted = mustFind(txns);
      if (wanted.length > 0) tally.mustFind++;
      const missed = wanted.filter((t) => !r.anomalyTypes.includes(t));
      if (missed.length > 0) {
        problem = `the history shows ${missed.join(', ')} by definition, but Elle reports ${JSON.stringify(r.anomalyTypes)}`;
        return false;
      }
      if (r.valid === false) {
        const byId = txnsByOpId(txns);
        const shrunk = minimalHistoryProblem(
          r,
          ops,
          (core) => check(core, 'serializable'),
          (core) =>
            bruteForceRegisters(
              core.map((op) => byId[op.id] as RwTxn),
              false,
            ),
        );
        if (typeof shrunk === 'string') {
          problem = shrunk;
          return false;
        }
        tally.shrunk++;
      }
      return true;
    }),
    { numRuns, seed },
  );
  if (details.failed) {
    const txns = buildRwTxns((details.counterexample?.[0] ?? []) as TxnSpec[]);
    throw new Error(
      `elle rw-register: ${problem} (seed ${seed}, shrunk ${details.numShrinks} times):\n${historyText(toRwOps(txns))}`,
    );
  }
  return tally;
}
