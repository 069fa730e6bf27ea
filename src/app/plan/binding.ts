import { z } from 'zod';
import { checkers } from '../../../checkers/registry.ts';
import { isPeerProxyStep } from '../../../nemeses/registry.ts';
import { nemesisStepSchema, stepNodeNames } from '../../../nemeses/schedule.ts';
import type { NemesisStep } from '../../../nemeses/types.ts';
import { durationMsSchema } from '../../core/util/duration-schema.ts';
import type { Registry } from '../../core/util/registry.ts';
import { clients } from '../../lib/clients/registry.ts';
import { databases } from '../../lib/databases/registry.ts';
import { type CheckerSpec, type Workload, workloads } from '../../lib/workloads/index.ts';

/**
 * The executable binding of a scenario: what `faultline run` needs to actually execute it. It lives in a
 * fenced ```faultline YAML block inside a Markdown scenario, or under `binding:` in a native YAML/JSON
 * plan. The vocabulary follows Jepsen's names (nemesis kinds, partition topologies, checker names) so a
 * Jepsen user can read a binding without a glossary.
 *
 * Every name a binding uses (db, client, workload, checkers, nemesis kinds and their actions, topologies)
 * is checked against its registry when the plan is read, so a plugin's names (`module:` in the binding,
 * or `--plugin`) are as valid as faultline's own.
 */

/** A name a registry knows: checked when the plan is read, with the registry's current names. */
function registered<T>(registry: Registry<T>): z.ZodType<string> {
  return z.string().refine((n) => registry.has(n), {
    error: (issue) => registry.unknownMessage(String(issue.input)),
  });
}

/** The plan-level model names (spec §7.M "Model under test"), not the linearizability checker's models. */
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

export type { NemesisStep };
export { nemesisStepSchema };

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

const bindingBody = {
  db: registered(databases),
  /**
   * Options for the DB adapter, checked by the database's own schema. Strict: a misspelt option must not
   * silently run the default (safe) configuration, which would turn a negative control into a false PASS.
   */
  dbOptions: z.record(z.string(), z.unknown()).default({}),
  /** The client; the database's default when absent. */
  client: registered(clients).optional(),
  /** Options for the client, checked by the client's schema. */
  clientOptions: z.record(z.string(), z.unknown()).default({}),
  workload: registered(workloads),
  concurrency: z.number().int().positive().default(5),
  /** Target request rate per second across all clients (open loop); absent = as fast as the clients go. */
  rate: z.number().positive().optional(),
  /**
   * An op still running after this completes as `info` (timeout), e.g. `5s`; default 1.5 s. A client
   * whose requests legitimately take longer (a broker's publisher confirm) needs more.
   */
  // A number is milliseconds (what the string becomes: a parsed plan is validated again when resolved).
  opTimeout: z.union([durationMsSchema(), z.number().int().positive()]).optional(),
  model: z.enum(MODELS),
  /** The checkers that run, by name. */
  checkers: z.array(registered(checkers)).min(1),
  /**
   * Options per checker, keyed by name (the `faultline check --options` shape): SLO thresholds, fairness
   * groups, a linearizability model. `independent: true` checks each key on its own.
   */
  checkerOptions: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  nemesis: z.array(nemesisStepSchema).default([]),
  /**
   * Recovery budget (red flag 8): after each heal, every key in use serves an ok op within this many
   * seconds. Absent: before the next fault window opens (after the last one, before the history ends).
   */
  recoveryBudgetS: z.number().positive().optional(),
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
  dbOptions: z.record(z.string(), z.unknown()).optional(),
  client: bindingBody.client,
  clientOptions: z.record(z.string(), z.unknown()).optional(),
  workload: bindingBody.workload.optional(),
  concurrency: z.number().int().positive().optional(),
  rate: bindingBody.rate,
  opTimeout: bindingBody.opTimeout,
  model: bindingBody.model.optional(),
  checkers: bindingBody.checkers.optional(),
  checkerOptions: bindingBody.checkerOptions.optional(),
  nemesis: z.array(nemesisStepSchema).optional(),
  recoveryBudgetS: bindingBody.recoveryBudgetS,
  tiers: bindingBody.tiers.optional(),
});

export const bindingSchema = z
  .strictObject({
    ...bindingBody,
    /** Plugin modules this binding's names come from, relative to the plan (loaded before it is read). */
    module: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
    /**
     * A database without code: a daemon description inline, or a YAML file relative to the plan. It is
     * registered (and checked) before the plan is read; `db:` defaults to its name when inline.
     */
    daemon: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
    /** Per-arm overrides keyed by surface (`api` for arm `S5/api`). */
    arms: z.record(z.string(), armBindingSchema).default({}),
  })
  .superRefine((b, ctx) => {
    // dbOptions and clientOptions, by the definitions' own schemas (a misspelt key is a plan error).
    const db = databases.get(b.db);
    if (db) checkOptions(db.options, b.dbOptions, ['dbOptions'], ctx, `${b.db} takes no options`);
    const clientName = b.client ?? db?.defaultClient;
    const client = clientName ? clients.get(clientName) : undefined;
    if (client)
      checkOptions(client.options, b.clientOptions, ['clientOptions'], ctx, `${clientName} takes no options`);
    checkStepNodes(b.nemesis, b.tiers, ['nemesis'], ctx);
    checkStepDbCapabilities(b.db, b.nemesis, ['nemesis'], ctx);
    checkDiskPaths(b.nemesis, ['nemesis'], ctx);
    for (const [surface, arm] of Object.entries(b.arms)) {
      if (arm.nemesis) checkDiskPaths(arm.nemesis, ['arms', surface, 'nemesis'], ctx);
      if (arm.nemesis) checkStepNodes(arm.nemesis, arm.tiers ?? b.tiers, ['arms', surface, 'nemesis'], ctx);
      if (arm.nemesis)
        checkStepDbCapabilities(arm.db ?? b.db, arm.nemesis, ['arms', surface, 'nemesis'], ctx);
    }
    for (const name of Object.keys(b.checkerOptions))
      if (!b.checkers.includes(name))
        ctx.addIssue({
          code: 'custom',
          path: ['checkerOptions', name],
          message: `${name} is not in checkers`,
        });
  });
export type Binding = z.infer<typeof bindingSchema>;
export type ArmBinding = z.infer<typeof armBindingSchema>;

/**
 * Node names a nemesis step gives (targets, grudge, from/to) against the clusters the tiers build: a
 * local cluster of N nodes names them n1…nN, so `n5` in a plan whose smallest tier has 3 nodes cannot
 * exist. Other names (an inventory's hosts) are checked against the cluster when the run starts.
 */
function checkStepNodes(
  steps: readonly NemesisStep[],
  tiers: Partial<Record<TierName, Tier>>,
  at: (string | number)[],
  ctx: z.RefinementCtx,
): void {
  const sizes = Object.entries(tiers).flatMap(([name, t]) =>
    t?.nodes === undefined ? [] : [{ name, nodes: t.nodes }],
  );
  if (sizes.length === 0) return;
  const smallest = sizes.reduce((a, b) => (b.nodes < a.nodes ? b : a));
  steps.forEach((step, i) => {
    for (const n of stepNodeNames(step)) {
      const k = /^n(\d+)$/.exec(n.name);
      if (k && (Number(k[1]) < 1 || Number(k[1]) > smallest.nodes))
        ctx.addIssue({
          code: 'custom',
          path: [...at, i, ...n.path],
          message: `node "${n.name}" does not exist in the ${smallest.name} tier's ${smallest.nodes}-node cluster (n1…n${smallest.nodes})`,
        });
    }
  });
}

/**
 * A plan's disk fault names its file or directory relative to the database's data directory on each
 * node (resolved and checked again on the node after symlinks). An absolute path could name any file of
 * the node, or of the host on a local cluster, whose nodes share its filesystem: refused here.
 */
function checkDiskPaths(steps: readonly NemesisStep[], at: (string | number)[], ctx: z.RefinementCtx): void {
  steps.forEach((step, i) => {
    if (step.kind !== 'disk') return;
    const params = (step.params ?? {}) as Record<string, unknown>;
    for (const key of ['dir', 'file'])
      if (typeof params[key] === 'string' && (params[key] as string).startsWith('/'))
        ctx.addIssue({
          code: 'custom',
          path: [...at, i, 'params', key],
          message: `${JSON.stringify(params[key])} is outside the database's data directory: a plan names disk-fault paths relative to it (e.g. "member/wal")`,
        });
  });
}

/**
 * A membership fault needs a database that declares membership (etcd does; Redis and others do not); a
 * proxy fault on peer links one that declares its peer address.
 */
function checkStepDbCapabilities(
  dbName: string,
  steps: readonly NemesisStep[],
  at: (string | number)[],
  ctx: z.RefinementCtx,
): void {
  const db = databases.get(dbName);
  if (!db) return;
  steps.forEach((step, i) => {
    if (step.kind === 'membership' && !db.capabilities?.includes('membership'))
      ctx.addIssue({
        code: 'custom',
        path: [...at, i, 'kind'],
        message: `database ${dbName} does not support membership faults (it declares no membership capability: remove and add members)`,
      });
    if (isPeerProxyStep(step) && !db.capabilities?.includes('peer-address'))
      ctx.addIssue({
        code: 'custom',
        path: [...at, i, 'params', 'links'],
        message: `database ${dbName} does not let faultline choose its members' peer addresses (no peer-address capability), so the proxy cannot stand between its members`,
      });
  });
}

function checkOptions(
  schema:
    | {
        safeParse(v: unknown): {
          success: boolean;
          error?: { issues: { path: PropertyKey[]; message: string }[] };
        };
      }
    | undefined,
  value: Record<string, unknown>,
  path: string[],
  ctx: z.RefinementCtx,
  noneMessage: string,
): void {
  if (!schema) {
    if (Object.keys(value).length > 0) ctx.addIssue({ code: 'custom', path, message: noneMessage });
    return;
  }
  const r = schema.safeParse(value);
  if (!r.success)
    for (const issue of r.error?.issues ?? [])
      ctx.addIssue({ code: 'custom', path: [...path, ...issue.path.map(String)], message: issue.message });
}

/** `checker: linearizable` is accepted as shorthand for `checkers: [linearizable]`. */
export function normaliseBindingInput(raw: unknown): unknown {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const o = { ...(raw as Record<string, unknown>) };
    const daemon = o.daemon as { name?: unknown } | undefined;
    if (!('db' in o) && daemon && typeof daemon === 'object' && typeof daemon.name === 'string')
      o.db = daemon.name;
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

/**
 * The checkers a binding runs, with their options: each named checker gets the workload's own options
 * for it (the register workload's linearizability model, bank's accounts), overridden by the binding's
 * `checkerOptions` (`independent: true` checks each key on its own).
 */
export function bindingCheckers(
  b: Pick<Binding, 'checkers' | 'checkerOptions'>,
  workload: Pick<Workload, 'checkers'>,
): CheckerSpec[] {
  return b.checkers.map((name) => {
    const canonical = checkers.canonical(name) ?? name;
    const own = workload.checkers.find((c) => (checkers.canonical(c.name) ?? c.name) === canonical);
    const { independent, ...options } = b.checkerOptions[name] ?? {};
    const perKey = independent === undefined ? own?.independent : independent === true;
    return {
      name: canonical,
      options: { ...own?.options, ...options },
      ...(perKey && { independent: true }),
    };
  });
}

/** The workload a binding names, built for a nominal 3-node cluster (to read its default checkers). */
export function nominalWorkload(b: Pick<Binding, 'workload' | 'concurrency'>): Workload | null {
  const def = workloads.get(b.workload);
  return def ? def.create({ nodes: ['n1', 'n2', 'n3'], concurrency: b.concurrency }) : null;
}

/**
 * Checkers that would find nothing to read in the workload's history: each reads only some op
 * functions (`consumes`), and the workload issues none of them.
 */
export function checkersWithNothingToRead(b: Binding): { name: string; reason: string }[] {
  const wdef = workloads.get(b.workload);
  const workload = nominalWorkload(b);
  if (!wdef || !workload) return [];
  const out: { name: string; reason: string }[] = [];
  for (const spec of bindingCheckers(b, workload)) {
    const reads = checkers.get(spec.name)?.consumes?.(spec.options) ?? null;
    if (reads && !reads.some((f) => wdef.ops.includes(f)))
      out.push({
        name: spec.name,
        reason: `${spec.name} reads ${reads.join(', ')} ops; workload ${b.workload} issues ${wdef.ops.join(', ')}: it would check nothing`,
      });
  }
  return out;
}
