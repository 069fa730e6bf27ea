import { any, flipFlop, repeat, stagger } from '../../core/generator/index.ts';
import type { Context, GenLike, GenOp } from '../../core/generator/types.ts';
import { UserError } from '../../core/util/errors.ts';

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

/**
 * What a nemesis op means: the fault class whose window it opens or closes, the nemesis kind and the
 * action. Jepsen's names first (start-partition/stop-partition, kill/start, pause/resume,
 * bump-clock|strobe-clock/reset-clock, start-packet/stop-packet); any other `start-<kind>` /
 * `stop-<kind>` addresses the nemesis of that kind (action from the op value, default "start").
 */
export interface FaultOpMeaning {
  /** Window class: stop ops close every open window of their class. */
  cls: string;
  kind: string;
  action: string;
  starts: boolean;
}

const JEPSEN_OPS: Record<string, FaultOpMeaning> = {
  'start-partition': { cls: 'partition', kind: 'partition', action: 'start', starts: true },
  'stop-partition': { cls: 'partition', kind: 'partition', action: 'stop', starts: false },
  kill: { cls: 'kill', kind: 'process', action: 'kill', starts: true },
  start: { cls: 'kill', kind: 'process', action: 'start', starts: false },
  pause: { cls: 'pause', kind: 'process', action: 'pause', starts: true },
  resume: { cls: 'pause', kind: 'process', action: 'resume', starts: false },
  'bump-clock': { cls: 'clock', kind: 'clock', action: 'bump', starts: true },
  'strobe-clock': { cls: 'clock', kind: 'clock', action: 'strobe', starts: true },
  'reset-clock': { cls: 'clock', kind: 'clock', action: 'reset', starts: false },
};

export function classifyFaultOp(f: string, value?: unknown): FaultOpMeaning | null {
  const known = JEPSEN_OPS[f];
  if (known) return known;
  const m = /^(start|stop)-([a-z][a-z0-9-]*)$/.exec(f);
  if (!m) return null;
  const kind = m[2] as string;
  const action = (value as { action?: unknown } | null)?.action;
  return {
    cls: kind,
    kind,
    action: typeof action === 'string' ? action : (m[1] as string),
    starts: m[1] === 'start',
  };
}
