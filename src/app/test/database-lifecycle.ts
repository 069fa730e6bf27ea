import { clusterAddress } from '../../core/control/addresses.ts';
import { RemoteChannelError } from '../../core/control/connection-errors.ts';
import { hasCapability } from '../../core/database/capabilities.ts';
import { bounded, boundedQuietly } from '../../core/util/bounded.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';
import { log } from '../../core/util/log.ts';
import { retry } from '../../core/util/retry.ts';
import {
  type Database,
  DB_CALL_TIMEOUTS,
  type DbContext,
  type MemberInfo,
} from '../../lib/databases/types.ts';
import { inHook } from './hook-error.ts';

/**
 * The database's lifecycle in a run, in one documented order:
 *
 *   teardown (leftovers) → install → setup (configure + start, every node in parallel) → awaitReady
 *   → form (once on the primary, or on each joining node in order) → … workload … → teardown
 *
 * Every hook is bounded (`DB_CALL_TIMEOUTS`) and a failure names the hook, the node, the command and its
 * stderr, and the node's command log (`HookError`, exit 254).
 */
export async function setUpDatabase(
  db: Database,
  ctx: DbContext,
  before?: (onAll: OnAll) => Promise<void>,
): Promise<void> {
  const { remote, nodes } = ctx;
  log().info({ db: db.name, nodes }, 'setting up the DB');
  const hook = (name: keyof typeof DB_CALL_TIMEOUTS, node: string | null, fn: () => Promise<void>) =>
    inHook(db.name, name, node, remote, () => bounded(`${db.name} ${name}`, DB_CALL_TIMEOUTS[name], fn));
  await onAll(nodes, (n) =>
    hook('teardown', n, () => retryLostChannel('DB teardown', () => db.teardown(ctx, n))),
  );
  if (hasCapability(db, 'install'))
    await onAll(nodes, (n) =>
      hook('install', n, () => retryLostChannel('DB install', () => db.install(ctx, n))),
    );
  ctx.members = await resolveMembers(ctx);
  await before?.(onAll);
  await onAll(nodes, (n) => hook('setup', n, () => db.setup(ctx, n)));
  await hook('awaitReady', null, () => db.awaitReady(ctx, 90_000));
  const form = hasCapability(db, 'form') ? db.form : undefined;
  if (form) {
    const members = ctx.members;
    const on = form.on === 'primary' ? nodes.slice(0, 1) : nodes.slice(1);
    // One after the other: each joining node joins a cluster its predecessors are already in.
    for (const n of on) await hook('form', n, () => form.run(ctx, n, members));
  }
}

/** Tears the database down on every node, bounded; failures are logged, never thrown (cleanup). */
export async function tearDownDatabase(db: Database, ctx: DbContext): Promise<void> {
  await Promise.all(
    ctx.nodes.map((n) =>
      boundedQuietly(`${db.name} teardown on ${n}`, DB_CALL_TIMEOUTS.teardown, () => db.teardown(ctx, n)),
    ),
  );
}

/** Every node's name, cluster address and own short hostname (asked on the node, bounded). */
export async function resolveMembers(ctx: DbContext): Promise<MemberInfo[]> {
  return Promise.all(
    ctx.nodes.map(async (name) => {
      const address = clusterAddress(ctx.remote.node(name));
      const r = await ctx.remote
        .exec(name, 'hostname -s 2>/dev/null || hostname', { check: false, timeoutMs: 15_000 })
        .catch(() => null);
      const hostname = r?.code === 0 && r.stdout.trim() ? (r.stdout.trim().split('\n')[0] as string) : name;
      return { name, address, hostname };
    }),
  );
}

export type OnAll = (nodes: readonly string[], fn: (node: string) => Promise<void>) => Promise<void>;

/**
 * Runs `fn` on every node in parallel and waits for all. One failure is thrown as it is (a HookError keeps
 * its exit code); several are joined into one error, a user error when every one of them is.
 */
export async function onAll(nodes: readonly string[], fn: (node: string) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(nodes.map(fn));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failed.length === 0) return;
  if (failed.length === 1) throw failed[0];
  const message = failed.map((e) => errorMessage(e)).join('\n');
  throw failed.every((e) => e instanceof UserError) ? new UserError(message) : new Error(message);
}

/**
 * Repeats an idempotent step (teardown, install) when the SSH channel was lost mid-command: the command
 * may or may not have run, and running it again is harmless.
 */
function retryLostChannel(what: string, step: () => Promise<void>): Promise<void> {
  return retry(step, {
    attempts: 3,
    retryable: (err) => err instanceof RemoteChannelError,
    delayMs: () => 1000,
    what: `${what}: SSH channel lost`,
  });
}
