import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { substitutionSchema } from '../../../nemeses/substitutes.ts';
import { stoppedShort } from '../plan/expectation.ts';
import { SESSION_VERDICTS, VERDICTS } from '../plan/verdict-states.ts';
import type { Decision } from '../verdict/decide.ts';
import { dbVersionSchema, type ScenarioEvidence } from '../verdict/evidence.ts';
import { anomalyLinks, fileId, landingEvidence, oracleEvidence } from './cells.ts';
import { auditsFor, confidenceDelta } from './findings-markdown.ts';
import { writeAtomic } from './markdown-format.ts';
import { figuresSchema, type MetricsFile, readMetricsFile, type SeedMetrics } from './metrics-file.ts';
import { findingSchema, type SessionRecord } from './types.ts';

/**
 * `findings/report.json`: the machine-readable twin of report.md, for CI, dashboards and
 * `faultline sessions`. Validated against its zod schema before it is written, so a consumer can trust
 * every field; the JSON Schema is written next to it, and the zod schema is exported by the package
 * (`reportJsonSchema`, `REPORT_JSON_SCHEMA_VERSION`). Version 2 added, per row: the expected verdict,
 * outcome, headline, counts, key figures and artifact paths (relative to the session directory).
 */
export const REPORT_JSON_SCHEMA_VERSION = 2;

const auditItem = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(['checked', 'failed', 'unchecked', 'n/a']),
  evidence: z.string(),
  /** Must be measured before PASS-hardening (false only for RF9 when the oracle compares with no baseline). */
  required: z.boolean().default(true),
});

export const countsSchema = z.object({
  /** Client operations invoked, and how they completed (null when no metrics were recorded). */
  ops: z.number().int().nullable(),
  ok: z.number().int().nullable(),
  fail: z.number().int().nullable(),
  info: z.number().int().nullable(),
  /** Anomalies over every oracle; by type, null where the checker did not split its count by type. */
  anomalies: z.object({
    total: z.number().int(),
    byType: z.record(z.string(), z.number().int().nullable()),
  }),
  faults: z.object({
    scheduled: z.number().int(),
    injected: z.number().int(),
    landed: z.number().int(),
    healed: z.number().int(),
  }),
});

export const reportRowSchema = z.strictObject({
  id: z.string(),
  parent: z.string().nullable(),
  name: z.string(),
  verdict: z.enum(VERDICTS),
  /** The plan's acceptable verdicts on this cluster; null when the row declares none. */
  expected: z.array(z.string()).nullable(),
  /** Whether the verdict met the expectation; null when none is declared. */
  expectationMet: z.boolean().nullable(),
  /** How the row counts toward the session: success (a pass or a met expectation), failure, or concern. */
  outcome: z.enum(['success', 'failure', 'concern']),
  /** Why the row stopped before its planned runs ended (Ctrl-C, deadline, budget); null when it did not. */
  stoppedEarly: z.string().nullable().default(null),
  tierMet: z.enum(['smoke', 'hardening', 'release']).nullable(),
  release: z.boolean(),
  cappedBy: z.string().nullable(),
  step: z.number().int().min(1).max(8),
  /**
   * One sentence: for a FAIL, which op, where, when, during which fault and what was expected; otherwise
   * the verdict and its deciding reason.
   */
  headline: z.string(),
  reasons: z.array(z.string()).min(1),
  faultWindows: z
    .array(
      z.strictObject({
        id: z.string(),
        kind: z.string(),
        what: z.string(),
        startS: z.number(),
        endS: z.number().nullable(),
        landed: z.boolean(),
        /** Substitutes used instead of the native mechanism: asked, applied, reproduces, cannot. */
        substitutions: z.array(substitutionSchema).default([]),
      }),
    )
    // Absent in report.json files written before these fields: read as empty.
    .default([]),
  /** Where the first anomaly is drawn (paths relative to the session dir, opening at the op). */
  anomaly: z
    .strictObject({
      op: z.number().int(),
      key: z.string().nullable(),
      page: z.string().nullable(),
      timeline: z.string().nullable(),
    })
    .nullable()
    .default(null),
  /** Every page a checker drew (one per key for per-key checks), with its verdict. */
  pages: z
    .array(
      z.strictObject({
        checker: z.string(),
        key: z.string().nullable(),
        valid: z.union([z.literal(true), z.literal(false), z.literal('unknown')]),
        path: z.string(),
      }),
    )
    .default([]),
  oracle: z.string().nullable(),
  oracleEvidence: z.string(),
  landingEvidence: z.string(),
  /** Over every seed the row ran (ops, completions, anomalies, faults summed). */
  counts: countsSchema,
  /** Each seed's own counts, in seed order (empty for a row that ran no seed). */
  countsPerSeed: z.array(countsSchema.extend({ seed: z.union([z.number(), z.string()]) })).default([]),
  /** The primary run's figures (the failing seed's, else the first seed's). */
  figures: figuresSchema.nullable(),
  /** Paths relative to the session directory. */
  artifacts: z.array(z.object({ label: z.string(), path: z.string() })),
  audits: z
    .object({ redFlags: z.array(auditItem).length(10), weakOracle: z.array(auditItem).length(14) })
    .nullable(),
  /** The version the database reported on each node, the expected one, and mismatches (null: not asked). */
  dbVersion: dbVersionSchema.nullable().default(null),
});
export type ReportRow = z.infer<typeof reportRowSchema>;

export const reportJsonSchema = z.strictObject({
  schemaVersion: z.literal(REPORT_JSON_SCHEMA_VERSION),
  plan: z.object({ slug: z.string(), path: z.string() }),
  session: z.object({ dir: z.string(), startedAt: z.string(), commit: z.string(), operator: z.string() }),
  sessionVerdict: z.enum(SESSION_VERDICTS),
  headline: z.string(),
  nondeterministic: z.array(z.string()),
  scenarios: z.array(reportRowSchema),
  findings: z.array(findingSchema),
  releaseDisclosures: z.array(
    z.object({ scenario: z.string(), reason: z.string(), revisitWhen: z.string() }),
  ),
  confidenceDelta: z.object({ delta: z.enum(['More', 'Less', 'Unchanged']), why: z.array(z.string()) }),
});
export type ReportJson = z.infer<typeof reportJsonSchema>;

type MetricsSummary = SeedMetrics['summary'];

function readMetrics(sessionDir: string, id: string): MetricsFile | null {
  return readMetricsFile(join(sessionDir, 'metrics', `${fileId(id)}.json`));
}

export function rowOutcome(d: Decision): ReportRow['outcome'] {
  if (d.expectation) return d.expectation.met ? 'success' : stoppedShort(d) ? 'concern' : 'failure';
  if (d.verdict.startsWith('PASS-')) return 'success';
  return d.verdict === 'FAIL-reproducible' ? 'failure' : 'concern';
}

type Counts = z.infer<typeof countsSchema>;
type CountSource = Pick<ScenarioEvidence, 'oracles' | 'faults'>;

/** One run's counts: its ops and completions (from metrics), anomalies over every oracle, its faults. */
function countsOfRun(
  run: CountSource,
  scheduled: number,
  m: MetricsSummary | null,
  ops: number | null,
): Counts {
  const byType: Record<string, number | null> = {};
  for (const o of run.oracles) {
    if (!o.ran || o.anomalies === 0) continue;
    const types = o.anomalyTypes.length > 0 ? o.anomalyTypes : [o.checker];
    for (const t of types) byType[t] = types.length === 1 ? (byType[t] ?? 0) + o.anomalies : null;
  }
  return {
    ops: m?.ops ?? ops,
    ok: m?.ok ?? null,
    fail: m?.fail ?? null,
    info: m?.info ?? null,
    anomalies: { total: run.oracles.reduce((n, o) => n + (o.ran ? o.anomalies : 0), 0), byType },
    faults: {
      scheduled,
      injected: run.faults.length,
      landed: run.faults.filter((f) => f.landed).length,
      healed: run.faults.filter((f) => f.healed).length,
    },
  };
}

/** Each seed's counts (from its own measurement and metrics entry), in seed order. */
function countsPerSeed(ev: ScenarioEvidence | undefined, m: MetricsFile | null): ReportRow['countsPerSeed'] {
  if (!ev) return [];
  return ev.perSeed.map((s) => {
    const sm = m?.perSeed.find((x) => String(x.seed) === String(s.seed));
    return {
      seed: s.seed,
      ...countsOfRun(s, ev.faultsScheduled, sm?.summary ?? null, s.history?.ops ?? null),
    };
  });
}

/** The row's counts over every seed it ran (the primary run's alone for evidence without seeds). */
function countsOf(ev: ScenarioEvidence | undefined, m: MetricsFile | null): Counts {
  const seeds = countsPerSeed(ev, m);
  if (seeds.length === 0)
    return countsOfRun(
      ev ?? { oracles: [], faults: [] },
      ev?.faultsScheduled ?? 0,
      m?.summary ?? null,
      ev?.history?.ops ?? null,
    );
  const add = (f: (c: Counts) => number | null) =>
    seeds.some((c) => f(c) === null) ? null : seeds.reduce((n, c) => n + (f(c) ?? 0), 0);
  const byType: Record<string, number | null> = {};
  for (const c of seeds)
    for (const [t, n] of Object.entries(c.anomalies.byType))
      byType[t] = n === null || byType[t] === null ? null : (byType[t] ?? 0) + n;
  const faults = (k: keyof Counts['faults']) => seeds.reduce((n, c) => n + c.faults[k], 0);
  return {
    ops: add((c) => c.ops),
    ok: add((c) => c.ok),
    fail: add((c) => c.fail),
    info: add((c) => c.info),
    anomalies: { total: seeds.reduce((n, c) => n + c.anomalies.total, 0), byType },
    faults: {
      scheduled: faults('scheduled'),
      injected: faults('injected'),
      landed: faults('landed'),
      healed: faults('healed'),
    },
  };
}

export function buildReportJson(r: SessionRecord): ReportJson {
  const evs = new Map(r.evidence.map((e) => [e.scenario, e]));
  const p = r.plan;
  return reportJsonSchema.parse({
    schemaVersion: REPORT_JSON_SCHEMA_VERSION,
    plan: { slug: p.slug, path: p.source.path },
    session: { dir: r.sessionDir, startedAt: r.startedAt, commit: r.commit, operator: r.operator },
    sessionVerdict: r.verdicts.session.verdict,
    headline: r.verdicts.session.headline,
    nondeterministic: r.verdicts.session.nondeterministic,
    scenarios: r.verdicts.rows.map((d) => {
      const sc = p.resolved.find((s) => s.id === d.scenario)!;
      const ev = evs.get(d.scenario);
      const m = readMetrics(r.sessionDir, d.scenario);
      const finding = r.findings.find((f) => f.scenario === d.scenario);
      return {
        id: d.scenario,
        parent: sc.parentId,
        name: sc.name,
        verdict: d.verdict,
        expected: d.expectation?.expected ?? null,
        expectationMet: d.expectation?.met ?? null,
        outcome: rowOutcome(d),
        stoppedEarly: d.stoppedEarly ?? null,
        tierMet: d.tierMet,
        release: d.release,
        cappedBy: d.cappedBy ?? null,
        step: d.step,
        headline: d.verdict.startsWith('FAIL-')
          ? (d.reasons[0] ?? (finding ? `${finding.id}: ${finding.title}` : d.verdict))
          : `${d.verdict}: ${d.reasons[0] ?? ''}`,
        reasons: d.reasons,
        faultWindows: (ev?.faults ?? []).map((f) => ({
          id: f.id,
          kind: f.kind,
          what: f.what,
          startS: f.startS,
          endS: f.endS,
          landed: f.landed,
          substitutions: f.substitute,
        })),
        anomaly: anomalyOf(ev),
        pages: (ev?.oracles ?? []).flatMap((o) =>
          ev?.runDir
            ? o.pages.map((pg) => ({
                checker: o.checker,
                key: pg.key,
                valid: pg.valid,
                path: `${ev.runDir}/${pg.path}`,
              }))
            : [],
        ),
        oracle: sc.oracle,
        oracleEvidence: oracleEvidence(ev),
        landingEvidence: landingEvidence(ev, d),
        counts: countsOf(ev, m),
        countsPerSeed: countsPerSeed(ev, m),
        dbVersion: ev?.dbVersion ?? null,
        figures: m
          ? {
              opsPerSec: m.summary.opsPerSec,
              latencyMs: m.summary.latencyMs,
              healthy: m.summary.healthy,
              faulted: m.summary.faulted,
            }
          : null,
        artifacts: artifactsOf(r.sessionDir, d.scenario, ev),
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

function anomalyOf(ev: Parameters<typeof anomalyLinks>[0]): ReportRow['anomaly'] {
  const a = anomalyLinks(ev);
  return a ? { op: a.op, key: a.key, page: a.path || null, timeline: a.timeline } : null;
}

/** The row's own files, relative to the session directory, that exist. */
function artifactsOf(
  sessionDir: string,
  id: string,
  ev: ScenarioEvidence | undefined,
): { label: string; path: string }[] {
  const f = fileId(id);
  const own = [
    { label: 'finding', path: `findings/${f}.md` },
    { label: 'metrics', path: `metrics/${f}.json` },
    { label: 'node logs', path: `logs/${f}` },
  ].filter((a) => existsSync(join(sessionDir, a.path)));
  return [
    ...own,
    ...(ev?.artifacts ?? []).filter((a) => !a.path.startsWith('/') && !a.path.startsWith('..')),
  ];
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
