import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { GenOp } from '../../core/generator/types.ts';
import { InputError } from '../../core/util/errors.ts';
import type { NemesisStep } from '../plan/binding.ts';
import { nemesisStepSchema } from '../plan/binding.ts';

/**
 * A plan's nemesis steps (`startS`, `durationS`, `intervalS`, `count`) as concrete fault windows, and
 * those windows as the nemesis ops the runner dispatches at their intended times. The windows are the
 * unit the FAIL reducer removes, so one window = one "event" in "N→k events".
 */
export interface FaultWindow {
  /** e1, e2 … in start order: stable names for the reduction record. */
  event: string;
  step: NemesisStep;
  startS: number;
  endS: number;
}

const SECOND_NS = 1_000_000_000;

/** Every window the steps open in a run of `durationS` seconds, in start order, at most `maxWindows`. */
export function faultWindows(
  steps: readonly NemesisStep[],
  durationS: number,
  maxWindows = Number.POSITIVE_INFINITY,
): FaultWindow[] {
  const out: Omit<FaultWindow, 'event'>[] = [];
  for (const step of steps) {
    const n = step.intervalS === undefined ? 1 : (step.count ?? Number.POSITIVE_INFINITY);
    for (let k = 0; k < n; k++) {
      const startS = step.startS + k * (step.intervalS ?? 0);
      if (startS >= durationS) break;
      out.push({ step, startS, endS: Math.min(startS + step.durationS, durationS) });
    }
  }
  out.sort((a, b) => a.startS - b.startS);
  return out.slice(0, maxWindows).map((w, i) => ({ ...w, event: `e${i + 1}` }));
}

/** Fault kind of a window as the reducer counts it: partition, process, clock, packet, disk. */
export function windowKind(w: FaultWindow): string {
  return w.step.kind;
}

const SIDE_SELECTORS: ReadonlySet<string> = new Set(['one', 'majority', 'primaries']);

interface OpPair {
  start: GenOp;
  stop: GenOp;
}

/** Extra nemesis params per kind, from the session (e.g. clock: libfaketime mode and the DB binary). */
export type KindParams = Partial<Record<NemesisStep['kind'], Record<string, unknown>>>;

/** The nemesis op pair for one step, in the runner's (Jepsen's) op vocabulary (src/app/run/faults.ts). */
export function opsForStep(step: NemesisStep, extra: KindParams = {}): OpPair {
  switch (step.kind) {
    case 'partition': {
      // `one`, `majority` and `primaries` pick their side through the runner's selector (primaries: the
      // DB adapter's live answer); the other topologies span every node.
      const targets = SIDE_SELECTORS.has(step.topology) ? step.topology : undefined;
      return {
        start: { f: 'start-partition', value: { topology: step.topology, ...(targets && { targets }) } },
        stop: { f: 'stop-partition', value: { targets: 'all' } },
      };
    }
    case 'process': {
      const named: Record<string, [string, string]> = { kill: ['kill', 'start'], pause: ['pause', 'resume'] };
      const pair = named[step.action];
      if (pair)
        return {
          start: { f: pair[0], value: { targets: step.targets } },
          stop: { f: pair[1], value: { targets: 'all' } },
        };
      return {
        start: { f: 'start-process', value: { action: step.action, targets: step.targets } },
        stop: { f: 'stop-process', value: { targets: 'all' } },
      };
    }
    case 'clock': {
      const f =
        step.action === 'bump' ? 'bump-clock' : step.action === 'strobe' ? 'strobe-clock' : 'start-clock';
      return {
        start: {
          f,
          value: {
            targets: step.targets,
            ...(f === 'start-clock' && { action: step.action }),
            ...(step.deltaMs !== undefined && { deltaMs: step.deltaMs }),
            ...(extra.clock && {
              params: { ...extra.clock, ...(step.deltaMs !== undefined && { deltaMs: step.deltaMs }) },
            }),
          },
        },
        stop: { f: 'reset-clock', value: { targets: 'all' } },
      };
    }
    case 'packet':
      return {
        start: {
          f: 'start-packet',
          value: { action: step.behaviour, targets: step.targets, params: step.params },
        },
        stop: { f: 'stop-packet', value: { targets: 'all' } },
      };
    case 'disk':
      return {
        start: { f: 'start-disk', value: { action: step.action, targets: step.targets } },
        stop: { f: 'stop-disk', value: { targets: 'all' } },
      };
  }
}

/**
 * The windows as a nemesis generator: every start and stop op carries its intended time (ns since the
 * workload began), so the runner opens and closes each window on schedule. `final` heals every kind used.
 */
export function nemesisPlanFor(
  windows: readonly FaultWindow[],
  extra: KindParams = {},
): { main: GenOp[]; final: GenOp[] } {
  const timed: GenOp[] = [];
  const stops = new Map<string, GenOp>();
  for (const w of windows) {
    const { start, stop } = opsForStep(w.step, extra);
    timed.push({ ...start, time: Math.round(w.startS * SECOND_NS) });
    timed.push({ ...stop, time: Math.round(w.endS * SECOND_NS) });
    stops.set(stop.f, stop);
  }
  // Stable: a stop at the same instant as the next start runs first.
  timed.sort((a, b) => (a.time as number) - (b.time as number) || Number(!isStop(a)) - Number(!isStop(b)));
  return { main: timed, final: [...stops.values()].map((s) => ({ ...s })) };
}

function isStop(op: GenOp): boolean {
  return /^(stop-|reset-)|^start$|^resume$/.test(op.f);
}

/** The reduced schedule file (`--replay`): the windows a reproducible FAIL needs. */
export const replayFileSchema = z.object({
  plan: z.string(),
  scenario: z.string(),
  seed: z.number().int().nonnegative(),
  durationS: z.number().positive(),
  windows: z.array(
    z.object({
      event: z.string(),
      step: nemesisStepSchema,
      startS: z.number().nonnegative(),
      endS: z.number().nonnegative(),
    }),
  ),
});
export type ReplayFile = z.infer<typeof replayFileSchema>;

export async function loadReplayFile(path: string): Promise<ReplayFile> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new InputError(path, null, null, `not a reduced-schedule JSON file (${(err as Error).message})`);
  }
  const r = replayFileSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new InputError(path, null, issue?.path.join('.') || null, issue?.message ?? 'invalid');
  }
  return r.data;
}
