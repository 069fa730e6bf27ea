/**
 * A dependency-free SVG line/dot chart: enough for perf's latency and rate plots with shaded fault
 * windows (Jepsen needs gnuplot for this; faultline writes the SVG text itself).
 */

export interface Series {
  name: string;
  color: string;
  /** [x, y] points; x in seconds, y in the chart's unit. */
  points: [number, number][];
  kind: 'line' | 'dots';
}

export interface Band {
  label: string;
  start: number;
  end: number;
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
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

export function color(i: number): string {
  return PALETTE[i % PALETTE.length] as string;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function niceTicks(min: number, max: number, n = 6): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

function label(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(0);
  return Number(v.toPrecision(4)).toString();
}

export function renderChart(spec: ChartSpec): string {
  const W = spec.width ?? 900;
  const H = spec.height ?? 420;
  const m = { l: 70, r: 160, t: 36, b: 48 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  let xmin = Number.POSITIVE_INFINITY;
  let xmax = Number.NEGATIVE_INFINITY;
  let ymin = Number.POSITIVE_INFINITY;
  let ymax = Number.NEGATIVE_INFINITY;
  for (const s of spec.series) {
    for (const [x, y] of s.points) {
      if (!Number.isFinite(x) || !Number.isFinite(y) || (spec.logY && y <= 0)) continue;
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
  if (xmax === xmin) xmax = xmin + 1;
  if (!Number.isFinite(ymin)) {
    ymin = spec.logY ? 1 : 0;
    ymax = 1;
  }
  if (!spec.logY) ymin = Math.min(0, ymin);
  if (ymax === ymin) ymax = ymin + 1;
  const ly = (y: number) => (spec.logY ? Math.log10(y) : y);
  const y0 = ly(spec.logY ? ymin : ymin);
  const y1 = ly(ymax);
  const sx = (x: number) => m.l + ((x - xmin) / (xmax - xmin)) * pw;
  const sy = (y: number) => m.t + ph - ((ly(y) - y0) / (y1 - y0 || 1)) * ph;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(spec.title)}</text>`,
  );
  spec.bands.forEach((b, i) => {
    const x = sx(b.start);
    const w = Math.max(1, sx(b.end) - x);
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${m.t}" width="${w.toFixed(1)}" height="${ph}" fill="#f0a030" fill-opacity="0.18"><title>${esc(b.label)}</title></rect>`,
      `<text x="${(x + 2).toFixed(1)}" y="${m.t + 12 + (i % 4) * 12}" fill="#555">${esc(b.label)}</text>`,
    );
  });
  // Axes and ticks.
  parts.push(
    `<line x1="${m.l}" y1="${m.t + ph}" x2="${m.l + pw}" y2="${m.t + ph}" stroke="#000"/>`,
    `<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${m.t + ph}" stroke="#000"/>`,
  );
  for (const t of niceTicks(xmin, xmax)) {
    parts.push(`<text x="${sx(t).toFixed(1)}" y="${m.t + ph + 16}" text-anchor="middle">${label(t)}</text>`);
  }
  const yTicks = spec.logY
    ? niceTicks(Math.floor(y0), Math.ceil(y1), Math.max(1, Math.ceil(y1) - Math.floor(y0))).map(
        (e) => 10 ** e,
      )
    : niceTicks(ymin, ymax);
  for (const t of yTicks) {
    if (spec.logY && (t < ymin / 10 || t > ymax * 10)) continue;
    const y = sy(t);
    if (y < m.t - 1 || y > m.t + ph + 1) continue;
    parts.push(
      `<line x1="${m.l}" y1="${y.toFixed(1)}" x2="${m.l + pw}" y2="${y.toFixed(1)}" stroke="#eee"/>`,
      `<text x="${m.l - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${label(t)}</text>`,
    );
  }
  parts.push(
    `<text x="${m.l + pw / 2}" y="${H - 10}" text-anchor="middle">${esc(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`,
  );
  spec.series.forEach((s, i) => {
    const pts = s.points.filter(
      ([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!spec.logY || y > 0),
    );
    if (s.kind === 'line' && pts.length > 0) {
      const d = pts
        .map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`)
        .join('');
      parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.5"/>`);
    } else {
      for (const [x, y] of pts) {
        parts.push(
          `<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="1.5" fill="${s.color}" fill-opacity="0.6"/>`,
        );
      }
    }
    const ly2 = m.t + 10 + i * 16;
    parts.push(
      `<rect x="${m.l + pw + 12}" y="${ly2 - 8}" width="10" height="10" fill="${s.color}"/>`,
      `<text x="${m.l + pw + 26}" y="${ly2 + 1}">${esc(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
