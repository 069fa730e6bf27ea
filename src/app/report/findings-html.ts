import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { escapeHtml } from '../../core/util/html.ts';
import type { ResolvedScenario } from '../plan/schema.ts';
import type { Decision } from '../verdict/decide.ts';
import type { ScenarioEvidence } from '../verdict/evidence.ts';
import { anomalyLinks, fileId, landingEvidence, oracleEvidence } from './cells.ts';
import { utc, writeAtomic } from './markdown-format.ts';
import type { SessionRecord } from './types.ts';

/**
 * `findings/report.html`: the session on one self-contained page (style inline, plots inlined as SVG,
 * no script, no network). The verdict table first; then per scenario its headline, for a FAIL the
 * links that open the failing op on its key's page and on the timeline, the fault windows with what
 * each did, the plots, the index of per-key pages with their verdicts, and every artifact. Links are
 * relative, so the session directory can be moved or archived whole.
 */

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:20px auto;max-width:1200px;padding:0 16px;color:#222}
h1{font-size:21px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:14px;margin:16px 0 4px}
table{border-collapse:collapse;margin:6px 0 10px;width:100%}th,td{border:1px solid #ddd;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4;font-weight:600}
.v{display:inline-block;padding:1px 8px;border-radius:9px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.v.PASS{background:#2e7d32}.v.FAIL{background:#c62828}.v.INCONCLUSIVE{background:#ef6c00}.v.PARTIAL{background:#f9a825;color:#222}
.v.NOT-RUN{background:#9e9e9e}.v.DONE{background:#2e7d32}.v.DONE_WITH_CONCERNS{background:#f9a825;color:#222}.v.BLOCKED{background:#6d4c41}
.headline{font-size:15px;font-weight:600;margin:8px 0;padding:8px 12px;border-left:4px solid #888;background:#fafafa}
.headline.FAIL{border-color:#c62828;background:#fff5f5}
.open{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.open a{display:inline-block;padding:5px 12px;border-radius:5px;background:#1565c0;color:#fff;text-decoration:none;font-weight:600}
.meta{color:#555;font-size:13px}.meta a{color:#1565c0}
.plots svg{max-width:100%;height:auto;border:1px solid #eee;margin:4px 0}
.small{font-size:12px;color:#555}
ul.links{columns:2;margin:4px 0}
`;

/** A relative link from findings/. */
function link(path: string, text: string): string {
  return `<a href="../${escapeHtml(path)}">${escapeHtml(text)}</a>`;
}

function badge(v: string): string {
  const cls = v.startsWith('PASS')
    ? 'PASS'
    : v.startsWith('FAIL')
      ? 'FAIL'
      : v.startsWith('INCONCLUSIVE')
        ? 'INCONCLUSIVE'
        : v.startsWith('PARTIAL')
          ? 'PARTIAL'
          : v;
  return `<span class="v ${escapeHtml(cls)}">${escapeHtml(v)}</span>`;
}

interface Row {
  d: Decision;
  sc: ResolvedScenario;
  ev: ScenarioEvidence | undefined;
}

function verdictTable(rows: readonly Row[]): string {
  const body = rows.map(({ d, sc, ev }) => {
    const target = ev?.attempted
      ? `<a href="#${escapeHtml(fileId(d.scenario))}">${escapeHtml(d.scenario)}</a>`
      : escapeHtml(d.scenario);
    const focus = anomalyLinks(ev);
    const open = focus?.path ? ` ${link(focus.path, 'open the anomaly')}` : '';
    return `<tr><td>${target}</td><td>${escapeHtml(sc.name)}</td><td>${badge(d.verdict)}${d.release ? ' (release)' : ''}</td><td>${escapeHtml(d.tierMet ?? '—')}</td><td>${escapeHtml(d.reasons[0] ?? '')}${open}</td></tr>`;
  });
  return `<table><tr><th>ID</th><th>Scenario</th><th>Verdict</th><th>Tier met</th><th>What happened</th></tr>${body.join('')}</table>`;
}

function faultTable(ev: ScenarioEvidence): string {
  if (ev.faults.length === 0)
    return `<p class="small">${ev.faultsScheduled > 0 ? `${ev.faultsScheduled} fault window(s) scheduled, none recorded.` : 'No fault was scheduled.'}</p>`;
  const rows = ev.faults.map(
    (f) =>
      `<tr><td>${escapeHtml(f.id)}</td><td>${escapeHtml(f.kind)}${f.topology ? ` (${escapeHtml(f.topology)})` : ''}</td><td>${escapeHtml(f.what || `${f.kind} ${f.action}`)}</td><td>${f.startS.toFixed(1)} s</td><td>${f.endS === null ? 'never healed' : `${f.endS.toFixed(1)} s`}</td><td>${f.landed ? 'landed' : `<b>not proven</b>: ${escapeHtml(f.reason ?? '')}`}</td></tr>`,
  );
  return `<table><tr><th>Window</th><th>Kind</th><th>What it did</th><th>From</th><th>To</th><th>Landing</th></tr>${rows.join('')}</table>`;
}

/** The run's SVG plots, inlined (they are dependency-free SVG written by the perf checker). */
function plots(sessionDir: string, ev: ScenarioEvidence): string {
  const svgs = ev.artifacts
    .filter((a) => a.path.endsWith('.svg'))
    .map((a) => join(sessionDir, a.path))
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p, 'utf8').replace(/^<\?xml[^>]*>\s*/, ''));
  return svgs.length
    ? `<div class="plots">${svgs.join('\n')}</div>`
    : '<p class="small">No plots were drawn.</p>';
}

function pageIndex(ev: ScenarioEvidence): string {
  const pages = ev.oracles.flatMap((o) => o.pages.map((p) => ({ ...p, checker: o.checker, focus: o.focus })));
  if (pages.length === 0 || !ev.runDir) return '';
  const word = (v: boolean | 'unknown') => (v === true ? 'valid' : v === false ? 'INVALID' : 'unknown');
  const rows = pages.map((p) => {
    const at =
      p.focus && p.focus.key === p.key
        ? `#op=${p.focus.op}${p.focus.related.length ? `&ctx=${p.focus.related.join(',')}` : ''}`
        : '';
    const cls = p.valid === false ? ' style="background:#fff5f5;font-weight:600"' : '';
    return `<tr${cls}><td>${escapeHtml(p.checker)}</td><td>${escapeHtml(p.key ?? 'whole history')}</td><td>${escapeHtml(word(p.valid))}</td><td>${link(`${ev.runDir}/${p.path}${at}`, p.path)}</td></tr>`;
  });
  return `<h3>Pages per key</h3><table><tr><th>Checker</th><th>Key</th><th>Verdict</th><th>Page</th></tr>${rows.join('')}</table>`;
}

function scenarioSection(r: SessionRecord, rows: readonly Row[], row: Row): string {
  const { d, sc, ev } = row;
  if (!ev?.attempted) return '';
  const out: string[] = [
    `<section id="${escapeHtml(fileId(d.scenario))}"><h2>${escapeHtml(d.scenario)} ${escapeHtml(sc.name)} ${badge(d.verdict)}</h2>`,
  ];
  const fail = d.verdict.startsWith('FAIL-');
  out.push(`<p class="headline${fail ? ' FAIL' : ''}">${escapeHtml(d.reasons[0] ?? '')}</p>`);
  if (d.reasons.length > 1)
    out.push(`<p class="small">${d.reasons.slice(1).map(escapeHtml).join('<br>')}</p>`);
  const focus = anomalyLinks(ev);
  if (focus) {
    const opens = [
      ...(focus.path
        ? [
            link(
              focus.path,
              `Open op ${focus.op}${focus.key === null ? '' : ` on key ${focus.key}`} on its page`,
            ),
          ]
        : []),
      ...(focus.timeline ? [link(focus.timeline, `Open op ${focus.op} on the timeline`)] : []),
    ];
    if (opens.length) out.push(`<div class="open">${opens.join('')}</div>`);
  }
  out.push('<h3>Fault windows</h3>', faultTable(ev));
  out.push(
    `<p class="small"><b>Oracle:</b> ${escapeHtml(oracleEvidence(ev))}<br><b>Landing evidence:</b> ${escapeHtml(landingEvidence(ev, d))}</p>`,
  );
  const seeds = ev.seeds.map(
    (s) =>
      `seed ${s.seed}: ${s.outcome}${s.rerun !== 'not-attempted' ? ` (re-run ${s.rerun})` : ''}${s.reproducer ? ` — reproducer: <code>${escapeHtml(s.reproducer)}</code>` : ''}`,
  );
  if (seeds.length) out.push(`<p class="small">${seeds.join('<br>')}</p>`);
  out.push('<h3>Plots</h3>', plots(r.sessionDir, ev));
  out.push(pageIndex(ev));
  const arts = [
    `<li><a href="${escapeHtml(fileId(sc.parentId ?? sc.id))}.md">findings/${escapeHtml(fileId(sc.parentId ?? sc.id))}.md</a></li>`,
    ...ev.artifacts.map((a) => `<li>${link(a.path, a.label)}</li>`),
  ];
  out.push(`<h3>Artifacts</h3><ul class="links">${arts.join('')}</ul>`);
  const arms = rows.filter((x) => x.sc.parentId === sc.id);
  if (arms.length)
    out.push(
      `<p class="small">Arms: ${arms.map((a) => `${escapeHtml(a.d.scenario)} ${badge(a.d.verdict)}`).join(', ')}</p>`,
    );
  out.push('</section>');
  return out.join('\n');
}

export function renderReportHtml(r: SessionRecord): string {
  const evs = new Map(r.evidence.map((e) => [e.scenario, e]));
  const rows: Row[] = r.verdicts.rows.map((d) => ({
    d,
    sc: r.plan.resolved.find((s) => s.id === d.scenario) as ResolvedScenario,
    ev: evs.get(d.scenario),
  }));
  const s = r.verdicts.session;
  const title = `Findings: ${r.plan.slug} @ ${utc(r.startedAt)}`;
  const findings = r.findings.map(
    (f) =>
      `<li><b>${escapeHtml(f.id)}</b> ${escapeHtml(f.title)} — ${escapeHtml(f.severity)}, ${escapeHtml(f.classification)}; reproducer: <code>${escapeHtml(f.reproducer)}</code>${f.reduction ? `; reduction: ${escapeHtml(f.reduction)}` : ''}</li>`,
  );
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="meta">Plan ${escapeHtml(r.plan.source.path)} · commit under test ${escapeHtml(r.commit)} · ${escapeHtml(r.operator)} ·
<a href="report.md">report.md</a> · <a href="report.json">report.json</a> · <a href="../session-log.md">session-log.md</a> · <a href="../junit.xml">junit.xml</a></p>
<p>Session verdict ${badge(s.verdict)}</p>
<p class="headline${s.verdict === 'FAIL' ? ' FAIL' : ''}" id="headline">${escapeHtml(s.headline)}</p>
<h2>Verdicts</h2>
${verdictTable(rows)}
${rows
  .filter((row) => row.sc.parentId === null || row.ev?.attempted)
  .map((row) => scenarioSection(r, rows, row))
  .join('\n')}
<h2>Findings</h2>
${findings.length ? `<ul>${findings.join('')}</ul>` : '<p>No findings: no scenario FAILed.</p>'}
<p class="small">Op numbers are the history's event indices: op N is the line with <code>"index":N</code> in history.jsonl
(its invocation). Times are seconds since the run started. This page needs no network.</p>
</body></html>
`;
}

export async function writeReportHtml(r: SessionRecord): Promise<string> {
  const dir = join(r.sessionDir, 'findings');
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'report.html');
  await writeAtomic(path, renderReportHtml(r));
  return path;
}
