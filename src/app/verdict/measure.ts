import { describeFaultRecord } from '../../../nemeses/describe.ts';
import { nemeses } from '../../../nemeses/registry.ts';
import type { FaultRecord } from '../../../nemeses/types.ts';
import { type Operation, wasNotApplied } from '../../core/history/operation.ts';
import type { FaultEvidenceRecord, HistoryFacts, ThroughputWindow } from './evidence.ts';
import { HISTORY_FIELDS } from './evidence.ts';

/**
 * Turning raw run output into the evidence facts the audits read: throughput per window (with fault
 * windows marked), history facts (which of the 11 fields are really there), recovery after heal, and
 * SUT log lines that betray swallowed errors. Times in a faultline history are monotonic nanoseconds
 * since the run started.
 */

export interface FaultWindowTimes {
  id: string;
  /** The window opens: inject has returned, and ops invoked from here on carry its fault_epoch. */
  startS: number;
  /**
   * When the nemesis began acting on the nodes (its plan reached the ledger), if before `startS`: a
   * nemesis that restarts the database inside its inject (the lazy filesystem's rolling move) disturbs
   * the workload from here. The rate (RF1, RF8's baseline) counts it as under the fault; fault_epoch
   * is still expected only from `startS`.
   */
  actingFromS?: number;
  /** Null when the window was never healed (it stays active to the end). */
  endS: number | null;
  /**
   * Its damage is never undone (the action's `permanent`, isPermanent): `endS` is when its injection was
   * done, not a heal. It has no recovery of its own to time; a later heal's is judged with the damage in
   * place.
   */
  permanent?: boolean;
}

const NS = 1e9;

function isClient(op: Operation): boolean {
  return op.process !== 'nemesis';
}

function overlaps(a0: number, a1: number, f: FaultWindowTimes): boolean {
  return a0 < (f.endS ?? Number.POSITIVE_INFINITY) && f.startS < a1;
}

/** As overlaps, from when the nemesis began acting (actingFromS), for the rate's judgement. */
function overlapsActing(a0: number, a1: number, f: FaultWindowTimes): boolean {
  return overlaps(a0, a1, { ...f, startS: Math.min(f.startS, f.actingFromS ?? f.startS) });
}

/**
 * The database served the op: ok, or a definite refusal its own logic gave (a compare that did not
 * match). Not a read's fail (clients record an unanswered read as fail) nor one marked not-applied
 * (nothing reached the database): those say nothing about service.
 */
function answered(o: Operation): boolean {
  return o.type === 'ok' || (o.type === 'fail' && o.f !== 'read' && !wasNotApplied(o));
}

/**
 * Completed client ops per window of `windowS` seconds (and, as `served`, those the database answered), each marked when a fault window overlaps it.
 * `seconds` is the part of the window the workload was serving: it starts at the first completed client
 * op (before it the clients are still starting: connections, the first request through a cold
 * interpreter; that is no rate collapse of the system under test) and ends with the workload
 * (`durationS`), so the last, partial window is not judged as a full one.
 */
export function throughputWindows(
  ops: readonly Operation[],
  opts: { windowS: number; durationS?: number; faults: readonly FaultWindowTimes[] },
): ThroughputWindow[] {
  let end = opts.durationS ?? 0;
  let first = Number.POSITIVE_INFINITY;
  const counts: number[] = [];
  const served: number[] = [];
  for (const op of ops) {
    if (!isClient(op)) continue;
    const t = op.completeTime ?? op.infoTime;
    if (t === null) continue;
    const s = t / NS;
    first = Math.min(first, s);
    if (opts.durationS === undefined) end = Math.max(end, s);
    const i = Math.floor(s / opts.windowS);
    counts[i] = (counts[i] ?? 0) + 1;
    if (answered(op)) served[i] = (served[i] ?? 0) + 1;
  }
  const n = Math.max(1, Math.ceil(end / opts.windowS));
  const out: ThroughputWindow[] = [];
  for (let i = 0; i < n; i++) {
    const startS = i * opts.windowS;
    const endS = startS + opts.windowS;
    const seconds = Math.max(0, Math.min(endS, end) - Math.max(startS, first));
    out.push({
      startS,
      endS,
      ops: counts[i] ?? 0,
      served: served[i] ?? 0,
      faultActive: opts.faults.some((f) => overlapsActing(startS, endS, f)),
      seconds: Number.isFinite(seconds) ? round3(seconds) : 0,
    });
  }
  return out;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Ops per second over the part of the window the workload was serving (null: none of it). */
export function windowRate(w: ThroughputWindow): number | null {
  const s = w.seconds ?? w.endS - w.startS;
  return s > 0 ? w.ops / s : null;
}

/**
 * Ops the database answered per second (windowRate of `served`): what recovery compares. Failures
 * that never reached it (no client could be opened, a refused connection) complete at once and in
 * numbers, so counting them would show a database that never came back as serving at full rate.
 * Evidence from before `served` was recorded falls back to every completed op.
 */
export function servedRate(w: ThroughputWindow): number | null {
  const s = w.seconds ?? w.endS - w.startS;
  return s > 0 ? (w.served ?? w.ops) / s : null;
}

/** Which history fields are present on every op that needs them, and what makes the history weak. */
export function historyFacts(
  ops: readonly Operation[],
  faults: readonly FaultWindowTimes[],
  recorder: Pick<HistoryFacts, 'clockReadings' | 'wire'> = { clockReadings: null, wire: null },
): HistoryFacts {
  const client = ops.filter(isClient);
  const present = new Set<string>(HISTORY_FIELDS);
  const weaknesses: string[] = [];
  const noCompletion = client.filter(
    (o) => (o.type === 'ok' || o.type === 'fail') && o.completeTime === null,
  ).length;
  if (noCompletion > 0) {
    present.delete('invoke_ts/complete_ts');
    weaknesses.push(`${noCompletion} completed op(s) lack complete_ts`);
  }
  if (client.some((o) => o.node === null)) present.delete('node_seen');
  const keyed = (o: Operation) => o.key !== undefined || (Array.isArray(o.input) && o.input.length === 2);
  if (client.length > 0 && !client.some(keyed)) present.delete('key');
  const duringFault = client.filter((o) =>
    faults.some((f) => overlaps(o.invokeTime / NS, o.invokeTime / NS + 1e-9, f)),
  );
  const unmarked = duringFault.filter((o) => o.faultEpoch === null || o.faultEpoch.length === 0).length;
  if (unmarked > 0) {
    present.delete('fault_epoch');
    weaknesses.push(`${unmarked} op(s) invoked during a fault window lack fault_epoch`);
  }
  // Timeouts as recorded: an `info` completion is the timeout marker; it must carry no complete_ts.
  const infos = client.filter((o) => o.type === 'info');
  const timeouts = {
    count: infos.length,
    withCompletion: infos.filter((o) => o.completeTime !== null).length,
  };
  if (timeouts.withCompletion > 0) {
    present.delete('timeout_marker');
    weaknesses.push(`${timeouts.withCompletion} timed-out op(s) carry a complete_ts`);
  }
  const timeInversions = client.filter(
    (o) => o.completeTime !== null && o.completeTime < o.invokeTime,
  ).length;
  const kind = recorder.clockReadings?.source.kind;
  return {
    ops: client.length,
    fieldsPresent: HISTORY_FIELDS.filter((f) => present.has(f)),
    weaknesses,
    clock: kind ?? 'unknown',
    clockReadings: recorder.clockReadings,
    timeInversions,
    timeouts,
    hiddenRetries: null,
    wire: recorder.wire,
    path: null,
  };
}

/** Recovery: back to nominal means at least this share of the rate before the first fault. */
export const RECOVERY_FRACTION = 0.8;

/**
 * The rate after one heal: seconds from the heal to the start of the first whole throughput window
 * after it that ran, under no fault, at ≥ RECOVERY_FRACTION of the reference rate (null: none did
 * before the next fault or the end of the workload). Every key serving once is "up"; this is "back to
 * nominal" (a rejoining member can force an election that stalls every client for seconds after its
 * keys first answered). `cutBy`: the next fault window (its id) or the end of the workload came
 * before the rate was back, inside the budget, so this heal's rate is not judged.
 */
export interface RateRecovery {
  backAfterS: number | null;
  referenceOpsPerSec: number;
  cutBy?: string;
}

export interface WindowRecovery {
  id: string;
  healS: number;
  keys: number;
  /** Every key in use served again (and, with `rate`, the rate was back) this many seconds after the heal. */
  recoveredAfterS: number | null;
  budgetS: number;
  budgetFrom: string;
  slowestKey: string | null;
  /**
   * Keys not judged: they had not served again when the next fault window began, inside the budget
   * (that fault, not this heal, then decides what they can do), and the window that began.
   */
  unjudged?: { keys: string[]; by: string; afterS: number };
  /**
   * Keys the workload stopped asking inside the budget before they served again (the generator moved on
   * to other keys while the system was still recovering): nothing tested them for the rest of the
   * budget, so they are not judged. A system that stays down is still caught by the keys asked after
   * them (the key asked last inside the budget is never retired) and by the rate of answered ops.
   */
  retired?: string[];
  /** Absent when there was no reference rate (no window before the first fault, no intended rate). */
  rate?: RateRecovery;
}

export interface Recovery {
  baselineOpsPerSec: number | null;
  afterHealOpsPerSec: number | null;
  measuredAfterS: number;
  windows: WindowRecovery[];
  /** Faults whose damage nothing undoes (no heal to recover from), when the run had any. */
  permanent?: string[];
}

/**
 * Recovery under load (red flag 8), per healed fault window: the seconds from its heal until every key
 * in use was served again (an ok op, or a definite answer such as a failed compare). A key is in use when it had an op invoked before the heal and another
 * completed after it (a key the workload retired during the fault has nothing to recover). The budget
 * is the plan's `recoveryBudgetS`, else the time until the next fault window opens (recovered before the
 * next fault) or, after the last one, until the history ends (`endS`: the final reads included). Then the rate: the median of the windows before the first fault
 * (baseline) against the mean of the whole windows after the last recovery, each over the seconds the workload was
 * serving. A permanent fault (FaultWindowTimes.permanent) has no heal to time: it is listed apart, and
 * the heals after it are judged with its damage in place. Null when nothing was healed (a window still
 * open, or no fault at all).
 */
export function recoveryAfterHeal(
  ops: readonly Operation[],
  windows: readonly ThroughputWindow[],
  faults: readonly FaultWindowTimes[],
  opts: { endS: number; budgetS?: number | null; intendedOpsPerSec?: number | null },
): Recovery | null {
  // Permanent damage has no heal: the recovery after the heals around it is what counts.
  const permanent = faults.filter((f) => f.permanent).map((f) => f.id);
  const healable = faults.filter((f) => !f.permanent);
  const healed = healable.filter((f): f is FaultWindowTimes & { endS: number } => f.endS !== null);
  if (healed.length < healable.length || (healed.length === 0 && permanent.length === 0)) return null;
  const client = ops.filter(isClient);
  const first = Math.min(...faults.map((f) => Math.min(f.startS, f.actingFromS ?? f.startS)));
  const rates = (ws: readonly ThroughputWindow[]) =>
    ws.map(servedRate).filter((r): r is number => r !== null);
  const before = rates(windows.filter((w) => w.endS <= first));
  const sorted = [...before].sort((a, b) => a - b);
  const baseline = sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)]! : null;
  // Nominal is what this system did here before any fault (the intended rate only when nothing ran
  // before the first fault): a host that cannot reach the intended rate is judged by RF1, not here.
  const reference = baseline ?? opts.intendedOpsPerSec ?? null;
  const per = healed.map((f) => {
    const w = windowRecovery(client, f, faults, opts);
    return reference === null || reference <= 0 ? w : withRateRecovery(w, windows, faults, reference);
  });
  if (per.length === 0)
    return {
      baselineOpsPerSec: baseline,
      afterHealOpsPerSec: null,
      measuredAfterS: 0,
      windows: [],
      permanent,
    };
  // A heal whose rate was not back when the workload ended, still inside its budget, leaves nothing
  // settled after it: those windows were still recovering, so there is no rate "after" to compare (the
  // heal's own rate is reported as not judged, and a degraded verdict would contradict it).
  const settledFrom = (w: WindowRecovery) =>
    w.rate?.cutBy === END_OF_WORKLOAD ? Number.POSITIVE_INFINITY : w.healS + (w.recoveredAfterS ?? w.budgetS);
  const lastBack = Math.max(...per.map(settledFrom));
  // Settled: the whole windows after the last recovery (between faults, clients still finishing the
  // ops that timed out under the last one would make a recovered system look degraded).
  const afterWindows = windows.filter((w) => w.startS >= lastBack && !w.faultActive && whole(w));
  const after = rates(afterWindows);
  return {
    baselineOpsPerSec: baseline,
    afterHealOpsPerSec: after.length > 0 ? after.reduce((s, r) => s + r, 0) / after.length : null,
    measuredAfterS: afterWindows.length > 0 ? round3(afterWindows[0]!.startS - lastBack) : 0,
    windows: per,
    ...(permanent.length > 0 && { permanent }),
  };
}

/** What cut a heal's rate recovery short when the workload ended before its budget did. */
export const END_OF_WORKLOAD = 'the end of the workload';

const whole = (w: ThroughputWindow) => (w.seconds ?? w.endS - w.startS) >= w.endS - w.startS - 1e-6;

/**
 * Add the rate's recovery to one heal's (see RateRecovery). The first nominal window is searched from
 * the heal on, up to the next fault window; when the rate came back later than the keys, the window
 * recovered only then.
 */
function withRateRecovery(
  w: WindowRecovery,
  windows: readonly ThroughputWindow[],
  faults: readonly FaultWindowTimes[],
  reference: number,
): WindowRecovery {
  const next = faults
    .filter((g) => g.startS >= w.healS && g.id !== w.id)
    .reduce((a, g) => Math.min(a, g.startS), Number.POSITIVE_INFINITY);
  const back = windows.find(
    (t) =>
      t.startS >= w.healS &&
      t.endS <= next &&
      !t.faultActive &&
      whole(t) &&
      (servedRate(t) ?? 0) >= RECOVERY_FRACTION * reference,
  );
  const backAfterS = back ? round3(back.startS - w.healS) : null;
  // Not back, but the next fault or the end of the workload came inside the budget: not this heal's to judge.
  const end = windows.filter(whole).reduce((a, t) => Math.max(a, t.endS), 0);
  const horizon = Math.min(next, end);
  const cutBy =
    backAfterS === null && horizon < w.healS + w.budgetS
      ? next <= end
        ? (faults.find((g) => g.startS === next)?.id ?? 'the next fault window')
        : END_OF_WORKLOAD
      : undefined;
  const rate: RateRecovery = {
    backAfterS,
    referenceOpsPerSec: round3(reference),
    ...(cutBy !== undefined && { cutBy }),
  };
  const recoveredAfterS =
    w.recoveredAfterS === null || backAfterS === null
      ? w.recoveredAfterS
      : Math.max(w.recoveredAfterS, backAfterS);
  return { ...w, recoveredAfterS, rate };
}

/**
 * Mark the throughput windows that fall in a recovery: from each heal until its keys served again
 * (at most its budget). Red flag 1 judges the workload's rate outside faults and their recoveries; how
 * fast and how fully the system came back is red flag 8's to judge, against its budget.
 */
export function markRecovering(windows: ThroughputWindow[], recovery: Recovery | null): ThroughputWindow[] {
  if (!recovery) return windows;
  const spans = recovery.windows.map((w) => [
    w.healS,
    w.healS +
      Math.min(
        w.rate && w.rate.backAfterS === null ? w.budgetS : (w.recoveredAfterS ?? w.budgetS),
        w.budgetS,
      ),
  ]);
  return windows.map((w) =>
    spans.some(([a, b]) => w.startS < (b as number) && (a as number) < w.endS)
      ? { ...w, recovering: true }
      : w,
  );
}

function windowRecovery(
  client: readonly Operation[],
  f: FaultWindowTimes & { endS: number },
  faults: readonly FaultWindowTimes[],
  opts: { endS: number; budgetS?: number | null },
): WindowRecovery {
  const heal = f.endS;
  const next = Math.min(opts.endS, ...faults.map((g) => g.startS).filter((s) => s >= heal));
  const budgetS = opts.budgetS ?? Math.max(0, next - heal);
  const nextFault = faults
    .filter((g) => g.startS >= heal && g.id !== f.id)
    .reduce<FaultWindowTimes | null>((a, g) => (a === null || g.startS < a.startS ? g : a), null);
  const cutBy = nextFault && nextFault.startS < heal + budgetS ? nextFault : null;
  const unjudged: string[] = [];
  const retired: string[] = [];
  const budgetFrom =
    opts.budgetS != null
      ? "the plan's recoveryBudgetS"
      : next < opts.endS
        ? 'the next fault window'
        : 'the end of the history';
  const keyOf = (o: Operation) => o.key ?? '';
  const before = new Set(client.filter((o) => o.invokeTime / NS < heal).map(keyOf));
  const firstOk = new Map<string, number>();
  const seenAfter = new Set<string>();
  const lastInvoke = new Map<string, number>();
  // The last op the workload invoked inside the budget, on any key: a key asked until then was not
  // retired, whatever the budget (with the default budget, to the end of the history, every key's last
  // op comes before the budget ends, so a database that never answered again looked retired, unjudged).
  let lastAsked = Number.NEGATIVE_INFINITY;
  // Whether the database answered anything after the heal, on any key: keys the workload stopped
  // asking are retired only when it did (when it answered nothing, the generator moving on to new keys
  // is no sign of recovery: ops failing at once burn through a key's ops in seconds).
  let servedAny = false;
  for (const o of client) {
    const at = o.invokeTime / NS;
    if (at >= heal && at < heal + budgetS) lastAsked = Math.max(lastAsked, at);
    if ((o.completeTime ?? o.infoTime ?? -1) / NS >= heal && answered(o)) servedAny = true;
  }
  for (const o of client) {
    const done = (o.completeTime ?? o.infoTime ?? -1) / NS;
    const k = keyOf(o);
    if (done < heal || !before.has(k)) continue;
    // In use after the heal: the workload invoked an op on it (a key retired under the fault is not).
    if (o.invokeTime / NS >= heal) {
      seenAfter.add(k);
      lastInvoke.set(k, Math.max(lastInvoke.get(k) ?? 0, o.invokeTime / NS));
    }
    if (answered(o) && (firstOk.get(k) ?? Number.POSITIVE_INFINITY) > done) firstOk.set(k, done);
  }
  let slowest: string | null = null;
  let worst = 0;
  for (const k of seenAfter) {
    // An ok that completed after the heal, even of an op invoked under the fault: the key serves again.
    const t = firstOk.get(k);
    if (cutBy && (t === undefined || t - heal > budgetS)) {
      unjudged.push(k);
      continue;
    }
    const last = lastInvoke.get(k) ?? 0;
    if (t === undefined && servedAny && last < heal + budgetS && last < lastAsked) {
      retired.push(k);
      continue;
    }
    if (t === undefined)
      return {
        id: f.id,
        healS: round3(heal),
        keys: seenAfter.size,
        recoveredAfterS: null,
        budgetS: round3(budgetS),
        budgetFrom,
        slowestKey: k,
      };
    if (t - heal >= worst) {
      worst = t - heal;
      slowest = k;
    }
  }
  return {
    id: f.id,
    healS: round3(heal),
    keys: seenAfter.size,
    recoveredAfterS: round3(worst),
    budgetS: round3(budgetS),
    budgetFrom,
    slowestKey: slowest,
    ...(cutBy &&
      unjudged.length > 0 && {
        unjudged: { keys: unjudged, by: cutBy.id, afterS: round3(cutBy.startS - heal) },
      }),
    ...(retired.length > 0 && { retired }),
  };
}

/** Swallowed exceptions, panics and "Internal error" (red flag 7). */
export const SUT_LOG_PATTERN = /\bpanic(ked)?\b|\bfatal\b|internal error|unhandled exception|\bSIGSEGV\b/i;
/** Matches kept per file: enough to cite, bounded for huge logs. */
const MAX_MATCHES = 50;

export interface SutLogMatch {
  node: string;
  file: string;
  line: number;
  text: string;
}

/**
 * The lines of one SUT log that match SUT_LOG_PATTERN: `matches` (at most MAX_MATCHES kept) and
 * `expected`, how many matched one of the database's declared `logNoise` patterns instead.
 */
export function scanSutLog(
  text: string,
  node: string,
  file: string,
  noise: readonly RegExp[] = [],
): { matches: SutLogMatch[]; expected: number } {
  const matches: SutLogMatch[] = [];
  let expected = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && matches.length < MAX_MATCHES; i++) {
    const l = lines[i]!;
    if (!SUT_LOG_PATTERN.test(l)) continue;
    if (noise.some((re) => re.test(l))) expected++;
    else matches.push({ node, file, line: i + 1, text: l.trim().slice(0, 300) });
  }
  return { matches, expected };
}

/**
 * A nemesis ledger record (nemeses/types.ts) as evidence: times become seconds from the start of the
 * workload, the spec's topology/action are lifted out of the FaultSpec, and the evidence signals are
 * kept as they are. A record without evidence has not landed.
 */
export function faultEvidenceFromRecord(record: FaultRecord, workloadStartedAt: Date): FaultEvidenceRecord {
  const sec = (iso: string | undefined) =>
    iso === undefined ? null : Math.max(0, (Date.parse(iso) - workloadStartedAt.getTime()) / 1000);
  const topology = record.spec.params?.topology;
  const ev = record.evidence;
  return {
    id: record.id,
    kind: record.spec.kind,
    action: record.spec.action,
    topology: typeof topology === 'string' ? topology : null,
    what: describeFaultRecord(record).what,
    nodes: record.nodes,
    startS: sec(record.injectedAt) ?? 0,
    endS: sec(record.healedAt),
    landed: ev?.landed ?? false,
    reason: ev ? (ev.reason ?? null) : 'no landing evidence was collected',
    substitute: record.substitutions ?? [],
    signals: ev?.signals ?? [],
    healed: record.healedAt !== undefined,
    afterHeal: record.afterHeal
      ? { landed: record.afterHeal.landed, reason: record.afterHeal.reason ?? null }
      : null,
  };
}

/**
 * Whether nothing ever undoes the fault's damage (its action's `permanent`, e.g. a corruption without
 * backup): its window in the history then ends once it was injected (see FaultWindowTimes.permanent).
 */
export function isPermanent(record: Pick<FaultRecord, 'spec'>): boolean {
  const action = nemeses.get(record.spec.kind)?.actions.find((a) => a.name === record.spec.action);
  return action?.permanent?.(record.spec.params ?? {}) === true;
}

/**
 * A fault that can only harm what clients had acknowledged while it was in force (a power failure
 * loses writes acknowledged through the cache: the action's `needsAcknowledgedOps`) exercised nothing
 * when no client op was acknowledged in its window (`startS`–`endS`, seconds from the start of the
 * workload, as the history marks it). Such a window gains a victim signal counting those ops, and does
 * not count as landed without one: a negative control must not pass because the database was still
 * recovering from the fault's own restart when the power failed.
 */
export function withExposure(
  fault: FaultEvidenceRecord,
  window: { startS: number; endS: number | null },
  ops: readonly Operation[],
): FaultEvidenceRecord {
  const action = nemeses.get(fault.kind)?.actions.find((a) => a.name === fault.action);
  if (!action?.needsAcknowledgedOps) return fault;
  const from = window.startS * NS;
  const to = window.endS === null ? Number.POSITIVE_INFINITY : window.endS * NS;
  let acked = 0;
  for (const op of ops)
    if (isClient(op) && op.type === 'ok' && op.invokeTime >= from && (op.completeTime ?? 0) <= to) acked++;
  const span = `${window.startS.toFixed(1)}–${window.endS === null ? 'end' : window.endS.toFixed(1)} s`;
  const signal = {
    side: 'victim' as const,
    node: fault.nodes.join(' '),
    signal: 'client ops invoked and acknowledged while the fault was in force (what it could lose)',
    during: `${acked} acknowledged in ${span}`,
    landed: acked > 0,
    ...(acked === 0 && {
      note: 'nothing was acknowledged while the fault was in force: it could lose nothing acknowledged',
    }),
  };
  const landed = fault.landed && acked > 0;
  return {
    ...fault,
    signals: [...fault.signals, signal],
    landed,
    reason:
      acked === 0
        ? `no client op was acknowledged while the fault was in force (${span}): it exercised nothing${fault.reason ? `; ${fault.reason}` : ''}`
        : fault.reason,
  };
}
