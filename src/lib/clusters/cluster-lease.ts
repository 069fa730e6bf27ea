import { basename } from 'node:path';
import { UserError } from '../../core/util/errors.ts';
import {
  describeHolder,
  type LockHolder,
  lockHolder,
  releaseLock,
  takeLock,
} from '../../core/util/pid-lock.ts';
import { clusterLeasePath } from './state-dir.ts';

/**
 * A run's hold on a local cluster. Two runs on one cluster would inject faults into each other's
 * databases and take the cluster down under each other, so `faultline run` and `faultline test` with
 * `--local` hold the cluster's lease from before their session starts until they end, as does every
 * connection to a local cluster through the API, and `cluster up` and `cluster down` leave a held
 * cluster alone (`down --force` does not). One process may share its cluster among its own runs (a
 * suite driving several tests through the API): the lease is per process, counted.
 */
const held = new Map<string, number>();
/** Leases being taken: a second call in this process while the first waits shares its outcome. */
const taking = new Map<string, Promise<void>>();

/**
 * What the lease file says holds it: this process's command line as a person would type it
 * (`faultline run plans/etcd.md …`), or the script that drives faultline through the API.
 */
function thisCommand(): string {
  const script = basename(process.argv[1] ?? '');
  const name = script === '' || /^faultline(\.[cm]?js)?$/.test(script) ? 'faultline' : script;
  return [name, ...process.argv.slice(2)].join(' ');
}

async function take(name: string, waitMs: number, log?: (line: string) => void): Promise<void> {
  const r = await takeLock(clusterLeasePath(name), thisCommand(), {
    timeoutMs: waitMs,
    stepMs: 1000,
    onWait: (h) =>
      log?.(`local cluster ${name} is in use by ${describeHolder(h)}; waiting up to ${waitMs / 1000} s`),
  });
  if (r.holder)
    throw clusterInUse(name, r.holder, 'wait for it (--cluster-wait SECONDS) or use another --cluster-name');
}

/**
 * Take cluster `name`'s lease for this process, waiting up to `waitMs` for another run to let go: the
 * release function (idempotent). Refused with a one-line error naming the holder when the time runs out.
 */
export async function leaseLocalCluster(
  name: string,
  o: { waitMs?: number; log?: (line: string) => void } = {},
): Promise<() => void> {
  let pending = taking.get(name);
  if (!pending && !held.has(name)) {
    pending = take(name, o.waitMs ?? 0, o.log).finally(() => taking.delete(name));
    taking.set(name, pending);
  }
  if (pending) await pending;
  held.set(name, (held.get(name) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (held.get(name) ?? 1) - 1;
    if (left > 0) held.set(name, left);
    else {
      held.delete(name);
      // Only this process's lease file goes: a forced `cluster down` may have let another run take it.
      releaseLock(clusterLeasePath(name));
    }
  };
}

/**
 * A command's hold on its `--local` cluster for everything it runs, taken before any session exists so
 * that a command refused for a busy cluster leaves nothing behind; nothing to hold without `--local`.
 */
export function leaseCommandCluster(
  o: { local?: number; clusterName: string; clusterWaitS?: number },
  log: (line: string) => void,
): Promise<() => void> {
  if (o.local === undefined) return Promise.resolve(() => {});
  return leaseLocalCluster(o.clusterName, { waitMs: (o.clusterWaitS ?? 0) * 1000, log });
}

/** The live run holding cluster `name`'s lease, other than this process; null when none does. */
export function clusterLeaseHolder(name: string): LockHolder | null {
  const h = lockHolder(clusterLeasePath(name));
  return h && h.pid !== process.pid ? h : null;
}

/** A local cluster another live run holds: bad input to this command (exit 254), said in one line. */
export class ClusterInUseError extends UserError {
  override readonly name = 'ClusterInUseError';
  constructor(
    readonly cluster: string,
    readonly holder: LockHolder,
    advice: string,
  ) {
    super(`local cluster ${cluster} is in use by ${describeHolder(holder)}; ${advice}`);
  }
}

export function clusterInUse(name: string, h: LockHolder, advice: string): ClusterInUseError {
  return new ClusterInUseError(name, h, advice);
}
