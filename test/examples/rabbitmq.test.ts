import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { ensureExampleDependencies, expectAllMet, runShippedPlan } from '../helpers/plan-run.ts';

/**
 * plans/rabbitmq-durability.md end to end on a 3-node local cluster, RabbitMQ added through the plugin
 * API only (examples/rabbitmq/plugin.ts, passed with --plugin). Root on Debian 12 with rabbitmq-server and
 * FUSE. `npm test` runs S2, a power failure of every broker (about 2 minutes): it must end PASS-smoke with
 * the fault proven to have landed: every broker lost un-fsynced bytes, and confirmed publishes were
 * exposed to it. `npm run test:rabbitmq` (FAULTLINE_RABBITMQ_TESTS=1) runs the whole plan: `faultline
 * run` must exit 0, every scenario meeting the `Expected verdict:` the plan declares.
 */
const full = process.env.FAULTLINE_RABBITMQ_TESTS === '1';
const PLUGIN = ['--plugin', new URL('../../examples/rabbitmq/plugin.ts', import.meta.url).pathname];

interface LazyfsUndo {
  perNode: Record<string, { dropped?: { bytes: number; stats: { fsyncs: number } } }>;
}
interface QueueStats {
  acknowledgedCount: number;
  lostCount: number;
  unexpectedCount: number;
}

test.before(async () => {
  await ensureExampleDependencies('rabbitmq', 'amqplib');
});

const smoke = full ? test.skip : test.serial;

smoke('rabbitmq smoke: a power failure of every broker lands and loses no confirmed publish', async (t) => {
  t.timeout(10 * 60_000);
  const r = await runShippedPlan('rabbitmq-durability.md', 'rmq-smoke', {
    scenarios: ['S2'],
    reductions: 0,
    seed: 1,
    pluginArgs: PLUGIN,
  });
  const s2 = r.rows.get('S2');
  t.log(`S2 ${s2?.verdict} in ${r.seconds}s: ${s2?.headline}`);
  t.is(s2?.verdict, 'PASS-smoke', r.output);
  t.is(s2?.expectationMet, true);
  t.is(r.exitCode, 0, 'the only scenario run met its expectation');

  const artifacts = join(r.session, 'artifacts/S2/01-run-seed-1');
  // The fault landed: each broker was killed with writes not fsynced, and they were dropped.
  const [w1] = JSON.parse(readFileSync(join(artifacts, 'faults.json'), 'utf8')) as { undo: LazyfsUndo }[];
  for (const node of ['n1', 'n2', 'n3']) {
    const dropped = w1?.undo.perNode[node]?.dropped;
    t.true((dropped?.bytes ?? 0) > 0, `${node}: no un-fsynced bytes dropped`);
    t.true((dropped?.stats.fsyncs ?? 0) > 0, `${node}: the broker never fsynced through the lazy filesystem`);
  }
  // Confirmed publishes were exposed to it, and none is missing.
  const results = JSON.parse(readFileSync(join(artifacts, 'results.json'), 'utf8')) as {
    results: { checker: string; stats: QueueStats }[];
  };
  const queue = results.results.find((c) => c.checker === 'total-queue')?.stats;
  t.true((queue?.acknowledgedCount ?? 0) > 100, `confirmed publishes: ${queue?.acknowledgedCount}`);
  t.is(queue?.lostCount, 0);
  t.is(queue?.unexpectedCount, 0);
});

const fullTest = full ? test.serial : test.skip;

fullTest('rabbitmq plan: every scenario meets its expected verdict', async (t) => {
  t.timeout(30 * 60_000);
  const r = await runShippedPlan('rabbitmq-durability.md', 'rmq', {
    reductions: 1,
    seed: 1,
    pluginArgs: PLUGIN,
  });
  expectAllMet(t, r);
});
