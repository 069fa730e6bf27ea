import { dirname, relative, resolve, sep } from 'node:path';
import type { Plan, ResolvedScenario } from '../plan/schema.ts';

/**
 * Scenario skeletons for author mode (spec §7 item 6). A skeleton from the plan is written as it is, under
 * a provenance header (plan path, scenario id, plan sha); one without the `AUTO-GENERATED` header is
 * refused. A TypeScript scenario with an executable binding becomes a runnable faultline scenario module:
 * an ava test that runs exactly that scenario through the public `runPlan` (`import { runPlan } from
 * 'faultline'`) on the cluster named by the environment and asserts the verdict the plan expects; the
 * plan is named relative to the test file.
 */
export const AUTO_HEADER = 'AUTO-GENERATED from test plan:';
export const REVIEW_NOTE = 'REVIEW BEFORE TREATING AS A PERMANENT REGRESSION';

export interface Provenance {
  planPath: string;
  planSha: string;
}

export type SkeletonResult =
  | { ok: true; language: string; text: string; generated: boolean }
  | { ok: false; reason: string };

const COMMENT: Record<string, string> = {
  rust: '//',
  go: '//',
  typescript: '//',
  python: '#',
  shell: '#',
};

export function skeletonFor(plan: Plan, sc: ResolvedScenario, p: Provenance): SkeletonResult {
  const s = sc.scenario;
  const language = (s.skeletonLanguage ?? '').trim().toLowerCase();
  const fromPlan = planSkeleton(plan, sc);
  if (language === 'typescript' && sc.binding) {
    return { ok: true, language, text: typescriptModule(sc, p, fromPlan), generated: true };
  }
  if (fromPlan === null)
    return { ok: false, reason: `no Skeleton in the plan and no TypeScript binding to fill one from` };
  if (!fromPlan.includes('AUTO-GENERATED'))
    return { ok: false, reason: 'refused: the skeleton lacks the AUTO-GENERATED header' };
  const c = COMMENT[language];
  if (!c) return { ok: false, reason: `unknown Skeleton language "${s.skeletonLanguage ?? ''}"` };
  return { ok: true, language, text: `${provenance(c, sc, p)}\n${fromPlan.trimEnd()}\n`, generated: false };
}

/** The scenario's own skeleton, or the one it points at with `Skeleton: as S01`. */
function planSkeleton(plan: Plan, sc: ResolvedScenario): string | null {
  const s = sc.scenario;
  if (s.skeleton) return s.skeleton;
  if (s.skeletonAs) {
    const ref = plan.scenarios.find((x) => x.id.toLowerCase() === s.skeletonAs?.trim().toLowerCase());
    return ref?.skeleton ?? null;
  }
  return null;
}

/**
 * The plan's path relative to the test file (`./` or `../` first, `/` separators): a skeleton names no
 * absolute path, so it keeps working wherever the checkout is.
 */
function planFromTest(sc: ResolvedScenario, p: Provenance): string {
  const target = resolve(sc.scenario.targetTestFile ?? 'scenario.test.ts');
  const rel = relative(dirname(target), resolve(p.planPath)).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

function provenance(c: string, sc: ResolvedScenario, p: Provenance): string {
  return [
    `${c} ${AUTO_HEADER} ${planFromTest(sc, p)}`,
    `${c} Scenario: ${sc.id} ${sc.name}`,
    `${c} Falsifies: ${sc.scenario.falsifies.join(', ') || '—'}`,
    `${c} Plan sha256: ${p.planSha}`,
    `${c} ${REVIEW_NOTE}: it was generated from the plan and has not been reviewed.`,
  ].join('\n');
}

/** What the plan expects: a negative control must FAIL; everything else must pass. */
export function expectedOutcome(sc: ResolvedScenario): 'FAIL' | 'PASS' {
  const t = `${sc.scenario.technique ?? ''} ${sc.oracle ?? ''}`.toLowerCase();
  return /negative control|fail is the expected/.test(t) ? 'FAIL' : 'PASS';
}

function typescriptModule(sc: ResolvedScenario, p: Provenance, fromPlan: string | null): string {
  const planUrl = planFromTest(sc, p);
  const expected = expectedOutcome(sc);
  const b = sc.binding;
  const lines = [
    provenance('//', sc, p),
    '//',
    '// A runnable faultline scenario module: it runs this one scenario at smoke tier on the cluster named',
    '// by FAULTLINE_INVENTORY (an inventory file) or FAULTLINE_LOCAL (N local nodes) and asserts the',
    `// verdict the plan expects (${expected === 'FAIL' ? 'a FAIL: this is a negative control' : 'a PASS'}).`,
    ...(fromPlan
      ? [
          '//',
          "// The plan's own skeleton, kept for the reviewer:",
          ...fromPlan
            .trimEnd()
            .split('\n')
            .map((l) => `//   ${l}`),
        ]
      : []),
    "import { fileURLToPath } from 'node:url';",
    "import test from 'ava';",
    "import { runPlan } from 'faultline';",
    '',
    `const PLAN = fileURLToPath(new URL(${JSON.stringify(planUrl)}, import.meta.url));`,
    `const SCENARIO = ${JSON.stringify(sc.id)};`,
    '',
    '// 1. Workload',
    `//    ${sc.scenario.workload ?? '—'}`,
    `//    binding: db ${b?.db}, workload ${b?.workload}, concurrency ${b?.concurrency}, rate ${b?.rate ?? 'closed loop'}`,
    '// 2. Faults',
    `//    ${sc.scenario.faults ?? '—'}`,
    `//    binding: ${b?.nemesis.map((n) => `${n.kind} @${n.startS}s for ${n.durationS}s`).join('; ') || 'none'}`,
    '// 3. Oracle',
    `//    ${sc.oracle ?? '—'}`,
    `//    checkers: ${b?.checkers.join(', ')}; model: ${b?.model}`,
    '',
    'const inventory = process.env.FAULTLINE_INVENTORY;',
    'const local = process.env.FAULTLINE_LOCAL ? Number(process.env.FAULTLINE_LOCAL) : undefined;',
    'const maybe = inventory || local ? test : test.skip;',
    '',
    `maybe(${JSON.stringify(`${sc.id} ${sc.name}`)}, async (t) => {`,
    '  const r = await runPlan({',
    '    plan: PLAN,',
    '    ...(inventory ? { inventory } : { local }),',
    `    clusterName: ${JSON.stringify(`auto-${sc.id.toLowerCase()}`)},`,
    '    keepCluster: false,',
    "    tier: 'smoke',",
    '    scenarios: [SCENARIO],',
    "    out: process.env.FAULTLINE_SESSIONS ?? 'test-sessions',",
    "    onMissing: 'inconclusive',",
    '    maxReductionRuns: 2,',
    '    print: (line) => t.log(line),',
    '  });',
    '  const row = r.rows.find((x) => x.scenario === SCENARIO);',
    "  t.truthy(row, 'the scenario has a verdict row');",
    `  t.regex(row?.verdict ?? '', /^${expected}-/, row?.reason);`,
    '});',
    '',
  ];
  return lines.join('\n');
}
