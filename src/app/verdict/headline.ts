import type { Anomaly } from '../../../checkers/types.ts';
import type { Operation } from '../../core/history/operation.ts';

/**
 * The one sentence a FAIL leads with, everywhere (report summary, scenario row, report.json, terminal):
 * the checker's explanation of its first anomaly, with each op it names placed in the run: process and
 * node, when (seconds since the run started), and for the op that shows the anomaly, the fault window
 * active when it was invoked and what that fault did. Ops keep the history's numbering (the event index
 * of their invocation), so every number can be looked up in history.jsonl.
 *
 * "On key 3, read → nil (op 735, process 16 on n2, 5.30–5.41 s, during w1: n2 isolated from n1 n3 n4
 * n5) cannot be linearized: the cas-register could only hold 4 or 2 by then, last set by write(4) (op
 * 712, process 3 on n1, ok at 5.20 s) in the longest linearizable prefix (7 of 200 ops)."
 */
export interface HeadlineContext {
  /** Client ops by the event index of their invocation. */
  ops: ReadonlyMap<number, Operation>;
  /**
   * Fault windows by id, with what each did and when its heal was done (ns on the history's clock, when
   * known): an anomaly seen with no fault active is placed after the latest heal, which often explains it
   * (a follower still catching up, a leader not yet deposed).
   */
  faults: ReadonlyMap<string, { what: string; healedAtNs?: number | null }>;
}

export function opsByEventIndex(ops: readonly Operation[]): Map<number, Operation> {
  return new Map(ops.map((o) => [o.invokeIndex, o]));
}

const secs = (ns: number) => `${(ns / 1e9).toFixed(2)} s`;

/** `12.10–12.30 s`; with milliseconds when the op was shorter than the two figures can show. */
function interval(from: number, to: number): string {
  const digits = (from / 1e9).toFixed(2) === (to / 1e9).toFixed(2) ? 3 : 2;
  return `${(from / 1e9).toFixed(digits)}–${(to / 1e9).toFixed(digits)} s`;
}

function keyName(key: string): string {
  return /^[\w.:-]+$/.test(key) ? key : JSON.stringify(key);
}

/** Where the failing op ran and what was happening to the cluster then. */
function failingOpContext(op: Operation, ctx: HeadlineContext): string {
  const who = `process ${String(op.process)}${op.node ? ` on ${op.node}` : ''}`;
  const end = op.completeTime ?? op.infoTime;
  const when = end === null ? `invoked at ${secs(op.invokeTime)}` : interval(op.invokeTime, end);
  const windows = (op.faultEpoch ?? []).map((id) => {
    const what = ctx.faults.get(id)?.what;
    return what ? `${id}: ${what}` : id;
  });
  const during = windows.length > 0 ? `during ${windows.join(' and ')}` : quietContext(op, ctx);
  return `${who}, ${when}, ${during}`;
}

/** `with no fault active`, and how long after the latest heal before the op was invoked, if any. */
function quietContext(op: Operation, ctx: HeadlineContext): string {
  let latest: { id: string; what: string; at: number } | null = null;
  for (const [id, f] of ctx.faults) {
    const at = f.healedAtNs;
    if (at === undefined || at === null || at > op.invokeTime) continue;
    if (latest === null || at > latest.at) latest = { id, what: f.what, at };
  }
  if (latest === null) return 'with no fault active';
  return `with no fault active, ${secs(op.invokeTime - latest.at)} after ${latest.id} healed (${latest.what})`;
}

/** Another op the explanation rests on: who ran it and when it was acknowledged (or not). */
function supportingOpContext(op: Operation): string {
  const who = `process ${String(op.process)}${op.node ? ` on ${op.node}` : ''}`;
  if (op.type === 'ok' && op.completeTime !== null) return `${who}, ok at ${secs(op.completeTime)}`;
  if (op.type === 'fail' && op.completeTime !== null) return `${who}, failed at ${secs(op.completeTime)}`;
  return `${who}, invoked at ${secs(op.invokeTime)}, outcome unknown`;
}

/** Put `context` next to the first mention of `op N`: inside its parentheses when it has its own. */
function annotate(text: string, n: number, context: string): string {
  const own = new RegExp(`\\(op ${n}\\)`);
  if (own.test(text)) return text.replace(own, `(op ${n}, ${context})`);
  const bare = new RegExp(`\\bop ${n}(?!\\d)`);
  if (bare.test(text)) return text.replace(bare, `op ${n} (${context})`);
  return text;
}

/** One sentence for one anomaly: never cut, ends with a full stop. */
export function anomalyHeadline(a: Anomaly, ctx: HeadlineContext): string {
  let text = a.explanation.trim().replace(/[.;,:\s]+$/, '');
  // A partitioned checker may already name the key; say it once, in front.
  text = text.replace(/^key ("(?:[^"\\]|\\.)*"|\S+): /, '');
  const ops = (a.ops ?? []).filter((n, i, all) => all.indexOf(n) === i);
  ops.forEach((n, i) => {
    const op = ctx.ops.get(n);
    if (!op) return;
    const context = i === 0 ? failingOpContext(op, ctx) : supportingOpContext(op);
    const before = text;
    text = annotate(text, n, context);
    // The explanation did not name the op that shows the anomaly: name it, with its context.
    if (i === 0 && text === before) text = `${text} (op ${n}, ${context})`;
  });
  const where = a.key !== undefined && a.key !== '' ? `On key ${keyName(String(a.key))}, ` : '';
  return `${where}${where ? text : text.charAt(0).toUpperCase() + text.slice(1)}.`;
}

/**
 * The headline of a checker's result: its first anomaly's sentence, plus how many more there are (a last
 * clause of the same sentence). Null when it found nothing.
 */
export function resultHeadline(anomalies: readonly Anomaly[], ctx: HeadlineContext): string | null {
  const first = anomalies[0];
  if (!first) return null;
  const sentence = anomalyHeadline(first, ctx);
  const rest = anomalies.slice(1);
  if (rest.length === 0) return sentence;
  const keys = [
    ...new Set(rest.map((a) => a.key).filter((k): k is string => typeof k === 'string' && k !== '')),
  ];
  const more = `${rest.length} more anomal${rest.length === 1 ? 'y' : 'ies'}${keys.length ? ` on key${keys.length === 1 ? '' : 's'} ${keys.slice(0, 8).map(keyName).join(', ')}${keys.length > 8 ? ` and ${keys.length - 8} others` : ''}` : ''}`;
  return `${sentence.slice(0, -1)}; ${more}.`;
}
