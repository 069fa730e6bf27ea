import { readFileSync } from 'node:fs';

/**
 * Where in time the acknowledged messages a NATS run lost were acknowledged, and what the stream says
 * about them. For each run directory given (one holding history.jsonl), it prints:
 *   - the fault windows (the nemesis's start/stop completions);
 *   - every acknowledged add missing from a final read, classed by when its PubAck came: before the
 *     fault, during it, or after the heal (no fault active), with the nodes whose final read missed it;
 *   - for a loss after the heal: the stream sequence its PubAck named, the stream state each final
 *     read saw (first:last:count), and which other acknowledged messages carry the same sequence
 *     (a sequence acknowledged for two messages means the stream reused it: the tail holding the first
 *     was lost) and, where the final reads recorded it (`bySeq`), what each node's replica holds at that
 *     sequence: replicas holding different messages there have diverged.
 * The final reads it uses are the last complete one per node; each is answered by that node's replica.
 *
 * Usage: npx tsx loss-timing.ts RUN_DIR...
 */
interface Event {
  index: number;
  type: string;
  f: string;
  value: unknown;
  process: number | string;
  time: number;
  node: string | null;
  seq?: number;
  streamState?: { first_seq: number; last_seq: number; messages: number };
  /** The node's copy of the stream in sequence order from first_seq (recorded since bySeq was added). */
  bySeq?: (number | null)[];
}

const s = (ns: number) => (ns / 1e9).toFixed(1);

function analyse(dir: string): void {
  const events = readFileSync(`${dir}/history.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
  const invokes = new Map<number | string, Event>();
  const adds: {
    value: number;
    invoked: number;
    acked: number;
    seq: number | undefined;
    node: string | null;
  }[] = [];
  const reads: Event[] = [];
  const windows: { start: number; end: number | null }[] = [];
  for (const e of events) {
    if (e.process === 'nemesis') {
      const v = e.value as { id?: string; healed?: string[] };
      if (e.f.startsWith('start') && v.id) windows.push({ start: e.time, end: null });
      if (e.f.startsWith('stop') && v.healed?.length) {
        const w = windows.find((x) => x.end === null);
        if (w) w.end = e.time;
      }
      continue;
    }
    if (e.type === 'invoke') {
      invokes.set(e.process, e);
      continue;
    }
    const inv = invokes.get(e.process);
    if (e.f === 'add' && e.type === 'ok')
      adds.push({
        value: e.value as number,
        invoked: inv?.time ?? 0,
        acked: e.time,
        seq: e.seq,
        node: e.node,
      });
    if (e.f === 'final-read' && e.type === 'ok') reads.push(e);
  }
  // The last complete final read per node.
  const lastRead = new Map<string, Event>();
  for (const r of reads) lastRead.set(r.node as string, r);
  const seen = new Map<string, Set<number>>();
  for (const [node, r] of lastRead) seen.set(node, new Set(r.value as number[]));
  const bySeq = new Map<number, number[]>();
  for (const a of adds) if (a.seq !== undefined) bySeq.set(a.seq, [...(bySeq.get(a.seq) ?? []), a.value]);
  const heal = windows.at(-1)?.end ?? null;
  const start = windows[0]?.start ?? null;
  const when = (t: number) =>
    start !== null && t < start ? 'before' : heal === null || t <= heal ? 'during' : 'after-heal';
  const lost = adds.filter((a) => [...seen.values()].some((set) => !set.has(a.value)));
  const classes = { before: 0, during: 0, 'after-heal': 0 };
  for (const a of lost) classes[when(a.acked) as keyof typeof classes]++;
  console.log(`${dir}`);
  console.log(
    `  faults: ${windows.map((w) => `${s(w.start)}–${w.end === null ? '?' : s(w.end)} s`).join(', ') || 'none'}; ` +
      `${adds.length} acknowledged; lost (missing from ≥1 final read): ${lost.length} ` +
      `(before ${classes.before}, during ${classes.during}, after the heal ${classes['after-heal']})`,
  );
  for (const [node, r] of [...lastRead].sort()) {
    const st = r.streamState;
    console.log(
      `  final read on ${node} (op ${r.index}, ${s(r.time)} s): ${(r.value as number[]).length} values, stream ${st ? `${st.first_seq}:${st.last_seq}:${st.messages}` : '?'}`,
    );
  }
  for (const a of lost.filter((x) => when(x.acked) === 'after-heal')) {
    const missing = [...seen].filter(([, set]) => !set.has(a.value)).map(([n]) => n);
    const same = (bySeq.get(a.seq as number) ?? []).filter((v) => v !== a.value);
    console.log(
      `  after the heal: ${a.value} acked at ${s(a.acked)} s (${s(a.acked - (heal as number))} s after the heal) by ${a.node} with seq ${a.seq}; missing on ${missing.join(', ')}; ` +
        `seq ${a.seq} also acknowledged for ${same.length ? same.join(', ') : 'no other message'}` +
        (same.length
          ? ` (${same
              .map(
                (v) =>
                  `${v} ${
                    [...seen]
                      .filter(([, set]) => set.has(v))
                      .map(([n]) => n)
                      .join('/') || 'in no read'
                  }`,
              )
              .join('; ')})`
          : ''),
    );
    for (const [node, r] of [...lastRead].sort()) {
      const st = r.streamState;
      if (!r.bySeq || !st || a.seq === undefined) continue;
      const held = r.bySeq[a.seq - st.first_seq];
      console.log(
        `    ${node}'s replica holds at seq ${a.seq}: ${held === undefined ? 'beyond its read' : held === null ? 'nothing' : held}`,
      );
    }
  }
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: npx tsx loss-timing.ts RUN_DIR...');
  process.exit(2);
}
for (const d of dirs) analyse(d);
