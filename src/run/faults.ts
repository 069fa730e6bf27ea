import { any, flipFlop, repeat, stagger } from '../generator/index.ts';
import type { Context, GenLike, GenOp } from '../generator/types.ts';
import { UserError } from '../util/errors.ts';

/**
 * The fault schedule, after jepsen.nemesis.combined (reference §5.2): each fault class alternates
 * start/stop ops (`flip-flop start (repeat stop)`) staggered by the interval, and the classes run side by
 * side (`any`). Target choices are drawn from the nemesis random stream, so a seed fixes the schedule.
 * The final generator heals every class, one after another.
 *
 * Op names are Jepsen's: start-partition/stop-partition, kill/start, pause/resume, bump-clock/reset-clock.
 */
export const FAULT_NAMES = ['partition', 'kill', 'pause', 'clock'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

export interface FaultOpValue {
  /** Target selector: one, minority, majority, all, primaries. */
  targets: string;
  [param: string]: unknown;
}

interface FaultClass {
  /** Target selectors drawn from by default. */
  targets: readonly string[];
  start: (ctx: Context, targets: string) => GenOp;
  stop: GenOp;
}

const CLASSES: Record<FaultName, FaultClass> = {
  partition: {
    targets: ['majority', 'primaries', 'one'],
    start: (_ctx, targets) => ({ f: 'start-partition', value: { targets } }),
    stop: { f: 'stop-partition', value: { targets: 'all' } },
  },
  kill: {
    targets: ['one', 'primaries', 'minority'],
    start: (_ctx, targets) => ({ f: 'kill', value: { targets } }),
    stop: { f: 'start', value: { targets: 'all' } },
  },
  pause: {
    targets: ['one', 'primaries'],
    start: (_ctx, targets) => ({ f: 'pause', value: { targets } }),
    stop: { f: 'resume', value: { targets: 'all' } },
  },
  clock: {
    targets: ['one', 'minority'],
    start: (ctx, targets) => ({
      f: 'bump-clock',
      value: {
        targets,
        deltaMs: (ctx.rng.next() < 0.5 ? -1 : 1) * (1000 + ctx.rng.int(60_000)),
      },
    }),
    stop: { f: 'reset-clock', value: { targets: 'all' } },
  },
};

/** Parses `--nemesis partition,kill` (also `none` and `all`). */
export function parseFaults(spec: string | undefined): FaultName[] {
  if (!spec || spec === 'none') return [];
  const names = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.includes('all')) return [...FAULT_NAMES];
  for (const n of names)
    if (!(FAULT_NAMES as readonly string[]).includes(n))
      throw new UserError(`--nemesis: unknown fault "${n}" (one of ${FAULT_NAMES.join(', ')}, none, all)`);
  return [...new Set(names)] as FaultName[];
}

/** The main-phase nemesis generator: every chosen class on its own staggered start/stop cycle. */
export function faultGenerator(
  faults: readonly FaultName[],
  intervalNs: number,
  targets: Partial<Record<FaultName, readonly string[]>> = {},
): GenLike {
  if (faults.length === 0) return null;
  return any(
    ...faults.map((name) => {
      const c = CLASSES[name];
      const choices = targets[name] ?? c.targets;
      if (choices.length === 0) throw new UserError(`no target selectors for ${name}`);
      const start = (ctx: Context) => c.start(ctx, ctx.rng.pick(choices));
      return stagger(intervalNs, flipFlop(repeat(start), repeat(c.stop)));
    }),
  );
}

/** Heal every chosen class, one after another. */
export function finalFaultGenerator(faults: readonly FaultName[]): GenLike {
  return faults.map((name) => ({ ...CLASSES[name].stop }));
}

/** Which fault class an op belongs to, and whether it starts or ends a fault window. */
export function classifyFaultOp(f: string): { fault: FaultName; starts: boolean } | null {
  for (const name of FAULT_NAMES) {
    const c = CLASSES[name];
    if (c.stop.f === f) return { fault: name, starts: false };
  }
  const starts: Record<string, FaultName> = {
    'start-partition': 'partition',
    kill: 'kill',
    pause: 'pause',
    'bump-clock': 'clock',
  };
  const fault = starts[f];
  return fault ? { fault, starts: true } : null;
}
