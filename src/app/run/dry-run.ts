import { faultWindows, windowSchedule } from '../../../nemeses/schedule.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { TierName } from '../plan/binding.ts';
import type { ResolvedScenario } from '../plan/schema.ts';

/**
 * Before any cluster work (and all that `faultline run --dry-run` does after the units): each row's
 * tier numbers and the fault schedule built from the binding's nemesis steps exactly as the run builds
 * it, so a step the engine would reject at injection is a plan error named with file:line, before a
 * session exists.
 */
export function dryRunRows(
  planPath: string,
  rows: readonly ResolvedScenario[],
  tier: TierName,
): { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  for (const row of rows) {
    const b = row.binding;
    if (!b) {
      lines.push(`${row.id}: NOT-RUN (no executable binding)`);
      continue;
    }
    const t = row.tiers[tier] ?? row.tiers.smoke;
    const durationS = t?.durationS ?? 30;
    const size = t
      ? `${t.nodes} nodes × ${durationS}s × ${t.faultWindows} fault window(s) × ${t.seeds} seed(s)`
      : `no ${tier} tier declared: ${durationS}s`;
    try {
      const windows = faultWindows(b.nemesis, durationS, t?.faultWindows ?? Number.POSITIVE_INFINITY);
      const schedule = windowSchedule(windows, durationS);
      const faults = windows.map((w) =>
        `${w.step.kind} ${w.step.behaviour ?? w.step.topology ?? w.step.action ?? ''} ${w.startS}–${w.endS}s`.replace(
          / +/g,
          ' ',
        ),
      );
      lines.push(
        `${row.id}: ${b.db} / ${b.workload} / ${b.checkers.join(', ')} at ${row.tiers[tier] ? tier : 'smoke'} tier (${size}); ${schedule.ops.length} schedule op(s)${faults.length ? `: ${faults.join(', ')}` : ', no fault'}`,
      );
    } catch (err) {
      const line = row.scenario.fieldLines.binding ?? row.scenario.line;
      errors.push(`${planPath}:${line}: error: ${row.id}: binding.nemesis: ${errorMessage(err)}`);
    }
  }
  return { lines, errors };
}
