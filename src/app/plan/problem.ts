/**
 * One thing wrong with a plan, located well enough to fix: which scenario (null for plan-level), which
 * field (spelled as in the spec), why, and whether it stops the plan from running.
 */
export interface Problem {
  scenario: string | null;
  field: string;
  reason: string;
  severity: 'error' | 'warning';
  line: number | null;
}

export function problem(
  scenario: string | null,
  field: string,
  reason: string,
  severity: Problem['severity'] = 'error',
  line: number | null = null,
): Problem {
  return { scenario, field, reason, severity, line };
}

/** `plan.md:42: S3: Oracle: "logs look fine" is not an oracle (error)` */
export function formatProblem(file: string, p: Problem): string {
  const where = `${file}${p.line === null ? '' : `:${p.line}`}`;
  return `${where}: ${p.severity}: ${p.scenario ?? 'plan'}: ${p.field}: ${p.reason}`;
}
