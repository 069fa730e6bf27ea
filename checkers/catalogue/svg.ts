/**
 * A dependency-free SVG line/dot chart: enough for perf's latency and rate plots with shaded fault
 * windows (Jepsen needs gnuplot for this; faultline writes the SVG text itself). Each fault window is
 * one band with its label; a log axis gets ticks at 1-2-5 (or every decade) so it always has several.
 */
import { escapeHtml } from '../../src/core/util/html.ts';

export interface Series {
  name: string;
  color: string;
  /** [x, y] points; x in seconds, y in the chart's unit; y null breaks a line (an empty bucket). */
  points: [number, number | null][];
  kind: 'line' | 'dots';
  /** Dashed line (e.g. p99 beside a solid p50 of the same colour). */
  dashed?: boolean;
}

export interface Band {
  label: string;
  start: number;
  end: number;
  /** False draws the band grey: the fault did not land. */
  landed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  bands: Band[];
  logY?: boolean;
  width?: number;
  height?: number;
  /** One line under the title (what the points are). */
  subtitle?: string;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

export function color(i: number): string {
  return PALETTE[i % PALETTE.length] as string;
}

/** Linear ticks at 1-2-5 steps, about `n` of them. */
export function niceTicks(min: number, max: number, n = 6): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * Log ticks within [min, max]: the densest of 1-2-…-9, 1-2-5, 1-3 or 1 per decade that gives at most 10
 * ticks; for a range narrower than that gives four ticks, linear ticks inside it.
 */
export function logTicks(min: number, max: number): number[] {
  if (!(max > min) || min <= 0) return [min];
  const lo = Math.floor(Math.log10(min));
  const hi = Math.ceil(Math.log10(max));
  const sets = [[1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 5], [1, 3], [1]];
  let best: number[] = [];
  for (const set of sets) {
    const ticks: number[] = [];
    for (let e = lo; e <= hi; e++)
      for (const m of set) {
        const v = Number((m * 10 ** e).toPrecision(12));
        if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) ticks.push(v);
      }
    if (ticks.length <= 10) {
      best = ticks;
      break;
    }
    best = ticks;
  }
  return best.length >= 4 ? best : niceTicks(min, max, 5).filter((v) => v > 0);
}

function label(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(0);
  return Number(v.toPrecision(4)).toString();
}

/** Rows for band labels so that no two overlap (labels are placed at their band's start). */
function labelRows(bands: readonly { x: number; w: number }[]): number[] {
  const rowEnds: number[] = [];
  return bands.map((b) => {
    let row = rowEnds.findIndex((end) => end < b.x);
    if (row < 0) {
      row = rowEnds.length;
      rowEnds.push(0);
    }
    rowEnds[row] = b.x + b.w + 8;
    return row;
  });
}

export function renderChart(spec: ChartSpec): string {
  const W = spec.width ?? 1000;
  const H = spec.height ?? 440;
  const bandLabels = spec.bands.map((b) => ({ x: 0, w: b.label.length * 6.1 }));
  const m = { l: 70, r: 190, t: 44, b: 48 };
  const pw = W - m.l - m.r;
  let xmin = Number.POSITIVE_INFINITY;
  let xmax = Number.NEGATIVE_INFINITY;
  let ymin = Number.POSITIVE_INFINITY;
  let ymax = Number.NEGATIVE_INFINITY;
  for (const s of spec.series) {
    for (const [x, y] of s.points) {
      if (y === null || !Number.isFinite(x) || !Number.isFinite(y) || (spec.logY && y <= 0)) continue;
      if (x < xmin) xmin = x;
      if (x > xmax) xmax = x;
      if (y < ymin) ymin = y;
      if (y > ymax) ymax = y;
    }
  }
  for (const b of spec.bands) {
    if (b.start < xmin) xmin = b.start;
    if (b.end > xmax) xmax = b.end;
  }
  if (!Number.isFinite(xmin)) {
    xmin = 0;
    xmax = 1;
  }
  if (xmin > 0 && xmin < (xmax - xmin) * 0.2) xmin = 0;
  if (xmax === xmin) xmax = xmin + 1;
  if (!Number.isFinite(ymin)) {
    ymin = spec.logY ? 1 : 0;
    ymax = 10;
  }
  if (spec.logY) {
    // A little room above and below the data, in log space.
    ymin /= 1.3;
    ymax *= 1.3;
  } else {
    ymin = Math.min(0, ymin);
    ymax *= 1.08;
  }
  if (ymax === ymin) ymax = ymin + 1;
  const sx = (x: number) => m.l + ((x - xmin) / (xmax - xmin)) * pw;
  // Band labels sit in rows above the plot area.
  spec.bands.forEach((b, i) => {
    (bandLabels[i] as { x: number }).x = sx(b.start);
  });
  const rows = labelRows(bandLabels);
  const labelH = rows.length ? (Math.max(...rows) + 1) * 13 : 0;
  const top = m.t + labelH;
  const ph = H - top - m.b;
  const ly = (y: number) => (spec.logY ? Math.log10(y) : y);
  const y0 = ly(ymin);
  const y1 = ly(ymax);
  const sy = (y: number) => top + ph - ((ly(y) - y0) / (y1 - y0 || 1)) * ph;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${m.l}" y="18" font-size="14" font-weight="bold">${escapeHtml(spec.title)}</text>`,
  );
  if (spec.subtitle) parts.push(`<text x="${m.l}" y="34" fill="#555">${escapeHtml(spec.subtitle)}</text>`);
  spec.bands.forEach((b, i) => {
    const x = sx(b.start);
    const w = Math.max(1, sx(b.end) - x);
    const fill = b.landed === false ? '#999' : '#f0a030';
    parts.push(
      `<rect class="fault-band" data-label="${escapeHtml(b.label)}" x="${x.toFixed(1)}" y="${top}" width="${w.toFixed(1)}" height="${ph}" fill="${fill}" fill-opacity="0.16" stroke="${fill}" stroke-opacity="0.5" stroke-dasharray="3 3"><title>${escapeHtml(b.label)}</title></rect>`,
      `<text x="${(x + 2).toFixed(1)}" y="${m.t + 10 + (rows[i] as number) * 13}" fill="#8a4b00">${escapeHtml(b.label)}</text>`,
    );
  });
  // Axes, ticks and grid.
  parts.push(
    `<line x1="${m.l}" y1="${top + ph}" x2="${m.l + pw}" y2="${top + ph}" stroke="#000"/>`,
    `<line x1="${m.l}" y1="${top}" x2="${m.l}" y2="${top + ph}" stroke="#000"/>`,
  );
  for (const t of niceTicks(xmin, xmax, 10)) {
    const x = sx(t);
    parts.push(
      `<line x1="${x.toFixed(1)}" y1="${top + ph}" x2="${x.toFixed(1)}" y2="${top + ph + 4}" stroke="#000"/>`,
      `<text x="${x.toFixed(1)}" y="${top + ph + 16}" text-anchor="middle">${label(t)}</text>`,
    );
  }
  const yTicks = spec.logY ? logTicks(ymin, ymax) : niceTicks(ymin, ymax);
  for (const t of yTicks) {
    const y = sy(t);
    if (y < top - 1 || y > top + ph + 1) continue;
    parts.push(
      `<line x1="${m.l}" y1="${y.toFixed(1)}" x2="${m.l + pw}" y2="${y.toFixed(1)}" stroke="#e4e4e4"/>`,
      `<text x="${m.l - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${label(t)}</text>`,
    );
  }
  parts.push(
    `<text x="${m.l + pw / 2}" y="${H - 10}" text-anchor="middle">${escapeHtml(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(spec.yLabel)}${spec.logY ? ' (log scale)' : ''}</text>`,
  );
  // Dots under lines, so percentile lines stay readable over the raw points.
  const ordered = [...spec.series].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'dots' ? -1 : 1));
  for (const s of ordered) {
    const ok = ([x, y]: [number, number | null]) =>
      y !== null && Number.isFinite(x) && Number.isFinite(y) && (!spec.logY || y > 0);
    if (s.kind === 'line') {
      let d = '';
      let pen = false;
      for (const p of s.points) {
        if (!ok(p)) {
          pen = false;
          continue;
        }
        d += `${pen ? 'L' : 'M'}${sx(p[0]).toFixed(1)} ${sy(p[1] as number).toFixed(1)}`;
        pen = true;
      }
      if (d)
        parts.push(
          `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.8"${s.dashed ? ' stroke-dasharray="6 3"' : ''}/>`,
        );
    } else {
      const dots = s.points
        .filter(ok)
        .map(([x, y]) => `M${sx(x).toFixed(1)} ${sy(y as number).toFixed(1)}h0.01`)
        .join('');
      // One path of round-capped zero-length segments: one element for thousands of points.
      if (dots)
        parts.push(
          `<path d="${dots}" stroke="${s.color}" stroke-opacity="0.45" stroke-width="3" stroke-linecap="round"/>`,
        );
    }
  }
  spec.series.forEach((s, i) => {
    const lyy = top + 10 + i * 16;
    const x = m.l + pw + 12;
    parts.push(
      s.kind === 'line'
        ? `<line x1="${x}" y1="${lyy - 3}" x2="${x + 16}" y2="${lyy - 3}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 2"' : ''}/>`
        : `<circle cx="${x + 8}" cy="${lyy - 3}" r="3" fill="${s.color}" fill-opacity="0.6"/>`,
      `<text x="${x + 22}" y="${lyy + 1}">${escapeHtml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
