import type { SutHooks } from '../../../nemeses/types.ts';
import { log } from '../../core/util/log.ts';
import type { DB, DbContext } from '../../lib/databases/types.ts';

/**
 * The database adapter as the fault plane sees it: its pidfiles and restart (process faults), its live
 * leaders (`primaries`), its clock wrapper (clock faults), its data directory (disk faults).
 */
export interface ClockWrappers {
  /** The DB binary the wrappers exec (libfaketime's affectability depends on it). */
  binary: string;
  perNode: Record<string, unknown>;
}

export function sutHooks(db: DB, ctx: DbContext, clock: () => ClockWrappers | undefined): SutHooks {
  return {
    name: db.name,
    process: {
      processName: db.processName,
      pidFile: (node) => db.pidFile(ctx, node),
      start: (node) => db.start(ctx, node),
    },
    primaries: () => db.primaries(ctx),
    clock: () => {
      const w = clock();
      // Clock faults act on the DB's own clock through the libfaketime wrapper when one is installed.
      return w
        ? {
            mode: 'faketime',
            name: db.name,
            binary: w.binary,
            ...(db.timeCommand && { timeCommand: db.timeCommand }),
          }
        : {};
    },
  };
}

/**
 * Clock faults on nodes that share the control host's kernel clock (the local cluster) can only act on
 * the DB's own clock: each node gets the clock nemesis's libfaketime wrapper and the DB is started
 * through it. A binary libfaketime cannot affect (Go's etcd) is reported here and, by the nemesis's
 * evidence, as not landed.
 */
export async function installClockWrappers(
  db: DB,
  ctx: DbContext,
  onAll: (nodes: readonly string[], fn: (node: string) => Promise<void>) => Promise<void>,
): Promise<ClockWrappers> {
  const { installFaketimeWrapper } = await import('../../../nemeses/clock.ts');
  const out: ClockWrappers = { binary: '', perNode: {} };
  await onAll(ctx.nodes, async (node) => {
    const which = await ctx.remote.exec(node, `command -v ${db.processName}`);
    const binary = which.stdout.trim();
    out.binary ||= binary;
    const w = await installFaketimeWrapper(ctx.remote, node, { binary, name: db.name });
    db.setWrapper(node, w.wrapperPath);
    out.perNode[node] = { wrapper: w.wrapperPath, rcFile: w.rcFile, affectability: w.affectability };
    if (!w.affectability.affectable)
      log().warn(
        { node, binary, reason: w.affectability.reason },
        'libfaketime cannot move this binary’s clock',
      );
  });
  return out;
}
