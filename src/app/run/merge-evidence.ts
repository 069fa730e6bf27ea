import type { ScenarioEvidence } from '../verdict/evidence.ts';

/**
 * One row's evidence from the shards that ran its seeds, as an unsharded run over the same seeds would
 * have recorded it. An unsharded run runs a row's seeds in order and stops at the first FAIL (re-run,
 * then reduced): seeds after it are dropped here (named in the notes), whichever shard ran them. The
 * primary run (what the report shows and links) is the failing seed's, else the lowest seed's; the
 * top-level fields come from the shard that ran it. Pure: paths must already be relative to the merged
 * session.
 */
export interface ShardPart {
  /** 1-based shard index. */
  shard: number;
  ev: ScenarioEvidence;
}

export interface MergedRow {
  evidence: ScenarioEvidence;
  /** The shard whose run is the primary (its reduction and metrics go with it); null when none ran. */
  primaryShard: number | null;
  /** Seeds left out because an earlier seed FAILed: `7 (shard 2)`. */
  dropped: string[];
}

const seedNum = (s: number | string) => (typeof s === 'number' ? s : Number(s));

export function mergeRowEvidence(parts: readonly ShardPart[]): MergedRow {
  if (parts.length === 0) throw new Error('mergeRowEvidence: no shard evidence');
  const seeds = parts
    .flatMap((p) => p.ev.seeds.map((s) => ({ shard: p.shard, s })))
    .sort((a, b) => seedNum(a.s.seed) - seedNum(b.s.seed));
  const firstFail = seeds.findIndex((x) => x.s.outcome === 'fail');
  const kept = firstFail < 0 ? seeds : seeds.slice(0, firstFail + 1);
  const dropped = firstFail < 0 ? [] : seeds.slice(firstFail + 1);
  const keptSeeds = new Set(kept.map((x) => String(x.s.seed)));
  const withRun = parts.filter((p) => p.ev.runDir !== null);
  const primary =
    firstFail >= 0
      ? parts.find((p) => p.shard === seeds[firstFail]!.shard)!
      : (withRun
          .map((p) => ({ p, low: Math.min(...p.ev.perSeed.map((s) => seedNum(s.seed))) }))
          .sort((a, b) => a.low - b.low)[0]?.p ??
        parts.find((p) => p.ev.attempted) ??
        parts[0]!);
  const perSeed = parts
    .flatMap((p) => p.ev.perSeed)
    .filter((s) => keptSeeds.has(String(s.seed)))
    .sort((a, b) => seedNum(a.seed) - seedNum(b.seed));
  const times = (f: (e: ScenarioEvidence) => string | null) =>
    parts
      .map((p) => f(p.ev))
      .filter((t): t is string => t !== null)
      .sort();
  const unique = <T>(xs: T[], key: (x: T) => string) => [...new Map(xs.map((x) => [key(x), x])).values()];
  const landed = perSeed.flatMap((s) =>
    s.faults.filter((f) => f.landed && f.topology).map((f) => f.topology!),
  );
  const ev = primary.ev;
  const others = parts.filter((p) => p !== primary);
  const evidence: ScenarioEvidence = {
    ...ev,
    attempted: parts.some((p) => p.ev.attempted),
    notRunReason: parts.some((p) => p.ev.attempted) ? null : ev.notRunReason,
    stoppedEarly: parts.map((p) => p.ev.stoppedEarly).find((x) => x !== null) ?? null,
    capabilitiesMissing: unique(
      parts.flatMap((p) => p.ev.capabilitiesMissing),
      (c) => c.name,
    ),
    substitutions: [...new Set(parts.flatMap((p) => p.ev.substitutions))],
    ran: {
      ...ev.ran,
      topologies: [...new Set([...ev.ran.topologies, ...landed])],
      clusterSizes: [...new Set(parts.flatMap((p) => p.ev.ran.clusterSizes))],
    },
    seeds: kept.map((x) => x.s),
    perSeed,
    startedAt: times((e) => e.startedAt)[0] ?? null,
    endedAt: times((e) => e.endedAt).at(-1) ?? null,
    notes: [
      ...ev.notes,
      ...others.flatMap((p) => p.ev.notes.map((n) => `shard ${p.shard}: ${n}`)),
      ...(dropped.length > 0
        ? [
            `seed(s) ${dropped.map((d) => `${d.s.seed} (shard ${d.shard})`).join(', ')} not judged: an unsharded run stops at the first FAIL (seed ${seeds[firstFail]!.s.seed})`,
          ]
        : []),
    ],
  };
  return {
    evidence,
    primaryShard: ev.runDir !== null || ev.attempted ? primary.shard : null,
    dropped: dropped.map((d) => `${d.s.seed} (shard ${d.shard})`),
  };
}

/**
 * A shard's evidence with its paths moved into the merged session: relative paths get the shard's
 * prefix (`shards/2/`), absolute paths into the shard's directory point at its copy.
 */
export function relocateEvidence(
  ev: ScenarioEvidence,
  prefix: string,
  from: { abs: string; to: string },
): ScenarioEvidence {
  const moved = JSON.parse(
    JSON.stringify(ev)
      .split(JSON.stringify(from.abs).slice(1, -1))
      .join(JSON.stringify(from.to).slice(1, -1)),
  ) as ScenarioEvidence;
  const rel = (p: string) => (p.startsWith('/') || p.startsWith('..') ? p : `${prefix}/${p}`);
  return {
    ...moved,
    runDir: moved.runDir === null ? null : rel(moved.runDir),
    artifacts: moved.artifacts.map((a) => ({ ...a, path: rel(a.path) })),
    perSeed: moved.perSeed.map((s) => ({ ...s, runDir: s.runDir === null ? null : rel(s.runDir) })),
    baseline:
      moved.baseline?.source && !moved.baseline.earlier
        ? { ...moved.baseline, source: rel(moved.baseline.source) }
        : moved.baseline,
  };
}
