import { join } from 'node:path';
import { makeOutputDir, writeFileAtomicSync } from '../../src/core/util/atomic-write.ts';
import { escapeHtml } from '../../src/core/util/html.ts';
import type { Anomaly } from '../types.ts';
import type { WorkloadAnalysis } from './analysis.ts';
import type { CycleAnomaly, CycleStep } from './cycle-anomaly.ts';
import { txnType } from './txns.ts';

/** Cycle drawings written per anomaly type (the text file lists every case). */
const MAX_DRAWINGS_PER_TYPE = 20;

const REL_COLOURS: Record<CycleStep['rel'], string> = {
  ww: '#c0392b',
  wr: '#2471a3',
  rw: '#b9770e',
  process: '#7d3c98',
  realtime: '#229954',
};

/**
 * Write `<dir>/elle/anomalies.txt` (every case, numbered per type like "G1c #0"), one SVG per drawn cycle
 * under `<dir>/elle/<type>/<i>.svg`, and `<dir>/elle/index.html` showing them all. Plain SVG: no Graphviz.
 */
export function writeArtifacts(
  dir: string,
  analysis: WorkloadAnalysis,
  types: readonly string[],
  found: ReadonlyMap<string, Anomaly[]>,
): string[] {
  const root = join(dir, 'elle');
  makeOutputDir(root);
  const written: string[] = [];
  const text: string[] = [];
  const html: string[] = [
    '<!doctype html><meta charset="utf-8"><title>Elle anomalies</title>',
    '<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em;white-space:pre-wrap}</style>',
    '<h1>Elle anomalies</h1>',
  ];
  for (const type of types) {
    const cases = found.get(type) ?? [];
    html.push(`<h2>${escapeHtml(type)} (${cases.length})</h2>`);
    cases.forEach((c, i) => {
      const body = 'text' in c && typeof c.text === 'string' ? c.text : c.explanation;
      text.push(`${type} #${i}\n${body}\n`);
      if (i < MAX_DRAWINGS_PER_TYPE) {
        html.push(`<h3>${escapeHtml(type)} #${i}</h3><pre>${escapeHtml(body)}</pre>`);
        if (isCycle(c)) {
          const svg = drawCycle(c, analysis);
          makeOutputDir(join(root, type));
          const file = join(root, type, `${i}.svg`);
          writeFileAtomicSync(file, svg);
          written.push(file);
          html.push(svg);
        }
      }
    });
  }
  const txt = join(root, 'anomalies.txt');
  writeFileAtomicSync(txt, text.join('\n'));
  const index = join(root, 'index.html');
  writeFileAtomicSync(index, html.join('\n'));
  return [txt, index, ...written];
}

function isCycle(a: Anomaly): a is CycleAnomaly {
  return Array.isArray((a as CycleAnomaly).steps) && Array.isArray((a as CycleAnomaly).cycle);
}

/** Transactions on a circle, labelled arrows between consecutive ones. */
export function drawCycle(c: CycleAnomaly, analysis: WorkloadAnalysis): string {
  const h = analysis.history;
  const ids = c.cycle.slice(0, -1);
  const k = ids.length;
  const radius = Math.max(110, 60 * k);
  const size = 2 * radius + 320;
  const cx = size / 2;
  const cy = size / 2;
  const byId = new Map<number, number>();
  for (let t = 0; t < h.n; t++) if (ids.includes(h.invokeIndex[t]!)) byId.set(h.invokeIndex[t]!, t);
  const pos = ids.map((_, i) => {
    const angle = (2 * Math.PI * i) / k - Math.PI / 2;
    return [cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)] as const;
  });
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}" font-family="monospace" font-size="12">`,
    '<defs>',
    ...Object.entries(REL_COLOURS).map(
      ([rel, colour]) =>
        `<marker id="arrow-${rel}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="${colour}"/></marker>`,
    ),
    '</defs>',
  ];
  c.steps.forEach((s, i) => {
    const [x1, y1] = pos[i]!;
    const [x2, y2] = pos[(i + 1) % k]!;
    const dx = x2 - x1;
    const dy = y2 - y1;
    const len = Math.hypot(dx, dy) || 1;
    const shrink = 34;
    const ax = x1 + (dx / len) * shrink;
    const ay = y1 + (dy / len) * shrink;
    const bx = x2 - (dx / len) * shrink;
    const by = y2 - (dy / len) * shrink;
    // Bend each arrow outwards so two-cycles do not overlap.
    const mx = (ax + bx) / 2 - (dy / len) * 30;
    const my = (ay + by) / 2 + (dx / len) * 30;
    const colour = REL_COLOURS[s.rel];
    out.push(
      `<path d="M${ax.toFixed(1)},${ay.toFixed(1)} Q${mx.toFixed(1)},${my.toFixed(1)} ${bx.toFixed(1)},${by.toFixed(1)}" fill="none" stroke="${colour}" stroke-width="2" marker-end="url(#arrow-${s.rel})"><title>${escapeHtml(s.explanation)}</title></path>`,
      `<text x="${mx.toFixed(1)}" y="${my.toFixed(1)}" fill="${colour}" text-anchor="middle">${s.rel}</text>`,
    );
  });
  ids.forEach((id, i) => {
    const [x, y] = pos[i]!;
    const t = byId.get(id);
    const type = t === undefined ? undefined : txnType(h, t);
    const fill = type === 'ok' ? '#eafaf1' : type === 'fail' ? '#fdedec' : '#fef9e7';
    out.push(
      `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="30" fill="${fill}" stroke="#333"/>`,
      `<text x="${x.toFixed(1)}" y="${(y + 4).toFixed(1)}" text-anchor="middle" font-weight="bold">T${i + 1}</text>`,
      `<text x="${x.toFixed(1)}" y="${(y + 46).toFixed(1)}" text-anchor="middle">op ${id}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}
