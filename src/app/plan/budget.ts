import { durationUnitMs } from '../../core/util/duration.ts';
import type { Tier } from './binding.ts';

/**
 * Budget strings as plans write them ("3 nodes × 60s × 1 fault × 1 seed", "8 tenants × 30min × 5 nemesis
 * windows × 3 seeds") parsed into the numbers a tier is compared with. Dimensions are recognised by
 * their unit, in any order; anything unrecognised is kept as a note (e.g. "bootstrap CI on p99").
 */

export interface ParsedBudget {
  nodes?: number;
  tenants?: number;
  durationS?: number;
  faultWindows?: number;
  seeds?: number;
  /** Parts that carry no tier dimension ("bootstrap CI on p99", "5 nemesis variants"). */
  notes: string[];
}

export type BudgetDimension = 'size' | 'durationS' | 'faultWindows' | 'seeds';
export const BUDGET_DIMENSIONS: readonly BudgetDimension[] = ['size', 'durationS', 'faultWindows', 'seeds'];

const NUMBER = String.raw`(\d+(?:[.,]\d+)?)`;

/** Split on ×, x or * between parts, and on commas that separate a trailing note. */
function parts(text: string): string[] {
  return text
    .split(/\s*(?:×|\s[xX]\s|\*)\s*|,\s+/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

function num(s: string): number {
  return Number(s.replace(',', '.'));
}

/** Each matcher claims a part by its unit and records the number it carries. */
const MATCHERS: { re: RegExp; apply: (out: ParsedBudget, m: RegExpMatchArray) => boolean }[] = [
  { re: new RegExp(`^${NUMBER}\\s*(nodes?|replicas?|members?)\\b`), apply: (o, m) => set(o, 'nodes', m) },
  { re: new RegExp(`^${NUMBER}\\s*tenants?\\b`), apply: (o, m) => set(o, 'tenants', m) },
  { re: new RegExp(`^${NUMBER}\\s*seeds?\\b`), apply: (o, m) => set(o, 'seeds', m) },
  {
    re: /^(no|zero) (faults?|nemesis|nemeses)\b/,
    apply: (o) => {
      o.faultWindows = 0;
      return true;
    },
  },
  {
    re: new RegExp(`^${NUMBER}\\s*(?:faults?|(?:nemesis|fault) windows?|nemeses|windows?)\\b`),
    apply: (o, m) => set(o, 'faultWindows', m),
  },
  {
    re: new RegExp(`^${NUMBER}\\s*([a-z]+)\\b`),
    apply: (o, m) => {
      const unitMs = durationUnitMs(m[2]!);
      if (unitMs === undefined) return false;
      o.durationS = (num(m[1]!) * unitMs) / 1000;
      return true;
    },
  },
];

function set(
  o: ParsedBudget,
  key: 'nodes' | 'tenants' | 'seeds' | 'faultWindows',
  m: RegExpMatchArray,
): boolean {
  o[key] = num(m[1]!);
  return true;
}

export function parseBudget(text: string): ParsedBudget {
  const out: ParsedBudget = { notes: [] };
  for (const part of parts(text)) {
    const lower = part.toLowerCase();
    let claimed = false;
    for (const { re, apply } of MATCHERS) {
      const m = lower.match(re);
      if (m && apply(out, m)) {
        claimed = true;
        const rest = lower.slice(m[0].length).trim();
        if (rest) out.notes.push(rest);
        break;
      }
    }
    if (!claimed) out.notes.push(part);
  }
  return out;
}

/** Which tier dimensions a parsed budget lacks. */
export function missingDimensions(b: ParsedBudget): BudgetDimension[] {
  const missing: BudgetDimension[] = [];
  if (b.nodes === undefined && b.tenants === undefined) missing.push('size');
  if (b.durationS === undefined) missing.push('durationS');
  if (b.faultWindows === undefined) missing.push('faultWindows');
  if (b.seeds === undefined) missing.push('seeds');
  return missing;
}

export function toTier(b: ParsedBudget): Tier | null {
  if (missingDimensions(b).length > 0) return null;
  const tier: Tier = { durationS: b.durationS!, faultWindows: b.faultWindows!, seeds: b.seeds! };
  if (b.nodes !== undefined) tier.nodes = b.nodes;
  else tier.tenants = b.tenants;
  return tier;
}

/**
 * Why a tier sized in tenants can never be met: runs are sized in nodes, and nothing counts tenants (no
 * tenant audit is defined), so what ran has 0 tenants.
 */
export const TENANTS_UNMEASURED =
  'faultline counts no tenants (no tenant audit is defined), so a tier sized in tenants cannot be met';

export function tierSize(t: Pick<Tier, 'nodes' | 'tenants'>): number {
  return t.nodes ?? t.tenants ?? 0;
}

export function dimensionValue(t: Tier, d: BudgetDimension): number {
  return d === 'size' ? tierSize(t) : t[d];
}

/**
 * Dimensions on which `stronger` is not strictly greater than `weaker`, among the dimensions the
 * scenario has: a fault-free scenario (both tiers at 0 fault windows) has no fault dimension to grow.
 */
export function notStrongerOn(weaker: Tier, stronger: Tier): BudgetDimension[] {
  const faultFree = weaker.faultWindows === 0 && stronger.faultWindows === 0;
  return BUDGET_DIMENSIONS.filter(
    (d) => !(faultFree && d === 'faultWindows') && !(dimensionValue(stronger, d) > dimensionValue(weaker, d)),
  );
}

/** Dimensions on which what ran falls short of what the tier requires. */
export function shortfall(required: Tier, ran: Tier): BudgetDimension[] {
  return BUDGET_DIMENSIONS.filter((d) => dimensionValue(ran, d) < dimensionValue(required, d));
}

export function formatTier(t: Tier): string {
  const size = t.nodes !== undefined ? `${t.nodes} nodes` : `${t.tenants} tenants`;
  return `${size} × ${formatDuration(t.durationS)} × ${t.faultWindows} fault${t.faultWindows === 1 ? '' : 's'} × ${t.seeds} seed${t.seeds === 1 ? '' : 's'}`;
}

export function formatDuration(s: number): string {
  if (s >= 3600 && s % 3600 === 0) return `${s / 3600}h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60}min`;
  return `${s}s`;
}

/** Forbidden budget values: empty, TBD, or a bare pointer to §6b. */
export function forbiddenBudgetReason(raw: string | null | undefined): string | null {
  const v = (raw ?? '').trim();
  if (v === '' || v === '-' || v === '—') return 'empty budget';
  if (/^(tbd|tba|todo|\?+)\.?$/i.test(v)) return '"TBD" is not a budget';
  if (/^\(?see\s+§?\s*6b\)?\.?$/i.test(v)) return 'a bare "see §6b" is not a budget';
  return null;
}

/** `not provided — <reason>. Revisit when: <condition>.` */
export interface ReleaseDisclosure {
  reason: string;
  revisitWhen: string;
}

export function parseReleaseDisclosure(raw: string): ReleaseDisclosure | 'malformed' | null {
  const v = raw.trim();
  if (!/^not provided\b/i.test(v)) return null;
  const m = v.match(/^not provided\s*[—–]\s*(.+?)\.\s*Revisit when:\s*(.+?)\.?\s*$/is);
  if (!m) return 'malformed';
  return { reason: m[1]!.trim(), revisitWhen: m[2]!.trim() };
}
