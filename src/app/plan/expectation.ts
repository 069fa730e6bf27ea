import { isFail, isPass, VERDICTS, type Verdict } from './verdict-states.ts';

/**
 * A scenario's (or arm's) expected verdict, and the judgement of a row against it. A negative control
 * expects `FAIL-reproducible`; a fault the cluster cannot host expects `INCONCLUSIVE-fault-not-proven`.
 *
 * Plan syntax (`Expected verdict:` in the scenario block, or under an arm's heading):
 *   `FAIL-reproducible`
 *   `PASS-smoke or PASS-hardening`                       (any of a list: `or`, `,` or `|`)
 *   `INCONCLUSIVE-fault-not-proven on shared-clock; PASS-smoke on own-clock`
 * Clauses are separated by `;`. A clause may end with `on shared-clock` (every node shares the control
 * host's kernel clock: the namespace cluster) or `on own-clock` (nodes with their own kernels: VMs, lab
 * hosts); text in parentheses is a remark. A conditional clause that matches the cluster wins over the
 * unconditional ones; when the cluster is unknown every clause is acceptable.
 *
 * Meeting: the verdict is one of the acceptable states, except that an expected `PASS-smoke` is also met
 * by `PASS-hardening` (a stronger pass at a higher tier is not a surprise).
 */

export const EXPECTATION_CONDITIONS = ['shared-clock', 'own-clock'] as const;
export type ExpectationCondition = (typeof EXPECTATION_CONDITIONS)[number];

export interface ExpectationClause {
  verdicts: Verdict[];
  on: ExpectationCondition | null;
}

export interface Expectation {
  /** The plan's text, verbatim. */
  text: string;
  clauses: ExpectationClause[];
}

/** What the run knows about the cluster that a conditional clause can name; null = not known. */
export interface ExpectationEnv {
  sharedClock: boolean | null;
  /** Rows the operator left out (`--scenario`): not judged, a subset run is not a failure. */
  unselected?: ReadonlySet<string>;
}

export interface ExpectationJudgement {
  /** The acceptable verdicts on this cluster, or `['every arm as expected']` for a parent of arms. */
  expected: string[];
  met: boolean;
  /** Which condition selected the clause(s), when one did. */
  on: ExpectationCondition | null;
}

export function parseExpectation(text: string): { expectation: Expectation } | { error: string } {
  const clauses: ExpectationClause[] = [];
  for (const raw of text.split(';')) {
    const body = raw
      .replace(/\([^)]*\)/g, ' ')
      .replace(/[`*]/g, '')
      .trim();
    if (body === '') continue;
    const cond = body.match(/\s+on\s+([a-z-]+)\s*\.?$/i);
    let on: ExpectationCondition | null = null;
    if (cond) {
      const c = cond[1]!.toLowerCase();
      if (!(EXPECTATION_CONDITIONS as readonly string[]).includes(c))
        return { error: `"on ${c}": the condition is one of ${EXPECTATION_CONDITIONS.join(', ')}` };
      on = c as ExpectationCondition;
    }
    const list = (cond ? body.slice(0, cond.index) : body)
      .split(/\s*(?:,|\||\bor\b)\s*/i)
      .map((v) => v.trim())
      .filter(Boolean);
    const verdicts: Verdict[] = [];
    for (const v of list) {
      const known = VERDICTS.find((k) => k.toLowerCase() === v.toLowerCase());
      if (!known) return { error: `"${v}" is not a verdict (one of ${VERDICTS.join(', ')})` };
      verdicts.push(known);
    }
    if (verdicts.length === 0) return { error: `"${raw.trim()}" names no verdict` };
    clauses.push({ verdicts, on });
  }
  if (clauses.length === 0) return { error: 'empty: name the expected verdict, e.g. FAIL-reproducible' };
  return { expectation: { text, clauses } };
}

function conditionHolds(on: ExpectationCondition, env: ExpectationEnv): boolean | null {
  if (env.sharedClock === null) return null;
  return on === 'shared-clock' ? env.sharedClock : !env.sharedClock;
}

/** The clauses that apply on this cluster (null when none does: no expectation here). */
export function applicableClauses(
  e: Expectation,
  env: ExpectationEnv,
): { verdicts: Verdict[]; on: ExpectationCondition | null } | null {
  const conditional = e.clauses.filter((c) => c.on !== null);
  const matching = conditional.filter((c) => conditionHolds(c.on!, env) === true);
  const unknown = conditional.some((c) => conditionHolds(c.on!, env) === null);
  const chosen = unknown ? e.clauses : matching.length > 0 ? matching : e.clauses.filter((c) => !c.on);
  if (chosen.length === 0) return null;
  const verdicts = [...new Set(chosen.flatMap((c) => c.verdicts))];
  return { verdicts, on: !unknown && matching.length > 0 ? matching[0]!.on : null };
}

/** A negative control: every verdict its expectation accepts, on any cluster, is a FAIL. */
export function isNegativeControl(e: Expectation | null): boolean {
  return e?.clauses.every((c) => c.verdicts.every((v) => v.startsWith('FAIL-'))) ?? false;
}

export function meets(verdict: Verdict, expected: Verdict): boolean {
  return verdict === expected || (expected === 'PASS-smoke' && verdict === 'PASS-hardening');
}

export function judge(
  verdict: Verdict,
  e: Expectation | null,
  env: ExpectationEnv,
): ExpectationJudgement | undefined {
  if (!e) return undefined;
  const applicable = applicableClauses(e, env);
  if (!applicable) return undefined;
  return {
    expected: applicable.verdicts,
    met: applicable.verdicts.some((x) => meets(verdict, x)),
    on: applicable.on,
  };
}

/**
 * A parent of arms with no expectation of its own, when some arm declares one: met when every arm with
 * an expectation meets it and every other arm passes.
 */
export function judgeParent(
  arms: readonly { verdict: Verdict; expectation?: ExpectationJudgement | undefined }[],
): ExpectationJudgement | undefined {
  if (!arms.some((a) => a.expectation)) return undefined;
  const met = arms.every((a) => (a.expectation ? a.expectation.met : isPass(a.verdict)));
  return { expected: ['every arm as expected'], met, on: null };
}

/** A judged row, as the decision tree leaves it. */
interface JudgedRow {
  verdict: Verdict;
  expectation?: ExpectationJudgement | undefined;
  stoppedEarly?: string | undefined;
}

/**
 * Stopped early (Ctrl-C, the session deadline, its own budget) short of a FAIL: the row's evidence is
 * incomplete rather than contrary, so an unmet expectation is unknown, not a failure.
 */
export function stoppedShort(d: JudgedRow): boolean {
  return d.stoppedEarly !== undefined && !isFail(d.verdict);
}

/**
 * `FAIL-reproducible (met)`, `PASS-smoke (UNMET)`, `PASS-smoke (unknown: stopped early)`, `—`: the cell
 * every report prints.
 */
export function expectationCell(d: JudgedRow): string {
  const j = d.expectation;
  if (!j) return '—';
  const state = j.met ? 'met' : stoppedShort(d) ? 'unknown: stopped early' : 'UNMET';
  return `${j.expected.join(' or ')}${j.on ? ` on ${j.on}` : ''} (${state})`;
}
