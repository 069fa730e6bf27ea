import { performance } from 'node:perf_hooks';
import { writeFileAtomic } from '../../src/core/util/atomic-write.ts';
import type { CheckOutcome, PartitionResult } from './check.ts';
import type { AnyModel } from './model.ts';
import type { EncodedOp } from './prepare.ts';
import { describeOp, partitionName } from './report.ts';
import { PartitionSearch, SLICE_ITERATIONS } from './search.ts';
import { summarizeSearch } from './summary.ts';

/** Default budget for the visualization's own extra search (undecided partitions). */
export const DEFAULT_HTML_BUDGET_MS = 2_000;
/** Ops drawn per partition; beyond this the page says it is truncated (browsers choke on huge SVGs). */
const MAX_OPS_DRAWN = 5_000;

interface VisOp {
  id: number;
  process: string;
  /** Ordinal x positions (ranks of event positions); end = null when the op never completed. */
  start: number;
  end: number | null;
  desc: string;
  /** Position in the partial linearization, or -1. */
  lin: number;
  before: string | null;
  after: string | null;
}

interface VisPartition {
  name: string;
  status: string;
  note: string;
  ops: VisOp[];
  truncated: boolean;
  blocked: number;
  statesSeen: string[];
  initialState: string;
  width: number;
}

/**
 * The visualization gets its own budget: partitions the check left undecided (cancelled after another
 * partition failed, or out of time) are searched again for at most `budgetMs` in total, so the page
 * shows as much as can be learnt cheaply. Porcupine's verbose mode instead insists on finishing every
 * partition, which never ends on kv/c50-bad.
 */
export function refineForVisualization(
  model: AnyModel,
  outcome: CheckOutcome,
  budgetMs: number,
): PartitionResult[] {
  const parts = outcome.partitions.slice();
  const pending = parts.flatMap((p, i) => (p.status === 'cancelled' || p.status === 'unknown' ? [i] : []));
  if (pending.length === 0 || budgetMs <= 0) return parts;
  const deadline = performance.now() + budgetMs;
  const searches = new Map(
    pending.map((i) => [i, new PartitionSearch(model, (parts[i] as PartitionResult).ops)]),
  );
  let running = [...searches.keys()];
  while (running.length > 0 && performance.now() < deadline) {
    for (const i of running) searches.get(i)?.run(SLICE_ITERATIONS);
    running = running.filter((i) => searches.get(i)?.status === 'running');
  }
  for (const [i, s] of searches) {
    const old = parts[i] as PartitionResult;
    const status = s.status === 'running' ? old.status : s.status;
    const summary = summarizeSearch(s, model, status, old.ms);
    // Still undecided: keep whichever partial linearization is longer (the check may have run longer).
    if (s.status === 'running' && summary.prefix.length <= old.prefix.length) continue;
    parts[i] = { ...old, ...summary };
  }
  return parts;
}

function visPartition(model: AnyModel, p: PartitionResult, original: PartitionResult): VisPartition {
  const linIndex = new Map<number, number>();
  p.prefix.forEach((opIndex, k) => {
    linIndex.set(opIndex, k);
  });
  let ops = p.ops.map((o, i) => ({ o, i }));
  const truncated = ops.length > MAX_OPS_DRAWN;
  if (truncated) {
    // Draw a window around where the search got stuck (or the end of the prefix).
    const center = p.blockedOp >= 0 ? p.blockedOp : (p.prefix.at(-1) ?? 0);
    const from = Math.max(0, Math.min(center - MAX_OPS_DRAWN / 2, ops.length - MAX_OPS_DRAWN));
    ops = ops.slice(from, from + MAX_OPS_DRAWN);
  }
  const stateAfter = (k: number) =>
    k < p.prefixStatesFrom ? null : (p.prefixStates[k - p.prefixStatesFrom] ?? null);
  const positions = [
    ...new Set(ops.flatMap(({ o }) => (Number.isFinite(o.ret) ? [o.call, o.ret] : [o.call]))),
  ].sort((a, b) => a - b);
  const rank = new Map(positions.map((t, k) => [t, k]));
  const vis: VisOp[] = ops.map(({ o, i }) => {
    const k = linIndex.get(i) ?? -1;
    return {
      id: o.id,
      process: String(o.process),
      start: rank.get(o.call) as number,
      end: Number.isFinite(o.ret) ? (rank.get(o.ret) as number) : null,
      desc: describeOp(model, o as EncodedOp),
      lin: k,
      before: k < 0 ? null : k === 0 ? p.initialState : stateAfter(k - 1),
      after: k < 0 ? null : stateAfter(k),
    };
  });
  let note = '';
  if (original.status === 'cancelled' && p.status !== 'cancelled') {
    note = 'stopped by the check after another partition failed; decided within the visualization budget';
  } else if (p.status === 'cancelled') {
    note =
      'stopped after another partition failed and not decided within the visualization budget; showing the longest partial linearization found';
  } else if (p.status === 'unknown') {
    note = 'undecided: the search budget ran out; showing the longest partial linearization found';
  }
  return {
    name: partitionName(p),
    status: p.status,
    note,
    ops: vis,
    truncated,
    blocked: p.blockedOp >= 0 && p.status !== 'ok' ? ops.findIndex(({ i }) => i === p.blockedOp) : -1,
    statesSeen: p.statesSeen,
    initialState: p.initialState,
    width: positions.length + 1,
  };
}

const STYLE = `
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px}h2{font-size:15px;margin:24px 0 4px}
.badge{display:inline-block;padding:1px 8px;border-radius:8px;color:#fff;font-size:12px;margin-left:6px}
.ok{background:#2e7d32}.illegal{background:#c62828}.unknown,.cancelled{background:#777}
.note{color:#555;margin:2px 0 6px}.legend span{margin-right:14px}
.scroll{overflow-x:auto;border:1px solid #ddd;background:#fafafa}
svg text{font-size:11px;pointer-events:none}
rect.op{stroke:#555;stroke-width:1;cursor:pointer}rect.lin{fill:#c8e6c9}rect.none{fill:#eee}
rect.blocked{fill:#ef9a9a;stroke:#b71c1c;stroke-width:2}rect.open{stroke-dasharray:4 3}
rect.hl{stroke:#1565c0;stroke-width:2}
#tip{position:fixed;display:none;background:#fff;border:1px solid #888;padding:6px 8px;max-width:480px;
box-shadow:2px 2px 6px rgba(0,0,0,.2);font-size:12px;white-space:pre-wrap;pointer-events:none}
`;

// Draws each partition from the embedded JSON; no network access, no libraries.
const SCRIPT = `
const data = JSON.parse(document.getElementById('data').textContent);
const tip = document.getElementById('tip');
const NS = 'http://www.w3.org/2000/svg';
const UNIT = 18, ROW = 26, LEFT = 90, TOP = 8;
function el(tag, attrs, parent) { const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e; }
function text(op, p) {
  let s = 'op ' + op.id + ' (process ' + op.process + ')\\n' + op.desc + '\\nevents: ' + op.start + ' → ' + (op.end === null ? 'never completed (may take effect any time after its call, or never)' : op.end);
  if (op.lin >= 0) s += '\\nlinearized #' + (op.lin + 1) + '\\nstate before: ' + op.before + '\\nstate after: ' + op.after;
  else s += '\\nnot in the longest partial linearization';
  if (p.ops.indexOf(op) === p.blocked) s += '\\nCANNOT BE LINEARIZED next; the state could have been: ' + p.statesSeen.join(', ');
  return s;
}
const root = document.getElementById('parts');
data.partitions.forEach((p) => {
  const sec = document.createElement('section');
  const h = document.createElement('h2');
  h.textContent = p.name + ' — ' + p.ops.length + ' ops';
  const b = document.createElement('span'); b.className = 'badge ' + p.status; b.textContent = p.status; h.appendChild(b);
  sec.appendChild(h);
  const note = document.createElement('div'); note.className = 'note';
  const linCount = p.ops.filter((o) => o.lin >= 0).length;
  note.textContent = (p.note ? p.note + '. ' : '') + 'Longest linearizable prefix: ' + linCount + ' ops, from initial state ' + p.initialState + '.' + (p.blocked >= 0 ? ' Red: the op that cannot be linearized next (it could have seen ' + p.statesSeen.join(', ') + ').' : '') + (p.truncated ? ' Only ' + p.ops.length + ' ops around that point are drawn.' : '');
  sec.appendChild(note);
  const procs = [...new Set(p.ops.map((o) => o.process))].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const rowOf = new Map(procs.map((q, i) => [q, i]));
  const width = LEFT + (p.width + 1) * UNIT + 20, height = TOP + procs.length * ROW + 10;
  const wrap = document.createElement('div'); wrap.className = 'scroll';
  const svg = el('svg', { width, height });
  procs.forEach((q, i) => { const t = el('text', { x: 4, y: TOP + i * ROW + 16 }, svg); t.textContent = 'process ' + q; });
  const lin = [];
  p.ops.forEach((op, idx) => {
    const x0 = LEFT + op.start * UNIT, x1 = LEFT + (op.end === null ? p.width : op.end) * UNIT;
    const y = TOP + rowOf.get(op.process) * ROW;
    const cls = 'op ' + (idx === p.blocked ? 'blocked' : op.lin >= 0 ? 'lin' : 'none') + (op.end === null ? ' open' : '');
    const r = el('rect', { x: x0, y, width: Math.max(6, x1 - x0), height: ROW - 6, rx: 3, class: cls }, svg);
    const label = el('text', { x: x0 + 3, y: y + 14 }, svg);
    label.textContent = (op.lin >= 0 ? '#' + (op.lin + 1) + ' ' : '') + op.desc;
    r.addEventListener('mousemove', (ev) => { tip.style.display = 'block'; tip.style.left = ev.clientX + 12 + 'px'; tip.style.top = ev.clientY + 12 + 'px'; tip.textContent = text(op, p); r.classList.add('hl'); });
    r.addEventListener('mouseleave', () => { tip.style.display = 'none'; r.classList.remove('hl'); });
    if (op.lin >= 0) lin[op.lin] = { op, y };
  });
  // Linearization points: the earliest point in each op's interval after the previous point.
  let px = -Infinity; const pts = [];
  lin.forEach((l) => { if (!l) return; const s = LEFT + l.op.start * UNIT + 2; px = Math.max(px + 2, s); pts.push(px + ',' + (l.y + ROW / 2 - 3)); });
  if (pts.length > 1) el('polyline', { points: pts.join(' '), fill: 'none', stroke: '#2e7d32', 'stroke-width': 1, opacity: 0.6 }, svg);
  pts.forEach((pt) => { const [x, y] = pt.split(','); el('circle', { cx: x, cy: y, r: 2.5, fill: '#2e7d32' }, svg); });
  wrap.appendChild(svg); sec.appendChild(wrap); root.appendChild(sec);
});
`;

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );
}

/** Render the self-contained HTML page (CSS, script and data inline). */
export function renderHtml(
  model: AnyModel,
  outcome: CheckOutcome,
  opts: { budgetMs?: number; title?: string } = {},
): string {
  const refined = refineForVisualization(model, outcome, opts.budgetMs ?? DEFAULT_HTML_BUDGET_MS);
  // Failing partitions first, then undecided, then linearizable ones, each in key order.
  const rank = { illegal: 0, unknown: 1, cancelled: 1, running: 1, ok: 2 } as const;
  const order = refined
    .map((_, i) => i)
    .sort((a, b) => rank[refined[a]?.status ?? 'ok'] - rank[refined[b]?.status ?? 'ok'] || a - b);
  const partitions = order.map((i) =>
    visPartition(model, refined[i] as PartitionResult, outcome.partitions[i] as PartitionResult),
  );
  const verdict =
    outcome.valid === true ? 'linearizable' : outcome.valid === false ? 'NOT linearizable' : 'unknown';
  const json = JSON.stringify({ partitions }).replace(/</g, '\\u003c');
  const title = opts.title ?? 'faultline linearizability';
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}: ${verdict}</h1>
<div>model ${escapeHtml(model.name)}; ${outcome.opsConsumed} ops in ${outcome.partitions.length} partition(s).
Each row is a process; a box spans an op from its call to its return (x axis: event order, not time).
Dashed boxes never completed. Green boxes form the longest linearizable prefix, numbered in linearization order,
with their linearization points joined; hover a box for its states.</div>
<div class="legend"><span>■ green: linearized</span><span>■ red: cannot be linearized next</span><span>■ grey: not reached</span></div>
<div id="parts"></div><div id="tip"></div>
<script type="application/json" id="data">${json}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}

export async function writeHtml(
  path: string,
  model: AnyModel,
  outcome: CheckOutcome,
  opts: { budgetMs?: number; title?: string } = {},
): Promise<void> {
  await writeFileAtomic(path, renderHtml(model, outcome, opts));
}
