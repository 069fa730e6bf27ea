import { clientOnlyRefusal } from '../../../../nemeses/registry.ts';
import { EXIT } from '../../../core/util/errors.ts';
import { armBinding } from '../../plan/binding.ts';
import { formatTier } from '../../plan/budget.ts';
import { blocking, checkPlan } from '../../plan/check-plan.ts';
import { loadPlan } from '../../plan/load.ts';
import { formatProblem } from '../../plan/problem.ts';

/** The implementations behind `faultline plan check` and `faultline plan show`. */

type Resolved = Awaited<ReturnType<typeof loadPlan>>['resolved'][number];

/** Can this scenario (or arm) run client-only (`--no-ssh`): only steps that act in the control process? */
export function clientOnlyOf(r: Resolved): { ok: boolean; why: string } {
  const b = r.binding && (r.arm ? armBinding(r.binding, r.arm.surface) : r.binding);
  if (!b) return { ok: false, why: 'no executable binding' };
  const refusal = clientOnlyRefusal(b.nemesis);
  if (refusal) return { ok: false, why: refusal };
  return {
    ok: true,
    why: b.nemesis.length > 0 ? 'only proxy steps' : 'no fault steps',
  };
}

export async function runPlanCheck(path: string, json: boolean): Promise<number> {
  const plan = await loadPlan(path);
  const problems = checkPlan(plan);
  const mustNotRun = blocking(problems);
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  if (json) {
    const scenarios = plan.resolved.map((r) => ({
      id: r.id,
      name: r.name,
      serious: r.serious,
      surfaceGated: r.surfaceGated,
      categories: r.categories,
      executable: r.binding !== null,
      clientOnly: clientOnlyOf(r),
      tiers: { smoke: r.tiers.smoke, hardening: r.tiers.hardening, release: r.tiers.release },
    }));
    process.stdout.write(
      `${JSON.stringify({ plan: path, slug: plan.slug, format: plan.source.format, mustNotRun, errors, warnings, problems, scenarios }, null, 2)}\n`,
    );
  } else {
    for (const p of problems) process.stdout.write(`${formatProblem(path, p)}\n`);
    // Per scenario: can it run against a service reached only at its endpoints (--no-ssh)?
    for (const r of plan.resolved.filter((x) => x.binding)) {
      const c = clientOnlyOf(r);
      process.stdout.write(`${path}: ${r.id}: client-only (--no-ssh): ${c.ok ? 'yes' : 'no'} (${c.why})\n`);
    }
    const scenarios = plan.resolved.filter((r) => r.arm === null).length;
    const arms = plan.resolved.length - scenarios;
    process.stdout.write(
      `${plan.slug}: ${scenarios} scenario(s), ${arms} arm(s); ${errors} error(s), ${warnings} warning(s)${mustNotRun ? ': the plan must not run' : ': ok to run'}\n`,
    );
  }
  return mustNotRun ? EXIT.planMustNotRun : EXIT.valid;
}

export async function runPlanShow(path: string): Promise<number> {
  const plan = await loadPlan(path);
  const out = {
    slug: plan.slug,
    header: plan.header,
    claims: plan.claims,
    scenarios: plan.resolved.map((r) => ({
      id: r.id,
      parent: r.parentId,
      name: r.name,
      categories: r.categories,
      serious: r.serious,
      surfaceGated: r.surfaceGated,
      oracle: r.oracle,
      model: r.model,
      tiers: {
        smoke: r.tiers.smoke && { ...r.tiers.smoke, text: formatTier(r.tiers.smoke) },
        hardening: r.tiers.hardening && { ...r.tiers.hardening, text: formatTier(r.tiers.hardening) },
        release: r.tiers.release && { ...r.tiers.release, text: formatTier(r.tiers.release) },
        releaseDisclosure: r.tiers.releaseDisclosure,
      },
      binding: r.binding,
    })),
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  return EXIT.valid;
}
