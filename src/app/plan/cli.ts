import { EXIT } from '../../core/util/errors.ts';
import { formatTier } from './budget.ts';
import { blocking, checkPlan } from './check.ts';
import { loadPlan } from './load.ts';
import { formatProblem } from './problem.ts';

/** The implementations behind `faultline plan check` and `faultline plan show`. */

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
      tiers: { smoke: r.tiers.smoke, hardening: r.tiers.hardening, release: r.tiers.release },
    }));
    process.stdout.write(
      `${JSON.stringify({ plan: path, slug: plan.slug, format: plan.source.format, mustNotRun, errors, warnings, problems, scenarios }, null, 2)}\n`,
    );
  } else {
    for (const p of problems) process.stdout.write(`${formatProblem(path, p)}\n`);
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
