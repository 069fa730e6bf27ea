import { join } from 'node:path';
import type { Operation } from '../../src/core/history/operation.ts';
import { makeOutputDir, writeFileAtomicSync } from '../../src/core/util/atomic-write.ts';
import { monotonicMs } from '../../src/core/util/clock.ts';
import { errorMessage } from '../../src/core/util/errors.ts';
import { subHistoryLines } from '../sub-history.ts';
import type { Anomaly, CheckContext, CheckResult, Validity } from '../types.ts';
import { addAnomaly, type WorkloadAnalysis, WorkloadError } from './analysis.ts';
import { i32, withArena } from './arena.ts';
import type { CycleAnomaly, CycleStep } from './cycle-anomaly.ts';
import {
  anyCycle,
  CYCLE_SPECS,
  type CycleSpec,
  type FoundCycle,
  hasCycle,
  hasNonadjacentCycle,
  type LocalGraph,
  legalRels,
  localGraph,
  searchCycle,
} from './cycles.ts';
import {
  buildCsr,
  DATA,
  type EdgeList,
  PROCESS,
  REALTIME,
  REL_NAMES,
  RW,
  tarjan,
  tarjanWorkspace,
  WR,
  WW,
} from './graph.ts';
import {
  boundary,
  CYCLE_EXISTS_NAME,
  impliedAnomalies,
  prohibitedAnomalies,
  UNKNOWN_ANOMALIES,
} from './lattice.ts';
import { analyseListAppend } from './list-append.ts';
import { DEFAULT_CYCLE_SEARCH_TIMEOUT_MS, DEFAULT_MODELS, elleOptionsSchema } from './options.ts';
import { addProcessEdges, realtimeOrder } from './order-edges.ts';
import { writeArtifacts } from './render.ts';
import { analyseRwRegister } from './rw-register.ts';
import { shrinkElleFailure } from './shrink.ts';
import { MicroOpError, renderMop, TxnBuilder, type TxnHistory, txnType } from './txns.ts';

export type { CycleAnomaly, CycleStep };

/** CheckResult plus Elle's verdict fields (also mirrored into `stats`). */
export interface ElleCheckResult extends CheckResult {
  anomalyTypes: string[];
  not: string[];
  alsoNot: string[];
}

/** Cases kept per anomaly type in the result (all are counted in stats and written to the text file). */
const MAX_CASES_IN_RESULT = 100;

const SCOPE =
  'Infers ww/wr/rw dependencies (plus process or realtime order) from client-observed transactions and ' +
  'reports cycles and non-cycle anomalies; it needs unique written values (and, for list-append, reads ' +
  'of whole lists), never searches alternative version orders, reports one cycle per anomaly type per ' +
  'strongly connected component, and cannot see predicate anomalies (G2, G-single without -item).';

export function runElle(
  ops: Iterable<Operation>,
  rawOptions: unknown,
  ctx: CheckContext = {},
): ElleCheckResult {
  const builder = elleHistoryBuilder(rawOptions);
  const kept = keptOps();
  for (const op of ops) {
    builder.add(op);
    kept.add(op);
  }
  return runElleOn(builder, rawOptions, ctx, kept);
}

/**
 * The ops a check keeps to shrink a FAIL with: all of them up to SHRINK_MAX_OPS, none beyond (a history
 * that large is not shrunk, so the streamed check of a huge history keeps no ops).
 *
 * `compact` (the stream form, whose ops exist only while they pass by) keeps each op as its JSON text
 * and parses the texts again only on a FAIL. Holding the Operation objects themselves (an object and a
 * few arrays per micro-op each) made the garbage collector copy and promote every one of the first
 * 100,000 ops of any streamed history, FAIL or not: about a tenth of a 1M-transaction check. One flat
 * string per op is cheap to hold, and an Operation read from history JSON comes back the same from its
 * JSON text (its values are JSON values; an absent `key` stays absent).
 */
export function keptOps(compact = false): {
  add(op: Operation): void;
  ops(): readonly Operation[] | null;
  count: number;
} {
  let kept: (Operation | string)[] | null = [];
  let count = 0;
  return {
    add(op) {
      count++;
      if (kept && kept.length < SHRINK_MAX_OPS) kept.push(compact ? JSON.stringify(op) : op);
      else kept = null;
    },
    ops: () =>
      compact && kept
        ? kept.map((text) => JSON.parse(text as string) as Operation)
        : (kept as Operation[] | null),
    get count() {
      return count;
    },
  };
}

/** Histories above this many ops are not shrunk (each step re-checks a sub-history of up to this size). */
export const SHRINK_MAX_OPS = 100_000;

/**
 * The FAIL's first anomaly type shrunk to the fewest transactions that still show it (see shrink.ts):
 * its size goes in the stats and on the evidence line; with an output directory the sub-history is
 * written as elle/minimal-history.jsonl, with the command that re-checks it on its own.
 */
function attachMinimalHistory(
  result: ElleCheckResult,
  ops: readonly Operation[] | null,
  count: number,
  rawOptions: unknown,
  ctx: CheckContext,
): void {
  // The first type that makes the history invalid (not one that only makes it unknown).
  const type = result.anomalyTypes.find((t) => !UNKNOWN_ANOMALIES.has(t));
  const first = result.anomalies.find((a) => a.type === type);
  if (!first) return;
  if (!ops) {
    result.evidence += `; no minimal failing sub-history (${count} ops, shrinking stops at ${SHRINK_MAX_OPS})`;
    return;
  }
  // In history order, however they arrived (a streamed history closes its ops in completion order), so
  // both paths shrink to the same core.
  ops = [...ops].sort((a, b) => a.id - b.id);
  const options = elleOptionsSchema.parse(rawOptions);
  const quiet = { ...options, outDir: undefined };
  const idOf = new Map(ops.map((op) => [op.invokeIndex, op.id]));
  const caseIds = (first as Partial<CycleAnomaly>).cycle ?? (first.ops ?? []).map((i) => idOf.get(i) ?? -1);
  const shrunk = shrinkElleFailure(ops, result.anomalyTypes, first.type, caseIds, (sub) =>
    runElleOn(builderOf(sub, quiet), quiet),
  );
  const invokeIndices = shrunk.ops.map((op) => op.invokeIndex);
  result.stats.minimalHistory = {
    type: shrunk.type,
    ops: shrunk.ops.length,
    of: shrunk.of,
    minimal: shrunk.minimal,
    checks: shrunk.checks,
    invokeIndices,
  };
  result.evidence += `; minimal failing sub-history (${shrunk.type}): ${shrunk.ops.length} of ${shrunk.of} ops${shrunk.minimal ? ' (1-minimal)' : ' (shrinking budget ran out)'}${invokeIndices.length <= 12 ? `: ops ${invokeIndices.join(', ')}` : ''}`;
  first.minimalOps = invokeIndices;
  const dir = options.outDir ?? ctx.outDir;
  if (!dir) return;
  makeOutputDir(join(dir, 'elle'));
  const path = join(dir, 'elle', 'minimal-history.jsonl');
  writeFileAtomicSync(path, subHistoryLines(shrunk.ops));
  result.artifacts = [...(result.artifacts ?? []), path];
  const models = options.consistencyModels ?? DEFAULT_MODELS;
  result.stats.minimalHistory = {
    ...(result.stats.minimalHistory as object),
    file: path,
    recheck: `faultline check ${path} --checker elle --workload ${options.workload}${models.length ? ` --consistency-models ${models.join(',')}` : ''}${options.anomalies?.length ? ` --anomalies ${options.anomalies.join(',')}` : ''}`,
  };
}

function builderOf(ops: readonly Operation[], options: unknown): TxnBuilder {
  const b = elleHistoryBuilder(options);
  for (const op of ops) b.add(op);
  return b;
}

/**
 * A builder for the workload the options name: feed it the history's operations as they stream in (in
 * any order), then check it with {@link runElleOn}. Only compact typed arrays are kept, never the ops.
 */
export function elleHistoryBuilder(rawOptions: unknown): TxnBuilder {
  return new TxnBuilder(elleOptionsSchema.parse(rawOptions).workload === 'list-append' ? 'append' : 'w');
}

/**
 * Check the history a builder holds (see {@link elleHistoryBuilder}); with the ops kept beside it
 * ({@link keptOps}), an invalid history is shrunk to its minimal failing sub-history.
 */
export function runElleOn(
  builder: TxnBuilder,
  rawOptions: unknown,
  ctx: CheckContext = {},
  kept?: ReturnType<typeof keptOps>,
): ElleCheckResult {
  const result = withArena(() => runElleInArena(builder, rawOptions, ctx));
  if (result.valid === false && kept) attachMinimalHistory(result, kept.ops(), kept.count, rawOptions, ctx);
  return result;
}

/**
 * {@link runElleOn} for a stream whose ops can be fed again (`ctx.replay`): nothing is kept while they
 * stream by, and only a FAIL small enough to shrink (at most SHRINK_MAX_OPS ops) asks for them again.
 * Ops read again that are not the ones checked (the file changed meanwhile) are not shrunk.
 */
export async function runElleReplayed(
  builder: TxnBuilder,
  rawOptions: unknown,
  ctx: CheckContext,
  replay: NonNullable<CheckContext['replay']>,
): Promise<ElleCheckResult> {
  const result = withArena(() => runElleInArena(builder, rawOptions, ctx));
  const count = builder.opsConsumed;
  if (result.valid !== false) return result;
  if (count > SHRINK_MAX_OPS) {
    attachMinimalHistory(result, null, count, rawOptions, ctx);
    return result;
  }
  const ops: Operation[] = [];
  let again: number;
  try {
    again = await replay((op) => {
      ops.push(op);
    });
  } catch (err) {
    result.evidence += `; no minimal failing sub-history (reading the history again failed: ${errorMessage(err)})`;
    return result;
  }
  if (again !== count || ops.length !== count) {
    result.evidence += `; no minimal failing sub-history (the history read again had ${ops.length} ops, not ${count})`;
    return result;
  }
  attachMinimalHistory(result, ops, count, rawOptions, ctx);
  return result;
}

function runElleInArena(builder: TxnBuilder, rawOptions: unknown, ctx: CheckContext): ElleCheckResult {
  const options = elleOptionsSchema.parse(rawOptions);
  const started = monotonicMs();
  const models = options.consistencyModels ?? DEFAULT_MODELS;
  const prohibited = prohibitedAnomalies(models, options.anomalies ?? []);
  const specs = CYCLE_SPECS.filter((s) => prohibited.has(s.type));
  const useRealtime = specs.some((s) => s.extra === REALTIME);
  const useProcess = !useRealtime && specs.some((s) => s.extra === PROCESS);
  const searched = specs.filter((s) => s.extra === 0 || (s.extra === REALTIME) === useRealtime);

  const phases: Record<string, number> = {};
  let mark = started;
  const phase = (name: string) => {
    const now = monotonicMs();
    phases[name] = Number(((now - mark) / 1000).toFixed(3));
    mark = now;
  };
  const analysed = analyse(builder, options, phase);
  if ('stopped' in analysed) return analysed.stopped;
  const analysis = analysed.analysis;
  phase('analysis');
  const h = analysis.history;
  const found = analysis.anomalies;
  const edges: EdgeList = analysis.edges;
  const dataEdges = edges.length;
  const realtime = useRealtime ? realtimeOrder(h) : undefined;
  if (useProcess) addProcessEdges(h, edges);
  phase('order');
  const vertexCount = h.n + (realtime?.count ?? 0);
  if (dataEdges === 0)
    found.set('empty-transaction-graph', [
      {
        type: 'empty-transaction-graph',
        explanation:
          'no ww, wr or rw dependency could be inferred between any two transactions, so no cycle can be checked',
      },
    ]);

  const graph = buildCsr(h.n, edges, realtime);
  // Nothing reads the edge list once the graph holds its edges.
  edges.recycle();
  phase('graph');
  const { multi } = tarjan(graph, DATA | PROCESS | REALTIME, tarjanWorkspace(vertexCount));
  phase('scc');
  const search = searchComponents(analysis, graph, multi, vertexCount, {
    searched,
    prohibited,
    timeoutMs: options.cycleSearchTimeoutMs ?? DEFAULT_CYCLE_SEARCH_TIMEOUT_MS,
    signal: ctx.signal,
    listAll: Boolean(options.outDir ?? ctx.outDir),
  });
  phase('cycleSearch');
  dropImpliedCycleExists(found);

  const reportable = [...found.keys()].filter((t) => prohibited.has(t) || UNKNOWN_ANOMALIES.has(t)).sort();
  const invalid = reportable.some((t) => prohibited.has(t));
  const valid: Validity = reportable.length === 0 ? true : invalid ? false : 'unknown';
  const { not, alsoNot } = valid === true ? { not: [], alsoNot: [] } : boundary(found.keys());
  const anomalies: Anomaly[] = [];
  const anomalyCounts: Record<string, number> = {};
  for (const t of reportable) {
    const cases = found.get(t)!;
    anomalyCounts[t] = cases.length;
    anomalies.push(...cases.slice(0, MAX_CASES_IN_RESULT));
  }
  const seconds = (monotonicMs() - started) / 1000;
  const artifacts =
    (options.outDir ?? ctx.outDir) && valid !== true
      ? writeArtifacts(options.outDir ?? ctx.outDir!, analysis, reportable, found)
      : undefined;
  const txnCounts = countStatuses(h);
  return {
    checker: 'elle',
    valid,
    evidence:
      `elle ${options.workload}: ${h.n} transactions (${txnCounts.ok} ok, ${txnCounts.info} info, ${txnCounts.fail} fail), ` +
      `${dataEdges} dependency edges, ${multi.length} cyclic components; ` +
      (reportable.length
        ? `found ${reportable.map((t) => `${t} ×${anomalyCounts[t]}`).join(', ')}`
        : 'no anomalies') +
      ` against ${models.length ? models.join(', ') : 'no models'}` +
      firstCase(anomalies),
    scope: SCOPE,
    anomalies,
    stats: {
      opsConsumed: h.opsConsumed,
      txns: h.n,
      ...txnCounts,
      nonTxnOpsSkipped: h.skipped,
      keys: h.keys.length,
      dependencyEdges: dataEdges,
      orderGraph: useRealtime ? 'realtime' : useProcess ? 'process' : 'none',
      cyclicComponents: multi.length,
      txnsInCycles: search.sccTxns,
      largestComponent: search.largestScc,
      searchTimeouts: search.timeouts,
      anomalyCounts,
      anomalyTypes: reportable,
      not,
      alsoNot,
      seconds,
      phaseSeconds: phases,
    },
    ...(artifacts ? { artifacts } : {}),
    anomalyTypes: reportable,
    not,
    alsoNot,
  };
}

type ElleOptions = ReturnType<typeof elleOptionsSchema.parse>;

/** The workload's analysis, or the result that says why it stopped (a history it cannot read). */
function analyse(
  builder: TxnBuilder,
  options: ElleOptions,
  phase: (name: string) => void,
): { analysis: WorkloadAnalysis } | { stopped: ElleCheckResult } {
  try {
    const h = builder.finish();
    phase('history');
    return {
      analysis:
        options.workload === 'list-append'
          ? analyseListAppend(h)
          : analyseRwRegister(h, {
              sequentialKeys: options.sequentialKeys ?? false,
              linearizableKeys: options.linearizableKeys ?? false,
              wfrKeys: options.wfrKeys ?? false,
            }),
    };
  } catch (err) {
    if (!(err instanceof WorkloadError || err instanceof MicroOpError)) throw err;
    const type = err instanceof WorkloadError ? err.type : 'unexpected-txn-micro-op-types';
    return {
      stopped: {
        checker: 'elle',
        valid: 'unknown',
        evidence: `elle ${options.workload}: analysis stopped: ${type}`,
        scope: SCOPE,
        anomalies: [{ type, explanation: err.message }],
        stats: { opsConsumed: builder.opsConsumed, txns: 0, anomalyTypes: [type], not: [], alsoNot: [] },
        error: err.message,
        anomalyTypes: [type],
        not: [],
        alsoNot: [],
      },
    };
  }
}

interface ComponentSearch {
  searched: readonly CycleSpec[];
  prohibited: ReadonlySet<string>;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Whether every case is written out (anomalies.txt); otherwise cases past the result's are only counted. */
  listAll: boolean;
}

/**
 * A cycle case past those the result keeps, when no file lists every case: it is only counted, so it
 * is not explained (a history of millions of transactions can have hundreds of thousands of them).
 */
const countedOnly = new Map<string, Anomaly>();
function countedCase(type: string): Anomaly {
  let a = countedOnly.get(type);
  if (!a) {
    a = Object.freeze({ type, explanation: `${type} cycle (counted, not explained)` });
    countedOnly.set(type, a);
  }
  return a;
}

/** A found cycle as a case: explained in full, in one line, or only counted (see {@link countedCase}). */
function cycleCase(
  analysis: WorkloadAnalysis,
  lg: LocalGraph,
  c: FoundCycle,
  type: string,
  listAll: boolean,
): Anomaly {
  const kept = analysis.anomalies.get(type)?.length ?? 0;
  // Explaining a cycle in words is costly (it renders every micro-op); cases beyond those the result
  // keeps get a one-line summary when a file lists them all, else are only counted.
  if (kept >= MAX_CASES_IN_RESULT && !listAll) return countedCase(type);
  return explainCycle(analysis, lg, c, type, kept < MAX_CASES_IN_RESULT);
}

/**
 * Each strongly connected component with two or more transactions: search a cycle of each prohibited
 * type (skipping types a found one already implies); on a timeout, fall back to any cycle of the type's
 * relations. Anomalies go into the analysis's map.
 */
function searchComponents(
  analysis: WorkloadAnalysis,
  graph: ReturnType<typeof buildCsr>,
  multi: readonly Int32Array[],
  vertexCount: number,
  o: ComponentSearch,
): { sccTxns: number; largestScc: number; timeouts: number } {
  const h = analysis.history;
  const localId = i32(vertexCount).fill(-1);
  let sccTxns = 0;
  let largestScc = 0;
  let timeouts = 0;
  for (const verts of multi) {
    let real = 0;
    for (const v of verts) if (v < h.n) real++;
    if (real < 2) continue;
    sccTxns += real;
    largestScc = Math.max(largestScc, real);
    const lg = localGraph(graph, verts, localId);
    const inScc = new Set<string>();
    const impliedHere = new Set<string>();
    const exhausted: string[] = [];
    for (const spec of o.searched) {
      if (impliedHere.has(spec.type)) continue;
      const deadline = monotonicMs() + o.timeoutMs;
      const outcome = o.signal?.aborted
        ? ({ timeout: true } as const)
        : searchCycle(lg, spec, deadline, (c) => classify(lg, h.n, c) === spec.type, o.signal);
      if (outcome === null) {
        exhausted.push(spec.type);
        continue;
      }
      if ('timeout' in outcome) {
        timeouts++;
        searchTimedOut(analysis, lg, spec, { real, exhausted, inScc, impliedHere }, o);
        continue;
      }
      inScc.add(spec.type);
      for (const t of impliedAnomalies(spec.type)) impliedHere.add(t);
      addAnomaly(analysis.anomalies, cycleCase(analysis, lg, outcome.cycle, spec.type, o.listAll));
    }
  }
  return { sccTxns, largestScc, timeouts };
}

/** A cycle search that ran out of budget: say so, then report any cycle of the type's relations. */
function searchTimedOut(
  analysis: WorkloadAnalysis,
  lg: ReturnType<typeof localGraph>,
  spec: CycleSpec,
  scc: { real: number; exhausted: string[]; inScc: Set<string>; impliedHere: Set<string> },
  o: ComponentSearch,
): void {
  const found = analysis.anomalies;
  const n = analysis.history.n;
  addAnomaly(found, {
    type: 'cycle-search-timeout',
    explanation: o.signal?.aborted
      ? `the search for a ${spec.type} cycle in a strongly connected component of ${scc.real} transactions was cancelled`
      : `the search for a ${spec.type} cycle in a strongly connected component of ${scc.real} transactions ran out of its ${o.timeoutMs} ms budget`,
    anomalySpecType: spec.type,
    doesNotContain: [...scc.exhausted],
    sccSize: scc.real,
  });
  // Fall back to any cycle of the type's relations, reported under whatever class its steps give.
  const fallback = o.signal?.aborted ? null : anyCycle(lg, legalRels(spec));
  const fallbackType = fallback ? classify(lg, n, fallback) : null;
  if (fallback && fallbackType && o.prohibited.has(fallbackType) && !scc.impliedHere.has(fallbackType)) {
    scc.inScc.add(fallbackType);
    for (const t of impliedAnomalies(fallbackType)) scc.impliedHere.add(t);
    addAnomaly(found, cycleCase(analysis, lg, fallback, fallbackType, o.listAll));
  }
  const exists = cycleExistsType(lg, spec);
  if (exists && !scc.inScc.has(exists)) {
    scc.inScc.add(exists);
    addAnomaly(found, {
      type: exists,
      explanation: `a component of ${scc.real} transactions has a cycle of the relations ${spec.type} is built from, but no specific cycle was named within the budget`,
      sccSize: scc.real,
    });
  }
}

/** cycle-exists entries are dropped when a concrete anomaly already rules out the same model. */
function dropImpliedCycleExists(found: WorkloadAnalysis['anomalies']): void {
  const concrete = boundary([...found.keys()].filter((t) => !t.endsWith('-cycle-exists')));
  const concreteNot = new Set(concrete.not.concat(concrete.alsoNot));
  for (const [model, name] of Object.entries(CYCLE_EXISTS_NAME)) {
    if (found.has(name) && concreteNot.has(model)) found.delete(name);
  }
}

function countStatuses(h: TxnHistory): { ok: number; info: number; fail: number } {
  const c = [0, 0, 0];
  for (let t = 0; t < h.n; t++) c[h.status[t]!]!++;
  return { ok: c[0]!, info: c[1]!, fail: c[2]! };
}

function cycleExistsType(lg: LocalGraph, spec: CycleSpec): string | null {
  const prefix = spec.extra === PROCESS ? 'strong-session-' : spec.extra === REALTIME ? 'strong-' : '';
  if (spec.kind === 'G0' || spec.kind === 'G1c') {
    if (!hasCycle(lg, legalRels(spec))) return null;
    return `${prefix}PL-${spec.kind === 'G0' ? 1 : 2}-cycle-exists`;
  }
  if (spec.kind === 'single' || spec.kind === 'nonadjacent') {
    if (!hasNonadjacentCycle(lg, spec.extra)) return null;
    return spec.extra === 0 ? 'PL-SI-cycle-exists' : `${prefix}snapshot-isolation-cycle-exists`;
  }
  if (!hasCycle(lg, legalRels(spec))) return null;
  return spec.extra === 0
    ? 'PL-2.99-cycle-exists'
    : spec.extra === PROCESS
      ? 'strong-session-serializable-cycle-exists'
      : 'PL-SS-cycle-exists';
}

interface Compressed {
  txns: number[];
  rels: number[];
}

/** Collapse runs through time vertices into single realtime steps, starting at a real txn. */
function compress(lg: LocalGraph, nTxns: number, c: FoundCycle): Compressed | null {
  const len = c.verts.length;
  let start = -1;
  for (let i = 0; i < len; i++) {
    if (lg.verts[c.verts[i]!]! < nTxns) {
      start = i;
      break;
    }
  }
  if (start < 0) return null;
  const txns: number[] = [];
  const rels: number[] = [];
  let i = start;
  do {
    const v = lg.verts[c.verts[i]!]!;
    txns.push(v);
    let rel = c.rels[i]!;
    let j = (i + 1) % len;
    while (lg.verts[c.verts[j]!]! >= nTxns) {
      rel = REALTIME;
      j = (j + 1) % len;
    }
    rels.push(rel);
    i = j;
  } while (i !== start);
  if (new Set(txns).size !== txns.length) return null;
  return { txns, rels };
}

/** Elle's classification of a cycle from its steps. */
export function classifyRels(rels: readonly number[]): string {
  const n = rels.length;
  let rw = 0;
  let wr = 0;
  let adjacent = false;
  for (let i = 0; i < n; i++) {
    if (rels[i] === RW) {
      rw++;
      if (rels[(i + 1) % n] === RW) adjacent = true;
    }
    if (rels[i] === WR) wr++;
  }
  const base =
    rw === 1
      ? 'G-single-item'
      : rw > 1
        ? adjacent
          ? 'G2-item'
          : 'G-nonadjacent-item'
        : wr > 0
          ? 'G1c'
          : 'G0';
  if (rels.includes(REALTIME)) return `${base}-realtime`;
  if (rels.includes(PROCESS)) return `${base}-process`;
  return base;
}

function classify(lg: LocalGraph, nTxns: number, c: FoundCycle): string | null {
  const comp = compress(lg, nTxns, c);
  return comp ? classifyRels(comp.rels) : null;
}

/** Plain words for the cycle classes (Adya's names; `-process` / `-realtime` add that order). */
const CYCLE_WORDS: Record<string, string> = {
  G0: 'write cycle',
  G1c: 'circular information flow',
  'G-single': 'read skew: one anti-dependency in the cycle',
  'G-nonadjacent': 'anti-dependencies, none adjacent',
  G2: 'write skew: anti-dependency cycle',
};

/** The cycle in one line with its type: `G1c cycle (circular information flow): op 3 –ww→ op 7 –wr→ op 3`. */
export function cycleSummary(type: string, ops: readonly number[], rels: readonly string[]): string {
  const base = type.replace(/-item|-process|-realtime/g, '');
  const order = /-realtime$/.test(type)
    ? ', with real-time order'
    : /-process$/.test(type)
      ? ', with process order'
      : '';
  const words = CYCLE_WORDS[base];
  const path = ops.map((op, i) => `op ${op} –${rels[i]}→ `).join('');
  return `${type} cycle${words ? ` (${words}${order})` : ''}: ${path}op ${ops[0]}`;
}

function explainCycle(
  analysis: WorkloadAnalysis,
  lg: LocalGraph,
  c: FoundCycle,
  type: string,
  detailed: boolean,
): CycleAnomaly {
  const h = analysis.history;
  const comp = compress(lg, h.n, c)!;
  const opIds = comp.txns.map((t) => h.invokeIndex[t]!);
  const rels = comp.rels.map((r) => REL_NAMES[r] as CycleStep['rel']);
  const summary = cycleSummary(type, opIds, rels);
  if (!detailed) {
    return {
      type,
      explanation: summary,
      ops: opIds,
      cycle: [...opIds, opIds[0]!],
      steps: rels.map((rel, i) => ({
        rel,
        from: opIds[i]!,
        to: opIds[(i + 1) % opIds.length]!,
        explanation: '',
      })),
      text: summary,
    };
  }
  const names = new Map<number, string>();
  comp.txns.forEach((t, i) => {
    names.set(t, `T${i + 1}`);
  });
  const name = (t: number) => names.get(t) ?? `op ${h.invokeIndex[t]}`;
  const steps: CycleStep[] = [];
  const k = comp.txns.length;
  for (let i = 0; i < k; i++) {
    const a = comp.txns[i]!;
    const b = comp.txns[(i + 1) % k]!;
    const rel = comp.rels[i]!;
    let text: string | null;
    if (rel === WW || rel === WR || rel === RW) text = analysis.explain(a, b, rel, name);
    else if (rel === PROCESS) {
      text = `${name(a)} < ${name(b)}, because process ${h.process[a]} executed ${name(a)} before ${name(b)}`;
    } else {
      text = `${name(a)} < ${name(b)}, because ${name(a)} completed (event ${h.completeIndex[a]}) before ${name(b)} was invoked (event ${h.invokeIndex[b]})`;
    }
    steps.push({
      rel: REL_NAMES[rel] as CycleStep['rel'],
      from: h.invokeIndex[a]!,
      to: h.invokeIndex[b]!,
      explanation: text ?? `${name(a)} < ${name(b)} (${REL_NAMES[rel]})`,
    });
  }
  const lines = [`Let:`];
  for (const t of comp.txns) {
    const mops: string[] = [];
    for (let m = h.mopStart[t]!; m < h.mopStart[t + 1]!; m++) mops.push(renderMop(h, m, analysis.writeF));
    lines.push(
      `  ${name(t)} = op ${h.invokeIndex[t]} (${txnType(h, t)}, process ${h.process[t]}): ${mops.join(' ')}`,
    );
  }
  lines.push('Then:');
  steps.forEach((s, i) => {
    lines.push(i === k - 1 ? `  - However, ${s.explanation}: a contradiction!` : `  - ${s.explanation}.`);
  });
  const keys = [
    ...new Set(steps.flatMap((s) => [...s.explanation.matchAll(/\bkey ([^\s,]+)/g)].map((m) => m[1]!))),
  ];
  return {
    type,
    explanation: summary,
    ops: opIds,
    ...(keys.length > 0 && { keys }),
    cycle: [...opIds, opIds[0]!],
    steps,
    text: lines.join('\n'),
  };
}

/**
 * The first case of the first reportable anomaly, for the one-line evidence: its type, its ops (by the
 * history event index of each op's invocation, the numbering every report uses) and keys.
 */
function firstCase(anomalies: readonly Anomaly[]): string {
  const a = anomalies[0];
  if (!a) return '';
  const keys = Array.isArray(a.keys) ? (a.keys as string[]) : a.key !== undefined ? [a.key] : [];
  const ops = a.ops?.length ? ` ops ${a.ops.join(', ')}` : '';
  const on = keys.length ? ` on key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}` : '';
  return ops || on ? `; first ${a.type}:${ops}${on}` : '';
}
