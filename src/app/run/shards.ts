import { createHash } from 'node:crypto';
import { UserError } from '../../core/util/errors.ts';
import type { TierName } from '../plan/binding.ts';
import type { ResolvedScenario } from '../plan/schema.ts';

/**
 * Sharding a plan over several control nodes (`faultline run PLAN --shard K/N`). The unit of work is one
 * (row, seed) pair: a scenario without arms, or one arm, at one of the tier's seeds. Every shard computes
 * the same list of units from the same plan, tier and base seed, and the same assignment, so the shards
 * need no coordination; `faultline sessions merge` checks that the shards it is given cover every unit
 * exactly once. A unit keeps the seed it has in an unsharded run (seed i of a row is base + i).
 */

export interface ShardSpec {
  /** 1-based. */
  index: number;
  count: number;
}

export interface Unit {
  /** Row id: `S1`, `S5/api`. */
  row: string;
  /** Which of the row's seeds (0-based): its seed is base + seedIndex. */
  seedIndex: number;
  seed: number;
  /** Budgeted seconds: the tier's workload duration plus the set-up every run pays. */
  costS: number;
}

/** At most this many shards: past it the store and the merge are the limit (docs/scaling.md). */
export const MAX_SHARDS = 1000;
/** Set-up, recovery and checking that every run pays on top of its workload (measured on the demo). */
const RUN_OVERHEAD_S = 30;

export function parseShard(text: string): ShardSpec {
  const m = text.trim().match(/^(\d+)\s*\/\s*(\d+)$/);
  if (!m) throw new UserError(`--shard: expected K/N, e.g. 2/3 (got ${text})`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS)
    throw new UserError(`--shard ${text}: N is between 1 and ${MAX_SHARDS}`);
  if (index < 1 || index > count) throw new UserError(`--shard ${text}: K is between 1 and ${count}`);
  return { index, count };
}

/** The plan file's SHA-256: shards of one plan must come from byte-identical plan files. */
export function planHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The base seed shards use when no `--seed` is given: derived from the plan's hash, so every shard
 * (and an unsharded `--seed` run with the printed value) agrees without being told.
 */
export function seedBaseFromHash(hash: string): number {
  return (Number.parseInt(hash.slice(0, 8), 16) % (2 ** 31 - 2)) + 1;
}

/** Every unit of the rows, in plan order and seed order. Rows without a binding count as one unit. */
export function unitsOf(rows: readonly ResolvedScenario[], tier: TierName, seedBase: number): Unit[] {
  const out: Unit[] = [];
  for (const row of rows) {
    const t = row.tiers[tier] ?? row.tiers.smoke;
    const seeds = row.binding ? Math.max(1, t?.seeds ?? 1) : 1;
    const costS = row.binding ? (t?.durationS ?? 30) + RUN_OVERHEAD_S : 0;
    for (let i = 0; i < seeds; i++) out.push({ row: row.id, seedIndex: i, seed: seedBase + i, costS });
  }
  return out;
}

/**
 * The shard (1-based) of each unit: longest budget first, each to the shard with the least budget so
 * far (ties: the lower shard, then plan order). Deterministic: the same units give the same answer on
 * every control node. Within 4/3 of the best possible longest shard (Graham's bound).
 */
export function assignShards(units: readonly Unit[], count: number): number[] {
  const order = units.map((u, i) => ({ u, i })).sort((a, b) => b.u.costS - a.u.costS || a.i - b.i);
  const load = new Array<number>(count).fill(0);
  const out = new Array<number>(units.length).fill(0);
  for (const { u, i } of order) {
    let best = 0;
    for (let k = 1; k < count; k++) if ((load[k] as number) < (load[best] as number)) best = k;
    load[best] = (load[best] as number) + u.costS;
    out[i] = best + 1;
  }
  return out;
}

/** The units of shard K of N, in plan order. */
export function shardUnits(units: readonly Unit[], shard: ShardSpec): Unit[] {
  const owner = assignShards(units, shard.count);
  return units.filter((_, i) => owner[i] === shard.index);
}

/** `S1 seed 7` — how a unit is named in errors and logs. */
export function unitName(u: { row: string; seed: number | string }): string {
  return `${u.row} seed ${u.seed}`;
}
