import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadedPlan } from '../../src/app/plan/load.ts';
import { SESSION_FILE_VERSION, type SessionFile } from '../../src/app/run/session-file.ts';
import { planHash, shardUnits, type Unit } from '../../src/app/run/shards.ts';
import type { ScenarioEvidence } from '../../src/app/verdict/evidence.ts';
import { hardeningEvidence } from '../verdict/evidence-builders.ts';

/**
 * Recorded shard sessions without a cluster, for the merge tests and `npm run bench:merge`: each shard's
 * session.json (its units' evidence, stopping at a row's first FAIL as a run does), its plan copy and
 * its metrics/<S>.json with one entry per seed.
 */
/** One seed's evidence: a pass, or a reproduced FAIL with an anomaly. */
export function seedEvidence(row: string, seed: number, fail: boolean): ScenarioEvidence {
  const base = hardeningEvidence({
    scenario: row,
    seeds: [
      fail
        ? { seed, outcome: 'fail', rerun: 'reproduced', reproducer: `faultline run --seed ${seed}` }
        : { seed, outcome: 'pass' },
    ],
    runDir: `artifacts/${row}/01-run-seed-${seed}`,
    ...(fail && {
      oracles: [
        {
          checker: 'linearizable',
          ran: true,
          valid: false,
          evidence: 'linearizable: 1 anomaly',
          anomalies: 1,
          anomalyTypes: ['nonlinearizable'],
          opsConsumed: 60000,
        },
      ],
    }),
  });
  return { ...base, perSeed: [{ ...base, seed, runDir: base.runDir, durationS: base.ran.durationS }] };
}

/** Several seeds of one row as a shard (or an unsharded run) records them: stop at the first FAIL. */
export function rowEvidence(row: string, seeds: { seed: number; fail: boolean }[]): ScenarioEvidence {
  const ran: ScenarioEvidence[] = [];
  for (const s of seeds) {
    ran.push(seedEvidence(row, s.seed, s.fail));
    if (s.fail) break;
  }
  const primary = ran.find((e) => e.seeds[0]!.outcome === 'fail') ?? ran[0]!;
  return { ...primary, seeds: ran.flatMap((e) => e.seeds), perSeed: ran.flatMap((e) => e.perSeed) };
}

export interface ShardSessionOptions {
  plan: LoadedPlan;
  planPath: string;
  tier: SessionFile['tier'];
  units: readonly Unit[];
  /** Which (row, seed) units fail. */
  fails: (row: string, seed: number) => boolean;
  /** Another plan hash than the plan file's (a foreign shard). */
  hash?: string;
}

export function writeShard(root: string, k: number, n: number, o: ShardSessionOptions): string {
  const { plan, planPath, units, fails } = o;
  const hash = o.hash ?? planHash(readFileSync(planPath));
  const dir = join(root, `shard-${k}`, 'etcd-register', '2026-12-01T02-00-00Z');
  mkdirSync(join(dir, 'metrics'), { recursive: true });
  copyFileSync(planPath, join(dir, 'plan.md'));
  const mine = shardUnits(units, { index: k, count: n });
  const rows = [...new Set(mine.map((u) => u.row))];
  const evidence = rows.map((row) =>
    rowEvidence(
      row,
      mine.filter((u) => u.row === row).map((u) => ({ seed: u.seed, fail: fails(row, u.seed) })),
    ),
  );
  for (const ev of evidence)
    writeFileSync(
      join(dir, 'metrics', `${ev.scenario}.json`),
      JSON.stringify({
        scenario: ev.scenario,
        windowS: 2,
        baselineOpsPerSec: 100,
        afterHealOpsPerSec: 98,
        summary: figures(1000),
        windows: [],
        perSeed: ev.perSeed.map((s) => ({
          seed: s.seed,
          runDir: s.runDir,
          summary: figures(1000 + Number(s.seed)),
          durationS: 600,
          baselineOpsPerSec: 100,
          afterHealOpsPerSec: 98,
        })),
      }),
    );
  const file: SessionFile = {
    version: SESSION_FILE_VERSION,
    plan: { path: 'plans/etcd-register.md', copy: 'plan.md', slug: plan.slug, sha256: hash },
    dir,
    tier: o.tier,
    seedBase: 7,
    timeScale: 1,
    shard: { index: k, count: n },
    mergedFrom: [],
    units: mine.map((u) => ({ row: u.row, seed: u.seed })),
    selected: plan.resolved.filter((r) => r.parentId === null).map((r) => r.id),
    startedAt: `2026-12-01T02:0${k}:00.000Z`,
    endedAt: `2026-12-01T03:0${k}:00.000Z`,
    commit: 'N/A',
    operator: `ci-${k}`,
    toolbox: [],
    capabilities: [],
    preconditions: {
      clusterUp: true,
      observabilityLive: true,
      baselineCaptured: true,
      faultPlaneResponsive: true,
    },
    timeline: [{ time: `2026-12-01T02:0${k}:00.000Z`, scenario: 'session', event: 'start', notes: '' }],
    sharedClock: true,
    blocked: null,
    evidence,
    reductions: {},
    findings: [],
  };
  writeFileSync(join(dir, 'session.json'), JSON.stringify(file));
  return dir;
}

function figures(ops: number) {
  return {
    ops,
    ok: ops - 10,
    fail: 4,
    info: 6,
    opsPerSec: ops / 600,
    latencyMs: { p50: 1, p99: 9 },
    healthy: null,
    faulted: null,
  };
}
