import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { Rng } from '../src/core/generator/rng.ts';
import type { GenOp } from '../src/core/generator/types.ts';
import { InputError, UserError } from '../src/core/util/errors.ts';
import { classifyFaultOp, faultClasses, nemeses } from './registry.ts';
import { checkSelector, TARGET_SELECTORS } from './targets.ts';
import { topologies } from './topology.ts';
import type { FaultClassDefinition, FaultOp, NemesisStep } from './types.ts';

/**
 * The one fault schedule. A schedule is a list of timed nemesis ops (Jepsen's op names, `atMs` from the
 * start of the workload) in two phases: `main`, and `final` heals that close every class once the
 * workload is over. Two builders make one:
 *
 * - `buildSchedule`: Jepsen's `nemesis.combined` for `faultline test --nemesis`: each class alternates
 *   start / stop ops, gaps uniform in [0, 2 × interval) (Jepsen's stagger), classes side by side, one
 *   seeded stream per class (adding a class does not reshuffle the others);
 * - `windowSchedule`: a plan's nemesis steps as fault windows (`faultWindows`), each window a start and
 *   a stop op at its intended times; the windows are the unit the FAIL reducer removes.
 *
 * Either way the schedule is written next to the run (`fault-schedule.json`) and can be replayed
 * (`parseSchedule`); `scheduleOps` turns it into the generator ops the runner dispatches on time.
 */

const opSchema = z.object({
  atMs: z.number().nonnegative(),
  f: z.string().min(1),
  value: z.record(z.string(), z.unknown()),
  phase: z.enum(['main', 'final']),
  /** The plan window (e1, e2 …) this op opens or closes. */
  event: z.string().optional(),
});
export const scheduleSchema = z.object({
  version: z.literal(1),
  seed: z.number().int(),
  intervalMs: z.number().positive(),
  durationMs: z.number().nonnegative(),
  faults: z.array(z.string()),
  ops: z.array(opSchema),
});
export type Schedule = z.infer<typeof scheduleSchema>;
export type ScheduledOp = z.infer<typeof opSchema>;

// ---------------------------------------------------------------- random classes (faultline test)

/** Parses `--nemesis partition,kill` (also `none` and `all`) against the registered fault classes. */
export function parseFaults(spec: string | undefined): string[] {
  if (!spec || spec === 'none') return [];
  const names = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const classes = faultClasses();
  if (names.includes('all')) return classes.filter((c) => c.inAll).map((c) => c.name);
  // A trailing * names a family: proxy-* is every proxy fault class.
  const expanded = names.flatMap((n) =>
    n.endsWith('*') ? classes.filter((c) => c.name.startsWith(n.slice(0, -1))).map((c) => c.name) : [n],
  );
  if (expanded.length === 0)
    throw new UserError(
      `--nemesis: ${spec} names no fault class (one of ${classes.map((c) => c.name).join(', ')})`,
    );
  for (const n of expanded)
    if (!classes.some((c) => c.name === n))
      throw new UserError(
        `--nemesis: unknown fault "${n}" (one of ${classes.map((c) => c.name).join(', ')}, none, all; proxy-* for a family)`,
      );
  return [...new Set(expanded)];
}

function faultClass(name: string): FaultClassDefinition {
  const c = faultClasses().find((x) => x.name === name);
  if (!c) throw new UserError(`unknown fault class "${name}"`);
  return c;
}

export interface ScheduleOptions {
  faults: readonly string[];
  intervalMs: number;
  /** No op at or after this instant (the workload's time limit). */
  durationMs: number;
  seed: number;
  /** No fault before this instant (the cluster settles first). */
  delayMs?: number;
  /** Per fault class, the target selectors (or partition topologies) drawn from. */
  targets?: Readonly<Record<string, readonly string[]>>;
  /** Cluster size: default targets a cluster this small cannot have are left out. */
  nodeCount?: number;
  /**
   * Whether the database reports its leaders. When false, the default `primaries` choice is left out:
   * a window aimed at leaders the database cannot name would never land.
   */
  hasPrimaries?: boolean;
}

/**
 * Default choices a cluster of `n` nodes can take: a topology by its minimum (majorities-ring needs 4),
 * a target selector by what it selects (a minority needs 3 nodes; `one` and `primaries` fit one node).
 */
function fits(choice: string, n: number | undefined, asTopology: boolean): boolean {
  if (n === undefined) return true;
  const topology = asTopology ? topologies.get(choice) : undefined;
  if (topology) return n >= topology.minNodes;
  const nodes = Array.from({ length: n }, (_v, i) => `n${i + 1}`);
  return checkSelector(choice, nodes) === null;
}

export function buildSchedule(o: ScheduleOptions): Schedule {
  if (!(o.intervalMs > 0)) throw new RangeError('intervalMs must be > 0');
  const delay = o.delayMs ?? 0;
  const ops: ScheduledOp[] = [];
  o.faults.forEach((name, k) => {
    const c = faultClass(name);
    // One stream per class, derived from the seed: adding a class does not reshuffle the others.
    const rng = new Rng(o.seed).fork(`fault-class-${k}`);
    const choices =
      o.targets?.[name] ??
      c.defaultTargets.filter(
        (t) =>
          fits(t, o.nodeCount, c.choicesAreTopologies === true) &&
          (o.hasPrimaries !== false || t !== 'primaries'),
      );
    if (choices.length === 0) throw new UserError(`--nemesis ${name}: no target fits this cluster`);
    let t = delay;
    let starting = true;
    for (;;) {
      t += rng.next() * 2 * o.intervalMs;
      if (t >= o.durationMs) break;
      const next = starting || c.stop === null ? c.start(rng.pick(choices), rng) : c.stop;
      ops.push({ atMs: Math.round(t), f: next.f, value: { ...next.value }, phase: 'main' });
      starting = !starting;
    }
  });
  ops.sort((a, b) => a.atMs - b.atMs);
  // Final heals run one after another once the main phase is over.
  for (const name of o.faults) {
    const stop = faultClass(name).stop;
    if (stop) ops.push({ atMs: o.durationMs, f: stop.f, value: { ...stop.value }, phase: 'final' });
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

// ---------------------------------------------------------------- plan windows (faultline run)

/**
 * One fault window of a plan step: `e1, e2 …` in start order, stable names for the reduction record, so
 * one window = one "event" in "N→k events".
 */
export interface FaultWindow {
  event: string;
  step: NemesisStep;
  startS: number;
  endS: number;
}

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

/** The start and stop ops of one plan step, from its nemesis's definition. */
export function opsForStep(step: NemesisStep): { start: FaultOp; stop: FaultOp | null } {
  return nemeses.require(step.kind, 'nemesis').stepOps(step);
}

/** Extra params per nemesis kind, merged into the ops' `params` (e.g. clock: a libfaketime mode). */
export type KindParams = Readonly<Record<string, Record<string, unknown>>>;

function withExtra(op: FaultOp, extra: Record<string, unknown> | undefined): FaultOp {
  if (!extra) return op;
  const own = (op.value.params as Record<string, unknown> | undefined) ?? {};
  const deltaMs = op.value.deltaMs;
  return {
    f: op.f,
    value: { ...op.value, params: { ...extra, ...own, ...(deltaMs !== undefined && { deltaMs }) } },
  };
}

/** The windows as a schedule: each window's start op at its start, its stop op at its end. */
export function windowSchedule(
  windows: readonly FaultWindow[],
  durationS: number,
  seed = 0,
  extra: KindParams = {},
): Schedule {
  const main: ScheduledOp[] = [];
  const stops = new Map<string, FaultOp>();
  for (const w of windows) {
    const { start, stop } = opsForStep(w.step);
    const s = withExtra(start, extra[w.step.kind]);
    main.push({ atMs: Math.round(w.startS * 1000), f: s.f, value: s.value, phase: 'main', event: w.event });
    if (stop) {
      main.push({
        atMs: Math.round(w.endS * 1000),
        f: stop.f,
        value: stop.value,
        phase: 'main',
        event: w.event,
      });
      stops.set(stop.f, stop);
    }
  }
  // Stable: a stop at the same instant as the next start runs first.
  main.sort((a, b) => a.atMs - b.atMs || Number(!isStop(a)) - Number(!isStop(b)));
  const final = [...stops.values()].map(
    (s): ScheduledOp => ({ atMs: durationS * 1000, f: s.f, value: { ...s.value }, phase: 'final' }),
  );
  return {
    version: 1,
    seed,
    intervalMs: 1000,
    durationMs: durationS * 1000,
    faults: [...new Set(windows.map((w) => w.step.kind))],
    ops: [...main, ...final],
  };
}

function isStop(op: { f: string; value: unknown }): boolean {
  return classifyFaultOp(op.f, op.value)?.starts === false;
}

/**
 * The schedule as generator ops: the main phase with intended times (ns from the start of the workload,
 * so the runner opens and closes each window on time), and the final heals.
 */
export function scheduleOps(schedule: Schedule): { main: GenOp[]; final: GenOp[] } {
  const main = schedule.ops
    .filter((o) => o.phase === 'main')
    .map((o): GenOp => ({ f: o.f, value: { ...o.value }, time: Math.round(o.atMs * 1e6) }));
  const final = schedule.ops
    .filter((o) => o.phase === 'final')
    .map((o): GenOp => ({ f: o.f, value: { ...o.value } }));
  return { main, final };
}

/** The plan windows straight to generator ops (`windowSchedule` then `scheduleOps`). */
export function nemesisPlanFor(
  windows: readonly FaultWindow[],
  extra: KindParams = {},
): { main: GenOp[]; final: GenOp[] } {
  const end = windows.reduce((m, w) => Math.max(m, w.endS), 0);
  return scheduleOps(windowSchedule(windows, end, 0, extra));
}

/**
 * Every node a step names, with where it names it: explicit targets (a list, or one node's name), and
 * in partition params the grudge map's nodes, from / to and node.
 */
export function stepNodeNames(step: NemesisStep): { path: (string | number)[]; name: string }[] {
  const out: { path: (string | number)[]; name: string }[] = [];
  const t = step.targets;
  if (Array.isArray(t)) for (const [i, name] of t.entries()) out.push({ path: ['targets', i], name });
  else if (
    typeof t === 'string' &&
    !(TARGET_SELECTORS as readonly string[]).includes(t) &&
    !topologies.has(t)
  )
    out.push({ path: ['targets'], name: t });
  const p = (step.params ?? {}) as Record<string, unknown>;
  const grudge = p.grudge as Record<string, string[]> | undefined;
  for (const [node, from] of Object.entries(grudge ?? {})) {
    out.push({ path: ['params', 'grudge', node], name: node });
    for (const [i, name] of from.entries()) out.push({ path: ['params', 'grudge', node, i], name });
  }
  for (const side of ['from', 'to'] as const)
    for (const [i, name] of ((p[side] as string[] | undefined) ?? []).entries())
      out.push({ path: ['params', side, i], name });
  if (typeof p.node === 'string') out.push({ path: ['params', 'node'], name: p.node });
  return out;
}

/**
 * Every explicit target of the steps checked against the cluster's nodes before anything runs: an
 * unknown node name (in targets or a partition's grudge, from, to), or a selector the cluster is too
 * small for, is bad input naming the step.
 */
export function checkStepTargets(
  steps: readonly NemesisStep[],
  nodes: readonly string[],
  where: string,
): void {
  steps.forEach((step, i) => {
    const problem = checkSelector(step.targets, nodes);
    if (problem) throw new UserError(`${where}: nemesis[${i}] (${step.kind}): targets: ${problem}`);
    for (const n of stepNodeNames(step))
      if (!nodes.includes(n.name))
        throw new UserError(
          `${where}: nemesis[${i}] (${step.kind}): ${n.path.join('.')}: unknown node "${n.name}" (the cluster has ${nodes.join(', ')})`,
        );
    const topology = step.topology ? topologies.get(step.topology) : undefined;
    if (topology && nodes.length < topology.minNodes)
      throw new UserError(
        `${where}: nemesis[${i}]: partition "${step.topology}" needs at least ${topology.minNodes} nodes, the cluster has ${nodes.length}`,
      );
  });
}

// ---------------------------------------------------------------- export and replay

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

export async function loadSchedule(path: string): Promise<Schedule> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InputError(path, null, null, `cannot read the fault schedule (${(err as Error).message})`);
  }
  return parseSchedule(text, path);
}

/**
 * A plan step as validated by its nemesis's own step schema (the registry's, so plugin kinds work):
 * the schema of `nemesis:` entries in a plan binding and in the reduced-schedule file.
 */
export const nemesisStepSchema: z.ZodType<NemesisStep> = z
  .looseObject({ kind: z.string() })
  .transform((raw, ctx) => {
    const def = nemeses.get(raw.kind);
    if (!def) {
      ctx.addIssue({ code: 'custom', path: ['kind'], message: nemeses.unknownMessage(raw.kind) });
      return z.NEVER;
    }
    const r = def.step.safeParse(raw);
    if (!r.success) {
      for (const issue of r.error.issues)
        ctx.addIssue({ code: 'custom', path: issue.path as (string | number)[], message: issue.message });
      return z.NEVER;
    }
    return r.data as NemesisStep;
  }) as unknown as z.ZodType<NemesisStep>;

/** The reduced schedule file (`faultline run --replay`): the windows a reproducible FAIL needs. */
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
