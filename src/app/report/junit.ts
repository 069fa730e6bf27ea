import { hostname } from 'node:os';
import { join } from 'node:path';
import { isFail, isPass } from '../verdict/states.ts';
import { writeAtomic } from './markdown.ts';
import type { SessionRecord } from './types.ts';

/**
 * `junit.xml` in the common Jenkins/Surefire JUnit dialect: one testcase per scenario and per arm.
 * FAIL-* → <failure>; INCONCLUSIVE-* / PARTIAL-* / NOT-RUN → <skipped> with the reason (never a pass);
 * PASS-* → a plain passed testcase. Readable by Jenkins, GitLab, GitHub test reporters.
 */

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

export function renderJunit(r: SessionRecord): string {
  const p = r.plan;
  const evs = new Map(r.evidence.map((e) => [e.scenario, e]));
  const classname = `faultline.${p.slug}`;
  let failures = 0;
  let skipped = 0;
  let total = 0;
  const cases: string[] = [];
  for (const d of r.verdicts.rows) {
    const sc = p.resolved.find((s) => s.id === d.scenario);
    const ev = evs.get(d.scenario);
    const time = durationOf(ev?.startedAt ?? null, ev?.endedAt ?? null);
    total += 1;
    const name = xmlEscape(`${d.scenario} ${sc?.name ?? ''}`.trim());
    const reasons = xmlEscape(d.reasons.join('\n'));
    const head = `    <testcase classname="${xmlEscape(classname)}" name="${name}" time="${time.toFixed(3)}">`;
    if (isFail(d.verdict)) {
      failures += 1;
      cases.push(
        head,
        `      <failure message="${xmlEscape(`${d.verdict}: ${d.reasons[0] ?? ''}`)}" type="${d.verdict}">${reasons}</failure>`,
        `      <system-out>${xmlEscape(`verdict: ${d.verdict}\ntier met: ${d.tierMet ?? '—'}`)}</system-out>`,
        '    </testcase>',
      );
    } else if (!isPass(d.verdict)) {
      skipped += 1;
      cases.push(
        head,
        `      <skipped message="${xmlEscape(`${d.verdict}: ${d.reasons[0] ?? ''}`)}"/>`,
        `      <system-out>${xmlEscape(`verdict: ${d.verdict}\n${d.reasons.join('\n')}`)}</system-out>`,
        '    </testcase>',
      );
    } else {
      cases.push(
        head,
        `      <system-out>${xmlEscape(`verdict: ${d.verdict}${d.release ? ' (release)' : ''}\ntier met: ${d.tierMet ?? '—'}\n${d.reasons.join('\n')}`)}</system-out>`,
        '    </testcase>',
      );
    }
  }
  const totalTime = r.evidence.reduce((s, e) => s + durationOf(e.startedAt, e.endedAt), 0).toFixed(3);
  const attrs = `tests="${total}" failures="${failures}" errors="0" skipped="${skipped}" time="${totalTime}"`;
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

export async function writeJunit(r: SessionRecord): Promise<string> {
  const path = join(r.sessionDir, 'junit.xml');
  await writeAtomic(path, renderJunit(r));
  return path;
}
