import { join } from 'node:path';
import { verdictCell } from './cells.ts';
import { checkbox, table, utc, writeAtomic } from './markdown-format.ts';
import type { SessionRecord } from './types.ts';

/**
 * `session-log.md` from spec §6's session-log template. The timeline is append-only in the record; the
 * file is rewritten whole (atomically) each time, so it is always complete and never half-written.
 */

export const SESSION_LOG_SECTIONS = [
  'Toolbox discovered',
  'Environment capability matrix',
  'Preconditions check',
  'Scenario timeline',
  'Scenario verdicts',
  'Artifacts',
] as const;

export function renderSessionLog(
  r: Pick<SessionRecord, Exclude<keyof SessionRecord, 'findings' | 'evidence'>>,
): string {
  const p = r.plan;
  const out: string[] = [];
  out.push(`# Session log: ${p.slug} @ ${utc(r.startedAt)}`, '');
  out.push(
    `- **SUT:** ${p.header.sut ?? '—'}`,
    `- **Plan:** ${p.source.path}`,
    `- **Commit under test:** ${r.commit}`,
    `- **Session dir:** ${r.sessionDir}`,
    `- **Operator:** ${r.operator}`,
    '',
  );
  out.push('## Toolbox discovered', '');
  out.push(...(r.toolbox.length ? r.toolbox.map((t) => `- ${t.path} — ${t.role}`) : ['- none found']), '');
  out.push('## Environment capability matrix', '');
  out.push(
    table(
      ['Requirement', 'Present?', 'Version', 'Source'],
      r.capabilities.map((c) => [c.requirement, c.present ? 'yes' : 'no', c.version, c.source]),
    ),
    '',
  );
  const pc = r.preconditions;
  out.push('## Preconditions check', '');
  out.push(
    `- ${checkbox(pc.clusterUp)} cluster up`,
    `- ${checkbox(pc.observabilityLive)} observability live`,
    `- ${checkbox(pc.baselineCaptured)} baseline captured`,
    `- ${checkbox(pc.faultPlaneResponsive)} fault plane responsive`,
    '',
  );
  out.push('## Scenario timeline', '');
  out.push(
    table(
      ['Time (UTC)', 'Scenario', 'Event', 'Notes'],
      r.timeline.map((e) => [utc(e.time), e.scenario, e.event, e.notes]),
    ),
    '',
  );
  out.push('## Scenario verdicts', '');
  out.push(
    table(
      ['Scenario / arm', 'Budget tier met', 'Verdict', 'Notes'],
      r.verdicts.rows.map((d) => [d.scenario, d.tierMet ?? '—', verdictCell(d), d.reasons.join('; ')]),
    ),
    '',
  );
  out.push(`Session verdict: **${r.verdicts.session.verdict}** — ${r.verdicts.session.headline}`, '');
  out.push('## Artifacts', '');
  out.push(...(r.artifacts.length ? r.artifacts.map((a) => `- ${a.label}: ${a.path}`) : ['- none']), '');
  return out.join('\n');
}

export async function writeSessionLog(r: SessionRecord): Promise<string> {
  const path = join(r.sessionDir, 'session-log.md');
  await writeAtomic(path, renderSessionLog(r));
  return path;
}

/**
 * The session log while a run proceeds: every event is appended to the timeline and the file is
 * rewritten at once, so a killed run still leaves a complete log up to its last event. `starting`
 * implements the checkpoint discipline: a "starting" line (scenario, command, expected duration), then
 * a result line with the elapsed time.
 */
export class SessionLogWriter {
  constructor(
    readonly record: SessionRecord,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async event(scenario: string, event: string, notes = ''): Promise<void> {
    this.record.timeline.push({ time: this.now().toISOString(), scenario, event, notes });
    await writeSessionLog(this.record);
  }

  async starting(
    scenario: string,
    command: string,
    expectedS: number,
  ): Promise<(result: string) => Promise<void>> {
    const t0 = this.now().getTime();
    await this.event(scenario, `starting: ${command}`, `expected ~${expectedS}s`);
    return async (result: string) => {
      const elapsed = ((this.now().getTime() - t0) / 1000).toFixed(1);
      await this.event(scenario, `${command}: ${result}`, `elapsed ${elapsed}s`);
    };
  }
}
