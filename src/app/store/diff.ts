import type { RowSummary, SessionSummary } from './store.ts';

/**
 * Comparing two sessions of one plan (or test): rows that newly fail, rows that were fixed, rows whose
 * verdict flips back and forth over the recent history, and figures (throughput, p99 latency) that moved
 * more than a threshold. A row counts as failing when its outcome is `failure` (an unmet expectation or
 * an unexpected reproducible FAIL), so a negative control that keeps failing as planned is no news.
 * A row whose verdict is new (the row is new, or its verdict changed) and is not a PASS nor a met
 * expectation is news too: `sessions diff` exits 1 on it (a scenario added to the plan that FAILs on its
 * first night, a PASS that turned INCONCLUSIVE).
 */

export interface FigureChange {
  row: string;
  figure: 'ops/s' | 'p99 ms';
  before: number;
  after: number;
  /** Relative change, e.g. -0.35 for a 35 % drop. */
  change: number;
}

export interface SessionDiff {
  a: { name: string; id: string; verdict: string };
  b: { name: string; id: string; verdict: string };
  newFailures: { row: string; before: string; after: string }[];
  /** Rows whose verdict is new and neither a PASS nor a met expectation (new failures excluded). */
  newNotPass: { row: string; before: string; after: string }[];
  fixed: { row: string; before: string; after: string }[];
  changed: { row: string; before: string; after: string }[];
  added: string[];
  removed: string[];
  /** Rows whose verdict changed more than once over `history` (oldest first, ending with B). */
  flapping: { row: string; verdicts: string[] }[];
  /** How many sessions the flapping check looked at. */
  flapWindow: number;
  figures: FigureChange[];
  threshold: number;
}

const failing = (r: RowSummary | undefined) =>
  r !== undefined && (r.outcome === 'failure' || (r.outcome === null && /^FAIL/.test(r.verdict)));

/** A PASS, or any verdict that meets the row's expectation. */
const succeeds = (r: RowSummary) =>
  r.outcome === 'success' || (r.outcome === null && /^PASS/.test(r.verdict));

/** Whether the newer session brings news a nightly job must go red on (`sessions diff` exits 1). */
export function diffIsRed(d: SessionDiff): boolean {
  return d.newFailures.length > 0 || d.newNotPass.length > 0;
}

export function diffSessions(
  a: SessionSummary,
  b: SessionSummary,
  history: readonly SessionSummary[],
  threshold = 0.2,
): SessionDiff {
  const before = new Map(a.rows.map((r) => [r.id, r]));
  const after = new Map(b.rows.map((r) => [r.id, r]));
  const out: SessionDiff = {
    a: { name: a.name, id: a.id, verdict: a.verdict },
    b: { name: b.name, id: b.id, verdict: b.verdict },
    newFailures: [],
    newNotPass: [],
    fixed: [],
    changed: [],
    added: [...after.keys()].filter((k) => !before.has(k)),
    removed: [...before.keys()].filter((k) => !after.has(k)),
    flapping: flappingRows(history),
    flapWindow: history.length,
    figures: [],
    threshold,
  };
  for (const [id, rb] of after) {
    const ra = before.get(id);
    if (!ra) {
      const pair = { row: id, before: '(new row)', after: rb.verdict };
      if (failing(rb)) out.newFailures.push(pair);
      else if (!succeeds(rb)) out.newNotPass.push(pair);
      continue;
    }
    // The same verdict on both sides can still flip the outcome (an expectation declared or met since):
    // name the outcomes then, or the line would read `FAIL-reproducible → FAIL-reproducible`.
    const same = ra.verdict === rb.verdict;
    const outcome = (r: typeof ra) => r.outcome ?? (failing(r) ? 'failure' : 'not judged');
    const word = (r: typeof ra) => (same ? `${r.verdict} (${outcome(r)})` : r.verdict);
    const pair = { row: id, before: word(ra), after: word(rb) };
    if (failing(rb) && !failing(ra)) out.newFailures.push(pair);
    else if (failing(ra) && !failing(rb)) out.fixed.push(pair);
    else if (ra.verdict !== rb.verdict) {
      if (succeeds(rb)) out.changed.push(pair);
      else out.newNotPass.push(pair);
    }
    const moved = (figure: FigureChange['figure'], x: number | null, y: number | null) => {
      if (x === null || y === null || x <= 0) return;
      const change = (y - x) / x;
      if (Math.abs(change) > threshold) out.figures.push({ row: id, figure, before: x, after: y, change });
    };
    moved('ops/s', ra.opsPerSec, rb.opsPerSec);
    moved('p99 ms', ra.p99Ms, rb.p99Ms);
  }
  return out;
}

/** A row whose verdict changed more than once across the sessions given (oldest first). */
export function flappingRows(sessions: readonly SessionSummary[]): { row: string; verdicts: string[] }[] {
  const ids = [...new Set(sessions.flatMap((s) => s.rows.map((r) => r.id)))];
  const out: { row: string; verdicts: string[] }[] = [];
  for (const id of ids) {
    const verdicts = sessions.map((s) => s.rows.find((r) => r.id === id)?.verdict ?? '—');
    let flips = 0;
    for (let i = 1; i < verdicts.length; i++) if (verdicts[i] !== verdicts[i - 1]) flips++;
    if (flips > 1) out.push({ row: id, verdicts });
  }
  return out;
}

const pct = (x: number) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;
const num = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

export function renderDiff(d: SessionDiff): string {
  const lines = [
    `${d.a.name}: ${d.a.id} (${d.a.verdict}) → ${d.b.id} (${d.b.verdict})`,
    '',
    section(
      'new failures',
      d.newFailures.map((x) => `${x.row}: ${x.before} → ${x.after}`),
    ),
    section(
      'new verdicts that are not PASS',
      d.newNotPass.map((x) => `${x.row}: ${x.before} → ${x.after}`),
    ),
    section(
      'fixed',
      d.fixed.map((x) => `${x.row}: ${x.before} → ${x.after}`),
    ),
    section(
      'other verdict changes',
      d.changed.map((x) => `${x.row}: ${x.before} → ${x.after}`),
    ),
    section(
      `flapping (verdict changed more than once over the last ${d.flapWindow} sessions)`,
      d.flapping.map((x) => `${x.row}: ${x.verdicts.join(' → ')}`),
    ),
    section(
      `figures moved more than ${(d.threshold * 100).toFixed(0)}%`,
      d.figures.map((f) => `${f.row} ${f.figure}: ${num(f.before)} → ${num(f.after)} (${pct(f.change)})`),
    ),
  ];
  if (d.added.length) lines.push(section('rows only in the newer session', d.added));
  if (d.removed.length) lines.push(section('rows only in the older session', d.removed));
  return `${lines.join('\n')}\n`;
}

function section(title: string, items: string[]): string {
  return `${title}: ${items.length === 0 ? 'none' : `\n${items.map((i) => `  - ${i}`).join('\n')}`}`;
}

/** Markdown for a job summary or a page: the same facts. */
export function diffMarkdown(d: SessionDiff): string {
  const list = (items: string[]) => (items.length ? `\n\n${items.map((i) => `- ${i}`).join('\n')}` : 'none');
  return [
    `**${d.a.name}**: \`${d.a.id}\` (${d.a.verdict}) → \`${d.b.id}\` (${d.b.verdict})`,
    '',
    `**New failures:** ${list(d.newFailures.map((x) => `${x.row}: ${x.before} → ${x.after}`))}`,
    '',
    `**New verdicts that are not PASS:** ${list(d.newNotPass.map((x) => `${x.row}: ${x.before} → ${x.after}`))}`,
    '',
    `**Fixed:** ${list(d.fixed.map((x) => `${x.row}: ${x.before} → ${x.after}`))}`,
    '',
    `**Flapping:** ${list(d.flapping.map((x) => `${x.row}: ${x.verdicts.join(' → ')}`))}`,
    '',
    `**Figures beyond ${(d.threshold * 100).toFixed(0)}%:** ${list(d.figures.map((f) => `${f.row} ${f.figure}: ${num(f.before)} → ${num(f.after)} (${pct(f.change)})`))}`,
    '',
  ].join('\n');
}
