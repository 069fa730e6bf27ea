import { nemeses } from '../../../nemeses/registry.ts';
import { isPathName } from '../../core/util/paths.ts';
import { clients } from '../../lib/clients/registry.ts';
import { databases } from '../../lib/databases/registry.ts';
import { checkersWithNothingToRead, scheduledWindows } from './binding.ts';
import {
  forbiddenBudgetReason,
  formatTier,
  missingDimensions,
  notStrongerOn,
  parseBudget,
  parseReleaseDisclosure,
  TENANTS_UNMEASURED,
  toTier,
} from './budget.ts';
import { parseExpectation } from './expectation.ts';
import { parseLandingSignals } from './landing-signal.ts';
import type { LoadedPlan } from './load.ts';
import { type Problem, problem } from './problem.ts';
import { budgetText, isScenarioDirName, normaliseCategory } from './resolve.ts';
import {
  CLAIM_CATEGORIES,
  MODEL_FIELDS,
  type ModelBlock,
  type Plan,
  type ResolvedScenario,
  SURFACE_FIELDS,
  type SurfaceBlock,
} from './schema.ts';

/**
 * `checkPlan(plan) → Problem[]`: everything spec §1 forbids or requires, per scenario and field. Errors
 * mean the plan must not run (exit 3); warnings are reported and do not block. Nothing here guesses a
 * fix: each reason says what is missing and what the spec wants instead.
 */

/** Oracles that cannot fail: the spec's "Logs look fine" and its relatives. */
const NOT_AN_ORACLE =
  /\b(logs?|dashboards?|metrics|output|graphs?|it)\s+(looks?|seems?|appears?)\s+(fine|ok|okay|good|clean|normal|healthy)\b|\bno (obvious )?errors? in (the )?logs?\b|\bmanual(ly)?\s+(inspect|check|review)|\beyeball|\blooks? (fine|ok|good)\b/i;

/** Words that name a machine check: a checker, an invariant, or a comparison with a threshold. */
const MACHINE_CHECK =
  /lineari[sz]ab|serializab|elle|porcupine|knossos|no-lost-ack|lost[- ]ack|exactly-once|idempot|invariant|checker|monotonic|prefix|reconcil|replay|fairness|read-your-writes|ryw|session|set-full|unique|counter|bank|total-queue|equal|diff|p9\d|slo\b|threshold|assert/i;
const SLO_WORDS = /\b(p\d{2}(\.\d)?|latency|throughput|slo|error rate|availability)\b/i;
const THRESHOLD =
  /(<=|>=|<|>|≤|≥|==|within|under|below|above|at least|at most)\s*~?\d|\d+(\.\d+)?\s*(ms|s|%|ops\/s|req\/s)\b/i;

const INJECTOR_ONLY =
  /injector (reported|says|said|returned)|(reported|returned) (success|ok)|\benabled\b\.?$/i;

export function checkPlan(plan: LoadedPlan | Plan): Problem[] {
  const out: Problem[] = 'loadProblems' in plan ? [...plan.loadProblems] : [];
  if (plan.scenarios.length === 0) out.push(problem(null, '§7 Scenarios', 'the plan declares no scenario'));
  checkHeader(plan, out);
  checkClaims(plan, out);
  const seen = new Set<string>();
  for (const r of plan.resolved) {
    if (r.arm) {
      checkArm(r, out);
      continue;
    }
    if (!isScenarioDirName(r.id))
      out.push(
        problem(
          r.id,
          'Scenario',
          `scenario id ${JSON.stringify(r.id)} cannot name a directory: use letters, digits, _ . - /`,
          'error',
          r.scenario.line,
        ),
      );
    if (seen.has(r.id))
      out.push(problem(r.id, 'Scenario', `duplicate scenario id ${r.id}`, 'error', r.scenario.line));
    seen.add(r.id);
    checkScenario(plan, r, out);
  }
  return out;
}

export function blocking(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

const HEADER_VALUES: [keyof Plan['header'], string, RegExp][] = [
  ['planMode', 'Plan mode', /^(change-scoped|project-wide)$/],
  ['status', 'Status', /^(draft|reviewed|executed)$/],
];

function checkHeader(plan: Plan, out: Problem[]): void {
  if (!isPathName(plan.slug)) {
    out.push(
      problem(
        null,
        'slug',
        `"${plan.slug}" cannot name the session directory: use letters, digits, _ . - (not starting with . or -, no ..)`,
        'error',
        1,
      ),
    );
  }
  if (plan.source.format !== 'markdown') return;
  for (const [key, label, allowed] of HEADER_VALUES) {
    const v = plan.header[key]?.replace(/`/g, '').trim();
    if (v && !allowed.test(v)) {
      out.push(
        problem(
          null,
          label,
          `"${v}" is not one of ${allowed.source.slice(2, -2).split('|').join(', ')}`,
          'warning',
          1,
        ),
      );
    }
  }
}

const COVERAGE_VERDICTS = ['covered', 'partial', 'not covered'];
const GAP_KINDS = [
  'no test',
  'shallow test',
  'oracle too weak',
  'no fault-injection variant',
  'no scale variant',
];

function checkClaims(plan: Plan, out: Problem[]): void {
  if (plan.claims.length === 0)
    out.push(
      problem(null, '§1b Claims under test', 'no claims table (ID | Claim | Category | Source | Inferred?)'),
    );
  for (const c of plan.claims) {
    if (!(CLAIM_CATEGORIES as readonly string[]).includes(normaliseCategory(c.category))) {
      out.push(
        problem(
          null,
          `§1b ${c.id} Category`,
          `"${c.category}" is not one of: ${CLAIM_CATEGORIES.join(', ')}`,
          'error',
          c.line,
        ),
      );
    }
    if (!/^C\d+$/.test(c.id))
      out.push(problem(null, '§1b ID', `claim id "${c.id}" is not C<n>`, 'warning', c.line));
  }
  const surfaceClaims = plan.claims.filter((c) =>
    ['boundary', 'fairness'].includes(normaliseCategory(c.category)),
  );
  if (surfaceClaims.length > 0 && plan.confidence.aspects.length === 0 && !plan.confidence.allHigh) {
    out.push(
      problem(
        null,
        '§7d Confidence statement',
        `per-aspect confidence table (Claim | Aspect | Confidence | Reason) is required for boundary/fairness claims (${surfaceClaims.map((c) => c.id).join(', ')}), or the line "All aspects rated \`high\`."`,
        'warning',
        plan.sections['7d']?.line ?? surfaceClaims[0]!.line,
      ),
    );
  }
  for (const row of plan.coverageMatrix) {
    const v = row.verdict.toLowerCase();
    if (v && !COVERAGE_VERDICTS.includes(v)) {
      out.push(
        problem(
          null,
          '§5 Verdict',
          `"${row.verdict}" is not one of: ${COVERAGE_VERDICTS.join(', ')}`,
          'warning',
          row.line,
        ),
      );
    }
    const g = row.gapKind.toLowerCase();
    if (g && g !== '—' && g !== '-' && !GAP_KINDS.includes(g)) {
      out.push(
        problem(
          null,
          '§5 Gap kind',
          `"${row.gapKind}" is not one of: ${GAP_KINDS.join(', ')}`,
          'warning',
          row.line,
        ),
      );
    }
  }
  for (const h of plan.hypotheses) {
    if (h.couldFalsify.length === 0) {
      out.push(
        problem(null, `§4 ${h.id} Could falsify`, 'the hypothesis cites no claim ID', 'warning', h.line),
      );
    }
  }
}

function lineOf(r: ResolvedScenario, field: string): number | null {
  return r.scenario.fieldLines[field] ?? r.scenario.line;
}

function checkScenario(plan: Plan, r: ResolvedScenario, out: Problem[]): void {
  const s = r.scenario;
  const add: Add = (field, reason, severity = 'error', key, line) =>
    out.push(problem(r.id, field, reason, severity, line ?? (key ? lineOf(r, key) : s.line)));

  if (s.falsifies.length === 0)
    add('Falsifies if it FAILs', 'the scenario cites no claim ID (C<n>)', 'error', 'falsifies');
  for (const id of s.falsifies) {
    if (!plan.claims.some((c) => c.id === id))
      add('Falsifies if it FAILs', `${id} is not a claim in §1b`, 'error', 'falsifies');
  }
  for (const id of s.closes) {
    if (plan.hypotheses.length > 0 && !plan.hypotheses.some((h) => h.id === id)) {
      add('Closes', `${id} is not a hypothesis in §4`, 'warning', 'closes');
    }
  }
  checkOracle(r.oracle, (reason, sev) => add('Oracle', reason, sev, 'oracle'));
  checkExpectedVerdict(s.expectedVerdict, (reason) =>
    add('Expected verdict', reason, 'error', 'expectedVerdict'),
  );
  if (!s.workload) add('Workload', 'missing', 'warning');
  if (!s.faults)
    add('Faults', 'missing: name the nemesis schedule, or "none" for a smoke-only scenario', 'warning');
  checkBudgets(r, add);
  checkModel(r, add);
  checkSurface(r, add);
  if (s.skeletonAs && !plan.scenarios.some((x) => x.id === s.skeletonAs)) {
    add('Skeleton', `"as ${s.skeletonAs}" names no scenario in this plan`, 'warning', 'skeleton');
  }
  const bindingRejected =
    'loadProblems' in plan &&
    (plan as LoadedPlan).loadProblems.some((p) => p.scenario === r.id && p.field.startsWith('binding'));
  if (!bindingRejected) checkBinding(r, add);
}

function checkOracle(oracle: string | null, add: (reason: string, sev?: Problem['severity']) => void): void {
  if (!oracle || forbiddenBudgetReason(oracle) !== null) {
    add('missing: an oracle must be machine-checkable or an SLO with a threshold');
    return;
  }
  const machine = MACHINE_CHECK.test(oracle) || THRESHOLD.test(oracle);
  if (NOT_AN_ORACLE.test(oracle)) {
    // "Logs look fine" is forbidden as the oracle; next to a real check it is only a weak extra.
    if (machine)
      add('a log or dashboard impression adds nothing: the machine check alone is the oracle', 'warning');
    else {
      add(
        `"${oracle.split('\n')[0]}" is not an oracle: name a machine check (checker, invariant) or an SLO with a threshold`,
      );
    }
    return;
  }
  if (
    SLO_WORDS.test(oracle) &&
    !/checker|lineari|serializ|elle|invariant|no-lost-ack/i.test(oracle) &&
    !THRESHOLD.test(oracle)
  ) {
    add('an SLO oracle needs a threshold fixed before the run (e.g. "p99 <= 250ms")');
    return;
  }
  if (!machine) add('names no checker, invariant or threshold: is it machine-checkable?', 'warning');
}

type Add = (
  field: string,
  reason: string,
  severity?: Problem['severity'],
  key?: string,
  line?: number | null,
) => void;

function checkBudgets(r: ResolvedScenario, add: Add): void {
  const s = r.scenario;
  for (const tier of ['smoke', 'hardening'] as const) {
    const field = tier === 'smoke' ? 'Smoke budget' : 'Hardening budget';
    const key = tier === 'smoke' ? 'smokeBudget' : 'hardeningBudget';
    const fromBinding = r.binding?.tiers[tier];
    const raw = budgetText(s, tier);
    const declared = tier === 'smoke' ? s.smokeBudget : s.hardeningBudget;
    if (declared === null && raw === null && !fromBinding) {
      add(
        field,
        s.exitCriteria
          ? 'missing (older "Exit criteria" names no tiers): declare Smoke and Hardening budgets'
          : 'missing',
        'error',
        key,
      );
      continue;
    }
    const forbidden = declared !== null ? forbiddenBudgetReason(declared) : null;
    if (forbidden) {
      add(field, forbidden, 'error', key);
      continue;
    }
    if (raw !== null) {
      const parsed = parseBudget(raw);
      const missing = missingDimensions(parsed);
      if (missing.length > 0 && !fromBinding) {
        add(
          field,
          `"${raw}" does not state ${missing.join(', ')} (want e.g. "3 nodes × 60s × 1 fault × 1 seed")`,
          'error',
          key,
        );
      }
      const t = toTier(parsed);
      if (t && fromBinding && formatTier(t) !== formatTier(fromBinding)) {
        add(
          field,
          `"${raw}" disagrees with the faultline binding (${formatTier(fromBinding)})`,
          'error',
          key,
        );
      }
    }
  }
  for (const [tier, t] of Object.entries(r.tiers))
    if (t?.tenants !== undefined)
      add(
        tier === 'smoke' ? 'Smoke budget' : tier === 'hardening' ? 'Hardening budget' : 'Release budget',
        `sized in tenants (${formatTier(t)}): ${TENANTS_UNMEASURED}; size it in nodes`,
        'warning',
        `${tier}Budget`,
      );
  const { smoke, hardening } = r.tiers;
  if (smoke && hardening) {
    const weak = notStrongerOn(smoke, hardening);
    if (weak.length > 0) {
      add(
        'Hardening budget',
        `not strictly stronger than smoke on: ${weak.join(', ')} (${formatTier(hardening)} vs ${formatTier(smoke)})`,
        'error',
        'hardeningBudget',
      );
    }
  }
  const rel = s.releaseBudget;
  if (rel === null && !r.binding?.tiers.release) {
    add(
      'Release budget',
      'missing: a release gate, or "not provided — <reason>. Revisit when: <condition>."',
      'error',
      'releaseBudget',
    );
  } else if (rel !== null) {
    const forbidden = forbiddenBudgetReason(rel);
    if (forbidden) add('Release budget', forbidden, 'error', 'releaseBudget');
    else {
      const disclosure = parseReleaseDisclosure(rel);
      const b = parseBudget(rel);
      if (disclosure === 'malformed') {
        add(
          'Release budget',
          'must read exactly "not provided — <reason>. Revisit when: <condition>."',
          'error',
          'releaseBudget',
        );
      } else if (
        disclosure === null &&
        b.durationS === undefined &&
        b.seeds === undefined &&
        b.faultWindows === undefined
      ) {
        add(
          'Release budget',
          `"${rel}" is neither a gate (duration, seeds, fault variants) nor "not provided — <reason>. Revisit when: <condition>."`,
          'error',
          'releaseBudget',
        );
      }
    }
  }
}

function missingFields<T extends object>(block: T, names: Record<string, string>): string[] {
  return Object.entries(names)
    .filter(([k]) => {
      const v = (block as Record<string, unknown>)[k];
      return typeof v !== 'string' || v.trim() === '' || forbiddenBudgetReason(v) !== null;
    })
    .map(([, label]) => label);
}

function checkModelBlock(block: ModelBlock, prefix: string, add: Add): void {
  for (const f of missingFields(block, MODEL_FIELDS)) {
    add(
      `${prefix} ${f}`,
      'missing: a partially filled §7.M cannot support a hardening claim',
      'error',
      undefined,
      block.line,
    );
  }
  const landing = block.nemesisLandingEvidence;
  const declared = parseLandingSignals(landing);
  for (const e of declared.errors)
    add(`${prefix} Nemesis + landing evidence`, e, 'error', undefined, block.line);
  for (const sig of declared.signals)
    if (sig.type === 'command')
      add(
        `${prefix} Nemesis + landing evidence`,
        `\`${sig.text}\` is a shell command run with sudo on the nodes: run executes it only with --trust-plan-commands (without it, the fault it should prove is not proven by it)`,
        'warning',
        undefined,
        block.line,
      );
  const names = new Set(nemeses.values().flatMap((d) => [d.kind, ...d.actions.map((a) => a.name)]));
  for (const sig of declared.signals)
    if (sig.only !== null && !names.has(sig.only))
      add(
        `${prefix} Nemesis + landing evidence`,
        `\`${sig.text}\`: "${sig.only}" is no fault kind or action (one of ${[...names].join(', ')})`,
        'error',
        undefined,
        block.line,
      );
  if (
    landing &&
    INJECTOR_ONLY.test(landing) &&
    !/counter|timeout|marker|metric|log|election|packet|drop/i.test(landing)
  ) {
    add(
      `${prefix} Nemesis + landing evidence`,
      '"the injector reported success" does not count: name the observable signal that proves it landed',
    );
  }
}

function checkModel(r: ResolvedScenario, add: Add): void {
  const m = r.scenario.model;
  if (r.serious) {
    const gated = r.categories.join(', ');
    if (m === null) add('§7.M', `missing: mandatory because the scenario falsifies a gated claim (${gated})`);
    else if (m === 'not applicable')
      add('§7.M', `declared not applicable, but the scenario falsifies a gated claim (${gated})`);
    else checkModelBlock(m, '§7.M', add);
  } else if (m === null) {
    add(
      '§7.M',
      'write the literal line "§7.M: not applicable (no gated claim category falsified)"',
      'warning',
    );
  }
}

function checkSurface(r: ResolvedScenario, add: Add): void {
  const s = r.scenario;
  const block = s.surface;
  if (!r.surfaceGated) {
    if (block === null)
      add(
        '§7.M.S',
        'write the literal line "§7.M.S: not applicable (no boundary or fairness claim falsified)"',
        'warning',
      );
    if (r.categories.length > 3 && s.arms.length === 0)
      add('§7.M.S', 'spans more than 3 claim categories: split it into arms', 'warning');
    return;
  }
  if (block === null || block === 'not applicable') {
    add(
      '§7.M.S',
      `${block === null ? 'missing' : 'declared not applicable'}: mandatory for a ${r.categories.filter((c) => c === 'boundary' || c === 'fairness').join('/')} claim`,
    );
  } else {
    for (const f of missingFields<SurfaceBlock>(block, SURFACE_FIELDS)) add(`§7.M.S ${f}`, 'missing');
    const surfaces = (block.surfaces ?? '').split(/[,;\n]/).filter((x) => x.trim() !== '');
    if (block.surfaces && surfaces.length < 3 && !/because|justif|only/i.test(block.surfaces)) {
      add(
        '§7.M.S Surfaces',
        `${surfaces.length} surface(s): at least 3 per boundary claim, or a justification for fewer`,
        'warning',
      );
    }
  }
  if (s.arms.length === 0)
    add(
      '§7.M.S Scenario arms',
      `no arms (one per surface, e.g. ${r.id}/api): each arm gets its own §7.M, oracle and verdict`,
    );
}

function checkArm(r: ResolvedScenario, out: Problem[]): void {
  const add: Add = (field, reason, severity = 'error', _key, line) =>
    out.push(problem(r.id, field, reason, severity, line ?? r.arm?.line ?? null));
  if (!r.arm?.model) add('§7.M', 'missing: every §7.M.S arm needs its own §7.M block');
  else checkModelBlock(r.arm.model, '§7.M', add);
  if (!r.arm?.oracle) {
    if (r.oracle) add('Oracle', "no arm-specific oracle: using the parent scenario's", 'warning');
    else checkOracle(null, (reason) => add('Oracle', reason));
  } else checkOracle(r.arm.oracle, (reason, sev) => add('Oracle', reason, sev));
  checkExpectedVerdict(r.arm?.expectedVerdict ?? null, (reason) => add('Expected verdict', reason));
}

/** An `Expected verdict:` that cannot be read would silently judge nothing: the plan must not run. */
/**
 * Proxy faults stand on the clients' path: they need a client that connects only where the database
 * says (its definition's `endpoints: client-address`), else the clients would go around the proxy.
 */
function checkProxySteps(b: NonNullable<ResolvedScenario['binding']>, add: Add): void {
  if (!b.nemesis.some((step) => step.kind === 'proxy')) return;
  const name = b.client ?? databases.get(b.db)?.defaultClient;
  const def = name ? clients.get(name) : undefined;
  if (def && def.endpoints !== 'client-address')
    add(
      'binding.nemesis',
      `a proxy step needs a client faultline can point at its proxy; the ${def.name} client does not declare its endpoints (endpoints: client-address), so its connections would go around the proxy`,
    );
}

function checkExpectedVerdict(text: string | null, add: (reason: string) => void): void {
  if (text === null) return;
  const r = parseExpectation(text);
  if ('error' in r) add(r.error);
}

function checkBinding(r: ResolvedScenario, add: Add): void {
  const b = r.binding;
  if (!b) {
    add('binding', 'no executable binding (```faultline block): the scenario will be NOT-RUN', 'warning');
    return;
  }
  const h = r.tiers.hardening;
  // Fault-free rows (spec §2 step 8: no fault active → PASS-smoke): the hardening tier is a bigger
  // smoke run; it can never give PASS-hardening, so a plan that expects it, or a hardening tier that
  // asks for fault windows the binding never opens, can never be met.
  if (b.nemesis.length === 0) {
    if (r.expected?.clauses.some((c) => c.verdicts.includes('PASS-hardening')))
      add(
        'Expected verdict',
        'PASS-hardening can never be reached by a fault-free scenario (spec §2 step 8: no fault → PASS-smoke); expect PASS-smoke or add a fault',
      );
    if (h && h.faultWindows > 0)
      add(
        'binding.tiers.hardening',
        `asks ${h.faultWindows} fault window(s) but the binding schedules no fault: the tier can never be met (a fault-free scenario's hardening tier has faultWindows: 0)`,
      );
  } else if (h && h.faultWindows > 0 && scheduledWindows(b.nemesis, h.durationS) < h.faultWindows) {
    add(
      'binding.nemesis',
      `the schedule opens ${scheduledWindows(b.nemesis, h.durationS)} fault window(s) in ${h.durationS}s; the hardening tier needs ${h.faultWindows}`,
      'warning',
    );
  }
  for (const c of checkersWithNothingToRead(b)) add('binding.checkers', c.reason);
  checkProxySteps(b, add);
  if (b.model === 'session' && b.checkers.includes('linearizable') && !b.checkers.includes('session')) {
    add(
      'binding.checkers',
      'a linearizability checker on a session claim cannot tell pass from fail: add the session checker',
      'warning',
    );
  }
  for (const arm of r.scenario.arms) {
    if (Object.keys(b.arms).length > 0 && !(arm.surface in b.arms)) {
      add('binding.arms', `arm ${arm.id} has no override: it runs with the parent binding`, 'warning');
    }
  }
  for (const key of Object.keys(b.arms)) {
    if (!r.scenario.arms.some((a) => a.surface === key))
      add('binding.arms', `"${key}" is not an arm of ${r.id}`, 'error');
  }
}
