import { z } from 'zod';
import { Rng } from '../src/core/generator/rng.ts';
import { InputError } from '../src/core/util/errors.ts';

/**
 * A seeded fault schedule in the spirit of jepsen.nemesis.combined: each fault class alternates start /
 * stop ops (flip-flop), each gap drawn uniformly from [0, 2 × interval) (Jepsen's stagger, so gaps average
 * the interval), the classes run side by side, and final heal ops close every class at the end. The
 * same seed and options give the same schedule; `scheduleToJson` / `parseSchedule` export and replay it.
 * Op names are Jepsen's.
 */
export const SCHEDULE_FAULTS = [
  'partition',
  'packet',
  'kill',
  'pause',
  'clock',
  'file-corruption',
  'disk-full',
] as const;
export type ScheduleFault = (typeof SCHEDULE_FAULTS)[number];

interface ClassOps {
  start: string;
  stop: string | null;
  final: string | null;
  defaultTargets: string[];
}

const CLASSES: Record<ScheduleFault, ClassOps> = {
  partition: {
    start: 'start-partition',
    stop: 'stop-partition',
    final: 'stop-partition',
    defaultTargets: ['one', 'majority', 'majorities-ring', 'minority-third', 'primaries'],
  },
  packet: {
    start: 'start-packet',
    stop: 'stop-packet',
    final: 'stop-packet',
    defaultTargets: ['one', 'minority', 'majority', 'all'],
  },
  kill: {
    start: 'kill',
    stop: 'start',
    final: 'start',
    defaultTargets: ['one', 'minority', 'majority', 'primaries'],
  },
  pause: {
    start: 'pause',
    stop: 'resume',
    final: 'resume',
    defaultTargets: ['one', 'minority', 'majority', 'primaries'],
  },
  clock: {
    start: 'bump-clock',
    stop: 'reset-clock',
    final: 'reset-clock',
    defaultTargets: ['one', 'minority', 'majority', 'all'],
  },
  // Corruption has no undo (as in Jepsen): single shots, no stop and no final op.
  'file-corruption': { start: 'corrupt-file', stop: null, final: null, defaultTargets: ['one', 'minority'] },
  'disk-full': {
    start: 'start-disk-full',
    stop: 'stop-disk-full',
    final: 'stop-disk-full',
    defaultTargets: ['one', 'minority'],
  },
};

export interface ScheduleOptions {
  faults: readonly ScheduleFault[];
  intervalMs: number;
  durationMs: number;
  seed: number;
  /** Per fault class, the target selectors (or partition topologies) drawn from. */
  targets?: Partial<Record<ScheduleFault, readonly string[]>>;
  /** Clock bumps are drawn from ±[minDeltaMs, maxDeltaMs] (default 100 ms … 60 s). */
  clock?: { minDeltaMs?: number; maxDeltaMs?: number };
  /** Packet behaviours, passed through (e.g. { loss: { percent: 20 } }). */
  behaviors?: Record<string, unknown>;
}

const opSchema = z.object({
  atMs: z.number().nonnegative(),
  f: z.string().min(1),
  value: z.record(z.string(), z.unknown()),
  phase: z.enum(['main', 'final']),
});
export const scheduleSchema = z.object({
  version: z.literal(1),
  seed: z.number().int(),
  intervalMs: z.number().positive(),
  durationMs: z.number().nonnegative(),
  faults: z.array(z.enum(SCHEDULE_FAULTS)),
  ops: z.array(opSchema),
});
export type Schedule = z.infer<typeof scheduleSchema>;
export type ScheduledOp = z.infer<typeof opSchema>;

export function buildSchedule(o: ScheduleOptions): Schedule {
  if (!(o.intervalMs > 0)) throw new RangeError('intervalMs must be > 0');
  const ops: ScheduledOp[] = [];
  o.faults.forEach((fault, k) => {
    const c = CLASSES[fault];
    // One stream per class, derived from the seed: adding a class does not reshuffle the others.
    const rng = new Rng(o.seed).fork(`fault-class-${k}`);
    const choices = o.targets?.[fault] ?? c.defaultTargets;
    if (choices.length === 0) throw new RangeError(`no targets for ${fault}`);
    let t = 0;
    let starting = true;
    for (;;) {
      t += rng.next() * 2 * o.intervalMs;
      if (t >= o.durationMs) break;
      if (starting || c.stop === null) {
        const choice = rng.pick(choices);
        const value: Record<string, unknown> =
          fault === 'partition' ? { targets: choice, topology: choice } : { targets: choice };
        if (fault === 'clock') {
          const min = o.clock?.minDeltaMs ?? 100;
          const max = o.clock?.maxDeltaMs ?? 60_000;
          value.deltaMs = (rng.next() < 0.5 ? -1 : 1) * Math.round(min + rng.next() * (max - min));
        }
        if (fault === 'packet') value.behaviors = o.behaviors ?? { loss: { percent: 20 } };
        ops.push({ atMs: Math.round(t), f: c.start, value, phase: 'main' });
      } else {
        ops.push({ atMs: Math.round(t), f: c.stop, value: { targets: 'all' }, phase: 'main' });
      }
      starting = !starting;
    }
  });
  ops.sort((a, b) => a.atMs - b.atMs);
  // Final heals run one after another once the main phase is over.
  for (const fault of o.faults) {
    const f = CLASSES[fault].final;
    if (f) ops.push({ atMs: o.durationMs, f, value: { targets: 'all' }, phase: 'final' });
  }
  return {
    version: 1,
    seed: o.seed,
    intervalMs: o.intervalMs,
    durationMs: o.durationMs,
    faults: [...o.faults],
    ops,
  };
}

export function scheduleToJson(s: Schedule): string {
  return `${JSON.stringify(s, null, 2)}\n`;
}

/** Read an exported schedule back for replay; a bad file is a one-line InputError. */
export function parseSchedule(text: string, file = 'schedule.json'): Schedule {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new InputError(file, null, null, `not JSON (${(err as Error).message})`);
  }
  const r = scheduleSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new InputError(file, null, issue?.path.join('.') || null, issue?.message ?? 'invalid schedule');
  }
  return r.data;
}
