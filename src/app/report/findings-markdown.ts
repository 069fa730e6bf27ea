import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DbVersionReport } from '../../core/database/capabilities.ts';
import { describeVersions } from '../../lib/databases/artifact.ts';
import type { Plan, ResolvedScenario } from '../plan/schema.ts';
import { isFail, isPass } from '../plan/verdict-states.ts';
import { type AuditItem, type Audits, RED_FLAGS, runAudits, WEAK_ORACLE_ITEMS } from '../verdict/audits.ts';
import type { Decision } from '../verdict/decide.ts';
import type { ScenarioEvidence } from '../verdict/evidence.ts';
import { anomalyLinks, fileId, landingEvidence, oracleEvidence, verdictCell } from './cells.ts';
import { htmlText, md, table, utc, writeAtomic } from './markdown-format.ts';
import type { Finding, SessionRecord } from './types.ts';

/**
 * `findings/<scenario>.md` (written as each scenario ends) and `findings/report.md` with the ten
 * sections of spec §6's findings-report template, in order.
 */

export const REPORT_SECTIONS = [
  'Summary',
  'Scenario results',
  'Findings',
  'Coverage summary',
  'Surface coverage',
  'Release-budget disclosures',
  "Adequacy assessment vs the plan's coverage argument",
  'Confidence delta',
  'Green-but-broken check',
] as const;

export const SCENARIO_RESULT_COLUMNS = [
  'ID',
  'Scenario',
  'Verdict',
  'Oracle',
  'Oracle execution evidence',
  'Nemesis landing evidence',
  'Artifact link',
] as const;
export const SURFACE_COLUMNS = [
  'Scenario / arm',
  'Surface',
  'Planned',
  'Executed',
  'Verdict',
  'Downgrade reason',
] as const;
export const DISCLOSURE_COLUMNS = [
  'Scenario',
  'Reason release budget was not provided',
  'Revisit when',
] as const;
export const ADEQUACY_COLUMNS = [
  'Claim',
  "Plan's adequacy argument",
  'What actually ran',
  'Adequacy after this run',
] as const;

interface Row {
  d: Decision;
  sc: ResolvedScenario;
  ev: ScenarioEvidence | undefined;
}

function rowsOf(r: Pick<SessionRecord, 'plan' | 'verdicts' | 'evidence'>): Row[] {
  const evs = new Map(r.evidence.map((e) => [e.scenario, e]));
  return r.verdicts.rows.map((d) => ({
    d,
    sc: r.plan.resolved.find((s) => s.id === d.scenario)!,
    ev: evs.get(d.scenario),
  }));
}

function isAggregate(row: Row): boolean {
  return row.sc.arm === null && row.sc.scenario.arms.length > 0;
}

/** The audits for a row: the decision's own, or computed for the report when the tree stopped early. */
export function auditsFor(row: Row): Audits | null {
  if (row.d.audits) return row.d.audits;
  if (!row.ev?.attempted || isAggregate(row)) return null;
  return runAudits(
    row.ev,
    row.sc,
    row.ev.faultsScheduled > 0 || row.ev.faults.length > 0 ? 'hardening' : 'smoke',
  );
}

function auditLines(a: Audits | null, reasonIfNone: string): string[] {
  const render = (i: AuditItem) =>
    `- ${i.status === 'checked' ? '[x]' : '[ ]'} ${i.id}. ${i.title} — **${i.status}**${i.status === 'unchecked' && !i.required ? ' (not required here)' : ''}: ${md(i.evidence)}`;
  if (!a) {
    return [
      ...RED_FLAGS.map((t, i) => `- [ ] RF${i + 1}. ${t} — **n/a**: ${md(reasonIfNone)}`),
      ...WEAK_ORACLE_ITEMS.map((t, i) => `- [ ] WO${i + 1}. ${t} — **n/a**: ${md(reasonIfNone)}`),
    ];
  }
  return [
    '**Red flags**',
    '',
    ...a.redFlags.map(render),
    '',
    '**Weak-oracle audit**',
    '',
    ...a.weakOracle.map(render),
  ];
}

function noneReason(row: Row): string {
  if (isAggregate(row)) return 'aggregate row: see its arms';
  return `${row.d.verdict}: ${row.d.reasons[0] ?? 'not run'}`;
}

function artifactLink(row: Row): string {
  const own = `[findings/${fileId(row.sc.parentId ?? row.sc.id)}.md](${fileId(row.sc.parentId ?? row.sc.id)}.md)`;
  const focus = anomalyLinks(row.ev);
  const drawn = focus
    ? [
        ...(focus.path ? [`[anomaly (${focus.label})](../${focus.path})`] : []),
        ...(focus.timeline ? [`[timeline at op ${focus.op}](../${focus.timeline})`] : []),
      ]
    : [];
  const extra = (row.ev?.artifacts ?? []).map((a) => `[${a.label}](../${a.path})`);
  return [own, '[report.html](report.html)', ...drawn, ...extra].join(', ');
}

export function renderScenarioFinding(
  r: Pick<SessionRecord, 'plan' | 'verdicts' | 'evidence' | 'findings'>,
  id: string,
): string {
  const rows = rowsOf(r).filter((x) => x.d.scenario === id || x.sc.parentId === id);
  const head = rows.find((x) => x.d.scenario === id);
  if (!head) throw new Error(`no verdict for scenario ${id}`);
  const out = [`# Scenario ${md(id)}: ${md(head.sc.name)}`, ''];
  for (const row of rows) {
    const { d, sc, ev } = row;
    if (row !== head) out.push(`## Arm ${md(d.scenario)}`, '');
    out.push(
      `- **Verdict:** ${d.verdict}${d.release ? ' (release)' : ''}${d.cappedBy ? ` (capped by ${d.cappedBy})` : ''}`,
      ...(d.verdict.startsWith('FAIL-') && d.reasons[0] ? [`- **What failed:** ${md(d.reasons[0])}`] : []),
      `- **Budget tier met:** ${d.tierMet ?? '—'}`,
      `- **Falsifies:** ${md(sc.scenario.falsifies.join(', ')) || '—'}`,
      `- **Oracle:** ${sc.oracle ? md(sc.oracle) : '—'}`,
      `- **Oracle execution evidence:** ${md(oracleEvidence(ev))}`,
      `- **Nemesis landing evidence:** ${md(landingEvidence(ev, d))}`,
      `- **Why:** ${md(d.reasons.join('; '))}`,
      '',
    );
    if (ev?.attempted) {
      out.push(
        `- **Seeds:** ${ev.seeds.map((s) => `${s.seed}=${s.outcome}${s.rerun !== 'not-attempted' ? ` (re-run ${s.rerun})` : ''}`).join(', ') || '—'}`,
        `- **Ran:** ${ev.ran.nodes !== undefined ? `${ev.ran.nodes} nodes` : `${ev.ran.tenants ?? 0} tenants`}, ${ev.ran.durationS}s, ${ev.faults.filter((f) => f.landed).length} landed fault window(s)`,
        ...ev.faults.map(
          (f) =>
            `- **Fault window ${f.id}:** ${f.what || `${f.kind} ${f.action}`} from ${f.startS.toFixed(1)} s to ${f.endS === null ? 'the end (never healed)' : `${f.endS.toFixed(1)} s`}${f.landed ? '' : ' (did not land)'}`,
        ),
        '',
      );
    }
    out.push('### Green-but-broken check', '', ...auditLines(auditsFor(row), noneReason(row)), '');
  }
  const fs = r.findings.filter((f) => f.scenario === id || f.scenario.startsWith(`${id}/`));
  if (fs.length) out.push('## Findings', '', ...fs.flatMap(renderFinding));
  return out.join('\n');
}

export async function writeScenarioFinding(r: SessionRecord, id: string): Promise<string> {
  const dir = join(r.sessionDir, 'findings');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${fileId(id)}.md`);
  await writeAtomic(path, renderScenarioFinding(r, id));
  return path;
}

function renderFinding(f: Finding): string[] {
  return [
    `### Finding ${md(f.id)}: ${md(f.title)}`,
    '',
    `- **Scenario:** ${md(f.scenario)}`,
    `- **Hypothesis addressed:** ${md(f.hypothesis)}`,
    `- **What happened:** ${md(f.whatHappened)}`,
    `- **Reproducer:** ${htmlText(f.reproducer)}`,
    `- **Reduction:** ${md(f.reduction ?? 'not reduced')}`,
    `- **Reduction classification:** ${f.reductionClassification}`,
    `- **Classification:** ${f.classification}${f.tags.length ? ` (tags: ${f.tags.join(', ')})` : ''}`,
    `- **Severity:** ${f.severity}`,
    `- **Evidence:** ${md(f.evidence)}`,
    `- **Hypothesised root cause:** ${md(f.rootCause)}`,
    `- **Suggested next action:** ${md(f.nextAction)}`,
    '',
  ];
}

export type ConfidenceDelta = 'More' | 'Less' | 'Unchanged';

/**
 * Relative to the plan's §7d: Less when a FAIL appeared or a scenario ended NOT-RUN / PARTIAL-* /
 * INCONCLUSIVE-* without §7d naming it; More when nothing weakened and a PASS-hardening was earned.
 */
export function confidenceDelta(
  plan: Plan,
  rows: readonly Decision[],
): { delta: ConfidenceDelta; why: string[] } {
  const statement = plan.confidence.statement;
  const fails = rows.filter((d) => isFail(d.verdict));
  const undisclosed = rows.filter(
    (d) =>
      !isPass(d.verdict) &&
      !isFail(d.verdict) &&
      !new RegExp(`\\b${d.scenario.replace('/', '\\/')}\\b`).test(statement),
  );
  const hard = rows.filter((d) => d.verdict === 'PASS-hardening');
  if (fails.length || undisclosed.length) {
    return {
      delta: 'Less',
      why: [
        ...fails.map((d) => `${d.scenario} ${d.verdict}: ${d.reasons[0] ?? ''}`),
        ...undisclosed.map((d) => `${d.scenario} ended ${d.verdict}, which §7d does not disclose`),
      ],
    };
  }
  if (hard.length) return { delta: 'More', why: hard.map((d) => `${d.scenario} PASS-hardening`) };
  return { delta: 'Unchanged', why: ['no PASS-hardening; nothing weakened beyond what §7d disclosed'] };
}

function adequacyAfter(plan: Plan, claim: string, rows: readonly Decision[]): { ran: string; after: string } {
  const ids = plan.scenarios.filter((s) => s.falsifies.includes(claim)).map((s) => s.id);
  const ds = rows.filter((d) => ids.includes(d.scenario));
  if (ds.length === 0) return { ran: 'nothing', after: 'not exercised' };
  const ran = ds.map((d) => `${d.scenario} ${d.verdict}`).join(', ');
  if (ds.some((d) => isFail(d.verdict))) return { ran, after: 'refuted or in doubt: a scenario FAILed' };
  if (ds.every((d) => d.verdict === 'PASS-hardening'))
    return { ran, after: 'as argued (hardening evidence)' };
  if (ds.some((d) => isPass(d.verdict)))
    return { ran, after: 'weaker than argued: smoke or partial evidence only' };
  return { ran, after: 'not supported by this run' };
}

export function renderReport(r: SessionRecord): string {
  const p = r.plan;
  const rows = rowsOf(r);
  const out: string[] = [];
  // 1. Header
  out.push(`# Findings: ${p.slug} @ ${utc(r.startedAt)}`, '');
  out.push(
    `- **Plan:** ${p.source.path}`,
    `- **Commit under test:** ${r.commit}`,
    `- **Session dir:** ${r.sessionDir}`,
    '',
  );
  // 2. Summary, headline first
  const s = r.verdicts.session;
  out.push('## Summary', '', `**${s.headline}**`, '');
  out.push(`Session verdict: **${s.verdict}**.`);
  if (s.nondeterministic.length) {
    out.push(
      `FAIL-nondeterministic (no reproducer; hand to DST or longer statistical runs): ${s.nondeterministic.join(', ')}.`,
    );
  }
  const counts = new Map<string, number>();
  for (const d of r.verdicts.rows) counts.set(d.verdict, (counts.get(d.verdict) ?? 0) + 1);
  out.push(`Rows: ${[...counts].map(([v, n]) => `${n} ${v}`).join(', ')}.`, '');
  out.push(...databaseVersionLines(r));
  // 3. Scenario results
  out.push('## Scenario results', '');
  out.push(
    table(
      SCENARIO_RESULT_COLUMNS,
      rows.map((row) => [
        row.d.scenario,
        md(row.sc.name),
        verdictCell(row.d),
        md(row.sc.oracle ?? ''),
        isAggregate(row)
          ? `aggregate of ${row.sc.scenario.arms.length} arms (see the ${row.d.scenario}/… rows)`
          : md(oracleEvidence(row.ev)),
        isAggregate(row) ? 'see the arm rows' : md(landingEvidence(row.ev, row.d)),
        artifactLink(row),
      ]),
    ),
    '',
  );
  // 4. Findings
  out.push('## Findings', '');
  if (r.findings.length) out.push(...r.findings.flatMap(renderFinding));
  else out.push('No findings: no scenario FAILed.', '');
  // 5. Coverage summary
  out.push('## Coverage summary', '');
  out.push(
    table(
      ['Hypothesis', 'Exercised by', 'Verdict', 'Reason if not exercised'],
      p.hypotheses.map((h) => {
        const by = p.scenarios.filter((sc) => sc.closes.includes(h.id)).map((sc) => sc.id);
        const ds = r.verdicts.rows.filter((d) => by.includes(d.scenario));
        const ran = ds.filter((d) => d.verdict !== 'NOT-RUN');
        return [
          md(`${h.id}. ${h.title}`),
          by.join(', ') || '—',
          ds.map((d) => `${d.scenario} ${d.verdict}`).join(', ') || '—',
          by.length === 0
            ? 'no scenario closes it'
            : ran.length === 0
              ? ds.map((d) => d.reasons[0]).join('; ')
              : '',
        ];
      }),
    ),
    '',
  );
  // 6. Surface coverage
  out.push('## Surface coverage', '');
  const surfaceRows = rows.filter((row) => row.sc.surfaceGated || row.sc.arm !== null);
  if (surfaceRows.length === 0) out.push('No boundary or fairness scenarios in this plan.', '');
  else {
    out.push(
      table(
        SURFACE_COLUMNS,
        surfaceRows.map((row) => [
          row.d.scenario,
          row.sc.arm ? row.sc.arm.surface : 'aggregate',
          'yes',
          row.sc.arm
            ? row.ev?.attempted
              ? 'yes'
              : 'no'
            : `${surfaceRows.filter((x) => x.sc.parentId === row.sc.id && x.ev?.attempted).length}/${row.sc.scenario.arms.length} arms`,
          row.d.verdict,
          isPass(row.d.verdict) ? '' : md(row.d.reasons[0] ?? ''),
        ]),
      ),
      '',
    );
    const missing = surfaceRows.filter((row) => row.sc.arm && !row.ev?.attempted);
    out.push(
      missing.length
        ? `Missing surfaces this run did not cover: ${md(missing.map((m) => `${m.d.scenario} (${m.d.reasons[0] ?? 'not run'})`).join(', '))}.`
        : 'All planned surfaces were executed.',
      '',
    );
  }
  // 7. Release-budget disclosures, verbatim from the plan
  out.push('## Release-budget disclosures', '');
  const disclosed = p.resolved.filter((sc) => sc.arm === null && sc.tiers.releaseDisclosure);
  if (disclosed.length === 0) out.push('All scenarios declared a concrete release budget.', '');
  else {
    out.push(
      table(
        DISCLOSURE_COLUMNS,
        disclosed.map((sc) => [
          sc.id,
          sc.tiers.releaseDisclosure!.reason,
          sc.tiers.releaseDisclosure!.revisitWhen,
        ]),
      ),
      '',
    );
  }
  // 8. Adequacy vs §7b
  out.push("## Adequacy assessment vs the plan's coverage argument", '');
  const claims = p.adequacy.length
    ? p.adequacy
    : p.claims.map((c) => ({ claim: c.id, whySufficient: '(no §7b row)' }));
  out.push(
    table(
      ADEQUACY_COLUMNS,
      claims.map((a) => {
        const id = a.claim.match(/\bC\d+\b/)?.[0] ?? a.claim;
        const { ran, after } = adequacyAfter(p, id, r.verdicts.topLevel);
        return [a.claim, a.whySufficient, ran, after];
      }),
    ),
    '',
  );
  // 9. Confidence delta vs §7d
  const cd = confidenceDelta(p, r.verdicts.rows);
  out.push('## Confidence delta', '', `**${cd.delta}** relative to the plan's §7d confidence statement.`, '');
  out.push(...cd.why.map((w) => `- ${md(w)}`), '');
  // 10. Green-but-broken check, per scenario
  out.push('## Green-but-broken check', '');
  for (const row of rows) {
    out.push(`### ${md(row.d.scenario)}`, '', ...auditLines(auditsFor(row), noneReason(row)), '');
  }
  return out.join('\n');
}

export async function writeReport(r: SessionRecord): Promise<string> {
  const dir = join(r.sessionDir, 'findings');
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'report.md');
  await writeAtomic(path, renderReport(r));
  return path;
}

/** `## Database under test`: the version each scenario's database reported, and any mismatch. */
function databaseVersionLines(r: SessionRecord): string[] {
  const seen = r.evidence.filter((e) => e.dbVersion !== null);
  if (seen.length === 0) return [];
  return [
    '## Database under test',
    '',
    ...seen.map((e) => `- ${e.scenario}: ${describeVersions(e.dbVersion as DbVersionReport)}`),
    '',
  ];
}
