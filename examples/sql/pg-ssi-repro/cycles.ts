import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { committedIn, parseSnapshot, type Snapshot } from '../pg-snapshot.ts';

/**
 * Finds dependency cycles among the committed transactions that txn.pgbench logged, with nothing but the
 * log and the final table: no faultline code. Every appended value is unique per key, so the final list
 * of a key is the order of its committed appends, and each read (a prefix of it) places its reader:
 *   Ti -ww-> Tj  Tj appended the element right after Ti's;
 *   Ti -wr-> Tj  the last element Tj read (not its own) is Ti's;
 *   Ti -rw-> Tj  Tj appended the element right after the prefix Ti read.
 * A cycle is an anomaly serializability forbids: G0 (ww only), G1c (ww/wr), G-single (one rw edge),
 * G2-item (two or more). Every edge of a reported cycle is also checked against the server's snapshots
 * (a wr or ww edge needs the writer committed in the other's snapshot, an rw edge needs it not).
 * What it cannot see: transactions that committed but were not logged (pgbench ended between COMMIT and
 * the log insert; their appends show up as writers with unknown reads), and anything predicate-based.
 *
 * Usage: npx tsx cycles.ts TXLOG.tsv LISTS.tsv  (COPY txlog TO STDOUT; COPY lists TO STDOUT)
 *   Exit 0: no cycle and nothing inconsistent; 1: a cycle or an inconsistency; 2: bad input.
 */
export type Mop = { f: 'r'; k: number; list: number[] } | { f: 'append'; k: number; v: number };

export interface Txn {
  id: string;
  client: number;
  pid: number;
  xid: bigint | null;
  snapshot: Snapshot | null;
  isolation: string;
  mops: Mop[];
}

export type EdgeKind = 'ww' | 'wr' | 'rw';

export interface Step {
  from: Txn;
  kind: EdgeKind;
  to: Txn;
  /** The server's snapshots agree with the edge (null: cannot tell, e.g. a writer without a logged xid). */
  snapshotsAgree: boolean | null;
}

export interface Cycle {
  type: 'G0' | 'G1c' | 'G-single' | 'G2-item';
  steps: Step[];
}

export interface Analysis {
  transactions: number;
  edges: number;
  /** Strongly connected components of more than one transaction. */
  components: number;
  cycles: Cycle[];
  /** Reads that are no prefix of the final list, lost or duplicated appends, a level other than serializable. */
  problems: string[];
}

/** Rows of `COPY txlog TO STDOUT` (tab-separated, columns as in schema.sql). */
export function parseTxlog(text: string): Txn[] {
  const out: Txn[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const c = line.split('\t');
    if (c.length !== 18) throw new Error(`txlog line ${i + 1}: ${c.length} columns, want 18`);
    const [id, client, pid, xid, snap, iso] = c as [string, string, string, string, string, string];
    const mops: Mop[] = [];
    for (let m = 0; m < 4; m++) {
      const f = Number(c[6 + 3 * m]);
      const k = Number(c[7 + 3 * m]);
      const x = c[8 + 3 * m] as string;
      if (f === 0) continue;
      if (!Number.isInteger(k) || (f !== 1 && f !== 2))
        throw new Error(`txlog line ${i + 1}: bad micro-op ${m + 1}`);
      if (f === 2) mops.push({ f: 'append', k, v: integer(x, `txlog line ${i + 1}`) });
      else mops.push({ f: 'r', k, list: x === '-1' ? [] : parseList(x, `txlog line ${i + 1}`) });
    }
    out.push({
      id,
      client: Number(client),
      pid: Number(pid),
      xid: xid === '' || xid === '\\N' ? null : BigInt(xid),
      snapshot: snap === '' || snap === '\\N' ? null : parseSnapshot(snap),
      isolation: iso,
      mops,
    });
  });
  return out;
}

/** Rows of `COPY lists TO STDOUT`: key, comma-separated list. */
export function parseLists(text: string): Map<number, number[]> {
  const out = new Map<number, number[]>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const [k, v = ''] = line.split('\t');
    out.set(integer(k as string, `lists line ${i + 1}`), parseList(v, `lists line ${i + 1}`));
  });
  return out;
}

function integer(s: string, where: string): number {
  const n = Number(s);
  if (!/^-?\d+$/.test(s) || !Number.isSafeInteger(n)) throw new Error(`${where}: not an integer: ${s}`);
  return n;
}

function parseList(s: string, where: string): number[] {
  return s === '' ? [] : s.split(',').map((x) => integer(x, where));
}

const KIND_BIT: Record<EdgeKind, number> = { ww: 1, wr: 2, rw: 4 };

export function analyse(txns: Txn[], lists: Map<number, number[]>): Analysis {
  const problems: string[] = [];
  const nodes: Txn[] = [...txns];
  const writer = new Map<string, number>(); // `${k}:${v}` -> node
  txns.forEach((t, i) => {
    if (t.isolation !== 'serializable') problems.push(`txn ${t.id} ran at ${t.isolation}`);
    for (const m of t.mops) {
      if (m.f !== 'append') continue;
      const key = `${m.k}:${m.v}`;
      if (writer.has(key)) problems.push(`value ${m.v} appended to key ${m.k} twice (txn ${t.id})`);
      writer.set(key, i);
    }
  });
  // Final elements without a logged writer (committed, but the log insert never ran): writers with unknown reads.
  for (const [k, list] of lists) {
    const seen = new Set<number>();
    for (const v of list) {
      if (seen.has(v)) problems.push(`key ${k}: value ${v} twice in the final list`);
      seen.add(v);
      if (writer.has(`${k}:${v}`)) continue;
      writer.set(`${k}:${v}`, nodes.length);
      nodes.push({
        id: `unlogged(${k}:${v})`,
        client: -1,
        pid: -1,
        xid: null,
        snapshot: null,
        isolation: '?',
        mops: [{ f: 'append', k, v }],
      });
    }
  }
  const position = new Map<string, number>();
  for (const [k, list] of lists)
    list.forEach((v, i) => {
      position.set(`${k}:${v}`, i);
    });

  const out: Map<number, number>[] = nodes.map(() => new Map());
  let edges = 0;
  const edge = (a: number, b: number, kind: EdgeKind) => {
    if (a === b) return;
    const had = out[a]?.get(b) ?? 0;
    if (had === 0) edges++;
    out[a]?.set(b, had | KIND_BIT[kind]);
  };
  for (const [k, list] of lists)
    for (let i = 0; i + 1 < list.length; i++)
      edge(writer.get(`${k}:${list[i]}`) as number, writer.get(`${k}:${list[i + 1]}`) as number, 'ww');
  txns.forEach((t, i) => {
    const own = new Set(t.mops.flatMap((m) => (m.f === 'append' ? [`${m.k}:${m.v}`] : [])));
    for (const m of t.mops) {
      if (m.f === 'append') {
        if (!position.has(`${m.k}:${m.v}`))
          problems.push(`txn ${t.id} committed append ${m.k}:${m.v}, not in the final list`);
        continue;
      }
      const final = lists.get(m.k) ?? [];
      if (m.list.some((v, j) => final[j] !== v)) {
        problems.push(`txn ${t.id} read key ${m.k} as [${m.list}], no prefix of the final [${final}]`);
        continue;
      }
      const theirs = m.list.filter((v) => !own.has(`${m.k}:${v}`));
      const last = theirs[theirs.length - 1];
      if (last !== undefined) edge(writer.get(`${m.k}:${last}`) as number, i, 'wr');
      const next = final[m.list.length];
      if (next !== undefined) edge(i, writer.get(`${m.k}:${next}`) as number, 'rw');
    }
  });

  const components = stronglyConnected(out).filter((c) => c.length > 1);
  const cycles = components.map((c) => shortestCycle(c, out)).map((path) => describe(path, nodes, out));
  return { transactions: txns.length, edges, components: components.length, cycles, problems };
}

/** Tarjan's algorithm without recursion (histories have hundreds of thousands of transactions). */
function stronglyConnected(out: Map<number, number>[]): number[][] {
  const n = out.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const result: number[][] = [];
  let next = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: [number, Iterator<number>][] = [];
    const enter = (v: number) => {
      index[v] = low[v] = next++;
      stack.push(v);
      onStack[v] = 1;
      work.push([v, (out[v] as Map<number, number>).keys()]);
    };
    enter(root);
    while (work.length > 0) {
      const [v, it] = work[work.length - 1] as [number, Iterator<number>];
      const step = it.next();
      if (!step.done) {
        const w = step.value;
        if (index[w] === -1) enter(w);
        else if (onStack[w]) low[v] = Math.min(low[v] as number, index[w] as number);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low[parent[0]] = Math.min(low[parent[0]] as number, low[v] as number);
      if (low[v] === index[v]) {
        const c: number[] = [];
        let w: number;
        do {
          w = stack.pop() as number;
          onStack[w] = 0;
          c.push(w);
        } while (w !== v);
        result.push(c);
      }
    }
  }
  return result;
}

/** The shortest cycle inside a component (breadth first from each member; from the first 50 in a big one). */
function shortestCycle(component: number[], out: Map<number, number>[]): number[] {
  const inside = new Set(component);
  let best: number[] | null = null;
  for (const start of component.slice(0, 50)) {
    const prev = new Map<number, number>([[start, -1]]);
    const queue = [start];
    let found: number[] | null = null;
    for (let qi = 0; qi < queue.length && !found; qi++) {
      const v = queue[qi] as number;
      for (const w of (out[v] as Map<number, number>).keys()) {
        if (!inside.has(w)) continue;
        if (w === start) {
          found = [];
          for (let x = v; x !== -1; x = prev.get(x) as number) found.unshift(x);
          break;
        }
        if (prev.has(w)) continue;
        prev.set(w, v);
        queue.push(w);
      }
    }
    if (found && (!best || found.length < best.length)) best = found;
  }
  return best as number[];
}

function describe(path: number[], nodes: Txn[], out: Map<number, number>[]): Cycle {
  const steps: Step[] = path.map((a, i) => {
    const b = path[(i + 1) % path.length] as number;
    const bits = (out[a] as Map<number, number>).get(b) as number;
    // A pair that is both a write dependency and an anti-dependency counts as the stronger (as Elle does).
    const kind: EdgeKind = bits & KIND_BIT.ww ? 'ww' : bits & KIND_BIT.wr ? 'wr' : 'rw';
    const from = nodes[a] as Txn;
    const to = nodes[b] as Txn;
    return { from, kind, to, snapshotsAgree: snapshotsAgree(from, kind, to) };
  });
  const rw = steps.filter((s) => s.kind === 'rw').length;
  const type =
    rw >= 2 ? 'G2-item' : rw === 1 ? 'G-single' : steps.some((s) => s.kind === 'wr') ? 'G1c' : 'G0';
  return { type, steps };
}

function snapshotsAgree(from: Txn, kind: EdgeKind, to: Txn): boolean | null {
  const [w, r] = kind === 'rw' ? [to, from] : [from, to];
  if (w.xid === null || r.snapshot === null) return null;
  return committedIn(w.xid, r.snapshot) === (kind !== 'rw');
}

export function formatMop(m: Mop): string {
  return m.f === 'append' ? `[append ${m.k} ${m.v}]` : `[r ${m.k} [${m.list.join(' ')}]]`;
}

export function formatCycle(c: Cycle): string {
  const lines = [`${c.type}:`];
  for (const s of c.steps) {
    const t = s.from;
    const snap = t.snapshot
      ? `${t.snapshot.xmin}:${t.snapshot.xmax}:${[...t.snapshot.inProgress].join(',')}`
      : '-';
    lines.push(
      `  txn ${t.id} (client ${t.client}, backend ${t.pid}, xid ${t.xid ?? '-'}, snapshot ${snap}): ${t.mops.map(formatMop).join(' ')}`,
    );
  }
  for (const s of c.steps) {
    const agree =
      s.snapshotsAgree === null
        ? 'snapshots cannot tell'
        : s.snapshotsAgree
          ? 'snapshots agree'
          : 'snapshots DISAGREE';
    lines.push(`  ${s.from.id} -${s.kind}-> ${s.to.id} (${agree})`);
  }
  return lines.join('\n');
}

function main(argv: string[]): number {
  const [txlog, lists] = argv;
  if (!txlog || !lists) {
    console.error('usage: cycles.ts TXLOG.tsv LISTS.tsv');
    return 2;
  }
  let a: Analysis;
  try {
    a = analyse(parseTxlog(readFileSync(txlog, 'utf8')), parseLists(readFileSync(lists, 'utf8')));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const byType = new Map<string, number>();
  for (const c of a.cycles) byType.set(c.type, (byType.get(c.type) ?? 0) + 1);
  console.log(
    `${a.transactions} committed transactions, ${a.edges} dependency edges, ${a.components} cyclic components` +
      (byType.size ? ` (${[...byType].map(([t, n]) => `${t} ×${n}`).join(', ')})` : ''),
  );
  for (const c of a.cycles) console.log(formatCycle(c));
  for (const p of a.problems.slice(0, 20)) console.log(`inconsistent: ${p}`);
  if (a.problems.length > 20) console.log(`… ${a.problems.length - 20} more inconsistencies`);
  return a.cycles.length > 0 || a.problems.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.slice(2));
