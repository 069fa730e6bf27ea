import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { type Generator, type GenOp, PENDING, type ThreadId } from '../../core/generator/types.ts';
import type { ProcessId } from '../../core/history/event.ts';
import { InputError } from '../../core/util/errors.ts';

/**
 * The schedule: every op the generator handed out (client, nemesis, sleep, log), with its thread, the
 * intended time and the dispatch time. Written as JSON (schedule.json) while the run goes, so a crashed
 * run keeps it, and replayable with `replayDispatchLog`: the same ops on the same threads at the same
 * offsets, without the generator (and without the random choices that produced them).
 */

export interface DispatchedOp {
  thread: ThreadId;
  process: ProcessId;
  /** Dispatch time, ns since run start. */
  at: number;
  /** Intended time when the op had one (rate/stagger/delay). */
  time?: number;
  kind: 'invoke' | 'sleep' | 'log';
  f: string;
  value: unknown;
  key?: string;
}

export interface DispatchLogHeader {
  seed: number;
  concurrency: number;
  nodes: string[];
  [extra: string]: unknown;
}

export interface DispatchRecorder {
  record(thread: ThreadId, process: ProcessId, at: number, op: GenOp): void;
}

/** Streams the dispatch log to disk as one JSON object `{...header, "ops": [ … ]}`, one op per line. */
export class DispatchLogWriter implements DispatchRecorder {
  private readonly out: WriteStream;
  private first = true;
  private buf: string[] = [];
  count = 0;

  constructor(path: string, header: DispatchLogHeader) {
    this.out = createWriteStream(path);
    const head = JSON.stringify({ ...header, ops: [] });
    this.out.write(`${head.slice(0, -2)}\n`);
  }

  record(thread: ThreadId, process: ProcessId, at: number, op: GenOp): void {
    const entry = dispatchedOp(thread, process, at, op);
    this.buf.push(`${this.first ? '' : ',\n'}${JSON.stringify(entry)}`);
    this.first = false;
    this.count++;
    if (this.buf.length >= 512) this.flush();
  }

  private flush(): void {
    if (this.buf.length === 0) return;
    this.out.write(this.buf.join(''));
    this.buf = [];
  }

  async close(): Promise<void> {
    this.flush();
    await new Promise<void>((resolve, reject) => {
      this.out.end('\n]}\n', () => resolve());
      this.out.once('error', reject);
    });
  }
}

/** One dispatch-log entry for an op handed to a thread. */
function dispatchedOp(thread: ThreadId, process: ProcessId, at: number, op: GenOp): DispatchedOp {
  const entry: DispatchedOp = {
    thread,
    process,
    at,
    kind: op.kind ?? 'invoke',
    f: op.f,
    value: op.value ?? null,
  };
  if (op.time !== undefined) entry.time = op.time;
  if (op.key !== undefined) entry.key = op.key;
  return entry;
}

/** Keeps the dispatch log in memory (tests). */
export class MemoryDispatchLog implements DispatchRecorder {
  readonly ops: DispatchedOp[] = [];
  record(thread: ThreadId, process: ProcessId, at: number, op: GenOp): void {
    this.ops.push(dispatchedOp(thread, process, at, op));
  }
}

const dispatchedOpSchema = z.object({
  thread: z.union([z.number().int().nonnegative(), z.literal('nemesis')]),
  process: z.union([z.number().int().nonnegative(), z.literal('nemesis')]),
  at: z.number().nonnegative(),
  time: z.number().optional(),
  kind: z.enum(['invoke', 'sleep', 'log']),
  f: z.string(),
  value: z.unknown(),
  key: z.string().optional(),
});

export const dispatchLogSchema = z.looseObject({
  seed: z.number(),
  concurrency: z.number().int().positive(),
  nodes: z.array(z.string()),
  ops: z.array(dispatchedOpSchema),
});
export type DispatchLog = z.infer<typeof dispatchLogSchema>;

export async function loadDispatchLog(path: string): Promise<DispatchLog> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new InputError(path, null, null, `not a schedule JSON file (${(err as Error).message})`);
  }
  const parsed = dispatchLogSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(path, null, issue?.path.join('.') ?? null, issue?.message ?? 'invalid schedule');
  }
  return parsed.data;
}

/**
 * A generator that replays a dispatch log: each op on its recorded thread, not before its recorded offset
 * (the intended time when it had one, else the dispatch time). Threads keep their recorded order.
 */
export function replayDispatchLog(log: Pick<DispatchLog, 'ops'>): Generator {
  const queues = new Map<ThreadId, { ops: DispatchedOp[]; i: number }>();
  for (const op of log.ops) {
    let q = queues.get(op.thread);
    if (!q) {
      q = { ops: [], i: 0 };
      queues.set(op.thread, q);
    }
    q.ops.push(op);
  }
  const cache = new Map<ThreadId, GenOp>();
  return {
    peek(ctx) {
      let best: GenOp | undefined;
      let live = false;
      for (const [thread, q] of queues) {
        const s = q.ops[q.i];
        if (!s) continue;
        live = true;
        if (!ctx.free.has(thread) || !ctx.allowed(thread)) continue;
        let op = cache.get(thread);
        if (!op) {
          op = { kind: s.kind, f: s.f, value: s.value, thread, time: s.time ?? s.at };
          if (s.key !== undefined) op.key = s.key;
          cache.set(thread, op);
        }
        if (!best || (op.time as number) < (best.time as number)) best = op;
      }
      if (best) return best;
      return live ? PENDING : null;
    },
    take(_ctx, op) {
      const thread = op.thread as ThreadId;
      const q = queues.get(thread);
      if (q) q.i++;
      cache.delete(thread);
    },
  };
}
