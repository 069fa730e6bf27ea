import { groupThousands } from '../../core/util/format.ts';
import type { ExpectationJudgement } from '../plan/expectation.ts';
import type { ResolvedScenario } from '../plan/schema.ts';
import type { TierMet, Verdict } from '../plan/verdict-states.ts';
import { type AuditContext, type Audits, blocksHardening, MIN_AGREEING_SEEDS, runAudits } from './audits.ts';
import type { OracleResult, ScenarioEvidence } from './evidence.ts';
import { seedPrefix, seedViews } from './seeds.ts';
import { assessTier } from './tier.ts';

/**
 * `decideVerdict(evidence, scenario)`: the 8-step decision tree of spec §2, then the rules that can only
 * lower a pass: the single-seed rule, the cap by the budget tier actually met, and both audits.
 * Pure: the same evidence always gives the same decision, with every reason spelled out.
 */

export interface Decision {
  scenario: string;
  verdict: Verdict;
  /** Why, in order: the deciding step first, then each downgrade. */
  reasons: string[];
  /** What lowered a pass: 'seeds', 'budget', 'weak-oracle', 'red-flag', 'arms'. */
  cappedBy?: string;
  /** The step of the decision tree that decided (1–8). */
  step: number;
  tierMet: TierMet;
  /** PASS-hardening that met the release budget. */
  release: boolean;
  audits: Audits | null;
  /** The row judged against the plan's expected verdict, when it declares one (../plan/expectation.ts). */
  expectation?: ExpectationJudgement;
  /**
   * Why the row stopped before its planned runs ended (Ctrl-C, the session deadline, its own budget):
   * short of a FAIL, its evidence is incomplete, so an unmet expectation is a concern, not a failure.
   */
  stoppedEarly?: string;
}

/** Fields the checker of each model needs (spec: "Model → fields critical to its checker"). */
export const MODEL_FIELDS_REQUIRED: Record<string, string[]> = {
  register: ['node_seen'],
  map: ['key', 'node_seen'],
  queue: ['invoke_ts/complete_ts'],
  log: ['input', 'output'],
  lock: ['process_id', 'fault_epoch'],
  lease: ['invoke_ts/complete_ts'],
  session: ['process_id'],
  'membership-table': ['node_seen'],
  counter: ['input', 'output'],
  ledger: ['key', 'input'],
};
/** Every checked history needs completion times and timeout markers (a weak history lacks them). */
const ALWAYS_REQUIRED = ['invoke_ts/complete_ts', 'timeout_marker'];

export function modelOf(sc: ResolvedScenario): string | null {
  if (sc.binding) return sc.binding.model;
  const m = sc.model?.modelUnderTest
    ?.trim()
    .toLowerCase()
    .match(/^[a-z-]+/)?.[0];
  return m ?? null;
}

/** Every seed's landing gaps, each named by its seed when there are several. */
function landingProof(ev: ScenarioEvidence): string[] {
  return seedViews(ev).flatMap((v) => seedLandingProof(v.ev).map((g) => `${seedPrefix(v.seed)}${g}`));
}

function seedLandingProof(ev: ScenarioEvidence): string[] {
  const gaps: string[] = [];
  if (ev.faults.length < ev.faultsScheduled) {
    gaps.push(`${ev.faultsScheduled} fault window(s) scheduled, ${ev.faults.length} recorded`);
  }
  for (const f of ev.faults) {
    const inj = f.signals.some((s) => s.side === 'injector' && s.landed);
    const vic = f.signals.some((s) => s.side === 'victim' && s.landed);
    if (!f.landed || !inj || !vic) {
      const why = [
        !f.landed ? (f.reason ?? 'not landed') : '',
        !inj ? 'no injector signal' : '',
        !vic ? 'no victim signal' : '',
      ]
        .filter(Boolean)
        .join(', ');
      gaps.push(`${f.id} (${f.kind}${f.action ? ` ${f.action}` : ''}): ${why}`);
    }
  }
  return gaps;
}

function weakHistory(ev: ScenarioEvidence, sc: ResolvedScenario, declared: OracleResult[]): string[] {
  if (!ev.history) return ['no history facts recorded'];
  const out = [...ev.history.weaknesses];
  const model = modelOf(sc);
  const required = new Set([...ALWAYS_REQUIRED, ...(model ? (MODEL_FIELDS_REQUIRED[model] ?? []) : [])]);
  if (ev.faults.length > 0) required.add('fault_epoch');
  if (sc.categories.some((c) => c === 'membership')) required.add('node_seen');
  const missing = [...required].filter((f) => !ev.history!.fieldsPresent.includes(f));
  if (missing.length > 0)
    out.push(`history lacks ${missing.join(', ')}${model ? ` (needed by the ${model} model)` : ''}`);
  if (ev.history.clock === 'wall') out.push('wall-clock timestamps compared across processes');
  for (const o of declared) {
    if (o.mismatch) out.push(`${o.checker}: ${o.mismatch}`);
    if (o.valid === 'unknown') out.push(`${o.checker} could not decide${o.error ? `: ${o.error}` : ''}`);
  }
  return out;
}

type Tier = ReturnType<typeof assessTier>;
type Base = Pick<Decision, 'scenario' | 'tierMet' | 'release' | 'audits'>;

/**
 * The spec's 8 steps in order; each of steps 1–7 may decide (and stop), step 8 is the pass with the
 * rules that can only lower it.
 */
export function decideVerdict(ev: ScenarioEvidence, sc: ResolvedScenario, ctx: AuditContext = {}): Decision {
  const d = decideSteps(ev, sc, ctx);
  if (ev.stoppedEarly !== null) d.stoppedEarly = ev.stoppedEarly;
  return withRunFailures(d, ev);
}

/**
 * A seed whose run failed left nothing to judge, and whatever step decided says so only by what is
 * missing ("0 recorded", "the Oracle did not run"). The failure itself is named: first when no seed's
 * run ended, since it is then the whole reason; after the step's own reasons otherwise.
 */
function withRunFailures(d: Decision, ev: ScenarioEvidence): Decision {
  const failures = ev.seeds.filter((s) => s.error !== undefined);
  if (failures.length === 0) return d;
  const said = failures.map((s) => `seed ${s.seed}: the run failed: ${s.error?.replace(/\s+/g, ' ').trim()}`);
  const none = failures.length === ev.seeds.length;
  return { ...d, reasons: none ? [...said, ...d.reasons] : [...d.reasons, ...said] };
}

function decideSteps(ev: ScenarioEvidence, sc: ResolvedScenario, ctx: AuditContext): Decision {
  const base: Base = { scenario: sc.id, tierMet: null, release: false, audits: null };
  const early = notAttempted(ev, base) ?? environmentMissing(ev, base);
  if (early) return early;
  const tier = assessTier(ev, sc.tiers);
  const withTier: Base = { ...base, tierMet: tier.met };
  const decided = failed(ev, withTier) ?? landingNotProven(ev, withTier);
  if (decided) return decided;
  const checked = everySeedChecked(ev, sc, withTier);
  if (isDecision(checked)) return checked;
  return pass(ev, sc, tier, checked.reasons, ctx);
}

/**
 * Steps 5–7 on every seed's run: the first seed whose checker did not run, whose history is weak or
 * whose checker covered a subset decides, named. Every seed clean: the primary run's oracle evidence.
 */
function everySeedChecked(
  ev: ScenarioEvidence,
  sc: ResolvedScenario,
  base: Base,
): Decision | { reasons: string[] } {
  const views = seedViews(ev);
  for (const v of views) {
    const checked = sc.serious ? seriousChecker(v.ev, sc, base) : plainOracle(v.ev, base);
    if (isDecision(checked))
      return { ...checked, reasons: checked.reasons.map((r) => `${seedPrefix(v.seed)}${r}`) };
  }
  const primary = sc.serious ? seriousChecker(ev, sc, base) : plainOracle(ev, base);
  if (isDecision(primary) || views.length === 1) return primary;
  return { reasons: [...primary.reasons, `every one of ${views.length} seeds' checkers ran clean`] };
}

function isDecision(x: Decision | { reasons: string[] }): x is Decision {
  return 'verdict' in x;
}

/** 1. Attempted? */
function notAttempted(ev: ScenarioEvidence, base: Base): Decision | null {
  if (ev.attempted) return null;
  return { ...base, verdict: 'NOT-RUN', step: 1, reasons: [ev.notRunReason ?? 'not attempted'] };
}

/** 2. A capability missing before the run? */
function environmentMissing(ev: ScenarioEvidence, base: Base): Decision | null {
  if (ev.capabilitiesMissing.length === 0) return null;
  const caps = ev.capabilitiesMissing.map((c) => (c.reason ? `${c.name} (${c.reason})` : c.name));
  return {
    ...base,
    verdict: 'INCONCLUSIVE-env',
    step: 2,
    reasons: [`missing capability: ${caps.join(', ')}`],
  };
}

/** 3. Any FAIL? It takes precedence over everything below. */
function failed(ev: ScenarioEvidence, base: Base): Decision | null {
  const failedOracles = ev.oracles.filter((o) => o.ran && o.valid === false);
  const failedSeeds = ev.seeds.filter((s) => s.outcome === 'fail');
  if (failedOracles.length === 0 && failedSeeds.length === 0) return null;
  // The headline sentence (which op, where, when, during which fault, and what was expected) first.
  const what = failedOracles.map(
    (o) => o.headline ?? (o.evidence || `${o.checker}: ${o.anomalies} anomalies`),
  );
  if (failedSeeds.length > 0) what.push(`seed(s) ${failedSeeds.map((s) => s.seed).join(', ')} failed`);
  const reproduced = failedSeeds.find((s) => s.rerun === 'reproduced');
  if (reproduced)
    return {
      ...base,
      verdict: 'FAIL-reproducible',
      step: 3,
      reasons: [...what, `reproduced on a re-run with seed ${reproduced.seed}`],
    };
  const attempted = failedSeeds.some((s) => s.rerun === 'not-reproduced');
  return {
    ...base,
    verdict: 'FAIL-nondeterministic',
    step: 3,
    reasons: [
      ...what,
      attempted
        ? 'an identical re-run did not reproduce it'
        : 'not reproduced: no identical re-run with the same seed',
    ],
  };
}

/** 4. Fault proven to land? */
function landingNotProven(ev: ScenarioEvidence, base: Base): Decision | null {
  if (ev.faultsScheduled === 0 && ev.faults.length === 0) return null;
  const gaps = landingProof(ev);
  if (gaps.length === 0) return null;
  return {
    ...base,
    verdict: 'INCONCLUSIVE-fault-not-proven',
    step: 4,
    reasons: [`landing not proven: ${gaps.join('; ')}`, 'the oracle result is irrelevant'],
  };
}

/** 5–7 for a serious scenario: the declared §7.M checker ran, on a history with its fields, over every op. */
function seriousChecker(
  ev: ScenarioEvidence,
  sc: ResolvedScenario,
  base: Base,
): Decision | { reasons: string[] } {
  const declared = ev.oracles.filter((o) => o.ran && o.declared);
  if (declared.length === 0) {
    const which = ev.oracles
      .filter((o) => o.declared)
      .map((o) => `${o.checker}${o.error ? ` (${o.error})` : ''}`);
    return {
      ...base,
      verdict: 'PARTIAL-surface',
      step: 5,
      reasons: [`the declared §7.M checker did not run${which.length ? `: ${which.join(', ')}` : ''}`],
    };
  }
  const weak = weakHistory(ev, sc, declared);
  if (weak.length > 0) return { ...base, verdict: 'INCONCLUSIVE-oracle-too-weak', step: 6, reasons: weak };
  const total = ev.history!.ops;
  const partial = declared.filter((o) => o.subset !== null || o.opsConsumed < total);
  if (partial.length > 0)
    return {
      ...base,
      verdict: 'PARTIAL-model',
      step: 7,
      reasons: partial.map(
        (o) =>
          `${o.checker} covered ${o.subset ?? `${groupThousands(o.opsConsumed)} of ${groupThousands(total)} ops`}`,
      ),
    };
  return { reasons: declared.map((o) => o.evidence || `${o.checker}: ${o.opsConsumed} ops, 0 anomalies`) };
}

/** Non-serious: steps 5–7 are skipped; the `Oracle` field decides. */
function plainOracle(ev: ScenarioEvidence, base: Base): Decision | { reasons: string[] } {
  const ran = ev.oracles.filter((o) => o.ran);
  if (ran.length === 0)
    return { ...base, verdict: 'PARTIAL-surface', step: 5, reasons: ['the Oracle did not run'] };
  const undecided = ran.filter((o) => o.valid !== true);
  if (undecided.length > 0)
    return {
      ...base,
      verdict: 'INCONCLUSIVE-oracle-too-weak',
      step: 6,
      reasons: undecided.map((o) => `${o.checker} could not decide${o.error ? `: ${o.error}` : ''}`),
    };
  return { reasons: ran.map((o) => o.evidence || `${o.checker}: passed`) };
}

/** 8. A fault active → hardening candidate, else smoke; then seeds, budget tier and audits can only lower it. */
function pass(
  ev: ScenarioEvidence,
  sc: ResolvedScenario,
  tier: Tier,
  checked: string[],
  ctx: AuditContext,
): Decision {
  const reasons = [...checked];
  const views = seedViews(ev);
  const faultActive = views.every((v) => v.ev.faults.some((f) => f.landed));
  let verdict: Verdict = faultActive ? 'PASS-hardening' : 'PASS-smoke';
  const landed =
    views.length === 1
      ? `${ev.faults.length} fault window(s) landed`
      : `${views.map((v) => v.ev.faults.length).join(' + ')} fault window(s) landed over ${views.length} seeds`;
  reasons.unshift(faultActive ? `${landed}; no anomaly` : 'no fault; no anomaly');
  let cappedBy: string | undefined;
  const lower = (to: Verdict, by: string, why: string) => {
    verdict = to;
    cappedBy ??= by;
    reasons.push(why);
  };
  const passingSeeds = ev.seeds.filter((s) => s.outcome === 'pass').length;
  // The single-seed rule judges a hardening-sized run short of seeds; a run that met only the smoke
  // budget (config, duration or fault count short too) makes a smoke claim, one seed by definition,
  // and the budget cap below gives it at most PASS-smoke, faults that landed or not.
  const hardeningSized =
    tier.met === 'hardening' ||
    tier.met === 'release' ||
    (tier.shortfalls.hardening ?? []).every((g) => g === 'seeds');
  if (sc.serious && verdict === 'PASS-hardening' && hardeningSized && passingSeeds < MIN_AGREEING_SEEDS)
    lower(
      'PARTIAL-model',
      'seeds',
      `${passingSeeds} passing seed(s): PARTIAL-model until ${MIN_AGREEING_SEEDS} seeds agree`,
    );
  if (verdict === 'PASS-hardening' && tier.met !== 'hardening' && tier.met !== 'release') {
    const gap = tier.gaps.hardening ?? 'no hardening budget declared';
    if (tier.met === 'smoke')
      lower('PASS-smoke', 'budget', `capped at PASS-smoke: hardening budget not met (${gap})`);
    else lower('PARTIAL-surface', 'budget', `below the smoke budget (${tier.gaps.smoke ?? 'none declared'})`);
  }
  if (verdict === 'PASS-smoke' && tier.met === null)
    lower('PARTIAL-surface', 'budget', `below the smoke budget (${tier.gaps.smoke ?? 'none declared'})`);
  const audits = runAudits(ev, sc, verdict === 'PASS-hardening' ? 'hardening' : 'smoke', ctx);
  const capped = auditCap(verdict, audits);
  if (capped) lower(capped.to, capped.by, capped.why);
  const release = verdict === 'PASS-hardening' && tier.met === 'release';
  if (release) reasons.push('release budget met');
  const d: Decision = { scenario: sc.id, verdict, reasons, step: 8, tierMet: tier.met, release, audits };
  if (cappedBy) d.cappedBy = cappedBy;
  return d;
}

/** What the audits do to a pass: any failed or unchecked item blocks hardening; a failed red flag blocks smoke. */
function auditCap(
  verdict: Verdict,
  audits: ReturnType<typeof runAudits>,
): { to: Verdict; by: string; why: string } | null {
  if (verdict === 'PASS-hardening') {
    const rf = blocksHardening(audits.redFlags);
    const wo = blocksHardening(audits.weakOracle);
    if (rf.length === 0 && wo.length === 0) return null;
    const onlySeeds = rf.every((i) => i.id === 'RF10') && wo.every((i) => i.id === 'WO11');
    const items = [...rf, ...wo].map((i) => `${i.id} ${i.status} (${i.evidence})`).join('; ');
    return {
      to: onlySeeds ? 'PARTIAL-model' : 'PARTIAL-surface',
      by: rf.length > 0 ? 'red-flag' : 'weak-oracle',
      why: `PASS-hardening blocked by the audits: ${items}`,
    };
  }
  if (verdict === 'PASS-smoke') {
    const failedFlags = audits.redFlags.filter((i) => i.status === 'failed');
    if (failedFlags.length === 0) return null;
    return {
      to: 'PARTIAL-surface',
      by: 'red-flag',
      why: `green-but-broken: ${failedFlags.map((i) => `${i.id} (${i.evidence})`).join('; ')}`,
    };
  }
  return null;
}
