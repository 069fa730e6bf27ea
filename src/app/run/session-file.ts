import { existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { UserError } from '../../core/util/errors.ts';
import { TIER_NAMES } from '../plan/binding.ts';
import { MAX_TIME_SCALE, MIN_TIME_SCALE } from '../plan/time-scale.ts';
import { findingSchema } from '../report/types.ts';
import { scenarioEvidenceSchema } from '../verdict/evidence.ts';

/**
 * `session.json`: what `faultline run` decided its verdicts from, kept so the session can be judged
 * again: the plan's hash and tier, the base seed, the shard it is (`--shard K/N`) and the (row, seed)
 * units it ran, the session facts (capabilities, preconditions, timeline) and every row's evidence with
 * its reduction. `faultline sessions merge` reads the shards' files (data from other machines: validated
 * here, paths inside stay relative to the session) and writes one for the merged session. The plan
 * itself is kept next to it as `plan<ext>`.
 */
export const SESSION_FILE = 'session.json';
export const SESSION_FILE_VERSION = 1;

const reductionSchema = z.object({ line: z.string(), path: z.string(), events: z.array(z.string()) });

export const sessionFileSchema = z.object({
  version: z.literal(SESSION_FILE_VERSION),
  plan: z.object({
    /** As given to `faultline run`. */
    path: z.string(),
    /** The kept copy, relative to the session directory. */
    copy: z.string(),
    slug: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  /** Where the session was written (absolute, on the machine that ran it): paths in the evidence start with it. */
  dir: z.string(),
  tier: z.enum(TIER_NAMES),
  seedBase: z.number().int(),
  /** `--time-scale`: the plan's durations were stretched by it and its rate divided by it (1: as planned). */
  timeScale: z.number().min(MIN_TIME_SCALE).max(MAX_TIME_SCALE).default(1),
  /** Null for an unsharded run. */
  shard: z.object({ index: z.number().int().min(1), count: z.number().int().min(1) }).nullable(),
  /** Merged sessions: which shard directories they were made from, in shard order. */
  mergedFrom: z.array(z.string()).default([]),
  /** The (row, seed) units this session ran (a shard's share; every unit for an unsharded run). */
  units: z.array(z.object({ row: z.string(), seed: z.number().int() })),
  /** Rows selected with `--scenario` (every top-level scenario when none was given). */
  selected: z.array(z.string()),
  startedAt: z.string(),
  endedAt: z.string(),
  commit: z.string(),
  operator: z.string(),
  toolbox: z.array(z.object({ path: z.string(), role: z.string() })),
  capabilities: z.array(
    z.object({ requirement: z.string(), present: z.boolean(), version: z.string(), source: z.string() }),
  ),
  preconditions: z.object({
    clusterUp: z.boolean().nullable(),
    observabilityLive: z.boolean().nullable(),
    baselineCaptured: z.boolean().nullable(),
    faultPlaneResponsive: z.boolean().nullable(),
  }),
  timeline: z.array(
    z.object({ time: z.string(), scenario: z.string(), event: z.string(), notes: z.string() }),
  ),
  /** What conditional expected verdicts could name about the cluster. */
  sharedClock: z.boolean().nullable(),
  blocked: z.string().nullable(),
  evidence: z.array(scenarioEvidenceSchema),
  reductions: z.record(z.string(), reductionSchema.nullable()),
  findings: z.array(findingSchema),
});
export type SessionFile = z.infer<typeof sessionFileSchema>;

/** The name the plan's copy has in the session: `plan.md`, `plan.yaml`, `plan.json`. */
export function planCopyName(planPath: string): string {
  const ext = extname(planPath).toLowerCase();
  return `plan${['.md', '.markdown', '.yaml', '.yml', '.json'].includes(ext) ? ext : '.md'}`;
}

export function writeSessionFile(sessionDir: string, file: SessionFile): void {
  writeFileAtomicSync(join(sessionDir, SESSION_FILE), `${JSON.stringify(file, null, 2)}\n`);
}

/** A session's file, validated; a missing or malformed one is bad input naming the directory. */
export function readSessionFile(sessionDir: string): SessionFile {
  const path = join(sessionDir, SESSION_FILE);
  if (!existsSync(path))
    throw new UserError(
      `${sessionDir}: no ${SESSION_FILE} (not a session of faultline run, or one from before sessions kept it)`,
    );
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UserError(`${path}: not JSON (${(err as Error).message})`);
  }
  const r = sessionFileSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new UserError(`${path}: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return r.data;
}
