import { performance } from 'node:perf_hooks';
import type { Operation } from '../../src/core/history/operation.ts';
import { writeFileAtomic } from '../../src/core/util/atomic-write.ts';
import { escapeHtml } from '../../src/core/util/html.ts';
import { type FaultBand, faultBands } from '../fault-bands.ts';
import {
  embedJson,
  emptyLaneData,
  LANES_SCRIPT,
  LANES_STYLE,
  type LaneClass,
  type LaneData,
  toMicros,
} from '../timeline/lanes.ts';
import { laneBands } from '../timeline/page.ts';
import type { CheckOutcome, PartitionResult } from './check.ts';
import type { AnyModel } from './model.ts';
import type { EncodedOp } from './op-columns.ts';
import { describeOp, nonlinearizableAnomaly, partitionName } from './report.ts';
import { PartitionSearch, SLICE_ITERATIONS } from './search.ts';
import { summarizeSearch } from './summary.ts';

/** Default budget for the visualization's own extra search (undecided partitions). */
export const DEFAULT_HTML_BUDGET_MS = 2_000;
/** Ops drawn per partition; beyond this, a window around where the search stopped (canvas drawing stays fast far past 100k ops). */
const MAX_OPS_DRAWN = 250_000;

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

/** Bar classes of the linearizability page: where each op stands in the longest linearizable prefix. */
const CLASSES: LaneClass[] = [
  { name: 'lin', fill: '#c8e6c9', stroke: '#2e7d32', legend: 'linearized (#k: its place in the order)' },
  {
    name: 'blocked',
    fill: '#ef9a9a',
    stroke: '#b71c1c',
    legend: 'cannot be linearized next (the op the search could not place)',
  },
  {
    name: 'none',
    fill: '#eeeeee',
    stroke: '#888888',
    legend: 'not reached by the longest linearizable prefix',
  },
  {
    name: 'lin-open',
    fill: '#c8e6c9',
    stroke: '#2e7d32',
    dashed: true,
    legend: 'outcome unknown (may take effect any time after its call, or never)',
  },
  {
    name: 'none-open',
    fill: '#eeeeee',
    stroke: '#888888',
    dashed: true,
    legend: 'outcome unknown, not reached',
  },
];
const LIN = 0;
const BLOCKED = 1;
const NONE = 2;
const OPEN = 3;

interface VisPartition {
  name: string;
  status: string;
  note: string;
  /** The anomaly's sentence, for a partition proven not linearizable. */
  explanation: string;
  truncated: boolean;
  data: LaneData;
}

function visPartition(
  model: AnyModel,
  p: PartitionResult,
  original: PartitionResult,
  byId: ReadonlyMap<number, Operation>,
  bands: LaneData['bands'],
): VisPartition {
  const linIndex = new Map<number, number>();
  p.prefix.forEach((opIndex, k) => {
    linIndex.set(opIndex, k);
  });
  const truncated = p.ops.length > MAX_OPS_DRAWN;
  let from = 0;
  if (truncated) {
    // Draw a window around where the search got stuck (or the end of the prefix).
    const center = p.blockedOp >= 0 ? p.blockedOp : (p.prefix.at(-1) ?? 0);
    from = Math.max(0, Math.min(center - MAX_OPS_DRAWN / 2, p.ops.length - MAX_OPS_DRAWN));
  }
  const ops: { o: EncodedOp; i: number }[] = [];
  for (let i = from; i < Math.min(p.ops.length, from + MAX_OPS_DRAWN); i++)
    ops.push({ o: p.ops.at(i) as EncodedOp, i });
  const stateAfter = (k: number) =>
    k < p.prefixStatesFrom ? null : (p.prefixStates[k - p.prefixStatesFrom] ?? null);
  const blocked = p.blockedOp >= 0 && p.status !== 'ok' ? p.blockedOp : -1;
  // Lanes: the partition's processes in numeric order, each with the node its ops went to.
  const nodes = new Map<string, Set<string>>();
  for (const { o } of ops) {
    const proc = String(o.process);
    const set = nodes.get(proc) ?? new Set<string>();
    const node = byId.get(o.id)?.node;
    if (node) set.add(node);
    nodes.set(proc, set);
  }
  const procs = [...nodes.keys()].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const laneOf = new Map(procs.map((q, i) => [q, i]));
  const d = emptyLaneData(
    procs.map((q) => ({ name: `process ${q}`, sub: [...(nodes.get(q) ?? [])].join('+') })),
    CLASSES,
    bands,
  );
  let end = 0;
  for (const { o, i } of ops) {
    const op = byId.get(o.id);
    // Without the recorded op (a hand-built outcome), fall back to event positions as times.
    const start = op ? op.invokeTime : o.call * 1e6;
    // Open (dashed) as recorded: a crashed op the model bounded (Model.simplify) still has no return.
    const recordedOpen = op ? op.type === 'info' || op.completeIndex === null : false;
    const stop =
      Number.isFinite(o.ret) && !recordedOpen
        ? op
          ? (op.completeTime ?? op.infoTime ?? start)
          : o.ret * 1e6
        : null;
    end = Math.max(end, stop ?? start, op?.infoTime ?? 0);
    const k = linIndex.get(i) ?? -1;
    const open = stop === null;
    const j = d.s.length;
    d.lane.push(laneOf.get(String(o.process)) as number);
    d.s.push(toMicros(start));
    d.e.push(open ? -1 : toMicros(stop));
    d.c.push(i === blocked ? BLOCKED : open ? (k >= 0 ? OPEN : OPEN + 1) : k >= 0 ? LIN : NONE);
    const desc = describeOp(model, o);
    d.t.push(k >= 0 ? `#${k + 1} ${desc}` : desc);
    d.n.push(o.call);
    if (i === blocked) {
      d.focus = j;
      d.dt[j] =
        `CANNOT BE LINEARIZED next: the ${model.name} could only hold ${p.statesSeen.join(' or ')} here`;
    } else if (k >= 0) {
      // States are rendered for the end of the prefix only (see summary.ts); the label has the order.
      const before = k === 0 ? p.initialState : stateAfter(k - 1);
      const after = stateAfter(k);
      if (before !== null && after !== null) d.dt[j] = `state ${before} → ${after}`;
    }
  }
  d.end = toMicros(end);
  if (d.focus >= 0) {
    // Keep in view with the blocked op what its explanation rests on: the prefix's last few ops.
    const drawnIndex = new Map(ops.map(({ i }, j) => [i, j]));
    d.context = p.prefix
      .slice(-4)
      .map((k) => drawnIndex.get(k))
      .filter((j): j is number => j !== undefined);
  }
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
    explanation: p.status === 'illegal' ? nonlinearizableAnomaly(model, p).explanation : '',
    truncated,
    data: d,
  };
}

const STYLE = `
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:22px 0 4px}
.badge{display:inline-block;padding:1px 8px;border-radius:8px;color:#fff;font-size:12px;margin-left:6px}
.ok{background:#2e7d32}.illegal{background:#c62828}.unknown,.cancelled,.running{background:#777}
.note{color:#555;margin:2px 0 6px;max-width:1100px}.why{margin:4px 0 6px;font-weight:600;max-width:1100px}
${LANES_STYLE}`;

// Mounts one lane chart per partition and opens at #op=N, else at the first op that cannot be linearized.
const SCRIPT = `
var data = JSON.parse(document.getElementById('data').textContent);
var root = document.getElementById('parts'), charts = [];
data.partitions.forEach(function (p) {
  var sec = document.createElement('section');
  var h = document.createElement('h2');
  h.textContent = p.name + ' — ' + p.data.s.length + ' ops';
  var b = document.createElement('span'); b.className = 'badge ' + p.status; b.textContent = p.status === 'illegal' ? 'not linearizable' : p.status; h.appendChild(b);
  sec.appendChild(h);
  if (p.explanation) { var w = document.createElement('div'); w.className = 'why'; w.textContent = p.explanation + '.'; sec.appendChild(w); }
  var note = document.createElement('div'); note.className = 'note';
  var linCount = p.data.c.filter(function (c) { return c === 0 || c === 3; }).length;
  note.textContent = (p.note ? p.note + '. ' : '') + 'Longest linearizable prefix: ' + linCount + ' ops.' + (p.truncated ? ' Only ' + p.data.s.length + ' ops around where the search stopped are drawn.' : '');
  sec.appendChild(note);
  var div = document.createElement('div'); div.className = 'ln'; sec.appendChild(div);
  root.appendChild(sec);
  charts.push(faultlineLanes(div, p.data, { focusButton: 'first op that cannot be linearized' }));
});
function go() {
  var n = faultlineHashOp();
  if (n !== null) { for (var i = 0; i < charts.length; i++) if (charts[i].focusNumber(n, faultlineHashContext())) return; }
  for (var j = 0; j < charts.length; j++) if (data.partitions[j].data.focus >= 0) { charts[j].focus(data.partitions[j].data.focus, false); return; }
  charts.forEach(function (c) { c.draw(); });
}
window.addEventListener('hashchange', go);
go();
`;

export interface HtmlOptions {
  budgetMs?: number;
  title?: string;
  /** The checked ops: their times, nodes and processes place the bars on the run's clock. */
  ops?: readonly Operation[];
  faults?: readonly FaultBand[];
  /** The key of a per-key check: names its one partition. */
  key?: string;
}

/** Render the self-contained HTML page (CSS, script and data inline). */
export function renderHtml(model: AnyModel, outcome: CheckOutcome, opts: HtmlOptions = {}): string {
  const refined = refineForVisualization(model, outcome, opts.budgetMs ?? DEFAULT_HTML_BUDGET_MS);
  // The partitions the check reported failing first (the page opens on the op its anomaly names), then
  // those the page's own search found failing, then undecided, then linearizable ones, in key order.
  const rank = { illegal: 1, unknown: 2, cancelled: 2, running: 2, ok: 3 } as const;
  const reported = new Set(outcome.failing);
  const rankOf = (i: number) => (reported.has(i) ? 0 : rank[refined[i]?.status ?? 'ok']);
  const order = refined.map((_, i) => i).sort((a, b) => rankOf(a) - rankOf(b) || a - b);
  const byId = new Map((opts.ops ?? []).map((o) => [o.id, o]));
  const bands = laneBands(opts.faults ?? faultBands(opts.ops ?? []));
  const partitions = order.map((i) => {
    const vis = visPartition(
      model,
      refined[i] as PartitionResult,
      outcome.partitions[i] as PartitionResult,
      byId,
      bands,
    );
    return opts.key !== undefined && refined[i]?.key === null ? { ...vis, name: `key ${opts.key}` } : vis;
  });
  const verdict =
    outcome.valid === true ? 'linearizable' : outcome.valid === false ? 'NOT linearizable' : 'unknown';
  const title = opts.title ?? 'faultline linearizability';
  const axis =
    byId.size > 0 ? "the run's own clock (time since the run started)" : 'event order (no times were given)';
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}: ${verdict}</h1>
<div class="note">model ${escapeHtml(model.name)}; ${outcome.opsConsumed.toLocaleString('en-US')} ops in ${outcome.partitions.length} partition(s).
Each lane is a process (with its node); a bar spans an op from its call to its return on ${axis}, with the fault windows
shaded. Green bars form the longest linearizable prefix, numbered in linearization order; the red bar is the op that
cannot be linearized next, and the page opens on it. Op numbers are the history's event indices (the <code>index</code>
of the invoke line in history.jsonl); <code>#op=N</code> in the URL opens at op N. Ctrl+wheel or the buttons zoom; hover a bar for its states.</div>
<div id="parts"></div>
<script type="application/json" id="data">${embedJson({ partitions })}</script>
<script>${LANES_SCRIPT}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}

export async function writeHtml(
  path: string,
  model: AnyModel,
  outcome: CheckOutcome,
  opts: HtmlOptions = {},
): Promise<void> {
  await writeFileAtomic(path, renderHtml(model, outcome, opts));
}
