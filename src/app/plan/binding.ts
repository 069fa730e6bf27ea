import { z } from 'zod';
import { PARTITION_TOPOLOGIES } from '../../../nemeses/topology.ts';

/**
 * The executable binding of a scenario: what `faultline run` needs to actually execute it. It lives in a
 * fenced ```faultline YAML block inside a Markdown scenario, or under `binding:` in a native YAML/JSON
 * plan. The vocabulary follows Jepsen's names (nemesis kinds, partition topologies, checker names) so a
 * Jepsen user can read a binding without a glossary.
 */

export const DBS = ['etcd', 'redis'] as const;
export const WORKLOADS = ['register', 'multi-register', 'set', 'list-append', 'counter', 'bank'] as const;
export const CHECKERS = [
  'linearizable',
  'elle',
  'set',
  'set-full',
  'counter',
  'bank',
  'unique-ids',
  'queue',
  'total-queue',
  'no-lost-ack',
  'exactly-once',
  'session',
  'stats',
  'perf',
  'slo',
  'fairness',
] as const;
export type CheckerName = (typeof CHECKERS)[number];

/** Checkers that only summarise (stats, perf, slo): they can never see a consistency anomaly. */
export const SURFACE_ONLY_CHECKERS: ReadonlySet<CheckerName> = new Set(['stats', 'perf']);

export const MODELS = [
  'register',
  'map',
  'queue',
  'log',
  'lock',
  'lease',
  'session',
  'membership-table',
  'counter',
  'ledger',
] as const;

/** The nemesis's own list: a plan can name exactly the topologies the partition nemesis computes. */
export { PARTITION_TOPOLOGIES };
export const PROCESS_ACTIONS = ['kill', 'terminate', 'pause', 'resume', 'restart'] as const;
export const PACKET_BEHAVIOURS = ['delay', 'loss', 'corrupt', 'duplicate', 'reorder', 'rate'] as const;
export const CLOCK_ACTIONS = ['reset', 'bump', 'strobe', 'scramble'] as const;
export const DISK_ACTIONS = ['disk-full', 'slow', 'fsync-fail'] as const;

/** Where a nemesis acts: a Jepsen target selector or explicit node names. */
const targets = z.union([
  z.enum(['one', 'minority', 'majority', 'all', 'primaries', 'minority-third']),
  z.array(z.string().min(1)).min(1),
]);

/** When a fault window opens and how long it stays open, in seconds from the start of the workload. */
const timing = {
  startS: z.number().nonnegative().default(10),
  durationS: z.number().positive().default(20),
  /** Repeat the window every intervalS seconds until the run ends (Jepsen's cycling nemesis). */
  intervalS: z.number().positive().optional(),
  /** Cap on the number of windows this entry opens. */
  count: z.number().int().positive().optional(),
};

export const nemesisStepSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('partition'),
    /** `asymmetric` drops one direction only (A→B); every other topology drops both directions. */
    topology: z.enum(PARTITION_TOPOLOGIES),
    ...timing,
  }),
  z.strictObject({
    kind: z.literal('packet'),
    behaviour: z.enum(PACKET_BEHAVIOURS),
    targets: targets.default('all'),
    params: z.record(z.string(), z.unknown()).default({}),
    ...timing,
  }),
  z.strictObject({
    kind: z.literal('clock'),
    action: z.enum(CLOCK_ACTIONS),
    targets: targets.default('one'),
    /** Offset for bump/strobe, milliseconds. */
    deltaMs: z.number().optional(),
    ...timing,
  }),
  z.strictObject({
    kind: z.literal('process'),
    action: z.enum(PROCESS_ACTIONS),
    targets: targets.default('one'),
    ...timing,
  }),
  z.strictObject({
    kind: z.literal('disk'),
    action: z.enum(DISK_ACTIONS),
    targets: targets.default('one'),
    ...timing,
  }),
]);
export type NemesisStep = z.infer<typeof nemesisStepSchema>;

/** One budget tier as numbers. Config size is nodes or tenants (exactly one of them). */
export const tierSchema = z
  .strictObject({
    nodes: z.number().int().positive().optional(),
    tenants: z.number().int().positive().optional(),
    durationS: z.number().positive(),
    faultWindows: z.number().int().nonnegative(),
    seeds: z.number().int().positive(),
  })
  .refine((t) => (t.nodes === undefined) !== (t.tenants === undefined), {
    message: 'a tier names exactly one config size: nodes or tenants',
  });
export type Tier = z.infer<typeof tierSchema>;

export const TIER_NAMES = ['smoke', 'hardening', 'release'] as const;
export type TierName = (typeof TIER_NAMES)[number];

export const dbOptionsSchema = z.strictObject({
  /** etcd: serve reads from the contacted member's local state (`--consistency=s`): possibly stale. */
  serializableReads: z.boolean().optional(),
  /** Redis: send reads to the replicas instead of the primary: possibly stale. */
  readFrom: z.enum(['primary', 'replicas']).optional(),
});
export type DbOptions = z.infer<typeof dbOptionsSchema>;

const bindingBody = {
  db: z.enum(DBS),
  /**
   * Options for the DB adapter. Strict: a misspelt option must not silently run the default (safe)
   * configuration, which would turn a negative control into a false PASS.
   */
  dbOptions: dbOptionsSchema.default({}),
  workload: z.enum(WORKLOADS),
  concurrency: z.number().int().positive().default(5),
  /** Target request rate per second across all clients (open loop); absent = as fast as the clients go. */
  rate: z.number().positive().optional(),
  model: z.enum(MODELS),
  checkers: z.array(z.enum(CHECKERS)).min(1),
  nemesis: z.array(nemesisStepSchema).default([]),
  tiers: z
    .strictObject({
      smoke: tierSchema.optional(),
      hardening: tierSchema.optional(),
      release: tierSchema.optional(),
    })
    .default({}),
};

/** Arms override any part of the parent binding (e.g. a different checker for `S5/export`). */
export const armBindingSchema = z.strictObject({
  db: bindingBody.db.optional(),
  dbOptions: dbOptionsSchema.optional(),
  workload: bindingBody.workload.optional(),
  concurrency: z.number().int().positive().optional(),
  rate: bindingBody.rate,
  model: bindingBody.model.optional(),
  checkers: bindingBody.checkers.optional(),
  nemesis: z.array(nemesisStepSchema).optional(),
  tiers: bindingBody.tiers.optional(),
});

export const bindingSchema = z.strictObject({
  ...bindingBody,
  /** Per-arm overrides keyed by surface (`api` for arm `S5/api`). */
  arms: z.record(z.string(), armBindingSchema).default({}),
});
export type Binding = z.infer<typeof bindingSchema>;
export type ArmBinding = z.infer<typeof armBindingSchema>;

/** `checker: linearizable` is accepted as shorthand for `checkers: [linearizable]`. */
export function normaliseBindingInput(raw: unknown): unknown {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const o = { ...(raw as Record<string, unknown>) };
    if ('checker' in o && !('checkers' in o)) {
      o.checkers = Array.isArray(o.checker) ? o.checker : [o.checker];
      delete o.checker;
    }
    return o;
  }
  return raw;
}

/** The binding an arm runs with: the parent's, overridden field by field. */
export function armBinding(parent: Binding, armSurface: string): Binding {
  const over = parent.arms[armSurface];
  if (!over) return parent;
  return {
    ...parent,
    ...Object.fromEntries(Object.entries(over).filter(([, v]) => v !== undefined)),
    arms: {},
  } as Binding;
}

/** Number of fault windows a nemesis schedule opens within a run of `durationS` seconds. */
export function scheduledWindows(steps: readonly NemesisStep[], durationS: number): number {
  let n = 0;
  for (const s of steps) {
    if (s.startS >= durationS) continue;
    if (s.intervalS === undefined) {
      n += 1;
      continue;
    }
    const fit = Math.floor((durationS - s.startS) / s.intervalS) + 1;
    n += s.count === undefined ? fit : Math.min(fit, s.count);
  }
  return n;
}
