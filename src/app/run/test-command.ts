import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import type { CheckResult, Validity } from '../../../checkers/types.ts';
import { type SshCliOptions, sshCliOptionsFrom } from '../../core/control/connect.ts';
import type { Remote } from '../../core/control/types.ts';
import { EXIT, UserError } from '../../core/util/errors.ts';
import { EtcdClient } from '../../lib/clients/etcd.ts';
import type { Client } from '../../lib/clients/types.ts';
import { EtcdDb } from '../../lib/databases/etcd.ts';
import type { DB, DbContext } from '../../lib/databases/types.ts';
import { WORKLOAD_NAMES } from '../../lib/workloads/index.ts';
import { parseFaults } from './faults.ts';
import { type Progress, runTest, type TestRunResult } from './test-run.ts';

/** Parses the `faultline test` flags, connects to the cluster, runs, prints, and returns the exit code. */
export async function testCommand(flags: Record<string, unknown>): Promise<number> {
  const o = parseFlags(flags);
  const { remote, cleanup } = await connectCluster(o);
  try {
    const nodes = remote.nodes.map((n) => n.name);
    const concurrency = parseConcurrency(o.concurrency, nodes.length);
    const { db, makeClient } = await makeDbAndClient(o.db, remote, nodes, o.workload, o.serializableReads);
    const seed = o.seed ?? randomInt(1, 2 ** 31 - 1);
    const outDir = o.out ?? join('store', `${o.db}-${o.workload}`, timestamp());
    process.stderr.write(
      `faultline test: ${o.db} ${o.workload} on ${nodes.length} nodes, concurrency ${concurrency}, rate ${o.rate}/s, ` +
        `${o.timeLimitS}s, nemesis ${o.faults.join(',') || 'none'}, seed ${seed}\n`,
    );
    const result = await runTest({
      remote,
      db,
      makeClient,
      workload: o.workload,
      faults: o.faults,
      nemesisIntervalS: o.nemesisIntervalS,
      timeLimitS: o.timeLimitS,
      concurrency,
      rate: o.rate,
      seed,
      outDir,
      opTimeoutMs: o.opTimeoutMs,
      recoveryS: o.recoveryS,
      leaveDbRunning: o.leaveDbRunning,
      ...(o.replay && { replay: o.replay }),
      onProgress: progressPrinter(),
      meta: { serializableReads: o.serializableReads, argv: process.argv.slice(2) },
    });
    if (process.stderr.isTTY) process.stderr.write('\n');
    if (o.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else process.stdout.write(summaryTable(result));
    return exitCode(result.valid);
  } finally {
    await cleanup();
  }
}

export function exitCode(valid: Validity): number {
  return valid === true ? EXIT.valid : valid === false ? EXIT.invalid : EXIT.unknown;
}

interface TestFlags {
  db: 'etcd' | 'redis';
  workload: string;
  inventory?: string;
  local?: number;
  clusterName: string;
  faults: ReturnType<typeof parseFaults>;
  nemesisIntervalS: number;
  timeLimitS: number;
  concurrency: string;
  rate: number;
  seed?: number;
  out?: string;
  opTimeoutMs: number;
  recoveryS: number;
  serializableReads: boolean;
  replay?: string;
  leaveDbRunning: boolean;
  json: boolean;
  ssh: SshCliOptions;
}

/** "60s", "500ms", "2m", "1h" or bare seconds → ms. */
export function parseDurationMs(text: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m) throw new UserError(`${flag}: "${text}" is not a duration (e.g. 60s, 500ms, 2m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(n * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000));
}

/** `10` or Jepsen's `3n` (× node count). */
export function parseConcurrency(text: string, nodeCount: number): number {
  const m = /^\s*(\d+)\s*(n?)\s*$/.exec(text);
  if (!m) throw new UserError(`--concurrency: "${text}" is not a number or a multiple of n (e.g. 10, 3n)`);
  const n = Number(m[1]) * (m[2] ? nodeCount : 1);
  if (n < 1) throw new UserError(`--concurrency: must be at least 1 (got ${text})`);
  return n;
}

function positiveInt(text: unknown, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new UserError(`${flag}: expected a positive integer (got ${String(text)})`);
  return n;
}

export function parseFlags(f: Record<string, unknown>): TestFlags {
  const db = String(f.db ?? 'etcd');
  if (db !== 'etcd' && db !== 'redis') throw new UserError(`--db: unknown database "${db}" (etcd or redis)`);
  const workload = String(f.workload ?? 'register');
  if (!WORKLOAD_NAMES.includes(workload))
    throw new UserError(`--workload: unknown workload "${workload}" (one of ${WORKLOAD_NAMES.join(', ')})`);
  if (f.inventory && f.local) throw new UserError('--inventory and --local exclude each other');
  if (!f.inventory && !f.local) throw new UserError('say where the nodes are: --inventory FILE or --local N');
  const rate = Number(f.rate ?? 100);
  if (!(rate > 0))
    throw new UserError(`--rate: expected a positive number of ops per second (got ${String(f.rate)})`);
  const out: TestFlags = {
    db,
    workload,
    clusterName: String(f.clusterName ?? 'faultline-test'),
    faults: parseFaults(f.nemesis === undefined ? undefined : String(f.nemesis)),
    nemesisIntervalS: parseDurationMs(String(f.nemesisInterval ?? '10s'), '--nemesis-interval') / 1000,
    timeLimitS: parseDurationMs(String(f.timeLimit ?? '60s'), '--time-limit') / 1000,
    concurrency: String(f.concurrency ?? '1n'),
    rate,
    opTimeoutMs: parseDurationMs(String(f.opTimeout ?? '5s'), '--op-timeout'),
    recoveryS: parseDurationMs(String(f.recovery ?? '10s'), '--recovery') / 1000,
    serializableReads: f.serializableReads === true,
    leaveDbRunning: f.leaveDbRunning === true,
    json: f.json === true,
    ssh: sshCliOptionsFrom(f),
  };
  if (f.inventory) out.inventory = String(f.inventory);
  if (f.local) out.local = positiveInt(f.local, '--local');
  if (f.seed !== undefined) {
    const s = Number(f.seed);
    if (!Number.isSafeInteger(s) || s < 0)
      throw new UserError(`--seed: expected a non-negative integer (got ${String(f.seed)})`);
    out.seed = s;
  }
  if (f.out) out.out = String(f.out);
  if (f.replay) out.replay = String(f.replay);
  return out;
}

async function connectCluster(o: TestFlags): Promise<{ remote: Remote; cleanup: () => Promise<void> }> {
  const { loadInventory } = await import('../../core/control/inventory.ts');
  const { connectRemote } = await import('../../core/control/ssh-remote.ts');
  const { remoteOptionsFor } = await import('../../core/control/connect.ts');
  let inventoryPath = o.inventory;
  if (o.local !== undefined) {
    const { ensureLocalCluster } = await import('../../lib/clusters/local.ts');
    const { cluster, created } = await ensureLocalCluster(o.clusterName, o.local);
    if (created)
      process.stderr.write(
        `local cluster ${o.clusterName} is up (${cluster.subnet}); it stays up for later runs: faultline cluster down --name ${o.clusterName}\n`,
      );
    inventoryPath = cluster.inventoryPath;
  }
  const inv = loadInventory(inventoryPath as string);
  // The inventory's hostKeyCheck and the --accept-new-host-keys / --insecure-skip-host-key-check flags.
  const remote = await connectRemote(inv.nodes, remoteOptionsFor(inv, o.ssh));
  return { remote, cleanup: () => remote.close() };
}

async function makeDbAndClient(
  name: 'etcd' | 'redis',
  remote: Remote,
  nodes: string[],
  workload: string,
  serializableReads: boolean,
): Promise<{ db: DB; makeClient: (opts: Record<string, unknown>) => Client }> {
  const ctx: DbContext = { remote, nodes };
  if (name === 'etcd') {
    const db = new EtcdDb();
    const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress(ctx, n)]));
    return {
      db,
      makeClient: (opts) => new EtcdClient({ workload, urls, serializableReads, ...opts }),
    };
  }
  const { RedisDb } = await import('../../lib/databases/redis.ts');
  const { RedisClient, REDIS_WORKLOADS } = await import('../../lib/clients/redis.ts');
  if (!REDIS_WORKLOADS.includes(workload))
    throw new UserError(
      `--workload ${workload} is not supported on redis (one of ${REDIS_WORKLOADS.join(', ')})`,
    );
  const db = new RedisDb();
  return {
    db,
    makeClient: (opts) =>
      new RedisClient({ workload, db, ctx, readFromReplicas: serializableReads, ...opts }),
  };
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '').replace('T', 'T').slice(0, 17);
}

function progressPrinter(): (p: Progress) => void {
  const tty = process.stderr.isTTY;
  let last = 0;
  return (p) => {
    const line =
      `  ${p.elapsedS.toFixed(0).padStart(4)}s  ${p.stats.invoked} ops (${p.opsPerSec.toFixed(0)}/s)  ` +
      `ok ${p.stats.ok} fail ${p.stats.fail} info ${p.stats.info}  in flight ${p.stats.inFlight}  ` +
      `faults: ${p.faults.length > 0 ? p.faults.join('; ') : 'none'}`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (p.elapsedS - last >= 5) {
      last = p.elapsedS;
      process.stderr.write(`${line}\n`);
    }
  };
}

const VALID_WORD = (v: Validity) => (v === true ? 'valid' : v === false ? 'INVALID' : 'unknown');

export function summaryTable(r: TestRunResult): string {
  const rows: [string, string, string][] = r.results.map((c: CheckResult) => [
    c.checker,
    VALID_WORD(c.valid),
    c.evidence,
  ]);
  const w0 = Math.max(7, ...rows.map((x) => x[0].length));
  const w1 = 7;
  const lines = [
    `${'checker'.padEnd(w0)}  ${'result'.padEnd(w1)}  evidence`,
    `${'-'.repeat(w0)}  ${'-'.repeat(w1)}  ${'-'.repeat(40)}`,
    ...rows.map(([a, b, c]) => `${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`),
    '',
    `ops: ${r.stats.invoked} invoked, ${r.stats.ok} ok, ${r.stats.fail} fail, ${r.stats.info} info (${r.stats.timeouts} timeouts); faults: ${r.faults.length}; ${r.elapsedS.toFixed(0)}s`,
    `run directory: ${r.runDir}`,
    `verdict: ${VALID_WORD(r.valid)}`,
    '',
  ];
  return lines.join('\n');
}
