import { cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { UserError } from '../../core/util/errors.ts';
import { parsePlanText } from '../plan/load.ts';
import { scalePlanTime } from '../plan/time-scale.ts';
import { fileId } from '../report/cells.ts';
import type { JunitInconclusiveAs } from '../report/junit.ts';
import { metricsPath, readMetricsFile, writeMetricsFile } from '../report/metrics-file.ts';
import { createSessionDir } from '../report/session-dir.ts';
import { SessionLogWriter } from '../report/session-log.ts';
import type { SessionRecord } from '../report/types.ts';
import { writeSessionReports } from '../report/write-all.ts';
import { recordSessionIndex } from '../store/index-file.ts';
import { parseEvidence, type ScenarioEvidence } from '../verdict/evidence.ts';
import { decidePlan } from '../verdict/plan-verdicts.ts';
import { mergeRowEvidence, relocateEvidence, type ShardPart } from './merge-evidence.ts';
import { decideSession, leafRows, type Reduction, type RunPlanResult, sessionResult } from './plan-run.ts';
import { readSessionFile, SESSION_FILE_VERSION, type SessionFile, writeSessionFile } from './session-file.ts';
import { planHash, shardUnits, type Unit, unitName, unitsOf } from './shards.ts';

/**
 * `faultline sessions merge DIR… --out ROOT`: the sessions of `faultline run --shard K/N` into one
 * session, as an unsharded run over the same units would have written it. Checked first, before
 * anything is written: every shard comes from the same plan (hash), tier, base seed and selection; each
 * shard K of N is given once and none is missing; each shard ran exactly the units the assignment gives
 * it. Then each row's evidence is merged (see ./merge-evidence.ts), verdicts, audits and findings are
 * decided afresh over every seed, and the reports, session.json and the store's index line are written.
 * The shards are copied under `shards/<K>/` of the merged session (their paths are rewritten to point
 * there); the input directories are left as they were.
 */
export interface MergeOptions {
  dirs: string[];
  out: string;
  junitInconclusiveAs?: JunitInconclusiveAs;
  print: (line: string) => void;
}

interface Shard {
  dir: string;
  file: SessionFile;
}

export async function mergeSessions(o: MergeOptions): Promise<RunPlanResult> {
  if (o.dirs.length === 0) throw new UserError('sessions merge: give the shard session directories');
  const shards = o.dirs.map((d) => {
    const dir = resolve(d);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`${d}: not a directory`);
    return { dir, file: readSessionFile(dir) };
  });
  const first = shards[0]!;
  checkSameRun(shards);
  const ordered = checkShardSet(shards);
  const planText = readPlanCopy(first);
  const plan = scalePlanTime(parsePlanText(planText, first.file.plan.path), first.file.timeScale);
  const selected = plan.resolved.filter((r) => r.parentId === null && first.file.selected.includes(r.id));
  const rows = selected.flatMap((sc) => leafRows(plan, sc));
  const units = unitsOf(rows, first.file.tier, first.file.seedBase);
  checkUnits(ordered, units);

  const started = new Date();
  const sessionDir = await createSessionDir(o.out, plan.slug, started);
  o.print(`session: ${sessionDir} (merged from ${ordered.length} shard(s))`);
  for (const s of ordered)
    cpSync(s.dir, join(sessionDir, 'shards', String(s.file.shard!.index)), { recursive: true });
  cpSync(join(first.dir, first.file.plan.copy), join(sessionDir, first.file.plan.copy));

  const evidence: ScenarioEvidence[] = [];
  const reductions = new Map<string, Reduction | null>();
  for (const row of rows) {
    const parts: ShardPart[] = [];
    for (const s of ordered) {
      const k = s.file.shard!.index;
      if (!s.file.units.some((u) => u.row === row.id)) continue;
      const ev = s.file.evidence.find((e) => e.scenario === row.id);
      const prefix = `shards/${k}`;
      parts.push({
        shard: k,
        ev: ev
          ? relocateEvidence(ev, prefix, { abs: s.file.dir, to: join(sessionDir, prefix) })
          : parseEvidence({
              scenario: row.id,
              attempted: false,
              notRunReason: s.file.blocked
                ? `shard ${k}: ${s.file.blocked}`
                : `shard ${k} recorded no evidence`,
            }),
      });
    }
    const merged = mergeRowEvidence(parts);
    evidence.push(merged.evidence);
    if (merged.dropped.length > 0)
      o.print(
        `${row.id}: seed(s) ${merged.dropped.join(', ')} dropped: an unsharded run stops at the first FAIL`,
      );
    const owner = ordered.find((s) => s.file.shard!.index === merged.primaryShard);
    const red = owner?.file.reductions[row.id] ?? null;
    reductions.set(
      row.id,
      red && {
        ...red,
        path: red.path.split(owner!.file.dir).join(join(sessionDir, `shards/${merged.primaryShard}`)),
      },
    );
    writeMergedMetrics(sessionDir, row.id, ordered, merged.evidence, merged.primaryShard);
  }
  const clocks = new Set(ordered.map((s) => s.file.sharedClock));
  const env = { sharedClock: clocks.size === 1 ? first.file.sharedClock : null };
  const blocked = ordered.every((s) => s.file.blocked)
    ? ordered.map((s) => s.file.blocked).join('; ')
    : undefined;

  const record: SessionRecord = {
    plan,
    startedAt: ordered.map((s) => s.file.startedAt).sort()[0]!,
    sessionDir,
    commit: first.file.commit,
    operator: `${ordered
      .map((s) => s.file.operator)
      .filter((x, i, a) => a.indexOf(x) === i)
      .join(', ')}; merged by faultline sessions merge`,
    toolbox: first.file.toolbox,
    capabilities: ordered.flatMap((s) =>
      s.file.capabilities.map((c) => ({ ...c, source: `${c.source} (shard ${s.file.shard!.index})` })),
    ),
    preconditions: {
      clusterUp: allOf(ordered.map((s) => s.file.preconditions.clusterUp)),
      observabilityLive: null,
      baselineCaptured: null,
      faultPlaneResponsive: null,
    },
    timeline: ordered
      .flatMap((s) =>
        s.file.timeline.map((e) => ({ ...e, notes: `[shard ${s.file.shard!.index}] ${e.notes}` })),
      )
      .sort((a, b) => a.time.localeCompare(b.time)),
    evidence,
    verdicts: decidePlan(plan, []),
    findings: [],
    artifacts: [],
  };
  const log = new SessionLogWriter(record);
  await log.event(
    'session',
    'shards merged',
    ordered.map((s) => `shard ${s.file.shard!.index}/${s.file.shard!.count}: ${s.dir}`).join('; '),
  );
  await decideSession(record, selected, reductions, log, { env, blocked });
  await writeSessionReports(
    record,
    o.junitInconclusiveAs ? { junitInconclusiveAs: o.junitInconclusiveAs } : {},
  );
  writeSessionFile(sessionDir, {
    ...first.file,
    version: SESSION_FILE_VERSION,
    dir: sessionDir,
    shard: null,
    mergedFrom: ordered.map((s) => s.dir),
    units: units.map((u) => ({ row: u.row, seed: u.seed })),
    startedAt: record.startedAt,
    endedAt: ordered
      .map((s) => s.file.endedAt)
      .sort()
      .at(-1)!,
    operator: record.operator,
    capabilities: record.capabilities,
    preconditions: record.preconditions,
    timeline: record.timeline,
    sharedClock: env.sharedClock,
    blocked: blocked ?? null,
    evidence: record.evidence,
    reductions: Object.fromEntries(reductions),
    findings: record.findings,
  });
  const unindexed = recordSessionIndex(sessionDir);
  if (unindexed) o.print(unindexed);
  return sessionResult(record);
}

const allOf = (xs: (boolean | null)[]) =>
  xs.some((x) => x === false) ? false : xs.every((x) => x) ? true : null;

/** Same plan (hash), tier, base seed, selection and shard count, and every one a shard. */
function checkSameRun(shards: readonly Shard[]): void {
  const first = shards[0]!;
  for (const s of shards) {
    if (!s.file.shard)
      throw new UserError(`${s.dir}: not a shard (run with --shard K/N); only shards are merged`);
    const f = s.file;
    const same: [string, unknown, unknown][] = [
      ['plan sha256', f.plan.sha256, first.file.plan.sha256],
      ['tier', f.tier, first.file.tier],
      ['base seed', f.seedBase, first.file.seedBase],
      ['time scale', f.timeScale, first.file.timeScale],
      ['scenarios selected', f.selected.join(','), first.file.selected.join(',')],
      ['shard count', f.shard?.count, first.file.shard?.count],
    ];
    for (const [what, mine, theirs] of same)
      if (mine !== theirs)
        throw new UserError(
          `${s.dir}: ${what} ${String(mine)} differs from ${first.dir}'s (${String(theirs)})`,
        );
  }
}

/** Each shard K of N exactly once: a duplicate or a missing shard is named. Returns them in shard order. */
function checkShardSet(shards: readonly Shard[]): Shard[] {
  const count = shards[0]!.file.shard!.count;
  const byIndex = new Map<number, Shard>();
  for (const s of shards) {
    const k = s.file.shard!.index;
    const seen = byIndex.get(k);
    if (seen) throw new UserError(`shard ${k}/${count} given twice: ${seen.dir} and ${s.dir}`);
    byIndex.set(k, s);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((k) => !byIndex.has(k));
  if (missing.length > 0)
    throw new UserError(
      `shard(s) ${missing.map((k) => `${k}/${count}`).join(', ')} missing: given ${[...byIndex.keys()]
        .sort((a, b) => a - b)
        .map((k) => `${k}/${count}`)
        .join(', ')}`,
    );
  return [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, s]) => s);
}

/** The plan copy the first shard kept, checked against the hash every shard recorded. */
function readPlanCopy(s: Shard): string {
  const path = join(s.dir, basename(s.file.plan.copy));
  if (!existsSync(path)) throw new UserError(`${s.dir}: the plan copy ${s.file.plan.copy} is missing`);
  const bytes = readFileSync(path);
  if (planHash(bytes) !== s.file.plan.sha256)
    throw new UserError(`${path}: does not match the plan hash the shard recorded (edited after the run?)`);
  return bytes.toString('utf8');
}

/** Each shard ran exactly its assigned units; together they cover every unit once. */
function checkUnits(shards: readonly Shard[], units: readonly Unit[]): void {
  const key = (u: { row: string; seed: number }) => `${u.row}#${u.seed}`;
  const where = new Map<string, number[]>();
  for (const s of shards)
    for (const u of s.file.units) where.set(key(u), [...(where.get(key(u)) ?? []), s.file.shard!.index]);
  for (const u of units) {
    const ks = where.get(key(u)) ?? [];
    if (ks.length === 0) throw new UserError(`unit ${unitName(u)} is in no shard given`);
    if (ks.length > 1) throw new UserError(`unit ${unitName(u)} is in shards ${ks.join(' and ')}`);
  }
  const all = new Set(units.map(key));
  for (const s of shards) {
    const extra = s.file.units.find((u) => !all.has(key(u)));
    if (extra) throw new UserError(`${s.dir}: unit ${unitName(extra)} is not a unit of this plan and tier`);
    const expected = shardUnits(units, s.file.shard!).map(key).join(',');
    if (s.file.units.map(key).join(',') !== expected)
      throw new UserError(
        `${s.dir}: its units are not shard ${s.file.shard!.index}/${s.file.shard!.count}'s (a different faultline version?)`,
      );
  }
}

/** metrics/<S>.json of the merged row: the primary seed's figures, every kept seed's entry. */
function writeMergedMetrics(
  sessionDir: string,
  row: string,
  shards: readonly Shard[],
  ev: ScenarioEvidence,
  primaryShard: number | null,
): void {
  const kept = new Set(ev.seeds.map((s) => String(s.seed)));
  const entries = shards.flatMap((s) => {
    const k = s.file.shard!.index;
    const m = readMetricsFile(metricsPath(join(sessionDir, 'shards', String(k)), fileId(row)));
    return (m?.perSeed ?? [])
      .filter((e) => kept.has(String(e.seed)))
      .map((e) => ({ k, m: m!, e: { ...e, runDir: e.runDir && `shards/${k}/${e.runDir}` } }));
  });
  if (entries.length === 0) return;
  entries.sort((a, b) => Number(a.e.seed) - Number(b.e.seed));
  const failSeed = ev.seeds.find((s) => s.outcome === 'fail')?.seed;
  const primary =
    entries.find((x) => failSeed !== undefined && String(x.e.seed) === String(failSeed)) ??
    entries.find((x) => x.k === primaryShard) ??
    entries[0]!;
  writeMetricsFile(
    metricsPath(sessionDir, fileId(row)),
    {
      scenario: row,
      baselineHarness: primary.m.baselineHarness ?? 'unknown',
      baselineCapturedAt: primary.m.baselineCapturedAt ?? '',
    },
    primary.e,
    entries.map((x) => x.e),
  );
  const logs = join(sessionDir, 'shards', String(primary.k), 'logs', fileId(row));
  if (existsSync(logs)) cpSync(logs, join(sessionDir, 'logs', fileId(row)), { recursive: true });
}
