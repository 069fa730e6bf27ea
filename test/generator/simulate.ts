import {
  type Context,
  type Generator,
  type GenOp,
  PENDING,
  Rng,
  type ThreadId,
} from '../../src/core/generator/index.ts';

/**
 * A deterministic, single-threaded stand-in for the interpreter: virtual time, each op takes `opNs`
 * to complete with the given type. Lets generator tests check exact schedules without real clocks.
 */
export interface SimOp extends GenOp {
  process: number | 'nemesis';
  at: number;
}

export function simulate(
  g: Generator,
  opts: {
    concurrency: number;
    nemesis?: boolean;
    seed?: number;
    opNs?: number;
    maxOps?: number;
    complete?: (op: GenOp) => 'ok' | 'fail' | 'info';
  },
): SimOp[] {
  const threads: ThreadId[] = [];
  for (let i = 0; i < opts.concurrency; i++) threads.push(i);
  if (opts.nemesis) threads.push('nemesis');
  const procs = new Map<ThreadId, number | 'nemesis'>(threads.map((t) => [t, t]));
  const free = new Set<ThreadId>(threads);
  const busy: { thread: ThreadId; until: number; op: GenOp }[] = [];
  const ctx = {
    time: 0,
    rng: new Rng(opts.seed ?? 1),
    threads,
    free,
    allowed: () => true,
    processOf: (t: ThreadId) => procs.get(t) as number | 'nemesis',
  } as Context & { time: number };
  const out: SimOp[] = [];
  const opNs = opts.opNs ?? 1000;
  for (let guard = 0; guard < 1_000_000 && out.length < (opts.maxOps ?? 100_000); guard++) {
    const r = g.peek(ctx);
    if (r === null && busy.length === 0) break;
    if (r !== null && r !== PENDING && (r.time ?? ctx.time) <= ctx.time) {
      const t = r.thread as ThreadId;
      g.take(ctx, r);
      free.delete(t);
      const proc = procs.get(t) as number | 'nemesis';
      out.push({ ...r, process: proc, at: ctx.time });
      g.update?.(ctx, { type: 'invoke', thread: t, process: proc, f: r.f, value: r.value });
      const dur = r.kind === 'sleep' ? Number(r.value) : opNs;
      busy.push({ thread: t, until: ctx.time + dur, op: r });
      continue;
    }
    // advance virtual time to the next event: a completion or the op's intended time
    const nextDone = busy.reduce((m, b) => Math.min(m, b.until), Number.POSITIVE_INFINITY);
    const nextOp = r !== null && r !== PENDING ? (r.time ?? ctx.time) : Number.POSITIVE_INFINITY;
    const next = Math.min(nextDone, nextOp);
    if (!Number.isFinite(next)) throw new Error('simulation stuck: pending with nothing in flight');
    ctx.time = Math.max(ctx.time, next);
    for (let i = busy.length - 1; i >= 0; i--) {
      const b = busy[i]!;
      if (b.until <= ctx.time) {
        busy.splice(i, 1);
        free.add(b.thread);
        if (b.op.kind === 'sleep' || b.op.kind === 'log') continue;
        const type = b.thread === 'nemesis' ? 'info' : (opts.complete?.(b.op) ?? 'ok');
        const proc = procs.get(b.thread) as number | 'nemesis';
        g.update?.(ctx, { type, thread: b.thread, process: proc, f: b.op.f, value: b.op.value });
        if (type === 'info' && typeof proc === 'number') procs.set(b.thread, proc + opts.concurrency);
      }
    }
  }
  return out;
}
