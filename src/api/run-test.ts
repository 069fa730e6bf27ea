import { join } from 'node:path';
import { parseFaults } from '../../nemeses/schedule.ts';
import { loadCommandLinePlugin } from '../app/plugin/load-plugins.ts';
import { TEST_DEFAULTS } from '../app/test/test-defaults.ts';
import { runTest as runOnCluster, type TestRunResult } from '../app/test/test-run.ts';
import { parseDuration } from '../core/util/duration.ts';
import { UserError } from '../core/util/errors.ts';
import { connectCluster } from '../lib/clusters/connect-cluster.ts';
import { bindDatabase } from '../lib/database-factory.ts';
import { databases } from '../lib/databases/registry.ts';
import { workloads } from '../lib/workloads/index.ts';

/**
 * `runTest(options)`: the `faultline test` command as a function: connect (an inventory, or a local
 * cluster brought up when missing and left up), set the database up, run the workload under the chosen
 * faults, heal, check. Durations are strings with units ("30s"), exactly as on the command line.
 */
export interface RunTestOptions {
  inventory?: string;
  /** A local cluster of N nodes (root, Linux), named `clusterName` (default faultline-test). */
  local?: number;
  clusterName?: string;
  db: string;
  client?: string;
  workload: string;
  dbOptions?: Record<string, unknown>;
  clientOptions?: Record<string, unknown>;
  /** Fault classes (partition, kill, pause, clock …). */
  nemesis?: readonly string[];
  nemesisInterval?: string;
  timeLimit?: string;
  /** Client processes (default: one per node). */
  concurrency?: number;
  rate?: number;
  seed?: number;
  opTimeout?: string;
  recovery?: string;
  /** The run directory (default store/<db>-<workload>/<timestamp>). */
  out?: string;
  /** Plugin modules to load first. */
  plugins?: readonly string[];
  /** Host keys: the inventory's `hostKeyCheck` unless one of these says otherwise. */
  ssh?: { acceptNewHostKeys?: boolean; insecureSkipHostKeyCheck?: boolean; knownHosts?: string[] };
  signal?: AbortSignal;
}

export async function runTest(o: RunTestOptions): Promise<TestRunResult> {
  for (const p of o.plugins ?? []) await loadCommandLinePlugin(p);
  databases.require(o.db, 'db');
  workloads.require(o.workload, 'workload');
  if (!o.inventory && !o.local) throw new UserError('runTest: give inventory or local');
  const faults = parseFaults((o.nemesis ?? []).join(',') || TEST_DEFAULTS.nemesis);
  const cluster = await connectCluster(
    {
      ...(o.inventory && { inventory: o.inventory }),
      ...(o.local && { local: o.local }),
      clusterName: o.clusterName ?? TEST_DEFAULTS.clusterName,
    },
    { ...(o.ssh && { ssh: o.ssh }), localLifetime: 'keep' },
  );
  try {
    const sut = await bindDatabase(
      {
        db: o.db,
        ...(o.client && { client: o.client }),
        workload: o.workload,
        ...(o.dbOptions && { dbOptions: o.dbOptions }),
        ...(o.clientOptions && { clientOptions: o.clientOptions }),
        where: 'runTest',
      },
      cluster.remote,
    );
    const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
    return await runOnCluster({
      remote: cluster.remote,
      db: sut.db,
      makeClient: sut.makeClient,
      clientRoutable: sut.routable,
      workload: o.workload,
      faults,
      nemesisIntervalS:
        parseDuration(o.nemesisInterval ?? TEST_DEFAULTS.nemesisInterval, 'nemesisInterval') / 1000,
      timeLimitS: parseDuration(o.timeLimit ?? TEST_DEFAULTS.timeLimit, 'timeLimit') / 1000,
      concurrency: o.concurrency ?? cluster.remote.nodes.length,
      rate: o.rate ?? TEST_DEFAULTS.rate,
      seed,
      outDir: o.out ?? join('store', `${o.db}-${o.workload}`, new Date().toISOString().replace(/[:.]/g, '')),
      opTimeoutMs: parseDuration(o.opTimeout ?? TEST_DEFAULTS.opTimeout, 'opTimeout'),
      recoveryS: parseDuration(o.recovery ?? TEST_DEFAULTS.recovery, 'recovery') / 1000,
      ...(o.signal && { signal: o.signal }),
      meta: { api: true, dbOptions: sut.dbOptions, client: sut.clientName },
    });
  } finally {
    await cluster.close();
  }
}
