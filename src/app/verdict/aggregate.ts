import { stoppedShort } from '../plan/expectation.ts';
import {
  isFail,
  isInconclusive,
  isPartial,
  type SessionVerdict,
  type Verdict,
} from '../plan/verdict-states.ts';
import type { Decision } from './decide.ts';

/**
 * Rolling verdicts up: §7.M.S arms into their parent scenario (the downgrade rule), and scenarios into
 * the session verdict. Both follow spec §2: the strongest evidence decides, not a count.
 */

/** Strength of a passing or partial verdict, for "the weakest arm wins". */
const STRENGTH: Partial<Record<Verdict, number>> = {
  'PASS-hardening': 4,
  'PASS-smoke': 3,
  'PARTIAL-model': 2,
  'PARTIAL-surface': 1,
};

/**
 * The parent row of a scenario split into arms. A FAIL arm makes the parent FAIL (worst evidence
 * dominates); any NOT-RUN or PARTIAL-* arm caps the parent at PARTIAL-surface; an INCONCLUSIVE arm
 * makes the parent INCONCLUSIVE; otherwise the parent gets its weakest arm's pass.
 */
export function aggregateArms(parentId: string, arms: readonly Decision[]): Decision {
  const stopped = arms.find((a) => a.stoppedEarly !== undefined)?.stoppedEarly;
  const d = aggregateArmVerdicts(parentId, arms);
  if (stopped !== undefined) d.stoppedEarly = stopped;
  return d;
}

function aggregateArmVerdicts(parentId: string, arms: readonly Decision[]): Decision {
  const base = { scenario: parentId, step: 8, tierMet: null, release: false, audits: null } as const;
  if (arms.length === 0) return { ...base, verdict: 'NOT-RUN', reasons: ['no arm was recorded'] };
  const repro = arms.find((a) => a.verdict === 'FAIL-reproducible');
  const nondet = arms.find((a) => a.verdict === 'FAIL-nondeterministic');
  const fail = repro ?? nondet;
  if (fail)
    return {
      ...base,
      verdict: fail.verdict,
      reasons: [`arm ${fail.scenario} ${fail.verdict}: ${fail.reasons[0] ?? ''}`],
      cappedBy: 'arms',
    };
  if (arms.every((a) => a.verdict === 'NOT-RUN')) {
    return { ...base, verdict: 'NOT-RUN', reasons: ['no arm was attempted'] };
  }
  const inconclusive = arms.find((a) => isInconclusive(a.verdict));
  if (inconclusive) {
    return {
      ...base,
      verdict: inconclusive.verdict,
      reasons: [`arm ${inconclusive.scenario}: ${inconclusive.verdict} (${inconclusive.reasons[0] ?? ''})`],
      cappedBy: 'arms',
    };
  }
  const capping = arms.filter((a) => a.verdict === 'NOT-RUN' || isPartial(a.verdict));
  if (capping.length > 0) {
    return {
      ...base,
      verdict: 'PARTIAL-surface',
      reasons: [
        `capped at PARTIAL-surface by arm(s) ${capping.map((a) => `${a.scenario} (${a.verdict})`).join(', ')}`,
      ],
      cappedBy: 'arms',
    };
  }
  const weakest = [...arms].sort((a, b) => (STRENGTH[a.verdict] ?? 0) - (STRENGTH[b.verdict] ?? 0))[0]!;
  const tiers = arms.map((a) => a.tierMet);
  const tierMet = tiers.includes(null)
    ? null
    : tiers.includes('smoke')
      ? 'smoke'
      : tiers.includes('hardening')
        ? 'hardening'
        : 'release';
  return {
    ...base,
    tierMet,
    release: arms.every((a) => a.release),
    verdict: weakest.verdict,
    reasons: [`all ${arms.length} arms passed; weakest ${weakest.scenario}: ${weakest.verdict}`],
  };
}

export interface SessionOutcome {
  verdict: SessionVerdict;
  /** One line, the report's headline. */
  headline: string;
  /** FAIL-nondeterministic rows: no reproducer, so no session FAIL, but surfaced prominently. */
  nondeterministic: string[];
}

/**
 * The session verdict over the top-level rows (scenarios without arms, and aggregated parents).
 * `blocked` forces BLOCKED when the plan could not be loaded or the SUT could not be reached.
 */
/** The reason of a scenario left out with `--scenario`: it is not judged, not even as a concern. */
export const NOT_SELECTED = 'not selected (--scenario)';
/** The reason of a row none of whose (scenario, seed) units fell to this shard (`--shard K/N`). */
export const NOT_IN_SHARD = 'not selected (its units are in other shards)';

/** A row the operator left out (`--scenario`) or another shard runs: not judged, not reported as a test. */
export function isNotSelected(r: { verdict: string; reasons: readonly string[] }): boolean {
  return r.verdict === 'NOT-RUN' && (r.reasons[0] === NOT_SELECTED || r.reasons[0] === NOT_IN_SHARD);
}

export function sessionVerdict(allRows: readonly Decision[], blocked?: string): SessionOutcome {
  const rows = allRows.filter((r) => !isNotSelected(r));
  // A row's expected verdict, when declared, decides whether it counts as a success or a failure;
  // without one a PASS is a success and a reproducible FAIL a failure.
  const met = (r: Decision) => r.expectation?.met === true;
  // A row stopped early (Ctrl-C, the deadline, its budget) short of a FAIL has incomplete evidence, not
  // contrary evidence: its unmet expectation is a concern (exit 2, unknown), never a failure.
  const unmet = (r: Decision) => r.expectation?.met === false && !stoppedShort(r);
  const nondeterministic = rows
    .filter((r) => r.verdict === 'FAIL-nondeterministic' && !r.expectation)
    .map((r) => r.scenario);
  if (blocked) return { verdict: 'BLOCKED', headline: `BLOCKED: ${blocked}`, nondeterministic };
  const fails = rows.filter((r) => unmet(r) || (!r.expectation && r.verdict === 'FAIL-reproducible'));
  const passes = rows.filter((r) => met(r) || (!r.expectation && r.verdict.startsWith('PASS-')));
  const concerns = rows.filter((r) => !passes.includes(r) && !fails.includes(r));
  const nd = nondeterministic.length
    ? `; FAIL-nondeterministic (no reproducer): ${nondeterministic.join(', ')}`
    : '';
  const expectedNote = rows.some(met)
    ? ` (${rows.filter(met).length} as the plan expects: ${rows
        .filter(met)
        .map((r) => `${r.scenario} ${r.verdict}`)
        .join(', ')})`
    : '';
  if (fails.length > 0) {
    return {
      verdict: 'FAIL',
      headline: `FAIL: ${fails.map(failureLine).join(' ')}${nd ? ` Also FAIL-nondeterministic (no reproducer): ${nondeterministic.join(', ')}.` : ''}`,
      nondeterministic,
    };
  }
  if (rows.length === 0 || rows.every((r) => r.verdict === 'NOT-RUN' && !met(r))) {
    return {
      verdict: 'BLOCKED',
      headline: 'BLOCKED: nothing ran (every scenario NOT-RUN)',
      nondeterministic,
    };
  }
  if (passes.length > 0) {
    if (concerns.length === 0) {
      return {
        verdict: 'DONE',
        headline: `DONE: ${passes.length} scenario(s) ${expectedNote ? 'met the plan' : 'passed with cited evidence'}${expectedNote}`,
        nondeterministic,
      };
    }
    return {
      verdict: 'DONE_WITH_CONCERNS',
      headline: `DONE_WITH_CONCERNS: ${passes.length} ${expectedNote ? 'met the plan' : 'passed'}${expectedNote}; concerns: ${concerns.map(concernLine).join(', ')}${nd}`,
      nondeterministic,
    };
  }
  const open = rows.filter(
    (r) => isInconclusive(r.verdict) || isPartial(r.verdict) || isFail(r.verdict) || stoppedShort(r),
  );
  return {
    verdict: 'INCONCLUSIVE',
    headline: `INCONCLUSIVE: no PASS and no reproducible FAIL; ${open.map(concernLine).join(', ')}${nd}`,
    nondeterministic,
  };
}

/** `S1 INCONCLUSIVE-fault-not-proven`, with `(stopped early: …)` when that is why. */
function concernLine(r: Decision): string {
  return `${r.scenario} ${r.verdict}${stoppedShort(r) ? ` (stopped early: ${r.stoppedEarly})` : ''}`;
}

/** `S3 FAIL-reproducible (why)`, or `S1 PASS-smoke where the plan expects FAIL-reproducible (why)`. */
/** One FAIL row as a whole sentence (see ./headline.ts): never cut, never wrapped in brackets. */
function failureLine(r: Decision): string {
  const why = r.reasons[0] ?? 'see its findings';
  const sentence = /[.!?]$/.test(why) ? why : `${why}.`;
  if (r.expectation && !r.expectation.met)
    return `${r.scenario} ${r.verdict} where the plan expects ${r.expectation.expected.join(' or ')}: ${sentence}`;
  return `${r.scenario} ${r.verdict}: ${sentence}`;
}
