import { groupThousands } from '../../src/core/util/format.ts';
import type { Anomaly, CheckResult } from '../types.ts';
import type { CheckOutcome, PartitionResult } from './check.ts';
import type { AnyModel, Refutation } from './model.ts';
import type { EncodedOp } from './prepare.ts';

export const CHECKER_NAME = 'linearizable';

export const SCOPE =
  'Checks that the client ops admit one total order that respects real time (event order) and the ' +
  'sequential model; ops with unknown outcome may take effect at any point after their invocation, or ' +
  'never. Partitions (keys) are checked independently, so it cannot see multi-key or transactional ' +
  'anomalies, nor failed ops or reads whose result is unknown (an info read, or a nil read under ' +
  "Knossos's semantics: they constrain nothing), nor anything the history did not record.";

/** Longest prefixes are reported in full up to this many ops; beyond, only the tail is listed. */
const PREFIX_TAIL = 50;

const fmt = groupThousands;

export function partitionName(p: PartitionResult): string {
  return p.key === null ? 'the history' : `key ${JSON.stringify(p.key)}`;
}

export function describeOp(model: AnyModel, op: EncodedOp): string {
  return model.describeOperation(op.input, op.output);
}

/** An op as people see it everywhere: its description and the event index of its invocation. */
function opRef(model: AnyModel, op: EncodedOp): string {
  return `${describeOp(model, op)} (op ${op.call})`;
}

/** The anomaly for a partition the model's quick refutation decided. */
function refutedAnomaly(model: AnyModel, p: PartitionResult, refutation: Refutation): Anomaly {
  const refs = [refutation.op, ...refutation.witnesses].map((i) => p.ops.at(i) as EncodedOp);
  const blocked = refs[0] as EncodedOp;
  const reason = refutation.reason.replace(/#(\d+)/g, (_, k: string) => {
    const op = refs[Number(k)];
    return op ? opRef(model, op) : `#${k}`;
  });
  return {
    type: 'nonlinearizable',
    explanation: `${p.key === null ? '' : `${partitionName(p)}: `}not linearizable: ${reason}`,
    ops: refs.map((o) => o.call),
    ...(p.key === null ? {} : { key: p.key }),
    partitionOps: p.ops.length,
    longestPrefixLength: null,
    longestPrefix: [],
    longestPrefixTruncated: false,
    longestPrefixSteps: [],
    firstUnlinearizable: {
      op: blocked.call,
      process: blocked.process,
      description: describeOp(model, blocked),
    },
    statesSeen: [],
  };
}

/** "4", "4 or 2", "4, 2 or 7". */
function either(states: readonly string[]): string {
  if (states.length <= 1) return states[0] ?? '?';
  return `${states.slice(0, -1).join(', ')} or ${states.at(-1)}`;
}

/**
 * The last op of the prefix that changed the state (its state differs from the one before it), or
 * undefined when no rendered step changed it (the state is the initial one).
 */
function lastChange(p: PartitionResult, prefixOps: readonly EncodedOp[]): EncodedOp | undefined {
  const stateAt = (k: number) =>
    k < 0 ? p.initialState : k < p.prefixStatesFrom ? undefined : p.prefixStates[k - p.prefixStatesFrom];
  for (let k = prefixOps.length - 1; k >= p.prefixStatesFrom; k--) {
    const before = stateAt(k - 1);
    if (before === undefined || before !== stateAt(k)) return prefixOps[k];
  }
  return undefined;
}

/**
 * The anomaly for one partition proven not linearizable. The explanation leads with the op that cannot
 * be linearized and says what the model allowed instead: the states the longest linearizable prefixes
 * end in, and the op that last changed the state.
 */
export function nonlinearizableAnomaly(model: AnyModel, p: PartitionResult): Anomaly {
  if (p.refutation) return refutedAnomaly(model, p, p.refutation);
  const prefixOps = p.prefix.map((i) => p.ops.at(i) as EncodedOp);
  const blocked = p.blockedOp >= 0 ? (p.ops.at(p.blockedOp) as EncodedOp) : undefined;
  const changed = lastChange(p, prefixOps);
  const prefix = `the longest linearizable prefix (${fmt(prefixOps.length)} of ${fmt(p.ops.length)} ops)`;
  const unchanged = p.prefixStatesFrom === 0 && changed === undefined;
  const setBy = changed ? `, last set by ${opRef(model, changed)}` : unchanged ? ', its initial state' : '';
  const where = p.key === null ? '' : `${partitionName(p)}: `;
  // The search's finding, said as it is: the op must come next after every longest prefix, and no state
  // those prefixes end in lets it return what it returned.
  const explanation = blocked
    ? `${where}${opRef(model, blocked)} cannot be linearized: it must come right after ${prefix}, where the ${model.name} can only hold ${either(p.statesSeen)}${setBy}`
    : `${where}no order of the ${fmt(p.ops.length)} ops fits the ${model.name} model`;
  const tail = prefixOps.slice(-PREFIX_TAIL);
  const ops = blocked ? [blocked.call, ...(changed ? [changed.call] : [])] : [];
  return {
    type: 'nonlinearizable',
    explanation,
    ops,
    ...(p.key === null ? {} : { key: p.key }),
    partitionOps: p.ops.length,
    longestPrefixLength: prefixOps.length,
    longestPrefix: tail.map((o) => o.call),
    longestPrefixTruncated: prefixOps.length > tail.length,
    longestPrefixSteps: tail.map((o, i) => ({
      op: o.call,
      process: o.process,
      description: describeOp(model, o),
      state: p.prefixStates[prefixOps.length - tail.length + i - p.prefixStatesFrom],
    })),
    firstUnlinearizable: blocked
      ? { op: blocked.call, process: blocked.process, description: describeOp(model, blocked) }
      : null,
    statesSeen: p.statesSeen,
  };
}

/**
 * Turn a search outcome into faultline's CheckResult. `key` names the history of a per-key check (its
 * one partition is otherwise "the history").
 */
export function buildResult(
  model: AnyModel,
  outcome: CheckOutcome,
  timeoutMs: number,
  key?: string,
): CheckResult {
  const name = (p: PartitionResult) =>
    p.key === null && key !== undefined ? `key ${key}` : partitionName(p);
  const parts = outcome.partitions;
  const decided = parts.filter((p) => p.status === 'ok' || p.status === 'illegal');
  const undecided = parts.filter((p) => p.status === 'unknown');
  const cancelled = parts.filter((p) => p.status === 'cancelled');
  const failing = outcome.failing.map((i) => parts[i] as PartitionResult);
  const anomalies = failing.map((p) => nonlinearizableAnomaly(model, p));
  const opsChecked = parts.reduce((n, p) => n + p.ops.length, 0);
  const scopeWord =
    parts.length === 1 && parts[0]?.key === null ? 'one history' : `${fmt(parts.length)} keys`;
  let evidence = `linearizability (${model.name}): ${fmt(outcome.opsConsumed)} ops over ${scopeWord}, ${fmt(anomalies.length)} ${anomalies.length === 1 ? 'anomaly' : 'anomalies'}`;
  if (outcome.opsIgnored > 0)
    evidence += ` (${fmt(outcome.opsIgnored)} ops constrain nothing: failed writes, unknown reads)`;
  const simplified = [
    outcome.opsUnobserved > 0
      ? `${fmt(outcome.opsUnobserved)} left out, as no other op could observe what it wrote`
      : '',
    outcome.opsBounded > 0
      ? `${fmt(outcome.opsBounded)} bounded by the first op that saw what only it wrote`
      : '',
  ].filter(Boolean);
  if (simplified.length > 0) evidence += ` (ops of unknown outcome: ${simplified.join('; ')})`;
  if (failing.length > 0) evidence += `; not linearizable: ${failing.map(name).join(', ')}`;
  if (cancelled.length > 0)
    evidence += `; ${fmt(cancelled.length)} partitions not finished after the first failure`;
  if (undecided.length > 0) {
    const why = outcome.aborted ? 'the check was cancelled' : `the ${fmt(timeoutMs)} ms budget ran out`;
    evidence += `; undecided (${why}): ${undecided.map(name).join(', ')}`;
  }
  const steps = parts.reduce((n, p) => n + p.steps, 0);
  return {
    checker: CHECKER_NAME,
    valid: outcome.valid,
    evidence,
    scope: SCOPE,
    anomalies,
    stats: {
      opsConsumed: outcome.opsConsumed,
      opsChecked,
      opsIgnored: outcome.opsIgnored,
      opsUnobserved: outcome.opsUnobserved,
      opsBounded: outcome.opsBounded,
      model: model.name,
      partitions: parts.length,
      partitionsChecked: decided.length,
      failingPartitions: failing.map((p) => p.key),
      undecidedPartitions: undecided.map((p) => p.key),
      cancelledPartitions: cancelled.map((p) => p.key),
      timedOut: outcome.timedOut,
      elapsedMs: Math.round(outcome.elapsedMs * 10) / 10,
      searchSteps: steps,
      modelCalls: parts.reduce((n, p) => n + p.modelCalls, 0),
      cacheEntries: parts.reduce((n, p) => n + p.cacheSize, 0),
      workers: outcome.workers,
    },
  };
}
