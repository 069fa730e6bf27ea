import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { committedIn, parseSnapshot, type Snapshot } from './pg-snapshot.ts';

/**
 * Checks a dependency cycle that Elle reported against PostgreSQL's own record of the transactions:
 * the SQL client keeps, on every ok transaction, the server's backend pid, xid and snapshot taken just
 * before COMMIT (`extras.txn`). Each edge of the cycle implies a visibility relation the snapshots must
 * show if the server really ran the transactions that way:
 *   Ti -wr-> Tj  Tj read Ti's write:       Ti's xid is committed in Tj's snapshot;
 *   Ti -ww-> Tj  Tj overwrote Ti's write:  Ti's xid is committed in Tj's snapshot;
 *   Ti -rw-> Tj  Ti read before Tj's write: Tj's xid is not committed in Ti's snapshot.
 * Every edge agreeing means the server committed the cycle as recorded (not a recording artefact); an
 * edge that disagrees points at the client or the history.
 *
 * Usage: npx tsx pg-cycle-snapshots.ts HISTORY.jsonl 1551 rw 1539 rw 1530 wr 1551
 *   (op numbers and edge types as the report names them). Exit 0: every edge agrees; 1: an edge
 *   disagrees or cannot be checked; 2: bad input.
 */
interface Traced {
  op: number;
  xid: bigint | null;
  snapshot: Snapshot;
  pid: number;
  /** The server's transaction_isolation; absent in histories recorded before it was traced. */
  isolation: string | null;
}

/** The ok completion of each wanted op (its invocation's index), paired by process. */
async function tracedOps(path: string, wanted: Set<number>): Promise<Map<number, Traced>> {
  const open = new Map<number, number>();
  const found = new Map<number, Traced>();
  const lines = createInterface({ input: createReadStream(path) });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as {
      index: number;
      type: string;
      process: number;
      txn?: { pid: number; xid: string | null; snapshot: string; isolation?: string };
    };
    if (e.type === 'invoke') {
      if (wanted.has(e.index)) open.set(e.process, e.index);
      continue;
    }
    const op = open.get(e.process);
    if (op === undefined) continue;
    open.delete(e.process);
    if (e.type !== 'ok') throw new Error(`op ${op} did not commit (${e.type})`);
    if (!e.txn) throw new Error(`op ${op} carries no server trace (extras.txn): recorded before tracing`);
    found.set(op, {
      op,
      pid: e.txn.pid,
      xid: e.txn.xid === null ? null : BigInt(e.txn.xid),
      snapshot: parseSnapshot(e.txn.snapshot),
      isolation: e.txn.isolation ?? null,
    });
  }
  return found;
}

function checkEdge(from: Traced, kind: string, to: Traced): { ok: boolean; says: string } {
  const writer = kind === 'rw' ? to : from;
  const reader = kind === 'rw' ? from : to;
  if (writer.xid === null) return { ok: false, says: `op ${writer.op} has no xid (it wrote nothing?)` };
  const visible = committedIn(writer.xid, reader.snapshot);
  const want = kind !== 'rw';
  const what = `xid ${writer.xid} (op ${writer.op}) is ${visible ? '' : 'not '}committed in op ${reader.op}'s snapshot`;
  return { ok: visible === want, says: what };
}

async function main(argv: string[]): Promise<number> {
  const [path, ...cycle] = argv;
  if (!path || cycle.length < 3 || cycle.length % 2 === 0) {
    console.error(
      'usage: pg-cycle-snapshots.ts HISTORY.jsonl OP EDGE OP [EDGE OP …] (e.g. 1551 rw 1539 wr 1551)',
    );
    return 2;
  }
  const ops = cycle.filter((_, i) => i % 2 === 0).map(Number);
  const edges = cycle.filter((_, i) => i % 2 === 1);
  if (ops.some((n) => !Number.isInteger(n)) || edges.some((k) => !['wr', 'ww', 'rw'].includes(k))) {
    console.error(`not a cycle of op numbers and wr/ww/rw edges: ${cycle.join(' ')}`);
    return 2;
  }
  const traced = await tracedOps(path, new Set(ops));
  let agree = true;
  for (const op of new Set(ops)) {
    const t = traced.get(op);
    if (!t) throw new Error(`op ${op} not found in ${path}`);
    const xip = [...t.snapshot.inProgress].join(',');
    console.log(
      `op ${op}: backend ${t.pid}, xid ${t.xid ?? '-'}, snapshot ${t.snapshot.xmin}:${t.snapshot.xmax}:${xip}, isolation ${t.isolation ?? 'not recorded'}`,
    );
  }
  edges.forEach((kind, i) => {
    const r = checkEdge(
      traced.get(ops[i] as number) as Traced,
      kind,
      traced.get(ops[i + 1] as number) as Traced,
    );
    agree &&= r.ok;
    console.log(`${ops[i]} -${kind}-> ${ops[i + 1]}: ${r.ok ? 'agrees' : 'DISAGREES'}: ${r.says}`);
  });
  console.log(
    agree
      ? "every edge agrees with PostgreSQL's snapshots: the server committed this cycle as recorded"
      : "an edge disagrees with PostgreSQL's snapshots: look at the client and the history, not the server",
  );
  return agree ? 0 : 1;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 2;
}
