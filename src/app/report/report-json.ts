import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { SESSION_VERDICTS, VERDICTS } from '../verdict/states.ts';
import { landingEvidence, oracleEvidence } from './cells.ts';
import { auditsFor, confidenceDelta } from './findings.ts';
import { writeAtomic } from './markdown.ts';
import { findingSchema, type SessionRecord } from './types.ts';

/**
 * `findings/report.json`: the machine-readable twin of report.md. Validated against its zod schema
 * before it is written, so a consumer can trust every field; the JSON Schema is written next to it.
 */

const auditItem = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(['checked', 'failed', 'unchecked', 'n/a']),
  evidence: z.string(),
});

export const reportJsonSchema = z.strictObject({
  schemaVersion: z.literal(1),
  plan: z.object({ slug: z.string(), path: z.string() }),
  session: z.object({ dir: z.string(), startedAt: z.string(), commit: z.string(), operator: z.string() }),
  sessionVerdict: z.enum(SESSION_VERDICTS),
  headline: z.string(),
  nondeterministic: z.array(z.string()),
  scenarios: z.array(
    z.strictObject({
      id: z.string(),
      parent: z.string().nullable(),
      name: z.string(),
      verdict: z.enum(VERDICTS),
      /** The plan's acceptable verdicts on this cluster; null when the row declares none. */
      expected: z.array(z.string()).nullable(),
      /** Whether the verdict met the expectation; null when none is declared. */
      expectationMet: z.boolean().nullable(),
      tierMet: z.enum(['smoke', 'hardening', 'release']).nullable(),
      release: z.boolean(),
      cappedBy: z.string().nullable(),
      step: z.number().int().min(1).max(8),
      reasons: z.array(z.string()).min(1),
      oracle: z.string().nullable(),
      oracleEvidence: z.string(),
      landingEvidence: z.string(),
      audits: z
        .object({ redFlags: z.array(auditItem).length(10), weakOracle: z.array(auditItem).length(14) })
        .nullable(),
    }),
  ),
  findings: z.array(findingSchema),
  releaseDisclosures: z.array(
    z.object({ scenario: z.string(), reason: z.string(), revisitWhen: z.string() }),
  ),
  confidenceDelta: z.object({ delta: z.enum(['More', 'Less', 'Unchanged']), why: z.array(z.string()) }),
});
export type ReportJson = z.infer<typeof reportJsonSchema>;

export function buildReportJson(r: SessionRecord): ReportJson {
  const evs = new Map(r.evidence.map((e) => [e.scenario, e]));
  const p = r.plan;
  return reportJsonSchema.parse({
    schemaVersion: 1,
    plan: { slug: p.slug, path: p.source.path },
    session: { dir: r.sessionDir, startedAt: r.startedAt, commit: r.commit, operator: r.operator },
    sessionVerdict: r.verdicts.session.verdict,
    headline: r.verdicts.session.headline,
    nondeterministic: r.verdicts.session.nondeterministic,
    scenarios: r.verdicts.rows.map((d) => {
      const sc = p.resolved.find((s) => s.id === d.scenario)!;
      const ev = evs.get(d.scenario);
      return {
        id: d.scenario,
        parent: sc.parentId,
        name: sc.name,
        verdict: d.verdict,
        expected: d.expectation?.expected ?? null,
        expectationMet: d.expectation?.met ?? null,
        tierMet: d.tierMet,
        release: d.release,
        cappedBy: d.cappedBy ?? null,
        step: d.step,
        reasons: d.reasons,
        oracle: sc.oracle,
        oracleEvidence: oracleEvidence(ev),
        landingEvidence: landingEvidence(ev, d),
        audits: auditsFor({ d, sc, ev }),
      };
    }),
    findings: r.findings,
    releaseDisclosures: p.resolved
      .filter((sc) => sc.arm === null && sc.tiers.releaseDisclosure)
      .map((sc) => ({ scenario: sc.id, ...sc.tiers.releaseDisclosure! })),
    confidenceDelta: confidenceDelta(p, r.verdicts.rows),
  });
}

export async function writeReportJson(r: SessionRecord): Promise<string> {
  const dir = join(r.sessionDir, 'findings');
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'report.json');
  await writeAtomic(path, `${JSON.stringify(buildReportJson(r), null, 2)}\n`);
  await writeAtomic(
    join(dir, 'report.schema.json'),
    `${JSON.stringify(z.toJSONSchema(reportJsonSchema), null, 2)}\n`,
  );
  return path;
}
