import { hostname } from 'node:os';
import { join } from 'node:path';
import { expectationCell, stoppedShort } from '../plan/expectation.ts';
import { isFail, isPass } from '../plan/verdict-states.ts';
import { isNotSelected } from '../verdict/aggregate.ts';
import type { Decision } from '../verdict/decide.ts';
import { writeAtomic } from './markdown-format.ts';
import type { SessionRecord } from './types.ts';

/**
 * `junit.xml` in the common Jenkins/Surefire JUnit dialect: one testcase per scenario and per arm that
 * this session selected (rows left out with `--scenario`, or run by another shard, are not test cases:
 * an unselected row is no error), and never a <skipped> (dashboards count skipped as green):
 * - a row with an expected verdict: met → passed (whatever the verdict), unmet → <failure>;
 * - otherwise PASS-* → passed, FAIL-* → <failure>;
 * - INCONCLUSIVE-* / PARTIAL-* / NOT-RUN (and every row of a BLOCKED session) → <error> by default:
 *   JUnit's error means "the test could not reach a judgement", which is what these verdicts say;
 *   `inconclusiveAs: 'failure'` makes them failures for reporters that only show failures.
 * Readable by Jenkins, GitLab, GitHub test reporters.
 */

export type JunitInconclusiveAs = 'error' | 'failure';
export const JUNIT_INCONCLUSIVE_AS: readonly JunitInconclusiveAs[] = ['error', 'failure'];

type CaseOutcome = { kind: 'pass' } | { kind: 'failure' | 'error'; message: string; type: string };

export function junitOutcome(d: Decision, inconclusiveAs: JunitInconclusiveAs = 'error'): CaseOutcome {
  const why = d.reasons[0] ?? '';
  if (d.expectation) {
    if (d.expectation.met) return { kind: 'pass' };
    if (stoppedShort(d))
      return {
        kind: inconclusiveAs,
        type: 'stopped-early',
        message: `${d.verdict}, stopped early (${d.stoppedEarly}) where the plan expects ${d.expectation.expected.join(' or ')}: ${why}`,
      };
    return {
      kind: 'failure',
      type: 'unmet-expectation',
      message: `${d.verdict} where the plan expects ${d.expectation.expected.join(' or ')}: ${why}`,
    };
  }
  if (isPass(d.verdict)) return { kind: 'pass' };
  if (isFail(d.verdict)) return { kind: 'failure', type: d.verdict, message: `${d.verdict}: ${why}` };
  return { kind: inconclusiveAs, type: d.verdict, message: `${d.verdict}: ${why}` };
}

export function xmlEscape(s: string): string {
  return (
    s
      // XML 1.0 forbids most control characters even when escaped.
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '�')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

function durationOf(started: string | null, ended: string | null): number {
  if (!started || !ended) return 0;
  const ms = Date.parse(ended) - Date.parse(started);
  return Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0;
}

export function renderJunit(r: SessionRecord, inconclusiveAs: JunitInconclusiveAs = 'error'): string {
  const p = r.plan;
  const evs = new Map(r.evidence.map((e) => [e.scenario, e]));
  const classname = `faultline.${p.slug}`;
  const counts = { failure: 0, error: 0 };
  const cases: string[] = [];
  const rows = r.verdicts.rows.filter((d) => !isNotSelected(d));
  for (const d of rows) {
    const sc = p.resolved.find((s) => s.id === d.scenario);
    const ev = evs.get(d.scenario);
    const time = durationOf(ev?.startedAt ?? null, ev?.endedAt ?? null);
    const name = xmlEscape(`${d.scenario} ${sc?.name ?? ''}`.trim());
    const out = junitOutcome(d, inconclusiveAs);
    const expected = d.expectation ? `\nexpected: ${expectationCell(d)}` : '';
    const summary = `verdict: ${d.verdict}${d.release ? ' (release)' : ''}${expected}\ntier met: ${d.tierMet ?? '—'}\n${d.reasons.join('\n')}`;
    cases.push(`    <testcase classname="${xmlEscape(classname)}" name="${name}" time="${time.toFixed(3)}">`);
    if (out.kind !== 'pass') {
      counts[out.kind] += 1;
      cases.push(
        `      <${out.kind} message="${xmlEscape(out.message)}" type="${xmlEscape(out.type)}">${xmlEscape(d.reasons.join('\n'))}</${out.kind}>`,
      );
    }
    cases.push(`      <system-out>${xmlEscape(summary)}</system-out>`, '    </testcase>');
  }
  const totalTime = r.evidence.reduce((s, e) => s + durationOf(e.startedAt, e.endedAt), 0).toFixed(3);
  const attrs = `tests="${rows.length}" failures="${counts.failure}" errors="${counts.error}" skipped="0" time="${totalTime}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="faultline" ${attrs}>`,
    `  <testsuite name="${xmlEscape(p.slug)}" ${attrs} timestamp="${xmlEscape(r.startedAt.replace(/\.\d+Z$|Z$/, ''))}" hostname="${xmlEscape(hostname())}">`,
    '    <properties>',
    `      <property name="sessionVerdict" value="${r.verdicts.session.verdict}"/>`,
    `      <property name="plan" value="${xmlEscape(p.source.path)}"/>`,
    `      <property name="commit" value="${xmlEscape(r.commit)}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

export async function writeJunit(
  r: SessionRecord,
  inconclusiveAs: JunitInconclusiveAs = 'error',
): Promise<string> {
  const path = join(r.sessionDir, 'junit.xml');
  await writeAtomic(path, renderJunit(r, inconclusiveAs));
  return path;
}
