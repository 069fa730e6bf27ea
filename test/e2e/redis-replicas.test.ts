import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { FaultRecord } from '../../nemeses/types.ts';
import { runTest } from '../../src/app/test/test-run.ts';
import { RedisClient } from '../../src/lib/clients/redis.ts';
import { RedisDb } from '../../src/lib/databases/redis.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * Redis on a 5-node local cluster with reads served by replicas while partitions cut the primary off
 * from them (clients still reach every node): asynchronous replication serves stale values, which the
 * linearizability checker must find. Up to 3 seeds of 20 s, stopping at the first violation.
 */
const fx = withCluster(test, { nodes: 5, name: 'e2e-redis' });

fx.test.serial(
  'redis register, reads from replicas, primary partitioned: a violation is found',
  async (t) => {
    const remote = await fx.remote();
    const nodes = remote.nodes.map((n) => n.name);
    const seen: string[] = [];
    for (const seed of [1, 2, 3]) {
      const db = new RedisDb();
      const r = await runTest({
        remote,
        db,
        makeClient: (opts) =>
          new RedisClient({
            workload: 'register',
            db,
            ctx: { remote, nodes },
            readFromReplicas: true,
            ...opts,
          }),
        workload: 'register',
        faults: ['partition'],
        faultTargets: { partition: ['primaries'] },
        nemesisIntervalS: 4,
        nemesisDelayS: 2,
        timeLimitS: 20,
        concurrency: 10,
        rate: 100,
        seed,
        outDir: mkdtempSync(join(tmpdir(), 'faultline-e2e-redis-')),
        opTimeoutMs: 3000,
        recoveryS: 2,
      });
      const lin = r.results.find((c) => c.checker === 'linearizable');
      seen.push(`seed ${seed}: ${lin?.valid} (${lin?.evidence})`);
      if (lin?.valid === false) {
        t.is(r.valid, false);
        t.is(r.results.find((c) => c.checker === 'faults')?.valid, true, 'the partitions landed');
        return;
      }
    }
    t.fail(`no violation in 3 seeds: ${seen.join('; ')}`);
  },
);

fx.test.serial(
  'redis under clock faults (libfaketime wrapper): every bump lands on the DB’s own TIME',
  async (t) => {
    const remote = await fx.remote();
    const nodes = remote.nodes.map((n) => n.name);
    const db = new RedisDb();
    const r = await runTest({
      remote,
      db,
      makeClient: (opts) => new RedisClient({ workload: 'register', db, ctx: { remote, nodes }, ...opts }),
      workload: 'register',
      faults: ['clock'],
      nemesisIntervalS: 2,
      nemesisDelayS: 1,
      timeLimitS: 10,
      concurrency: 5,
      rate: 50,
      seed: 3,
      outDir: mkdtempSync(join(tmpdir(), 'faultline-e2e-redis-clock-')),
      opTimeoutMs: 3000,
      recoveryS: 1,
    });
    const faults = r.faults as FaultRecord[];
    t.true(faults.length >= 1, `${faults.length} clock faults`);
    for (const f of faults) {
      t.is(f.spec.kind, 'clock');
      t.true(f.evidence?.landed, f.evidence?.reason);
      t.true(
        f.evidence?.signals.some((s) => s.signal.includes('TIME') && s.landed),
        'the DB’s own clock moved',
      );
    }
    t.is(r.results.find((c) => c.checker === 'faults')?.valid, true);
    // a primary with replicas and no failover stays linearizable under clock skew
    t.is(r.results.find((c) => c.checker === 'linearizable')?.valid, true);
  },
);
