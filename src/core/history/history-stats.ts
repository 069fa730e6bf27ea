import { terminalText } from '../util/terminal.ts';
import type { EventType, ProcessId } from './event.ts';
import { absentFields } from './event.ts';
import type { TornTail } from './jsonl.ts';
import type { Operation } from './operation.ts';
import { Pairer } from './pair.ts';
import { type LoadOptions, readEventBatches } from './read.ts';

/**
 * `faultline history stats`: one streaming pass, memory bounded by the number of processes and distinct
 * `f` values (ops are counted, not kept). Pairing problems are counted and the first is quoted, so a
 * damaged history can still be described.
 */
export interface HistoryStats {
  file: string;
  events: { total: number; byType: Record<EventType, number> };
  ops: {
    total: number;
    byOutcome: { ok: number; fail: number; info: number };
    byF: Record<string, { ok: number; fail: number; info: number }>;
  };
  /** Distinct client processes (the nemesis is counted separately). */
  processes: number;
  nemesisEvents: number;
  /** Client processes retired by an info completion or an op left open. */
  retiredProcesses: number;
  /** Ops with no completion at all at the end of the history. */
  openOps: number;
  time: {
    firstNs: number | null;
    lastNs: number | null;
    spanNs: number;
    /** True when the source had no times and positions stand in for them (EDN without :time, Porcupine). */
    synthetic: boolean;
  };
  /** Completed client ops (ok/fail) per second of history time; null when times are synthetic or span is 0. */
  opsPerSecond: number | null;
  pairingProblems: { count: number; first: string | null };
  tornTail: TornTail | null;
}

export async function historyStats(file: string, opts: LoadOptions = {}): Promise<HistoryStats> {
  const byType: Record<EventType, number> = { invoke: 0, ok: 0, fail: 0, info: 0 };
  const byOutcome = { ok: 0, fail: 0, info: 0 };
  const byF: Record<string, { ok: number; fail: number; info: number }> = Object.create(null);
  const processes = new Set<ProcessId>();
  let total = 0;
  let nemesisEvents = 0;
  let first: number | null = null;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let synthetic = false;
  let problems = 0;
  let firstProblem: string | null = null;
  let tornTail: TornTail | null = null;
  let clientCompleted = 0;

  const pairer = new Pairer(false);
  pairer.onClosed = (op: Operation) => {
    byOutcome[op.type]++;
    let c = byF[op.f];
    if (c === undefined) {
      c = { ok: 0, fail: 0, info: 0 };
      byF[op.f] = c;
    }
    c[op.type]++;
    if (op.process !== 'nemesis' && op.type !== 'info') clientCompleted++;
  };

  // Events are only read here, so a large file may be parsed on two threads.
  for await (const batch of readEventBatches(file, {
    parallel: true,
    ...opts,
    onTornTail: (t) => (tornTail = t),
  })) {
    for (const ev of batch) {
      total++;
      byType[ev.type]++;
      if (ev.process === 'nemesis') nemesisEvents++;
      else processes.add(ev.process);
      if (first === null) {
        first = ev.time;
        synthetic = absentFields(ev).includes('time');
      }
      if (ev.time < min) min = ev.time;
      if (ev.time > max) max = ev.time;
      const problem = pairer.push(ev);
      if (problem) {
        problems++;
        firstProblem ??= `event ${ev.index}: ${problem}`;
      }
    }
  }
  const openOps = pairer.openOps().length;
  pairer.finish();
  const spanNs = total > 0 ? max - min : 0;
  return {
    file,
    events: { total, byType },
    ops: { total: pairer.opCount, byOutcome, byF: { ...byF } },
    processes: processes.size,
    nemesisEvents,
    retiredProcesses: pairer.retired().length,
    openOps,
    time: { firstNs: total > 0 ? min : null, lastNs: total > 0 ? max : null, spanNs, synthetic },
    opsPerSecond: synthetic || spanNs <= 0 ? null : clientCompleted / (spanNs / 1e9),
    pairingProblems: { count: problems, first: firstProblem },
    tornTail,
  };
}

export function formatStats(s: HistoryStats): string {
  const lines: string[] = [];
  const t = s.events.byType;
  lines.push(`history   ${s.file}`);
  lines.push(`events    ${s.events.total} (invoke ${t.invoke}, ok ${t.ok}, fail ${t.fail}, info ${t.info})`);
  const o = s.ops.byOutcome;
  lines.push(`ops       ${s.ops.total} (ok ${o.ok}, fail ${o.fail}, info/open ${o.info})`);
  const fs = Object.entries(s.ops.byF).sort((a, b) => a[0].localeCompare(b[0]));
  const width = Math.max(0, ...fs.map(([f]) => f.length));
  for (const [f, c] of fs) lines.push(`  ${f.padEnd(width)}  ok ${c.ok}  fail ${c.fail}  info ${c.info}`);
  lines.push(
    `processes ${s.processes} clients, ${s.retiredProcesses} retired; nemesis events ${s.nemesisEvents}`,
  );
  lines.push(`open ops  ${s.openOps} (never completed)`);
  if (s.time.synthetic) lines.push('time      synthetic: the source has no times, positions stand in');
  else if (s.time.firstNs !== null) {
    lines.push(
      `time      ${(s.time.firstNs / 1e9).toFixed(3)}s .. ${(s.time.lastNs! / 1e9).toFixed(3)}s (span ${(s.time.spanNs / 1e9).toFixed(3)}s)`,
    );
  }
  lines.push(`ops/s     ${s.opsPerSecond === null ? 'n/a' : s.opsPerSecond.toFixed(1)}`);
  if (s.pairingProblems.count > 0) {
    lines.push(`pairing   ${s.pairingProblems.count} problem(s); first: ${s.pairingProblems.first}`);
  }
  if (s.tornTail) lines.push(`torn tail line ${s.tornTail.line} (${s.tornTail.bytes} bytes) dropped`);
  // Op names and the first pairing problem come from the history: shown, never sent to the terminal.
  return terminalText(lines.join('\n'));
}
