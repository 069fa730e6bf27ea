import { DbCapabilityMissingError, type SutHooks } from '../../../nemeses/types.ts';
import { log } from '../../core/util/log.ts';
import type { Database, DbContext, MembershipControl } from '../../lib/databases/types.ts';

/**
 * The database as the fault plane sees it: only the capabilities it declares (process control for
 * process faults, its live leaders for `primaries`, its clock wrapper for clock faults, its data
 * directory for disk faults). A fault that needs one it lacks is refused, naming the capability.
 */
export interface ClockWrappers {
  /** The DB binary the wrappers exec (libfaketime's affectability depends on it). */
  binary: string;
  perNode: Record<string, unknown>;
}

export function sutHooks(db: Database, ctx: DbContext, clock: () => ClockWrappers | undefined): SutHooks {
  const proc = db.process;
  const dataDir = db.dataDir?.bind(db);
  const sharedClock = ctx.remote.nodes.some((n) => n.sharedKernelClock === true);
  return {
    name: db.name,
    ...(proc && {
      process: {
        processName: proc.processName,
        pidFile: (node: string) => proc.pidFile(ctx, node),
        start: (node: string) => proc.start(ctx, node),
      },
    }),
    ...(db.primaries && { primaries: () => db.primaries?.(ctx) ?? Promise.resolve([]) }),
    ...(dataDir && { dataDir: (node: string) => dataDir(ctx, node) }),
    ...(db.logFiles && { logFiles: (node: string) => db.logFiles?.(ctx, node) ?? [] }),
    ...(db.peerView && {
      peerView: (observer: string, node: string) =>
        db.peerView?.(ctx, observer, node) ?? Promise.resolve({ up: null, detail: 'no peer view' }),
    }),
    ...(db.membership && { membership: membershipHooks(db.membership, ctx) }),
    clock: () => {
      const w = clock();
      // Clock faults act on the DB's own clock through the libfaketime wrapper when one is installed.
      if (w)
        return {
          mode: 'faketime',
          name: db.name,
          binary: w.binary,
          ...(db.clock?.timeCommand && { timeCommand: db.clock.timeCommand }),
        };
      // Without one, only nodes with their own kernel clock can take a clock fault (settime).
      if (sharedClock && !db.clock)
        throw new DbCapabilityMissingError(
          'clock',
          db.name,
          "the nodes share the control host's kernel clock, so clock faults need the database started through a libfaketime wrapper",
        );
      // Nodes with their own kernel clock (VMs, lab machines): settime, the only way to move a Go
      // binary such as etcd; the database's own time is evidence either way.
      return { mode: 'settime', ...(db.clock?.timeCommand && { timeCommand: db.clock.timeCommand }) };
    },
  };
}

function membershipHooks(m: MembershipControl, ctx: DbContext): NonNullable<SutHooks['membership']> {
  return {
    list: (peers) => m.listCommand(ctx, peers),
    remove: (node, peers) => m.removeCommand(ctx, node, peers),
    retire: (node) => m.retireCommand(ctx, node),
    add: (node, peers) => m.addCommand(ctx, node, peers),
    join: (node, peers) => m.joinCommand(ctx, node, peers),
  };
}

/**
 * Clock faults on nodes that share the control host's kernel clock (the local cluster) can only act on
 * the DB's own clock: each node gets the clock nemesis's libfaketime wrapper and the DB is started
 * through it. A binary libfaketime cannot affect (Go's etcd) is reported here and, by the nemesis's
 * evidence, as not landed. A database without the clock capability gets no wrapper (null).
 */
export async function installClockWrappers(
  db: Database,
  ctx: DbContext,
  onAll: (nodes: readonly string[], fn: (node: string) => Promise<void>) => Promise<void>,
): Promise<ClockWrappers | undefined> {
  const clock = db.clock;
  if (!clock) return undefined;
  const { installFaketimeWrapper } = await import('../../../nemeses/clock.ts');
  const out: ClockWrappers = { binary: '', perNode: {} };
  await onAll(ctx.nodes, async (node) => {
    const which = await ctx.remote.exec(node, `command -v ${clock.binary}`);
    const binary = which.stdout.trim();
    out.binary ||= binary;
    const w = await installFaketimeWrapper(ctx.remote, node, { binary, name: db.name });
    clock.setWrapper(node, w.wrapperPath);
    out.perNode[node] = { wrapper: w.wrapperPath, rcFile: w.rcFile, affectability: w.affectability };
    if (!w.affectability.affectable)
      log().warn(
        { node, binary, reason: w.affectability.reason },
        'libfaketime cannot move this binary’s clock',
      );
  });
  return out;
}
