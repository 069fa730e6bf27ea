import { z } from 'zod';
import { targets, timing } from './builtin.ts';
import {
  type DbCapability,
  DbCapabilityMissingError,
  type FaultActionDefinition,
  type FaultOp,
  type FaultSpec,
  type NemesisDefinition,
} from './types.ts';

/**
 * The lazy-filesystem nemesis as the registry knows it (kind `lazyfs`): each action is a window opened
 * by `start-lazyfs` and closed by `stop-lazyfs`. The window's start moves the targets' data directories
 * onto the lazy filesystem (the database restarted on it); its end heals, and for `lose-unfsynced` the
 * end is the power failure itself. See lazyfs.ts.
 */
const ACTIONS = ['lose-unfsynced', 'fsync-fail', 'fsync-delay', 'slow'] as const;
const needs: readonly DbCapability[] = ['process', 'data-dir'];
const nodeNeeds = [
  { name: 'fuse (lazyfs: python3-fusepy)', hint: 'apt-get install -y fuse3 python3-fusepy' },
];

const action = (name: string): FaultActionDefinition => ({
  name,
  cls: 'lazyfs',
  startOp: 'start-lazyfs',
  stopOp: 'stop-lazyfs',
  restartsDb: true,
  // fsync-fail starts the database on the mount itself, so that its fsyncs begin to fail while it runs.
  startsDbAfterInject: name !== 'fsync-fail',
  // A power failure that comes before the database acknowledges anything through the cache loses
  // nothing acknowledged: such a window proves nothing.
  needsAcknowledgedOps: name === 'lose-unfsynced',
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
      if ((s.action === 'lose-unfsynced' || s.action === 'fsync-fail') && s.params.delayMs !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['params', 'delayMs'],
          message: `${s.action} takes no delayMs`,
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
    const proc = ctx.sut.process;
    const dataDir = ctx.sut.dataDir;
    const db = ctx.sut.name ?? 'under test';
    if (!proc)
      throw new DbCapabilityMissingError('process', db, `lazyfs ${act} stops and restarts the database`);
    if (!dataDir)
      throw new DbCapabilityMissingError('data-dir', db, `lazyfs ${act} mounts under the data directory`);
    const nodes = await ctx.resolve(value.targets ?? 'all');
    const own = (value.params as Record<string, unknown> | undefined) ?? {};
    return {
      kind: 'lazyfs',
      action: act,
      targets: nodes,
      params: {
        ...(typeof own.delayMs === 'number' && { delayMs: own.delayMs }),
        dirs: Object.fromEntries(nodes.map((n) => [n, dataDir(n)])),
        pidFiles: Object.fromEntries(nodes.map((n) => [n, proc.pidFile(n)])),
        processName: proc.processName,
      },
    };
  },
};
