import fc from 'fast-check';
import type { CycleAnomaly } from '../../checkers/elle/cycle-anomaly.ts';
import { type ElleCheckResult, elleChecker } from '../../checkers/elle/index.ts';
import type { Operation } from '../../src/core/history/operation.ts';
import { history } from '../elle/helpers.ts';

/**
 * Elle's list-append verdicts against brute force, and every cycle it explains re-checked edge by edge.
 *
 * Histories of up to 5 transactions over two keys (appends of unique values, reads of whole lists), each
 * ok, failed (aborted) or info (unknown); reads are those of a serial execution in a random order,
 * sometimes corrupted (an element dropped: a list with a gap; the order reversed; a value never written).
 * Elle must find every non-serializable history, including those whose only fault is a read of a value no
 * transaction appended (garbage-read) or a read listing one transaction's appends out of order.
 *
 * Serializable by brute force: some order of the committed transactions, plus any subset of the unknown
 * ones, in which every ok transaction's reads equal the lists at its turn. Elle may miss an anomaly (it
 * infers, it does not search), but every anomaly it reports under `serializable` must be real: when the
 * brute force finds a serial order, Elle must not say invalid. Each step of each reported cycle must be
 * an order the history proves: wr (the reader's list holds the writer's append), ww (the two appends in
 * that order in some read, a read holding the first without the committed second, or the second writer
 * having read the first), rw (the reader's list lacks an append the writer committed), realtime
 * (completed before invoked), process (same process, earlier).
 */
interface Mop {
  f: 'r' | 'append';
  k: string;
  v: number | number[] | null;
}
interface Txn {
  mops: Mop[];
  type: 'ok' | 'fail' | 'info';
  call: number;
  ret: number;
  process: number;
}

const txnArb = fc.record({
  mops: fc.array(fc.record({ read: fc.boolean(), key: fc.nat(1) }), { minLength: 1, maxLength: 3 }),
  outcome: fc.nat(9),
  corrupt: fc.nat(11),
  priority: fc.nat(99),
  start: fc.nat(20),
  len: fc.nat(10),
});
export const elleHistoryArb = fc.array(txnArb, { minLength: 1, maxLength: 5 });

type Spec = fc.Arbitrary<typeof txnArb extends fc.Arbitrary<infer T> ? T : never>;
type TxnSpec = Spec extends fc.Arbitrary<infer T> ? T : never;

export function buildTxns(specs: readonly TxnSpec[]): Txn[] {
  let next = 1;
  const txns: Txn[] = specs.map((s, i) => ({
    mops: s.mops.map((m) => ({
      f: m.read ? 'r' : 'append',
      k: m.key ? 'y' : 'x',
      v: m.read ? null : next++,
    })),
    type: s.outcome < 7 ? 'ok' : s.outcome === 7 ? 'fail' : 'info',
    call: s.start * 2,
    ret: (s.start + s.len) * 2 + 1,
    process: i,
  }));
  // Serial execution in priority order: committed txns and half of the unknown ones take effect.
  const state: Record<string, number[]> = { x: [], y: [] };
  const order = txns.map((_t, i) => i).sort((a, b) => (specs[a]?.priority ?? 0) - (specs[b]?.priority ?? 0));
  for (const i of order) {
    const t = txns[i] as Txn;
    const s = specs[i] as TxnSpec;
    if (t.type === 'fail' || (t.type === 'info' && s.outcome === 9)) continue;
    for (const m of t.mops) {
      if (m.f === 'append') (state[m.k] as number[]).push(m.v as number);
      else m.v = [...(state[m.k] as number[])];
    }
  }
  specs.forEach((s, i) => {
    const t = txns[i] as Txn;
    const read = t.mops.find((m) => m.f === 'r');
    if (t.type !== 'ok' || !read) return;
    const l = (read.v as number[] | null) ?? [];
    if (s.corrupt === 0 && l.length > 0) read.v = l.filter((_, j) => j !== s.priority % l.length);
    if (s.corrupt === 1) read.v = [...l].reverse();
    if (s.corrupt === 2) read.v = [...l, 99];
  });
  for (const t of txns) if (t.type !== 'ok') for (const m of t.mops) if (m.f === 'r') m.v = null;
  return txns;
}

export function toElleOps(txns: readonly Txn[]): Operation[] {
  const points = schedulePoints(txns);
  return history(
    txns.map((t) => ({
      mops: t.mops.map((m) => [m.f, m.k, m.v] as [string, unknown, unknown]),
      type: t.type,
      process: t.process,
    })),
    points.map(([, i, done]) => [done ? 'c' : 'i', i]),
  );
}

/** Invocations and completions in time order: [time, txn index, is completion]. */
export function schedulePoints(txns: readonly { call: number; ret: number }[]): [number, number, boolean][] {
  const points: [number, number, boolean][] = [];
  txns.forEach((t, i) => {
    points.push([t.call, i, false], [t.ret, i, true]);
  });
  return points.sort((a, b) => a[0] - b[0] || Number(a[2]) - Number(b[2]) || a[1] - b[1]);
}

/** The txn each op built from a schedule stands for, by op id (ops are numbered in invocation order). */
export function txnsByOpId<T extends { call: number; ret: number }>(txns: readonly T[]): T[] {
  return schedulePoints(txns)
    .filter(([, , done]) => !done)
    .map(([, i]) => txns[i] as T);
}

/**
 * Some serial order of the ok txns (and any of the info ones) gives every ok read its list; with
 * `realtime`, one that also puts every ok txn before each txn invoked after it completed.
 */
export function bruteForceSerializable(txns: readonly Txn[], realtime = false): boolean {
  const live = txns.filter((t) => t.type !== 'fail');
  const go = (placed: Set<Txn>, state: Record<string, number[]>): boolean => {
    if (live.every((t) => t.type !== 'ok' || placed.has(t))) return true;
    for (const t of live) {
      if (placed.has(t)) continue;
      if (realtime && live.some((a) => a.type === 'ok' && a.ret < t.call && !placed.has(a))) continue;
      const s = { x: [...(state.x ?? [])], y: [...(state.y ?? [])] } as Record<string, number[]>;
      let fits = true;
      for (const m of t.mops) {
        if (m.f === 'append') (s[m.k] as number[]).push(m.v as number);
        else if (t.type === 'ok' && JSON.stringify(m.v) !== JSON.stringify(s[m.k])) fits = false;
      }
      if (fits && go(new Set([...placed, t]), s)) return true;
    }
    return false;
  };
  return go(new Set(), { x: [], y: [] });
}

/** Why a reported step is not an edge of the history, or null when it is. */
export function unjustifiedStep(
  ops: readonly Operation[],
  step: { rel: string; from: number; to: number },
): string | null {
  const a = ops.find((o) => o.invokeIndex === step.from);
  const b = ops.find((o) => o.invokeIndex === step.to);
  if (!a || !b) return `step ${step.from} → ${step.to}: no such ops`;
  const mops = (o: Operation) =>
    ((o.type === 'ok' ? o.output : o.input) as [string, string, unknown][]) ?? [];
  const appends = (o: Operation) => mops(o).filter((m) => m[0] === 'append');
  const reads = ops.flatMap((o) =>
    o.type === 'ok'
      ? mops(o)
          .filter((m) => m[0] === 'r')
          .map((m) => ({ k: m[1], l: m[2] as number[], o }))
      : [],
  );
  // A txn took effect: it committed, or some read shows one of its appends.
  const committed = (o: Operation, _m?: unknown) =>
    o.type === 'ok' ||
    appends(o).some((m) => reads.some((r) => r.k === m[1] && r.l.includes(m[2] as number)));
  const ok = (() => {
    switch (step.rel) {
      case 'wr':
        // The reader saw the writer's append.
        return reads.some(
          (r) => r.o === b && appends(a).some((m) => m[1] === r.k && r.l.includes(m[2] as number)),
        );
      case 'ww':
        // The first append precedes the second in the list: a read shows x before y, or shows x without
        // the committed y (lists only grow, so y comes later), or the second writer read x before appending.
        return appends(a).some((x) =>
          appends(b).some(
            (y) =>
              x[1] === y[1] &&
              (reads.some(
                (r) =>
                  r.k === x[1] &&
                  r.l.includes(x[2] as number) &&
                  (r.l.includes(y[2] as number)
                    ? r.l.indexOf(x[2] as number) < r.l.indexOf(y[2] as number)
                    : committed(b, y)),
              ) ||
                reads.some((r) => r.o === b && r.k === x[1] && r.l.includes(x[2] as number))),
          ),
        );
      case 'rw':
        // An anti-dependency: the reader's list lacks an append the writer committed, so the reader saw
        // an earlier version and must come first. (Elle draws the edge to the next version's writer; any
        // committed append the read lacks orders the two transactions the same way.)
        return reads.some(
          (r) =>
            r.o === a &&
            appends(b).some((y) => y[1] === r.k && !r.l.includes(y[2] as number) && committed(b, y)),
        );
      case 'realtime':
        return a.type !== 'info' && a.completeIndex !== null && a.completeIndex < b.invokeIndex;
      case 'process':
        return a.process === b.process && a.invokeIndex < b.invokeIndex;
      default:
        return false;
    }
  })();
  return ok ? null : `${step.rel} step op ${step.from} → op ${step.to} is not shown by the history`;
}

/** Some key's longest ok read lists two appends of one txn in the opposite order to the txn's. */
function reversesOwnAppends(txns: readonly Txn[]): boolean {
  const longest: Record<string, number[]> = {};
  for (const t of txns)
    if (t.type === 'ok')
      for (const m of t.mops)
        if (m.f === 'r' && Array.isArray(m.v) && m.v.length > (longest[m.k]?.length ?? 0)) longest[m.k] = m.v;
  return txns.some((t) =>
    t.mops.some((a, i) =>
      t.mops.some(
        (b, j) =>
          j > i &&
          a.f === 'append' &&
          b.f === 'append' &&
          a.k === b.k &&
          (longest[a.k] ?? []).includes(a.v as number) &&
          (longest[a.k] ?? []).indexOf(b.v as number) >= 0 &&
          (longest[a.k] ?? []).indexOf(b.v as number) < (longest[a.k] ?? []).indexOf(a.v as number),
      ),
    ),
  );
}

export interface ElleTally {
  histories: number;
  serializable: number;
  notSerializable: number;
  elleInvalid: number;
  /** Histories holding a read of a value never appended (each must be reported as garbage-read). */
  garbage: number;
  /** Histories whose longest read of a key lists one txn's appends out of order (incompatible-order). */
  ownOrder: number;
  cyclesVerified: number;
  /** Invalid histories whose minimal sub-history was re-checked (invalid alone, the same type, and no serial order). */
  shrunk: number;
  /** Ops in those minimal sub-histories, in all. */
  shrunkOps: number;
  /** Histories whose reads disagree on a key's order: their cycles are not re-verified. */
  incompatible: number;
  /** Histories Elle found not strict-serializable (each checked against brute force with real time). */
  strictInvalid: number;
}

/** Ops as history JSON lines, ready for `faultline check` (a disagreement is printed this way). */
export function historyText(ops: readonly Operation[]): string {
  return ops
    .flatMap((o) => [
      { index: o.invokeIndex, type: 'invoke', process: o.process, f: 'txn', value: o.input },
      ...(o.completeIndex === null
        ? []
        : [
            {
              index: o.completeIndex,
              type: o.type,
              process: o.process,
              f: 'txn',
              value: o.type === 'ok' ? o.output : o.input,
            },
          ]),
    ])
    .sort((x, y) => x.index - y.index)
    .map((e) => JSON.stringify({ ...e, time: e.index, node: null, faultEpoch: null }))
    .join('\n');
}

/**
 * An invalid result's minimal failing sub-history, checked: it must exist, fail alone with its type and
 * no type the whole history did not show, and have no serial order by brute force. The sub-history's
 * ops, or what is wrong with it.
 */
export function minimalHistoryProblem(
  r: ElleCheckResult,
  ops: readonly Operation[],
  recheck: (core: Operation[]) => ElleCheckResult,
  serialisable: (core: Operation[]) => boolean,
): Operation[] | string {
  const m = r.stats.minimalHistory as { type: string; invokeIndices: number[] } | undefined;
  if (!m) return `an invalid history carries no minimal failing sub-history (${r.evidence})`;
  const keep = new Set(m.invokeIndices);
  const core = ops.filter((op) => keep.has(op.invokeIndex));
  const again = recheck(core);
  if (!again.anomalyTypes.includes(m.type) || again.anomalyTypes.some((t) => !r.anomalyTypes.includes(t)))
    return `the minimal sub-history (ops ${m.invokeIndices.join(', ')}) shows ${JSON.stringify(again.anomalyTypes)}, not ${m.type} within ${JSON.stringify(r.anomalyTypes)}`;
  if (serialisable(core))
    return `the minimal sub-history (ops ${m.invokeIndices.join(', ')}) has a serial order`;
  return core;
}

export async function elleDifferential(
  numRuns: number,
  seed: number,
): Promise<ElleTally & { histories: number }> {
  const tally: ElleTally = {
    histories: 0,
    serializable: 0,
    notSerializable: 0,
    elleInvalid: 0,
    garbage: 0,
    ownOrder: 0,
    cyclesVerified: 0,
    shrunk: 0,
    shrunkOps: 0,
    incompatible: 0,
    strictInvalid: 0,
  };
  let problem = '';
  const details = await fc.check(
    fc.property(elleHistoryArb, (specs) => {
      const txns = buildTxns(specs);
      const ops = toElleOps(txns);
      const r = elleChecker.check(ops, { workload: 'list-append', consistencyModels: ['serializable'] });
      const serial = bruteForceSerializable(txns);
      tally.histories++;
      if (serial) tally.serializable++;
      else tally.notSerializable++;
      if (r.valid === false) tally.elleInvalid++;
      if (!serial && r.valid === true) {
        problem = `Elle says serializable (${r.evidence}), brute force finds no serial order`;
        return false;
      }
      // 99 is never appended: a read holding it is a garbage read, whatever else the history shows.
      if (txns.some((t) => t.type === 'ok' && t.mops.some((m) => Array.isArray(m.v) && m.v.includes(99)))) {
        tally.garbage++;
        if (!r.anomalyTypes.includes('garbage-read')) {
          problem = `a read holds 99, which nothing appended, but Elle reports ${JSON.stringify(r.anomalyTypes)}`;
          return false;
        }
      }
      if (reversesOwnAppends(txns)) {
        tally.ownOrder++;
        if (!r.anomalyTypes.includes('incompatible-order')) {
          problem = `a read lists one transaction's appends out of order, but Elle reports ${JSON.stringify(r.anomalyTypes)}`;
          return false;
        }
      }
      if (serial && r.valid === false) {
        problem = `Elle says not serializable (${r.evidence}), brute force found a serial order`;
        return false;
      }
      // The minimal failing sub-history fails alone, the same way, and brute force agrees it has no
      // serial order.
      if (r.valid === false) {
        const byId = txnsByOpId(txns);
        const shrunk = minimalHistoryProblem(
          r,
          ops,
          (core) => elleChecker.check(core, { workload: 'list-append', consistencyModels: ['serializable'] }),
          (core) => bruteForceSerializable(core.map((op) => byId[op.id] as Txn)),
        );
        if (typeof shrunk === 'string') {
          problem = shrunk;
          return false;
        }
        const core = shrunk;
        tally.shrunk++;
        tally.shrunkOps += core.length;
      }
      // Every explained cycle, whatever the verdict, edge by edge; unless reads contradict each other
      // (incompatible orders), when edges hang on which read's order is believed and Elle says so.
      const full = elleChecker.check(ops, {
        workload: 'list-append',
        consistencyModels: ['strict-serializable'],
      });
      // Sound under real time too: where some serial order also keeps real time, never invalid.
      if (serial && full.valid === false && bruteForceSerializable(txns, true)) {
        problem = `Elle says not strict-serializable (${full.evidence}), brute force found an order that keeps real time`;
        return false;
      }
      if (full.valid === false) tally.strictInvalid++;
      if (full.anomalyTypes.includes('incompatible-order')) {
        tally.incompatible++;
        return true;
      }
      for (const an of [...r.anomalies, ...full.anomalies] as CycleAnomaly[]) {
        for (const s of an.steps ?? []) {
          const why = unjustifiedStep(ops, s);
          if (why) {
            problem = `${an.type}: ${why}`;
            return false;
          }
          tally.cyclesVerified++;
        }
      }
      return true;
    }),
    { numRuns, seed },
  );
  if (details.failed) {
    const txns = buildTxns((details.counterexample?.[0] ?? []) as TxnSpec[]);
    throw new Error(
      `elle list-append: ${problem} (seed ${seed}, shrunk ${details.numShrinks} times):\n${historyText(toElleOps(txns))}`,
    );
  }
  return tally;
}
