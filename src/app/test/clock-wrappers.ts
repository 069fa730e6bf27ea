import {
  DatabaseCapabilityMissingError,
  type DbContext,
  type FaultTarget,
  hasCapability,
} from '../../core/database/capabilities.ts';
import { log } from '../../core/util/log.ts';
import type { Database } from '../../lib/databases/types.ts';

/** The libfaketime wrappers installed for a run: the DB binary they exec and each node's wrapper. */
export interface ClockWrappers {
  /** The DB binary the wrappers exec (libfaketime's affectability depends on it). */
  binary: string;
  perNode: Record<string, unknown>;
}

/**
 * The system under test as the fault plane sees it: the database itself (its capabilities are read by
 * shape where a fault needs one) and the clock parameters clock faults take, which depend on the run's
 * wrappers and on whether the nodes share the control host's kernel clock.
 */
export function faultTargetOf(
  db: Database,
  ctx: DbContext,
  clock: () => ClockWrappers | undefined,
): FaultTarget {
  return { db, ctx, clock: () => clockParams(db, ctx, clock()) };
}

function clockParams(db: Database, ctx: DbContext, w: ClockWrappers | undefined): Record<string, unknown> {
  const timeCommand = hasCapability(db, 'clock') ? db.clock.timeCommand : undefined;
  // Clock faults act on the DB's own clock through the libfaketime wrapper when one is installed.
  if (w) return { mode: 'faketime', name: db.name, binary: w.binary, ...(timeCommand && { timeCommand }) };
  // Without one, only nodes with their own kernel clock can take a clock fault (settime).
  const sharedClock = ctx.remote.nodes.some((n) => n.sharedKernelClock === true);
  if (sharedClock && !hasCapability(db, 'clock'))
    throw new DatabaseCapabilityMissingError(
      'clock',
      db.name,
      "the nodes share the control host's kernel clock, so clock faults need the database started through a libfaketime wrapper",
    );
  // Nodes with their own kernel clock (VMs, lab machines): settime, the only way to move a Go
  // binary such as etcd; the database's own time is evidence either way.
  return { mode: 'settime', ...(timeCommand && { timeCommand }) };
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
  if (!hasCapability(db, 'clock')) return undefined;
  const clock = db.clock;
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
