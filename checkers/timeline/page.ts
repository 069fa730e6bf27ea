import type { Operation } from '../../src/core/history/operation.ts';
import { escapeHtml } from '../../src/core/util/html.ts';
import { bandLabel, type FaultBand, faultBands } from '../fault-bands.ts';
import { show } from '../linearizability/model.ts';
import {
  embedJson,
  emptyLaneData,
  LANES_SCRIPT,
  LANES_STYLE,
  type LaneBand,
  type LaneClass,
  type LaneData,
  toMicros,
} from './lanes.ts';

/**
 * `timeline.html`, after Jepsen's timeline: every op of the history as a bar from its invocation to its
 * completion, one lane per process (the nemesis on top), coloured by outcome, with the fault windows.
 * Self-contained (data, style and script inline, no network). Opens at `#op=N` when the URL names one.
 */

const CLASSES: LaneClass[] = [
  { name: 'ok', fill: '#c8e6c9', stroke: '#2e7d32', legend: 'ok' },
  { name: 'fail', fill: '#ffcdd2', stroke: '#c62828', legend: 'fail (did not happen)' },
  {
    name: 'info',
    fill: '#ffe0b2',
    stroke: '#e65100',
    dashed: true,
    legend: 'info: outcome unknown (the bar ends when the client gave up; never: to the end)',
  },
  { name: 'nemesis', fill: '#e1bee7', stroke: '#6a1b9a', legend: 'nemesis op' },
];
const OK = 0;
const FAIL = 1;
const INFO = 2;
const NEMESIS = 3;

/** Short labels on the bars; the tooltip carries the rest. */
const LABEL_CHARS = 48;

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** `read → 4`, `write 3`, `cas [1 2] → fail`: what the op was and what came back. */
export function opLabel(op: Operation, bands: readonly FaultBand[] = []): string {
  const input = op.input === null || op.input === undefined ? '' : ` ${show(op.input)}`;
  if (op.process === 'nemesis') {
    // A nemesis op is named by the window it opened or closed.
    const end = op.completeTime ?? op.infoTime;
    const opened = bands.find((b) => b.start === op.invokeTime);
    if (opened) return `${op.f} ${bandLabel(opened)}`;
    const closed = bands.filter((b) => b.healed && end !== null && b.end === end).map((b) => b.id);
    return `${op.f}${closed.length ? ` (heals ${closed.join(', ')})` : input}`;
  }
  const key = op.key === undefined ? '' : `[${op.key}] `;
  const noInput = op.input === null || op.input === undefined;
  // An ok op shows what came back when it says something the input did not (a read's value, even nil).
  if (op.type === 'ok' && op.output !== undefined && (noInput || show(op.output) !== show(op.input)))
    return `${key}${op.f}${input} → ${show(op.output)}`;
  return `${key}${op.f}${input}${op.type === 'fail' ? ' → fail' : ''}`;
}

/** Lanes: the nemesis first, then processes in numeric order; each lane named with its node. */
function lanesOf(ops: readonly Operation[]): { lanes: LaneData['lanes']; index: Map<string, number> } {
  const nodes = new Map<string, Map<string, number>>();
  for (const op of ops) {
    const p = String(op.process);
    let m = nodes.get(p);
    if (!m) {
      m = new Map();
      nodes.set(p, m);
    }
    if (op.node) m.set(op.node, (m.get(op.node) ?? 0) + 1);
  }
  const order = [...nodes.keys()].sort((a, b) =>
    a === 'nemesis' ? -1 : b === 'nemesis' ? 1 : Number(a) - Number(b) || a.localeCompare(b),
  );
  const lanes = order.map((p) => {
    const counts = [...(nodes.get(p) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
    const sub =
      counts.length === 0 ? '' : counts.length === 1 ? (counts[0]?.[0] ?? '') : `${counts[0]?.[0]}+`;
    return { name: p === 'nemesis' ? 'nemesis' : `process ${p}`, sub };
  });
  return { lanes, index: new Map(order.map((p, i) => [p, i])) };
}

export function laneBands(bands: readonly FaultBand[]): LaneBand[] {
  return bands.map((b) => ({
    label: bandLabel(b),
    s: toMicros(b.start),
    e: toMicros(b.end),
    landed: b.landed,
  }));
}

export function timelineData(ops: readonly Operation[], faults?: readonly FaultBand[]): LaneData {
  const { lanes, index } = lanesOf(ops);
  const bands = faults ?? faultBands(ops);
  const d = emptyLaneData(lanes, CLASSES, laneBands(bands));
  let end = 0;
  for (const op of ops) {
    const stop = op.completeTime ?? op.infoTime;
    end = Math.max(end, stop ?? op.invokeTime);
    const i = d.s.length;
    d.lane.push(index.get(String(op.process)) as number);
    d.s.push(toMicros(op.invokeTime));
    d.e.push(stop === null ? -1 : toMicros(stop));
    d.c.push(op.process === 'nemesis' ? NEMESIS : op.type === 'ok' ? OK : op.type === 'fail' ? FAIL : INFO);
    const label = opLabel(op, bands);
    d.t.push(clip(label, LABEL_CHARS));
    d.n.push(op.invokeIndex);
    const more: string[] = [];
    if (label.length > LABEL_CHARS) more.push(label);
    if (op.key !== undefined) more.push(`key ${op.key}`);
    if (op.error !== null && op.error !== undefined) more.push(`error: ${clip(show(op.error), 300)}`);
    if (op.faultEpoch?.length) more.push(`invoked during ${op.faultEpoch.join(', ')}`);
    if (more.length) d.dt[i] = more.join('\n');
  }
  d.end = toMicros(end);
  return d;
}

const PAGE_STYLE = `body{font-family:system-ui,sans-serif;margin:16px;color:#222}h1{font-size:18px;margin:0 0 4px}
.note{color:#555;margin:2px 0 8px;max-width:1100px}${LANES_STYLE}`;

export function renderTimeline(
  ops: readonly Operation[],
  opts: { title?: string; faults?: readonly FaultBand[] } = {},
): string {
  const d = timelineData(ops, opts.faults);
  const title = opts.title ?? 'faultline timeline';
  const clients = ops.filter((o) => o.process !== 'nemesis').length;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<div class="note">${clients.toLocaleString('en-US')} client ops and ${(ops.length - clients).toLocaleString('en-US')} nemesis ops;
${d.bands.length} fault window(s). Each lane is a process (with the node it talked to); a bar spans an op from its
invocation to its completion on the run's own clock. Op numbers are the history's event indices (the <code>index</code>
of the invoke line in history.jsonl); open <code>#op=N</code> to jump to one. Ctrl+wheel or the buttons zoom; hover a bar for details.</div>
<div id="chart" class="ln"></div>
<script type="application/json" id="data">${embedJson(d)}</script>
<script>${LANES_SCRIPT}</script>
<script>
var d = JSON.parse(document.getElementById('data').textContent);
var chart = faultlineLanes(document.getElementById('chart'), d, { focusButton: 'linked op' });
function go() { var n = faultlineHashOp(); if (n !== null) chart.focusNumber(n, faultlineHashContext()); else chart.draw(); }
window.addEventListener('hashchange', go);
go();
</script>
</body></html>
`;
}
