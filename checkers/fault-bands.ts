import { describeFault, type FaultFacts } from '../nemeses/describe.ts';
import type { Grudge } from '../nemeses/topology.ts';
import type { HistoryEvent } from '../src/core/history/event.ts';
import type { Operation } from '../src/core/history/operation.ts';

/**
 * The fault windows of a history, once each, for plots and pages: a band from the nemesis op that
 * started a fault to the completion of the op that healed it, labelled with what the fault did
 * (`w1 partition: n2 isolated from n1 n3 n4 n5`). Times are history times (ns since the run started).
 *
 * faultline's nemesis completes a start op with `{id, fault, nodes, what}` and a stop op with
 * `{healed: [ids]}`: those values are on the completion events (`events`; a paired op keeps only its
 * invocation's value for an info completion). Without the events, or for Jepsen's nemeses, windows are
 * read from the op names (start-*, kill … / stop-*, heal …).
 * Client ops' `faultEpoch` ids give windows only for a history without nemesis ops (a per-key slice):
 * an epoch already drawn from the nemesis ops is never drawn twice.
 */
export interface FaultBand {
  /** Window id (`w1`), or the opening op's name for a Jepsen nemesis. */
  id: string;
  /** Nemesis kind when known (partition, process, clock …), else the opening op's f. */
  kind: string;
  /** What the fault did, e.g. `n2 isolated from n1 n3 n4 n5` (empty when the history does not say). */
  what: string;
  /** ns since the run started. */
  start: number;
  end: number;
  /** False when no op healed it (it runs to the end of the history). */
  healed: boolean;
  /** False when the nemesis reported that the fault did not land. */
  landed: boolean;
}

const OPENERS = /^(start|begin|inject|pause|kill|partition|stop-node|crash|bump|strobe)/;
const CLOSERS = /^(stop|end|heal|resume|recover|restart|start-node|repair|reset)/;

type Json = Record<string, unknown>;
const asObject = (v: unknown): Json | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
const endOf = (op: Operation) => op.completeTime ?? op.infoTime ?? op.invokeTime;

/** One label for a band: `w1 partition: n2 isolated from n1 n3 n4 n5`. */
export function bandLabel(b: FaultBand): string {
  const head = b.kind && !b.id.includes(b.kind) ? `${b.id} ${b.kind}` : b.id;
  return `${head}${b.what ? `: ${b.what}` : ''}${b.landed ? '' : ' (did not land)'}`;
}

export function faultBands(ops: readonly Operation[], events?: readonly HistoryEvent[]): FaultBand[] {
  // The nemesis's completion values, by completion event index.
  const completion = (op: Operation): unknown => {
    if (op.completeIndex === null || !events) return op.output;
    const e = events[op.completeIndex];
    return e && e.index === op.completeIndex ? e.value : op.output;
  };
  let historyEnd = 0;
  const clientNodes = new Set<string>();
  for (const op of ops) {
    historyEnd = Math.max(historyEnd, endOf(op));
    if (op.process !== 'nemesis' && op.node !== null) clientNodes.add(op.node);
  }
  const allNodes = [...clientNodes];
  const bands: FaultBand[] = [];
  const byId = new Map<string, FaultBand>();
  const open: FaultBand[] = [];
  for (const op of ops) {
    if (op.process !== 'nemesis') continue;
    const done = completion(op);
    const out = asObject(done);
    const healed = out?.healed;
    if (Array.isArray(healed)) {
      for (const id of healed) {
        const b = typeof id === 'string' ? byId.get(id) : undefined;
        if (b && !b.healed) close(b, endOf(op), open);
      }
      continue;
    }
    if (typeof out?.id === 'string') {
      const b = fromFaultlineOp(op, out, allNodes);
      bands.push(b);
      byId.set(b.id, b);
      open.push(b);
      continue;
    }
    // A Jepsen nemesis: names only. `kill` is closed by a bare `start`.
    const closesKill = op.f === 'start' && open.some((w) => /^(kill|crash)/.test(w.id));
    if ((closesKill || (CLOSERS.test(op.f) && !/^start-node/.test(op.f))) && open.length > 0) {
      const suffix = op.f.replace(CLOSERS, '').replace(/^[-_]/, '');
      const idx = closesKill
        ? open.findIndex((w) => /^(kill|crash)/.test(w.id))
        : open.findIndex((w) => suffix !== '' && w.id.endsWith(suffix));
      close(open[Math.max(idx, 0)] as FaultBand, endOf(op), open);
      continue;
    }
    if (OPENERS.test(op.f)) {
      const b: FaultBand = {
        id: op.f,
        kind: op.f.replace(/^(start|begin|inject)-?/, '') || op.f,
        what: jepsenWhat(done ?? op.input, allNodes),
        start: op.invokeTime,
        end: Number.POSITIVE_INFINITY,
        healed: false,
        landed: true,
      };
      bands.push(b);
      open.push(b);
    }
  }
  bands.push(...epochBands(ops, byId));
  for (const b of bands) if (!Number.isFinite(b.end)) b.end = Math.max(historyEnd, b.start);
  return bands.sort((a, b) => a.start - b.start);
}

function close(b: FaultBand, at: number, open: FaultBand[]): void {
  b.end = at;
  b.healed = true;
  const i = open.indexOf(b);
  if (i >= 0) open.splice(i, 1);
}

function fromFaultlineOp(op: Operation, out: Json, allNodes: readonly string[]): FaultBand {
  const input = asObject(op.input) ?? {};
  const kind = typeof out.fault === 'string' ? out.fault : op.f.replace(/^start-/, '');
  const nodes = Array.isArray(out.nodes) ? out.nodes.map(String) : [];
  let what = typeof out.what === 'string' ? out.what : '';
  if (!what) {
    // Older histories: rebuild the description from the targets and the op's parameters.
    const facts: FaultFacts = {
      kind,
      action: typeof input.action === 'string' ? input.action : kind === 'partition' ? 'start' : kind,
      nodes,
      params: {
        ...(asObject(input.params) ?? {}),
        ...(typeof input.topology === 'string' && { topology: input.topology }),
      },
      allNodes,
    };
    what = describeFault(facts).what;
  }
  return {
    id: out.id as string,
    kind,
    what,
    start: op.invokeTime,
    end: Number.POSITIVE_INFINITY,
    healed: false,
    landed: out.landed !== false,
  };
}

/** Jepsen partition values: a grudge map, or `[:isolated grudge]`; anything else is named as it is. */
function jepsenWhat(v: unknown, allNodes: readonly string[]): string {
  const grudgeOf = (x: unknown): Grudge | null => {
    const o = asObject(x);
    if (!o) return null;
    const g: Grudge = {};
    for (const [k, from] of Object.entries(o)) {
      const items = Array.isArray(from) ? from : (asObject(from)?.['#set'] as unknown);
      if (!Array.isArray(items)) return null;
      g[k] = items.map(String);
    }
    return g;
  };
  const g = grudgeOf(v) ?? (Array.isArray(v) ? grudgeOf(v[1]) : null);
  if (g) return describeFault({ kind: 'partition', action: 'start', nodes: [], grudge: g, allNodes }).what;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(' ');
  if (typeof v === 'string') return v;
  return '';
}

/** Windows only client ops mark (no nemesis op in `ops`): from the first to the last op invoked in it. */
function epochBands(ops: readonly Operation[], drawn: ReadonlyMap<string, FaultBand>): FaultBand[] {
  const out = new Map<string, FaultBand>();
  for (const op of ops) {
    if (op.process === 'nemesis' || op.faultEpoch === null) continue;
    for (const id of op.faultEpoch) {
      if (drawn.has(id)) continue;
      const b = out.get(id);
      if (b === undefined)
        out.set(id, {
          id,
          kind: '',
          what: '',
          start: op.invokeTime,
          end: op.invokeTime,
          healed: true,
          landed: true,
        });
      else {
        b.start = Math.min(b.start, op.invokeTime);
        b.end = Math.max(b.end, op.invokeTime);
      }
    }
  }
  return [...out.values()];
}
