import { z } from 'zod';
import { parseDuration } from '../src/core/util/duration.ts';
import { FLAKEY_MODES } from './commands/disk-commands.ts';
import { RATE_PATTERN } from './commands/tc.ts';
import { fileGlobs } from './file-glob.ts';

/**
 * The parameters a plan step may give each nemesis action, typed: numbers are numbers in range
 * (percentages 0–100, ports 1–65535), durations carry a unit and go through the one duration parser
 * (`time: 50ms`; the `…Ms` spelling takes a plain number of milliseconds), rates carry a unit
 * (`1mbit`), paths are absolute, device names are plain names. Each schema's output is the shape the
 * nemesis reads (`timeMs`, `percent` …) and parses again unchanged, so a reduced schedule replays.
 * Anything else is a plan error naming the field: nothing reaches a root command unchecked.
 */

const percent = z.number().min(0).max(100);
const port = z.number().int().min(1).max(65_535);
const nodeName = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a node name (letters, digits, . _ -)');
const nodeList = z.array(nodeName).min(1);
/**
 * A disk fault's `dir` or `file`: relative to the database's data directory on each node (resolved there
 * at run time, and checked on the node after symlinks), or absolute. A plan may give only the relative
 * form (`plan check` refuses absolute ones: they could name any file of the node, or of the host on a
 * local cluster); absolute paths are for schedules the operator writes for a node it prepared.
 */
const diskPath = z
  .string()
  .min(1)
  .regex(/^[^\0\n]*$/, 'no NUL or newline')
  .refine((p) => !p.split('/').includes('..'), 'no ".." in the path');

/** A duration with its unit ("50ms", "2s") or, under the `…Ms` name, milliseconds as a number. */
export function duration(name: string, min = 0) {
  return {
    [name]: z
      .string()
      .transform((text, ctx) => {
        try {
          return parseDuration(text, name);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      })
      .optional(),
    [`${name}Ms`]: z.number().min(min).optional(),
  };
}

/** Fold `name: "50ms"` into `nameMs: 50` (the form nemeses read); both at once is an error. */
export function foldDurations<T extends Record<string, unknown>>(names: readonly string[]) {
  return (raw: T, ctx: z.RefinementCtx): T => {
    const out: Record<string, unknown> = { ...raw };
    for (const n of names) {
      if (out[n] === undefined) {
        delete out[n];
        continue;
      }
      if (out[`${n}Ms`] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [n], message: `give ${n} or ${n}Ms, not both` });
        return z.NEVER;
      }
      out[`${n}Ms`] = out[n];
      delete out[n];
    }
    return out as T;
  };
}

// ---------------------------------------------------------------- packet

const netemPercent = z
  .strictObject({ percent: z.number().gt(0).max(100).default(20), correlation: percent.optional() })
  .default({ percent: 20 });

export const packetParams = {
  delay: z
    .strictObject({
      ...duration('time'),
      ...duration('jitter'),
      correlation: percent.optional(),
      distribution: z.enum(['uniform', 'normal', 'pareto', 'paretonormal']).optional(),
    })
    .default({})
    .transform(foldDurations(['time', 'jitter']))
    .transform((d) => ({ ...d, timeMs: ((d as { timeMs?: number }).timeMs ?? 50) as number })),
  loss: netemPercent,
  corrupt: netemPercent,
  duplicate: netemPercent,
  reorder: netemPercent,
  rate: z
    .strictObject({
      rate: z
        .string()
        .regex(RATE_PATTERN, 'a rate with its unit: 1mbit, 500kbit, 100kbps …')
        .default('1mbit'),
    })
    .default({ rate: '1mbit' }),
} as const;
export type PacketBehaviour = keyof typeof packetParams;
export const PACKET_BEHAVIOURS = Object.keys(packetParams) as PacketBehaviour[];

// ---------------------------------------------------------------- partition

export const partitionParams = z
  .strictObject({
    /** Explicit grudge (topology `grudge`): each node → the nodes it drops packets from. */
    grudge: z.record(nodeName, z.array(nodeName)).optional(),
    /** Asymmetric: traffic from `from` to `to` is dropped, the reverse flows. */
    from: nodeList.optional(),
    to: nodeList.optional(),
    /** `one`: the node to isolate. */
    node: nodeName.optional(),
    seed: z.number().int().nonnegative().optional(),
    probePort: port.optional(),
  })
  .default({});

/** Partition params that fit the topology: a grudge needs its map, from/to only for asymmetric. */
export function checkPartitionParams(
  topology: string,
  p: z.infer<typeof partitionParams>,
  ctx: z.RefinementCtx,
): void {
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: ['params', path], message });
  if (topology === 'grudge' && !p.grudge)
    issue('grudge', 'topology grudge needs params.grudge (node → nodes)');
  if (topology !== 'grudge' && p.grudge) issue('grudge', 'params.grudge is only for topology grudge');
  if (topology !== 'asymmetric' && (p.from || p.to))
    issue(p.from ? 'from' : 'to', 'params.from/to are only for topology asymmetric');
  if ((p.from === undefined) !== (p.to === undefined))
    issue(p.from ? 'to' : 'from', 'an asymmetric partition names both from and to (or neither)');
  if (p.from && p.to && p.from.some((n) => p.to?.includes(n)))
    issue('to', 'from and to overlap: a node cannot drop its own traffic');
  if (topology !== 'one' && p.node) issue('node', 'params.node is only for topology one');
}

// ---------------------------------------------------------------- process

export const processParams = z
  .strictObject({ ...duration('wait', 1) })
  .default({})
  .transform(foldDurations(['wait']));

// ---------------------------------------------------------------- membership

export const MEMBERSHIP_ACTIONS = ['remove'] as const;

export const membershipParams = z
  .strictObject({
    /** How long the heal waits for each member added back to be listed as running. */
    ...duration('wait', 1),
    /** The member whose own member list is the victim evidence (default: the first that stays). */
    observer: nodeName.optional(),
  })
  .default({})
  .transform(foldDurations(['wait']));

// ---------------------------------------------------------------- clock

export const CLOCK_ACTIONS = ['bump', 'strobe', 'scramble', 'reset'] as const;

export const clockParams = z
  .strictObject({
    /** strobe: how long each phase lasts, and how long the strobe runs (default: the window). */
    ...duration('period', 10),
    ...duration('duration', 1),
    ...duration('tolerance'),
    mode: z.enum(['faketime', 'settime']).optional(),
    seed: z.number().int().nonnegative().optional(),
  })
  .default({})
  .transform(foldDurations(['period', 'duration', 'tolerance']));

/** A signed offset with its unit ("-5s", "+250ms"), in milliseconds. */
export const signedDuration = z.string().transform((text, ctx) => {
  const m = /^\s*([+-]?)\s*(.*)$/.exec(text) as RegExpExecArray;
  try {
    return (m[1] === '-' ? -1 : 1) * parseDuration(m[2] as string, 'delta');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** ±10 years: far enough for any clock test, small enough for every clock API. */
export const MAX_CLOCK_OFFSET_MS = 10 * 365 * 86_400_000;

// ---------------------------------------------------------------- disk

export const DISK_ACTIONS = ['disk-full', 'corrupt', 'flakey'] as const;
/** Named by the fault catalogue but not built here: refused with what is missing. */
export const DISK_ACTIONS_MISSING: Readonly<Record<string, string>> = {
  slow: 'a slow disk needs I/O interception (a FUSE layer or cgroup io.max on a real block device); neither is built in',
  'fsync-fail':
    'failing fsync needs I/O interception (a FUSE layer) or dm-flakey on a device-mapper kernel; use action flakey with mode error_writes where device-mapper exists',
};

export const diskParams = {
  'disk-full': z
    .strictObject({
      dir: diskPath.optional(),
      leaveBytes: z.number().int().nonnegative().optional(),
      /** The most junk written (default 4 GiB): a fill beyond it is refused, never started. */
      maxFillBytes: z.number().int().positive().optional(),
    })
    .default({}),
  corrupt: z
    .strictObject({
      file: diskPath.optional(),
      dir: diskPath.optional(),
      /** Patterns of files under the data directory (file-glob.ts): every matching file is corrupted. */
      files: fileGlobs.optional(),
      mode: z.enum(['bitflip', 'truncate', 'zero', 'random']).optional(),
      bytes: z
        .number()
        .int()
        .min(1)
        .max(16 * 1024 * 1024)
        .optional(),
      flips: z.number().int().min(1).max(1_000_000).optional(),
      /** Where the corruption starts (truncate: the length the file is cut to): a byte offset… */
      offset: z.number().int().nonnegative().optional(),
      /** …or a fraction of each file's size (0 the start, 1 the end). */
      fraction: z.number().min(0).max(1).optional(),
      seed: z.number().int().nonnegative().optional(),
      backup: z.boolean().optional(),
    })
    .superRefine((p, ctx) => {
      if (p.offset !== undefined && p.fraction !== undefined)
        ctx.addIssue({ code: 'custom', path: ['fraction'], message: 'offset or fraction, not both' });
      if (p.files !== undefined && (p.file !== undefined || p.dir !== undefined))
        ctx.addIssue({ code: 'custom', path: ['files'], message: 'files (patterns) or file/dir, not both' });
    })
    .default({}),
  flakey: z
    .strictObject({
      device: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a device-mapper device name'),
      mode: z.enum(FLAKEY_MODES).optional(),
      /** dm-flakey's up and down intervals: durations ("0s", "1h") or whole seconds. */
      up: z.string().optional(),
      upSeconds: z.number().int().nonnegative().optional(),
      down: z.string().optional(),
      downSeconds: z.number().int().min(1).optional(),
    })
    .transform(({ up, down, ...rest }, ctx) => {
      const seconds = (text: string, field: string, min: number) => {
        try {
          return Math.max(min, Math.round(parseDuration(text, field) / 1000));
        } catch (err) {
          ctx.addIssue({ code: 'custom', path: [field], message: (err as Error).message });
          return min;
        }
      };
      return {
        ...rest,
        ...(up !== undefined && { upSeconds: seconds(up, 'up', 0) }),
        ...(down !== undefined && { downSeconds: seconds(down, 'down', 1) }),
      };
    }),
} as const;

/** Parse `params` with `schema`; issues land under `params.…` of the step. */
export function parseParams(
  schema: z.ZodType,
  params: unknown,
  ctx: z.RefinementCtx,
): Record<string, unknown> {
  const r = schema.safeParse(params);
  if (r.success) return (r.data ?? {}) as Record<string, unknown>;
  for (const issue of r.error.issues)
    ctx.addIssue({
      code: 'custom',
      path: ['params', ...(issue.path as (string | number)[])],
      message: issue.message,
    });
  return {};
}
