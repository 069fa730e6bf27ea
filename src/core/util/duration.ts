import { UserError } from './errors.ts';

/**
 * The one duration parser: every flag (`--time-limit 30s`, `check --timeout 250ms`, `--deadline 1h`) and
 * every plan or description field that takes a duration goes through `parseDuration`. A number always
 * carries its unit: `30` alone is refused, because flags used to disagree on what it meant (milliseconds
 * for one, seconds for another).
 */

/** Milliseconds per unit, short and long spellings (budget strings say "30min", "2 hours"). */
export const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i;

/**
 * "30s", "250ms", "5m", "1h", "1.5s" → milliseconds (rounded). `where` names the flag or field for the
 * one-line error: `--timeout: "30" has no unit; write 30s, 30ms or 30m`.
 */
export function parseDuration(text: string | number, where: string): number {
  const s = String(text);
  const m = DURATION.exec(s);
  if (!m) throw new UserError(`${where}: "${s}" is not a duration (e.g. 30s, 250ms, 5m, 1h)`);
  const n = Number(m[1]);
  if (m[2] === undefined) throw new UserError(`${where}: "${s}" has no unit; write ${n}s, ${n}ms or ${n}m`);
  const unit = DURATION_UNITS_MS[m[2].toLowerCase()];
  if (unit === undefined) throw new UserError(`${where}: "${s}": unknown unit "${m[2]}" (ms, s, m, h, d)`);
  return Math.round(n * unit);
}

/** The unit's size in ms, or undefined when `unit` is not a duration unit. */
export function durationUnitMs(unit: string): number | undefined {
  return DURATION_UNITS_MS[unit.toLowerCase()];
}

/** 90000 → "90s", 120000 → "2m", 250 → "250ms". */
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
