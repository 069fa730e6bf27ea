import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  REPORT_JSON_SCHEMA_VERSION,
  type ReportJson,
  reportJsonSchema,
} from '../../src/app/report/report-json.ts';
import { sessionTimestamp } from '../../src/app/report/session-dir.ts';
import { recordSessionIndex } from '../../src/app/store/index-file.ts';

/**
 * A generated session store for the `sessions` and `serve` tests and `bench:serve`: `names` plans, each
 * with `perName` nightly sessions of three rows. `verdictOf(name, night, row)` picks each verdict; the
 * report.json files validate against the published schema.
 */
export interface GeneratedRow {
  verdict: ReportJson['scenarios'][number]['verdict'];
  expected?: string[];
  opsPerSec?: number;
  p99?: number;
}

export function generateStore(
  root: string,
  o: {
    names: string[];
    perName: number;
    rowOf?: (name: string, night: number, row: string) => GeneratedRow;
    start?: Date;
    /** Append each session's line to the store's summary index, as `faultline run` does (default). */
    index?: boolean;
  },
): void {
  const start = (o.start ?? new Date('2026-10-01T02:00:00Z')).getTime();
  for (const name of o.names) {
    let last = '';
    for (let night = 0; night < o.perName; night++) {
      const id = sessionTimestamp(new Date(start + night * 86_400_000));
      const dir = join(root, name, id);
      mkdirSync(join(dir, 'findings'), { recursive: true });
      const rows = ['S1', 'S2', 'S3'].map((row) => {
        const g = o.rowOf?.(name, night, row) ?? { verdict: 'PASS-smoke' as const };
        const met = g.expected ? g.expected.includes(g.verdict) : null;
        const outcome =
          met === true || (met === null && g.verdict.startsWith('PASS-'))
            ? ('success' as const)
            : met === false || g.verdict === 'FAIL-reproducible'
              ? ('failure' as const)
              : ('concern' as const);
        return {
          id: row,
          parent: null,
          name: `${row.toLowerCase()}_scenario`,
          verdict: g.verdict,
          expected: g.expected ?? null,
          expectationMet: met,
          outcome,
          tierMet: 'smoke' as const,
          release: false,
          cappedBy: null,
          step: 8,
          headline: `${g.verdict}: generated`,
          reasons: ['generated'],
          oracle: 'linearizability',
          oracleEvidence: 'linearizable: 1,000 ops',
          landingEvidence: 'n/a — no fault',
          counts: {
            ops: 1000,
            ok: 900,
            fail: 50,
            info: 50,
            anomalies: { total: g.verdict.startsWith('FAIL') ? 1 : 0, byType: {} },
            faults: { scheduled: 0, injected: 0, landed: 0, healed: 0 },
          },
          figures: {
            opsPerSec: g.opsPerSec ?? 50,
            latencyMs: { p50: 5, p99: g.p99 ?? 40 },
            healthy: null,
            faulted: null,
          },
          pages: Array.from({ length: 12 }, (_, k) => ({
            checker: 'linearizable',
            key: String(k),
            valid: !(g.verdict.startsWith('FAIL') && k === 1),
            path: `artifacts/${row}/01-run-seed-7/independent/${k}/linearizability.html`,
          })),
          artifacts: [{ label: 'finding', path: `findings/${row}.md` }],
          // Audits as long as a real run's: a nightly report.json is tens of KB, which is what makes
          // reading hundreds of them slow.
          audits: {
            redFlags: auditItems('RF', 10),
            weakOracle: auditItems('WO', 14),
          },
        };
      });
      const failing = rows.filter((r) => r.outcome === 'failure');
      const report: ReportJson = reportJsonSchema.parse({
        schemaVersion: REPORT_JSON_SCHEMA_VERSION,
        plan: { slug: name, path: `plans/${name}.md` },
        session: {
          dir,
          startedAt: new Date(start + night * 86_400_000).toISOString(),
          commit: 'gen',
          operator: 'gen',
        },
        sessionVerdict: failing.length ? 'FAIL' : 'DONE',
        headline: failing.length ? `FAIL: ${failing.map((r) => r.id).join(', ')}` : 'DONE: generated',
        nondeterministic: [],
        scenarios: rows,
        findings: [],
        releaseDisclosures: [],
        confidenceDelta: { delta: 'Unchanged', why: [] },
      });
      writeFileSync(join(dir, 'findings', 'report.json'), JSON.stringify(report));
      writeFileSync(
        join(dir, 'findings', 'report.md'),
        `# Findings: ${name} @ ${id}\n\n${report.headline}\n`,
      );
      for (const r of rows) writeFileSync(join(dir, 'findings', `${r.id}.md`), `# ${r.id}\n\n${r.verdict}\n`);
      // What `faultline run` does once its reports are written.
      if (o.index !== false) recordSessionIndex(dir);
      last = id;
    }
    symlinkSync(last, join(root, name, 'latest'));
  }
}

function auditItems(prefix: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i + 1}`,
    title: `Audit question ${i + 1}: whether the workload, the oracle and the faults did what the verdict relies on, with the evidence cited.`,
    status: 'checked' as const,
    evidence: `w1: n1 FAULTLINE DROP packets (2 rule(s) for w1) 0→19 / n2 tcp connect n2→n1:22 connected→timeout; linearizable consumed 1,800/1,800 ops (${prefix}${i + 1})`,
  }));
}
