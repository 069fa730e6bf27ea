import { z } from 'zod';
import {
  type Capable,
  type DatabaseCapability,
  requireCapability,
} from '../src/core/database/capabilities.ts';
import { targets, timing } from './builtin.ts';
import { fileGlobs } from './file-glob.ts';
import { LAZYFS_ACTIONS } from './lazyfs-actions.ts';
import type { FaultActionDefinition, FaultOp, FaultSpec, NemesisDefinition } from './types.ts';

/**
 * The lazy-filesystem nemesis as the registry knows it (kind `lazyfs`): each action is a window opened
 * by `start-lazyfs` and closed by `stop-lazyfs`. The window's start moves the targets' data directories
 * onto the lazy filesystem (the database restarted on it); its end heals, and for `lose-unfsynced` the
 * end is the power failure itself (torn for torn-op and torn-seq). `params.files` aims a fault at the
 * files matching its patterns (file-glob.ts) under the data directory. See lazyfs.ts.
 */
const ACTIONS = LAZYFS_ACTIONS;
/** Actions whose window ends in a power failure. */
const POWER = new Set(['lose-unfsynced', 'torn-op', 'torn-seq']);
/** Actions that must name their files. */
const AIMED_ONLY = new Set(['eio-read', 'eio-write']);
const needs: readonly DatabaseCapability[] = ['process', 'data-dir'];
const nodeNeeds = [
  { name: 'fuse (lazyfs: python3-fusepy)', hint: 'apt-get install -y fuse3 python3-fusepy' },
];

const action = (name: string): FaultActionDefinition => ({
  name,
  cls: 'lazyfs',
  startOp: 'start-lazyfs',
  stopOp: 'stop-lazyfs',
  restartsDb: true,
  // These start the database on the mount themselves, so that the errors begin while it runs.
  startsDbAfterInject: !['fsync-fail', 'eio-read', 'eio-write'].includes(name),
  // A power failure (lost or torn) that comes before the database acknowledges anything through the
  // cache loses nothing acknowledged: such a window proves nothing.
  needsAcknowledgedOps: POWER.has(name),
  dbNeeds: needs,
  nodeNeeds,
});

const op = (f: string, value: Record<string, unknown>): FaultOp => ({ f, value });

export const lazyfsDefinition: NemesisDefinition = {
  kind: 'lazyfs',
  summary:
    'the data directory on a FUSE filesystem that keeps un-fsynced writes in its cache: lose them (power failure), fail or delay fsync, slow I/O',
  load: async () => (await import('./lazyfs.ts')).lazyfsNemesis,
  actions: ACTIONS.map(action),
  classes: [
    {
      name: 'lose-unfsynced',
      kind: 'lazyfs',
      defaultTargets: ['all', 'minority', 'one'],
      inAll: false,
      start: (choice) => op('start-lazyfs', { action: 'lose-unfsynced', targets: choice }),
      stop: op('stop-lazyfs', { targets: 'all' }),
    },
  ],
  step: z
    .strictObject({
      kind: z.literal('lazyfs'),
      action: z.enum(ACTIONS),
      targets: targets.default('all'),
      params: z
        .strictObject({
          /** fsync-delay: each fsync waits this long; slow: each read and write. */
          delayMs: z.number().int().min(1).max(600_000).optional(),
          /** Patterns of files under the data directory the fault aims at (file-glob.ts). */
          files: fileGlobs.optional(),
          /** torn-op and torn-seq: which parts survive (same seed, same parts). */
          seed: z.number().int().nonnegative().optional(),
          /** torn-op: the part of the write in flight that survives, a prefix (default) or some of its pages. */
          keep: z.enum(['prefix', 'pages']).optional(),
          /** torn-op with keep prefix: the fraction of the write's bytes that survives (default 0.5). */
          fraction: z.number().gt(0).lt(1).optional(),
          /**
           * How several targets move onto the filesystem: all at once (default), or `rolling`: one at a
           * time, the leaders last (not for the errors under a running database, which start on all).
           */
          move: z.enum(['all-at-once', 'rolling']).optional(),
        })
        .default({}),
      ...timing,
    })
    .superRefine((s, ctx) => {
      if ((s.action === 'fsync-delay' || s.action === 'slow') && s.params.delayMs === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'delayMs'],
          message: `${s.action} needs params.delayMs`,
        });
      if (s.action !== 'fsync-delay' && s.action !== 'slow' && s.params.delayMs !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'delayMs'],
          message: `${s.action} takes no delayMs`,
        });
      if (AIMED_ONLY.has(s.action) && s.params.files === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'files'],
          message: `${s.action} needs params.files (patterns of the files to fail, under the data directory)`,
        });
      if (!POWER.has(s.action) && !AIMED_ONLY.has(s.action) && s.params.files !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'files'],
          message: `${s.action} acts on the whole filesystem: it takes no files`,
        });
      const torn = s.action === 'torn-op' || s.action === 'torn-seq';
      for (const k of ['seed', 'keep', 'fraction'] as const)
        if (s.params[k] !== undefined && !torn)
          ctx.addIssue({ code: 'custom', path: ['params', k], message: `${k} is for torn-op and torn-seq` });
      if (s.action === 'torn-seq' && (s.params.keep !== undefined || s.params.fraction !== undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['params'],
          message: 'torn-seq keeps whole writes: keep and fraction are for torn-op',
        });
      if (s.params.move === 'rolling' && ['fsync-fail', 'eio-read', 'eio-write'].includes(s.action))
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'move'],
          message: `${s.action} starts its errors under the running database on every target at once: move: rolling is for the other actions`,
        });
      if (s.params.keep === 'pages' && s.params.fraction !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'fraction'],
          message: 'fraction is for keep: prefix (pages keeps a seeded subset of pages)',
        });
    }),
  stepOps(step) {
    return {
      start: op('start-lazyfs', {
        action: step.action,
        targets: step.targets,
        ...(step.params && Object.keys(step.params).length > 0 && { params: step.params }),
      }),
      stop: op('stop-lazyfs', { targets: 'all' }),
    };
  },
  async toSpec(act, value, ctx): Promise<FaultSpec> {
    const { ctx: dbCtx } = requireCapability(
      ctx.sut,
      'process',
      `lazyfs ${act} stops and restarts the database`,
    );
    const { db } = requireCapability(ctx.sut, 'data-dir', `lazyfs ${act} mounts under the data directory`);
    const proc = (db as typeof db & Capable<'process'>).process;
    const nodes = await ctx.resolve(value.targets ?? 'all');
    const own = (value.params as Record<string, unknown> | undefined) ?? {};
    return {
      kind: 'lazyfs',
      action: act,
      targets: nodes,
      params: {
        ...(typeof own.delayMs === 'number' && { delayMs: own.delayMs }),
        ...(Array.isArray(own.files) && { files: own.files }),
        ...(typeof own.seed === 'number' && { seed: own.seed }),
        ...(typeof own.keep === 'string' && { keep: own.keep }),
        ...(typeof own.fraction === 'number' && { fraction: own.fraction }),
        ...(own.move === 'rolling' && { move: 'rolling' }),
        dirs: Object.fromEntries(nodes.map((n) => [n, db.dataDir(dbCtx, n)])),
        pidFiles: Object.fromEntries(nodes.map((n) => [n, proc.pidFile(dbCtx, n)])),
        processName: proc.processName,
        ...(proc.stopSignal !== undefined && proc.stopSignal !== 'TERM' && { stopSignal: proc.stopSignal }),
      },
    };
  },
};
