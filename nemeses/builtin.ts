import { z } from 'zod';
import { type DatabaseCapability, requireCapability } from '../src/core/database/capabilities.ts';
import { resolveInside } from '../src/core/util/paths.ts';
import {
  CLOCK_ACTIONS,
  checkPartitionParams,
  clockParams,
  DISK_ACTIONS,
  DISK_ACTIONS_MISSING,
  diskParams,
  MAX_CLOCK_OFFSET_MS,
  MEMBERSHIP_ACTIONS,
  membershipParams,
  PACKET_BEHAVIOURS,
  type PacketBehaviour,
  packetParams,
  parseParams,
  partitionParams,
  processParams,
  signedDuration,
} from './params.ts';
import { minoritySize } from './targets.ts';
import { topologies } from './topology.ts';
import type { FaultActionDefinition, FaultOp, FaultSpec, NemesisDefinition, NemesisStep } from './types.ts';

/**
 * The nemeses faultline ships, as the registry knows them: their actions with Jepsen's op names, the
 * schema of a plan step, the ops a step opens and closes its window with, and how a start op becomes a
 * fault spec (targets resolved through the one selector, the SUT's pidfiles, leaders, clock wrapper or
 * data directory filled in). The nemeses themselves load lazily.
 */

/** Where a nemesis acts: a Jepsen target selector, one node, or node names (checked against the cluster). */
export const targets = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** When a fault window opens and how long it stays open, in seconds from the start of the workload. */
export const timing = {
  startS: z.number().nonnegative().default(10),
  durationS: z.number().positive().default(20),
  /** Repeat the window every intervalS seconds until the run ends (Jepsen's cycling nemesis). */
  intervalS: z.number().positive().optional(),
  /** Cap on the number of windows this entry opens. */
  count: z.number().int().positive().optional(),
};
/** Untyped params, for plugin nemeses that check their own (built-in nemeses type theirs: params.ts). */
export const params = z.record(z.string(), z.unknown()).default({});

const all = { targets: 'all' };
const op = (f: string, value: Record<string, unknown>): FaultOp => ({ f, value });

function selectorOf(value: Record<string, unknown>): unknown {
  return value.targets;
}

/** Partitions and the packet-loss substitute need iptables on every node. */
const IPTABLES_NEED = { name: 'iptables', hint: 'apt-get install -y iptables' };

// ---------------------------------------------------------------- partition

/** Topologies that cut one side off: the targets (or the side selector) name that side. */
const SIDE_TOPOLOGIES = new Set(['one', 'majority', 'minority-third', 'primaries']);

export const partitionDefinition: NemesisDefinition = {
  kind: 'partition',
  summary: 'iptables DROP rules in faultline’s own chains; every registered topology',
  load: async () => (await import('./partition.ts')).partitionNemesis,
  actions: [
    {
      name: 'start',
      cls: 'partition',
      startOp: 'start-partition',
      stopOp: 'stop-partition',
      nodeNeeds: [IPTABLES_NEED],
    },
  ],
  classes: [
    {
      name: 'partition',
      kind: 'partition',
      defaultTargets: ['majority', 'primaries', 'one'],
      choicesAreTopologies: true,
      inAll: true,
      start: (choice) =>
        op('start-partition', { topology: choice, ...(SIDE_TOPOLOGIES.has(choice) && { targets: choice }) }),
      stop: op('stop-partition', all),
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('partition'),
      /** `asymmetric` drops one direction only (A→B); every other topology drops both directions. */
      topology: z.string().refine((t) => topologies.has(t), {
        error: () => `unknown partition topology (one of ${topologies.names().join(', ')})`,
      }),
      /** The side to cut off, for the topologies that cut one side (default: the topology's own choice). */
      targets: targets.optional(),
      /** grudge: {grudge: {n1: [n3]}}; asymmetric: {from: [n1], to: [n2, n3]}; one: {node: n2}. */
      params: z.unknown().optional(),
      ...timing,
    })
    .transform((step, ctx) => {
      const p = parseParams(partitionParams, step.params ?? {}, ctx);
      checkPartitionParams(step.topology, p, ctx);
      return { ...step, params: p };
    }),
  stepOps(step) {
    const topology = step.topology as string;
    const side = step.targets ?? (SIDE_TOPOLOGIES.has(topology) ? topology : undefined);
    return {
      start: op('start-partition', {
        topology,
        ...(side !== undefined && { targets: side }),
        ...(step.params && Object.keys(step.params).length > 0 && { params: step.params }),
      }),
      stop: op('stop-partition', all),
    };
  },
  stepDbNeeds: (step) => (step.topology === 'primaries' ? ['primaries'] : []),
  async toSpec(_action, value, ctx): Promise<FaultSpec> {
    const sel = selectorOf(value);
    const topology =
      typeof value.topology === 'string' ? value.topology : typeof sel === 'string' ? sel : 'grudge';
    let nodes: string[];
    if (
      sel === undefined ||
      sel === 'all' ||
      (typeof sel === 'string' && !SIDE_TOPOLOGIES.has(sel) && topologies.has(sel))
    )
      nodes = [...ctx.nodes];
    else if (sel === 'majority')
      // A majority partition cuts a minority off: the nodes listed are the isolated side.
      nodes = await ctx.resolve(minoritySize(ctx.nodes.length) > 0 ? 'minority' : 'one');
    else nodes = await ctx.resolve(sel);
    return {
      kind: 'partition',
      action: 'start',
      targets: nodes,
      params: {
        ...(value.params as Record<string, unknown> | undefined),
        ...(typeof sel === 'string' && { selector: sel }),
        allNodes: [...ctx.nodes],
        topology,
      },
    };
  },
};

// ---------------------------------------------------------------- process

const PROCESS_ACTIONS = ['kill', 'terminate', 'pause', 'resume', 'restart'] as const;
const processNeeds: readonly DatabaseCapability[] = ['process'];
/** An action opened by `start-<kind>` (its name in the op's value) and closed by `stop-<kind>`. */
export const generic = (kind: string, name: string, extra: Partial<FaultActionDefinition> = {}) =>
  ({ name, cls: kind, startOp: `start-${kind}`, stopOp: `stop-${kind}`, ...extra }) as FaultActionDefinition;

export const processDefinition: NemesisDefinition = {
  kind: 'process',
  summary: 'signals by pidfile: kill, terminate, pause, resume, restart',
  load: async () => (await import('./process.ts')).processNemesis,
  actions: [
    { name: 'kill', cls: 'kill', startOp: 'kill', stopOp: 'start', restartsDb: true, dbNeeds: processNeeds },
    { name: 'pause', cls: 'pause', startOp: 'pause', stopOp: 'resume', dbNeeds: processNeeds },
    generic('process', 'terminate', { restartsDb: true, dbNeeds: processNeeds }),
    generic('process', 'resume', { dbNeeds: processNeeds }),
    generic('process', 'restart', { dbNeeds: processNeeds }),
  ],
  classes: [
    {
      name: 'kill',
      kind: 'process',
      defaultTargets: ['one', 'primaries', 'minority'],
      inAll: true,
      start: (choice) => op('kill', { targets: choice }),
      stop: op('start', all),
    },
    {
      name: 'pause',
      kind: 'process',
      defaultTargets: ['one', 'primaries'],
      inAll: true,
      start: (choice) => op('pause', { targets: choice }),
      stop: op('resume', all),
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('process'),
      action: z.enum(PROCESS_ACTIONS),
      targets: targets.default('one'),
      /** {wait: 10s}: how long a restart waits for the old process to go and the new one to run. */
      params: z.unknown().optional(),
      ...timing,
    })
    .transform((step, ctx) => ({ ...step, params: parseParams(processParams, step.params ?? {}, ctx) })),
  stepOps(step) {
    const p = step.params && Object.keys(step.params).length > 0 ? { params: step.params } : {};
    if (step.action === 'kill')
      return { start: op('kill', { targets: step.targets, ...p }), stop: op('start', all) };
    if (step.action === 'pause')
      return { start: op('pause', { targets: step.targets, ...p }), stop: op('resume', all) };
    return {
      start: op('start-process', { action: step.action, targets: step.targets, ...p }),
      stop: op('stop-process', all),
    };
  },
  async toSpec(action, value, ctx): Promise<FaultSpec> {
    const { db, ctx: dbCtx } = requireCapability(
      ctx.sut,
      'process',
      `a process fault (${action}) needs its pidfile and a way to start it`,
    );
    const proc = db.process;
    const nodes = await ctx.resolve(selectorOf(value) ?? 'one');
    return {
      kind: 'process',
      action,
      targets: nodes,
      params: {
        ...(value.params as Record<string, unknown> | undefined),
        pidFiles: Object.fromEntries(nodes.map((n) => [n, proc.pidFile(dbCtx, n)])),
        process: proc.processName,
      },
    };
  },
};

// ---------------------------------------------------------------- clock

export const clockDefinition: NemesisDefinition = {
  kind: 'clock',
  summary: 'libfaketime offsets for the database’s own clock, or settime on nodes with their own kernel',
  load: async () => (await import('./clock.ts')).clockNemesis,
  actions: [
    {
      name: 'bump',
      cls: 'clock',
      startOp: 'bump-clock',
      stopOp: 'reset-clock',
      nodeNeeds: [{ name: 'libfaketime', hint: 'apt-get install -y libfaketime faketime' }],
    },
    {
      name: 'strobe',
      cls: 'clock',
      startOp: 'strobe-clock',
      stopOp: 'reset-clock',
      nodeNeeds: [{ name: 'libfaketime', hint: 'apt-get install -y libfaketime faketime' }],
    },
    generic('clock', 'scramble', {
      stopOp: 'reset-clock',
      nodeNeeds: [{ name: 'libfaketime', hint: 'apt-get install -y libfaketime faketime' }],
    }),
    generic('clock', 'reset', { stopOp: 'reset-clock' }),
  ],
  classes: [
    {
      name: 'clock',
      kind: 'clock',
      defaultTargets: ['one', 'minority'],
      inAll: true,
      start: (choice, rng) =>
        op('bump-clock', {
          targets: choice,
          deltaMs: (rng.next() < 0.5 ? -1 : 1) * (1000 + rng.int(60_000)),
        }),
      stop: op('reset-clock', all),
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('clock'),
      action: z.enum(CLOCK_ACTIONS),
      targets: targets.default('one'),
      /** Offset for bump/strobe (scramble: the bound of each node's random offset): "-5s", "+250ms". */
      delta: signedDuration.optional(),
      /** The same offset as a number of milliseconds. */
      deltaMs: z.number().int().min(-MAX_CLOCK_OFFSET_MS).max(MAX_CLOCK_OFFSET_MS).optional(),
      params: z.unknown().optional(),
      ...timing,
    })
    .transform(({ delta, ...step }, ctx) => {
      const p = parseParams(clockParams, step.params ?? {}, ctx);
      if (delta !== undefined && step.deltaMs !== undefined)
        ctx.addIssue({ code: 'custom', path: ['delta'], message: 'give delta or deltaMs, not both' });
      const deltaMs = delta ?? step.deltaMs;
      if (deltaMs !== undefined && Math.abs(deltaMs) > MAX_CLOCK_OFFSET_MS)
        ctx.addIssue({ code: 'custom', path: ['delta'], message: 'a clock offset beyond ±10 years' });
      if (step.action === 'reset' && deltaMs !== undefined)
        ctx.addIssue({ code: 'custom', path: ['delta'], message: 'reset takes no offset' });
      if (step.action !== 'reset' && !deltaMs)
        ctx.addIssue({
          code: 'custom',
          path: ['delta'],
          message: `clock ${step.action} needs a non-zero offset (delta: "-5s" or deltaMs: -5000)`,
        });
      if (step.action !== 'strobe' && (p.periodMs !== undefined || p.durationMs !== undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['params'],
          message: 'period and duration are only for strobe',
        });
      return { ...step, ...(deltaMs !== undefined && { deltaMs }), params: p };
    }),
  stepOps(step) {
    const f =
      step.action === 'bump' ? 'bump-clock' : step.action === 'strobe' ? 'strobe-clock' : 'start-clock';
    return {
      start: op(f, {
        targets: step.targets,
        ...(f === 'start-clock' && { action: step.action }),
        ...(step.deltaMs !== undefined && { deltaMs: step.deltaMs }),
        // A strobe runs for its window unless the plan says otherwise.
        ...((step.action === 'strobe' || (step.params && Object.keys(step.params).length > 0)) && {
          params: {
            ...(step.action === 'strobe' && { durationMs: Math.round(step.durationS * 1000) }),
            ...step.params,
          },
        }),
      }),
      stop: op('reset-clock', all),
    };
  },
  async toSpec(action, value, ctx): Promise<FaultSpec> {
    const nodes = await ctx.resolve(selectorOf(value) ?? 'all');
    const p: Record<string, unknown> = { ...(value.params as Record<string, unknown> | undefined) };
    if (value.deltaMs !== undefined) p.deltaMs = value.deltaMs;
    // The SUT's libfaketime wrapper (offset file, binary, the DB's own time) wins over the op's values.
    Object.assign(p, ctx.sut?.clock?.() ?? {});
    return { kind: 'clock', action, targets: nodes, params: p };
  },
};

// ---------------------------------------------------------------- packet

const NETEM_NEED = { name: 'tc/netem', hint: 'apt-get install -y iproute2 (and the sch_netem module)' };

export const packetDefinition: NemesisDefinition = {
  kind: 'packet',
  summary: 'tc netem (or documented substitutes): delay, loss, corrupt, duplicate, reorder, rate',
  load: async () => (await import('./packet.ts')).packetNemesis,
  actions: [
    {
      name: 'start',
      cls: 'packet',
      startOp: 'start-packet',
      stopOp: 'stop-packet',
      nodeNeeds: [NETEM_NEED],
    },
  ],
  // Loss and rate have substitutes where netem is missing (iptables statistic, tbf): they need only
  // what the substitute needs; the other behaviours have none.
  stepNodeNeeds: (step) =>
    step.behaviour === 'loss'
      ? [IPTABLES_NEED]
      : step.behaviour === 'rate'
        ? [{ name: 'tc (tbf, htb)', hint: 'apt-get install -y iproute2' }]
        : [NETEM_NEED],
  classes: [
    {
      name: 'packet',
      kind: 'packet',
      defaultTargets: ['one', 'minority', 'majority', 'all'],
      inAll: false,
      start: (choice) => op('start-packet', { targets: choice, behaviors: { loss: { percent: 20 } } }),
      stop: op('stop-packet', all),
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('packet'),
      behaviour: z.enum(PACKET_BEHAVIOURS as [PacketBehaviour, ...PacketBehaviour[]]),
      targets: targets.default('all'),
      /** The behaviour's own: delay {time, jitter, correlation, distribution}; loss … {percent, correlation}; rate {rate}. */
      params: z.unknown().optional(),
      ...timing,
    })
    .transform((step, ctx) => ({
      ...step,
      params: parseParams(packetParams[step.behaviour], step.params ?? {}, ctx),
    })),
  stepOps(step) {
    return {
      start: op('start-packet', { action: step.behaviour, targets: step.targets, params: step.params ?? {} }),
      stop: op('stop-packet', all),
    };
  },
  async toSpec(action, value, ctx): Promise<FaultSpec> {
    const nodes = await ctx.resolve(selectorOf(value) ?? 'all');
    const own = (value.params as Record<string, unknown> | undefined) ?? {};
    // A plan step names one behaviour (its params are that behaviour's; a rate is its string); a
    // schedule op names several.
    const behaviors =
      (value.behaviors as Record<string, unknown> | undefined) ??
      ((PACKET_BEHAVIOURS as readonly string[]).includes(action)
        ? { [action]: action === 'rate' ? own.rate : own }
        : {});
    return { kind: 'packet', action: 'start', targets: nodes, params: { behaviors } };
  },
};

// ---------------------------------------------------------------- disk

export const diskDefinition: NemesisDefinition = {
  kind: 'disk',
  summary: 'fill the data directory, corrupt a file, dm-flakey',
  load: async () => (await import('./disk.ts')).diskNemesis,
  actions: [
    generic('disk', 'disk-full'),
    // Without a backup the heal restores nothing: the corruption stays (as in Jepsen).
    {
      name: 'corrupt',
      cls: 'disk',
      startOp: 'corrupt-file',
      stopOp: null,
      permanent: (p) => p.backup !== true,
    },
    generic('disk', 'flakey', {
      nodeNeeds: [{ name: 'dm-flakey', hint: 'apt-get install -y dmsetup (kernel with device-mapper)' }],
    }),
  ],
  classes: [
    {
      name: 'disk-full',
      kind: 'disk',
      defaultTargets: ['one', 'minority'],
      inAll: false,
      start: (choice) => op('start-disk', { action: 'disk-full', targets: choice }),
      stop: op('stop-disk', all),
    },
    {
      name: 'file-corruption',
      kind: 'disk',
      defaultTargets: ['one', 'minority'],
      inAll: false,
      // Corruption has no undo (as in Jepsen): single shots, no stop.
      start: (choice) => op('corrupt-file', { targets: choice }),
      stop: null,
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('disk'),
      action: z.string().refine((a) => (DISK_ACTIONS as readonly string[]).includes(a), {
        error: (issue) =>
          DISK_ACTIONS_MISSING[String(issue.input)] ??
          `unknown disk action "${String(issue.input)}" (one of ${DISK_ACTIONS.join(', ')})`,
      }),
      targets: targets.default('one'),
      /** disk-full {dir, leaveBytes}; corrupt {file | files | dir, mode, bytes, flips, offset | fraction, seed, backup}; flakey {device, mode, up, down}. */
      params: z.unknown().optional(),
      ...timing,
    })
    .transform((step, ctx) => ({
      ...step,
      params: parseParams(
        diskParams[step.action as (typeof DISK_ACTIONS)[number]] ?? z.unknown(),
        step.params ?? {},
        ctx,
      ),
    })),
  stepOps(step) {
    const p = step.params && Object.keys(step.params).length > 0 ? { params: step.params } : {};
    if (step.action === 'corrupt')
      return { start: op('corrupt-file', { targets: step.targets, ...p }), stop: null };
    return {
      start: op('start-disk', { action: step.action, targets: step.targets, ...p }),
      stop: op('stop-disk', all),
    };
  },
  stepDbNeeds: (step) =>
    step.action !== 'flakey' && !isAbsolute(step.params?.dir) && !isAbsolute(step.params?.file)
      ? ['data-dir']
      : [],
  async toSpec(action, value, ctx): Promise<FaultSpec> {
    const nodes = await ctx.resolve(selectorOf(value) ?? 'one');
    const p: Record<string, unknown> = { ...(value.params as Record<string, unknown> | undefined) };
    if (action !== 'flakey' && !isAbsolute(p.dir) && !isAbsolute(p.file)) {
      const sut = requireCapability(
        ctx.sut,
        'data-dir',
        `a ${action} fault needs the data directory (or an absolute params.dir)`,
      );
      const dataDir = (n: string) => sut.db.dataDir(sut.ctx, n);
      // Relative paths are inside each node's data directory; the node checks it again after symlinks.
      const inside = (n: string, rel: unknown) =>
        resolveInside(dataDir(n), String(rel), { what: `${action} path` });
      // Patterns are matched on the node under the data directory (disk.ts): carried as globs.
      if (Array.isArray(p.files)) {
        p.globs = p.files;
        delete p.files;
      }
      if (typeof p.file === 'string') p.files = Object.fromEntries(nodes.map((n) => [n, inside(n, p.file)]));
      p.dirs = Object.fromEntries(
        nodes.map((n) => [n, typeof p.dir === 'string' && p.dir !== '.' ? inside(n, p.dir) : dataDir(n)]),
      );
      // Only a plan-named path can lead elsewhere (through a symlink): the node checks that one.
      if (p.file !== undefined || p.globs !== undefined || (p.dir !== undefined && p.dir !== '.'))
        p.within = Object.fromEntries(nodes.map((n) => [n, dataDir(n)]));
      delete p.file;
      delete p.dir;
    }
    return { kind: 'disk', action, targets: nodes, params: p };
  },
};

function isAbsolute(p: unknown): boolean {
  return typeof p === 'string' && p.startsWith('/');
}

// ---------------------------------------------------------------- membership

const membershipNeeds: readonly DatabaseCapability[] = ['membership'];

export const membershipDefinition: NemesisDefinition = {
  kind: 'membership',
  summary: 'remove members through the database’s own reconfiguration and add them back (shrink / grow)',
  load: async () => (await import('./membership.ts')).membershipNemesis,
  // Jepsen's etcd membership nemesis: shrink removes a member, grow adds it back.
  actions: [
    { name: 'remove', cls: 'membership', startOp: 'shrink', stopOp: 'grow', dbNeeds: membershipNeeds },
  ],
  classes: [
    {
      name: 'member',
      kind: 'membership',
      defaultTargets: ['one', 'primaries'],
      // Only databases with the membership capability can take it: never part of `--nemesis all`.
      inAll: false,
      start: (choice) => op('shrink', { targets: choice }),
      stop: op('grow', all),
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('membership'),
      action: z.enum(MEMBERSHIP_ACTIONS).default('remove'),
      /** The members to remove: a minority at most, so the rest keep a quorum. */
      targets: targets.default('one'),
      /** {wait: 60s, observer: n1} */
      params: z.unknown().optional(),
      ...timing,
    })
    .transform((step, ctx) => ({ ...step, params: parseParams(membershipParams, step.params ?? {}, ctx) })),
  stepOps(step) {
    const p = step.params && Object.keys(step.params).length > 0 ? { params: step.params } : {};
    return { start: op('shrink', { targets: step.targets, ...p }), stop: op('grow', all) };
  },
  async toSpec(action, value, ctx): Promise<FaultSpec> {
    const { db, ctx: dbCtx } = requireCapability(
      ctx.sut,
      'membership',
      'a membership fault removes a member through the database and adds it back',
    );
    const m = db.membership;
    const nodes = await ctx.resolve(selectorOf(value) ?? 'one');
    const peers = ctx.nodes.filter((n) => !nodes.includes(n));
    if (nodes.length >= ctx.nodes.length / 2)
      throw new Error(
        `removing ${nodes.join(', ')} leaves ${peers.length} of ${ctx.nodes.length} members: a membership fault removes a minority, so the rest keep a quorum`,
      );
    const p = { ...(value.params as Record<string, unknown> | undefined) };
    const observer = typeof p.observer === 'string' && peers.includes(p.observer) ? p.observer : peers[0]!;
    const each = (f: (n: string) => string) => Object.fromEntries(nodes.map((n) => [n, f(n)]));
    return {
      kind: 'membership',
      action,
      targets: nodes,
      params: {
        ...p,
        peers,
        observer,
        commands: {
          list: m.listCommand(dbCtx, peers),
          observe: m.listCommand(dbCtx, [observer]),
          remove: each((n) => m.removeCommand(dbCtx, n, peers)),
          retire: each((n) => m.retireCommand(dbCtx, n)),
          add: each((n) => m.addCommand(dbCtx, n, peers)),
          join: each((n) => m.joinCommand(dbCtx, n, peers)),
        },
      },
    };
  },
};

export const BUILT_IN_NEMESES: readonly NemesisDefinition[] = [
  partitionDefinition,
  packetDefinition,
  processDefinition,
  clockDefinition,
  diskDefinition,
  membershipDefinition,
];

/** Database capabilities one plan step needs: its action's, plus any its topology or params add. */
export function dbNeedsOfStep(def: NemesisDefinition, step: NemesisStep): DatabaseCapability[] {
  const action = def.actions.find((a) => a.name === (step.action ?? 'start'));
  return [...new Set([...(action?.dbNeeds ?? []), ...(def.stepDbNeeds?.(step) ?? [])])];
}
