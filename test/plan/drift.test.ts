import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { checkPlan } from '../../src/app/plan/check-plan.ts';
import { parsePlanText } from '../../src/app/plan/load.ts';

/**
 * The spec's drift list (§1 "Example plan": `### S01: name` headings, a bare `#### §7.M`, `Nemesis:`
 * labels, `Skeleton: as S01`) and the template's own spellings of a field, each applied to one plan
 * that parses clean: every variant must parse to the same fields with no error.
 */
const base = readFileSync(fileURLToPath(new URL('./fixtures/drift-raft.md', import.meta.url)), 'utf8');

function parsed(text: string) {
  const p = parsePlanText(text, 'drift.md');
  const errors = checkPlan(p).filter((x) => x.severity === 'error');
  const s1 = p.scenarios[0]!;
  const m = typeof s1.model === 'object' ? s1.model : null;
  return {
    errors: errors.map((e) => `${e.scenario} ${e.field}: ${e.reason}`),
    ids: p.scenarios.map((s) => s.id),
    faults: s1.faults,
    oracle: s1.oracle,
    landing: m?.nemesisLandingEvidence ?? null,
    model: m?.modelUnderTest ?? null,
    skeletonAs: p.scenarios[1]?.skeletonAs ?? null,
  };
}

const reference = parsed(base);

test('the drift fixture itself parses clean', (t) => {
  t.deepEqual(reference.errors, []);
  t.deepEqual(reference.ids, ['S01', 'S02']);
  t.is(reference.skeletonAs, 'S01');
  t.regex(reference.landing ?? '', /DROP counter/);
});

const variants: [string, (s: string) => string][] = [
  [
    'a bare `Nemesis:` label under §7.M is its "Nemesis + landing evidence"',
    (s) => s.replaceAll('- Nemesis + landing evidence:', '- Nemesis:'),
  ],
  [
    '`### Scenario S01 — name` (the template’s heading with a dash)',
    (s) => s.replace('### S01: ', '### Scenario S01 — '),
  ],
  [
    '`#### §7.M — Model / history / checker discipline` (the template’s full heading)',
    (s) => s.replaceAll('#### §7.M\n', '#### §7.M — Model / history / checker discipline\n'),
  ],
  [
    'labels in backticks (- `Oracle:` x)',
    (s) => s.replace(/^- (Oracle|Nemesis|Model under test):/gm, '- `$1:`'),
  ],
  [
    'bold labels, colon inside (- **Oracle:** x)',
    (s) => s.replace(/^- (Oracle|Nemesis|Model under test):/gm, '- **$1:**'),
  ],
  [
    'bold labels, colon outside (- **Oracle**: x)',
    (s) => s.replace(/^- (Oracle|Nemesis|Model under test):/gm, '- **$1**:'),
  ],
  ['`Faults:` for the old template’s `Nemesis:`', (s) => s.replace(/^- Nemesis: /gm, '- Faults: ')],
];

for (const [name, apply] of variants) {
  test(`drift: ${name}`, (t) => {
    const text = apply(base);
    t.not(text, base, 'the variant changes the plan');
    t.deepEqual(parsed(text), reference);
  });
}
