import type { TestFn } from 'ava';
import { loadInventory } from '../../src/core/control/inventory.ts';
import { connectRemote, type RemoteOptions } from '../../src/core/control/ssh-remote.ts';
import type { Remote } from '../../src/core/control/types.ts';
import { localClusterUnavailableReason } from '../../src/lib/clusters/host-tools.ts';
import { type LocalCluster, localClusterDown, localClusterUp } from '../../src/lib/clusters/local.ts';
import type { LoginUserOptions } from '../../src/lib/clusters/local-login-user.ts';

/**
 * A local cluster shared by the tests of one file:
 *
 *   const fx = withCluster(test, { nodes: 3, name: 'nem-part' });
 *   fx.test('partition lands', async (t) => { const r = await fx.remote(); … });
 *
 * Brought up once in `test.before` (after removing any leftover of the same name from a crashed run) and
 * removed in `test.after.always`. Each test file must use its own `name`: files run concurrently.
 * Without root, `ip`, `sshd` … the tests registered through `fx.test` are skipped and their titles say
 * why; set FAULTLINE_REQUIRE_CLUSTER=1 (CI) to make that a failure instead.
 * FAULTLINE_KEEP_CLUSTER=1 leaves the cluster up for debugging. FAULTLINE_TEST_CLUSTER_PREFIX (e.g. `ci-`)
 * goes in front of every name, so two checkouts running the suite on one host never share a cluster.
 */
export interface ClusterFixture {
  /** Why the cluster cannot be built here, or null. */
  readonly skipReason: string | null;
  /** Register tests through this: it is `test`, or a skipping stand-in when no cluster is possible. */
  readonly test: TestFn;
  cluster(): LocalCluster;
  /** One shared connection to every node (host keys verified against the cluster's known_hosts). */
  remote(): Promise<Remote>;
  /** A fresh connection with extra options; the caller closes it. */
  connect(opts?: RemoteOptions): Promise<Remote>;
}

export interface WithClusterOptions {
  nodes: number;
  name: string;
  subnet?: string;
  /** Lab-like addressing: SSH through 127.0.0.1 forwards, cluster traffic on the namespace addresses. */
  sshViaForward?: boolean;
  /** Nodes log in as this non-root user with sudo. */
  loginUser?: LoginUserOptions;
  /** Size of each node's own data and /tmp filesystems. */
  dataBytes?: number;
  /** Size of each node's copy-on-write layer over the host's root filesystem. */
  rootBytes?: number;
}

function skippingTest(test: TestFn, reason: string): TestFn {
  const suffix = ` (skipped: ${reason})`;
  type Any = (...args: unknown[]) => unknown;
  const skip = test.skip as unknown as Any;
  const serialSkip = test.serial.skip as unknown as Any;
  const wrapped = ((title: string, ...rest: unknown[]) =>
    skip(`${title}${suffix}`, ...rest)) as unknown as Record<string, unknown>;
  wrapped.serial = Object.assign(
    (title: string, ...rest: unknown[]) => serialSkip(`${title}${suffix}`, ...rest),
    test.serial,
  );
  for (const k of [
    'before',
    'after',
    'beforeEach',
    'afterEach',
    'skip',
    'todo',
    'failing',
    'only',
    'macro',
    'meta',
  ]) {
    if (!(k in wrapped)) wrapped[k] = (test as unknown as Record<string, unknown>)[k];
  }
  return wrapped as unknown as TestFn;
}

export function withCluster(test: TestFn, given: WithClusterOptions): ClusterFixture {
  const opts = { ...given, name: `${process.env.FAULTLINE_TEST_CLUSTER_PREFIX ?? ''}${given.name}` };
  const reason = process.env.FAULTLINE_SKIP_CLUSTER_TESTS
    ? 'FAULTLINE_SKIP_CLUSTER_TESTS is set'
    : localClusterUnavailableReason();
  if (reason && process.env.FAULTLINE_REQUIRE_CLUSTER) {
    test('local cluster is available (FAULTLINE_REQUIRE_CLUSTER)', (t) => t.fail(reason));
  }
  let cluster: LocalCluster | undefined;
  let shared: Promise<Remote> | undefined;
  const opened: Remote[] = [];

  const connect = async (extra: RemoteOptions = {}): Promise<Remote> => {
    if (!cluster) throw new Error('withCluster: the cluster is not up (use fx.test, and only inside tests)');
    const inv = loadInventory(cluster.inventoryPath);
    const r = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles, ...extra });
    opened.push(r);
    return r;
  };

  if (!reason) {
    test.before(async () => {
      await localClusterDown(opts.name);
      cluster = await localClusterUp({
        nodes: opts.nodes,
        name: opts.name,
        ...(opts.subnet ? { subnet: opts.subnet } : {}),
        ...(opts.sshViaForward && { sshViaForward: true }),
        ...(opts.loginUser && { loginUser: opts.loginUser }),
        ...(opts.dataBytes && { dataBytes: opts.dataBytes }),
        ...(opts.rootBytes && { rootBytes: opts.rootBytes }),
      });
    });
    test.after.always(async () => {
      await Promise.all(opened.map((r) => r.close().catch(() => undefined)));
      if (!process.env.FAULTLINE_KEEP_CLUSTER) await localClusterDown(opts.name);
    });
  }

  return {
    skipReason: reason,
    test: reason ? skippingTest(test, reason) : test,
    cluster() {
      if (!cluster)
        throw new Error('withCluster: the cluster is not up (use fx.test, and only inside tests)');
      return cluster;
    },
    remote() {
      shared ??= connect();
      return shared;
    },
    connect,
  };
}
