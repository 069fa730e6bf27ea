import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { PACKET_BEHAVIOURS } from '../../nemeses/params.ts';
import { nemeses } from '../../nemeses/registry.ts';
import { faultWindows, nemesisStepSchema, windowSchedule } from '../../nemeses/schedule.ts';
import { topologies } from '../../nemeses/topology.ts';
import type { FaultRecord, NemesisStep } from '../../nemeses/types.ts';
import { runTest } from '../../src/app/test/test-run.ts';
import { EtcdClient } from '../../src/lib/clients/etcd.ts';
import { EtcdDb } from '../../src/lib/databases/etcd.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * The fault catalogue, end to end: every action a plan binding accepts (every partition topology,
 * packet behaviour, process, clock and disk action) goes through the binding's step schema, the one
 * schedule and the fault plane against etcd on a 5-node local cluster, and each window either lands
 * with injector and victim evidence and is healed, or is refused naming the capability this host (or
 * etcd) lacks. Nothing may be accepted and then silently do nothing.
 */
const fx = withCluster(test, { nodes: 5, name: 'flt-catalogue' });

const DISK_DIR = '/tmp/flt-catalogue-disk';

/** One plan step per action the binding schema accepts, with the params that action needs. */
function everyAction(): Record<string, unknown>[] {
  const steps: Record<string, unknown>[] = [];
  for (const topology of topologies.names()) {
    const params =
      topology === 'grudge'
        ? { grudge: { n1: ['n2'], n2: ['n1'] } }
        : topology === 'asymmetric'
          ? { from: ['n1', 'n2'], to: ['n3', 'n4', 'n5'] }
          : {};
    steps.push({ kind: 'partition', topology, params });
  }
  for (const behaviour of PACKET_BEHAVIOURS) steps.push({ kind: 'packet', behaviour, targets: 'one' });
  const actionsOf = (kind: string) => nemeses.require(kind, 'nemesis').actions.map((a) => a.name);
  for (const action of actionsOf('process')) steps.push({ kind: 'process', action, targets: 'one' });
  for (const action of actionsOf('clock'))
    steps.push({ kind: 'clock', action, targets: 'one', ...(action !== 'reset' && { delta: '3s' }) });
  for (const action of actionsOf('disk')) {
    const params =
      action === 'disk-full'
        ? { dir: DISK_DIR }
        : action === 'corrupt'
          ? { file: `${DISK_DIR}/victim`, backup: true, mode: 'bitflip' }
          : { device: 'flt-catalogue-dm' };
    steps.push({ kind: 'disk', action, targets: ['n1'], params });
  }
  for (const action of actionsOf('membership')) steps.push({ kind: 'membership', action, targets: 'one' });
  return steps;
}

/** The lazy filesystem under etcd's data directory (etcd restarted onto it, and back off at heal). */
function lazyfsActions(): Record<string, unknown>[] {
  return nemeses
    .require('lazyfs', 'nemesis')
    .actions.map((a) => a.name)
    .map((action) => ({
      kind: 'lazyfs',
      action,
      targets: ['n1'],
      ...((action === 'fsync-delay' || action === 'slow') && { params: { delayMs: 20 } }),
      // etcd appends to its WAL and reads its bbolt file: the aimed errors' targets.
      ...(action === 'eio-write' && { params: { files: ['member/wal/*.wal'] } }),
      ...(action === 'eio-read' && { params: { files: ['member/snap/db'] } }),
    }));
}

/**
 * The proxy's actions: they act on the clients' path through faultline's own TCP proxy, so they land only
 * in a run whose clients go through it; test/nemeses/proxy.test.ts proves each one's landing and heal.
 */
function proxyActions(): Record<string, unknown>[] {
  return nemeses
    .require('proxy', 'nemesis')
    .actions.map((a) => a.name)
    .map((action) => ({ kind: 'proxy', action, targets: 'one' }));
}

test('the enumeration covers every kind and action the registry and binding schema accept', (t) => {
  const steps = [...everyAction(), ...lazyfsActions(), ...proxyActions()];
  const kinds = new Set(steps.map((s) => s.kind));
  for (const def of nemeses.values()) t.true(kinds.has(def.kind), `${def.kind} enumerated`);
  for (const raw of steps) {
    const r = nemesisStepSchema.safeParse({ ...raw, startS: 1, durationS: 1 });
    t.true(r.success, `${JSON.stringify(raw)}: ${r.success ? '' : r.error.issues[0]?.message}`);
  }
  // An action the schema does not list is a plan error, so the enumeration is the whole surface.
  for (const bad of [
    { kind: 'process', action: 'explode' },
    { kind: 'clock', action: 'melt', delta: '1s' },
    { kind: 'disk', action: 'slow' },
    { kind: 'packet', behaviour: 'teleport' },
    { kind: 'partition', topology: 'hexagon' },
    { kind: 'lazyfs', action: 'evaporate' },
    { kind: 'proxy', action: 'teleport' },
  ])
    t.false(nemesisStepSchema.safeParse({ ...bad, startS: 1, durationS: 1 }).success, bad.kind);
});

/** Refusals the catalogue allows: a capability this host or the database lacks, named. */
const REFUSAL = /capability missing|unavailable|cannot (affect|intercept)|not installed/i;

function sides(r: FaultRecord): Set<string> {
  return new Set((r.evidence?.signals ?? []).filter((s) => s.landed).map((s) => s.side));
}

/**
 * fsync-fail under a running etcd member: etcd ran and wrote on the lazy filesystem, then its own fsyncs
 * answered EIO and it stopped (a fatal I/O error in its log, its peer seeing it down); after heal it runs
 * and serves again.
 */
function fsyncFailOnEtcd(t: ExecutionContext, rec: FaultRecord): void {
  const find = (side: string, re: RegExp) =>
    rec.evidence?.signals.find((s) => s.side === side && re.test(s.signal));
  const own = find('injector', /own fsyncs on the lazy filesystem$/);
  t.regex(String(own?.before), /^\d+ fsyncs ok, [1-9]\d* writes \(pid \d+ running on the mount\)$/);
  t.regex(String(own?.during), /^[1-9]\d* fsync\(s\) answered EIO$/);
  const reaction = find('victim', /once its fsyncs fail/);
  t.regex(
    String(reaction?.during),
    /^exited; [1-9]\d* I\/O error line\(s\) logged, last: .*input\/output error/,
  );
  const peer = find('victim', /as peer n\d sees it$/);
  t.regex(String(peer?.during), /^down/);
  t.regex(String(peer?.after), /^up/);
  const back = rec.afterHeal?.signals.find((s) => s.side === 'victim' && /^etcd running on /.test(s.signal));
  t.regex(String(back?.after), /^pid \d+, files open there: \d+$/);
}

/** Run these plan steps one window after another against etcd, and judge every window's evidence. */
async function runCatalogue(t: ExecutionContext, raws: readonly Record<string, unknown>[]): Promise<void> {
  const remote = await fx.remote();
  const nodes = remote.nodes.map((n) => n.name);
  // Disk faults act on a small filesystem of their own, never on the host's.
  await remote.exec(
    'n1',
    `mkdir -p ${DISK_DIR} && (mountpoint -q ${DISK_DIR} || mount -t tmpfs -o size=8m tmpfs ${DISK_DIR}) && head -c 65536 /dev/urandom > ${DISK_DIR}/victim`,
    { sudo: true },
  );
  t.teardown(async () => {
    await remote.exec('n1', `umount ${DISK_DIR}; rmdir ${DISK_DIR}`, { sudo: true, check: false });
  });
  const steps = raws.map((raw, i) =>
    nemesisStepSchema.parse({ ...raw, startS: 2 + i * 6, durationS: 3 }),
  ) as NemesisStep[];
  const durationS = 2 + steps.length * 6 + 1;
  const windows = faultWindows(steps, durationS);
  const db = new EtcdDb();
  const urls = Object.fromEntries(nodes.map((n) => [n, db.clientAddress({ remote, nodes }, n)]));
  const r = await runTest({
    remote,
    db,
    makeClient: (opts) => new EtcdClient({ workload: 'multi-register', urls, ...opts }),
    workload: 'multi-register',
    faults: [],
    faultSchedule: windowSchedule(windows, durationS, 1),
    nemesisIntervalS: 5,
    // Slack after the last window: on a loaded host proving a fault can take seconds, and a window
    // that starts late must still run rather than fall off the end of the workload.
    timeLimitS: durationS + 90,
    concurrency: 5,
    rate: 20,
    seed: 1,
    outDir: mkdtempSync(join(tmpdir(), 'flt-catalogue-')),
    opTimeoutMs: 3000,
    recoveryS: 2,
  });
  t.is(r.faults.length, windows.length, 'one record per window');
  const table: string[] = [];
  const mustLand = new Set(['partition', 'process', 'membership']);
  // Packet faults with a substitute on this kernel (iptables statistic, tbf) land too.
  const substituted = new Set(['packet loss', 'packet rate']);
  // Process faults on etcd: the database's own peers see the victim down (then serving again).
  const peerSeen = (rec: FaultRecord) =>
    rec.evidence?.signals.some(
      (s) => s.side === 'victim' && / as peer n\d sees it$/.test(s.signal) && s.landed,
    );
  r.faults.forEach((rec, i) => {
    const step = windows[i]?.step as NemesisStep;
    const name = `${step.kind} ${step.topology ?? step.behaviour ?? step.action}`;
    const ev = rec.evidence;
    const landed = ev?.landed === true;
    table.push(
      `${name}: ${landed ? 'landed' : `refused: ${ev?.reason}`} [${[...sides(rec)].join('+')}] healed ${rec.healedAt ? 'yes' : 'no'}`,
    );
    if (landed) {
      t.true(sides(rec).has('injector'), `${name}: injector evidence`);
      t.true(sides(rec).has('victim'), `${name}: victim evidence`);
      t.truthy(rec.healedAt, `${name}: healed`);
      // Every fault is measured again after heal (a kind with nothing to re-measure says so).
      t.truthy(rec.afterHeal, `${name}: after-heal evidence recorded`);
      t.true(rec.afterHeal?.landed, `${name}: after heal: ${rec.afterHeal?.reason}`);
      if (step.kind === 'process' && step.action !== 'resume') t.true(peerSeen(rec), `${name}: peer view`);
      if (name === 'lazyfs fsync-fail') fsyncFailOnEtcd(t, rec);
      if (step.kind === 'disk' && step.action === 'corrupt') {
        const inj = rec.evidence?.signals.find((s) => s.side === 'injector');
        t.not(
          JSON.stringify(inj?.before),
          JSON.stringify(inj?.during),
          `${name}: size/sha256 before → after`,
        );
      }
    } else if (name === 'lazyfs eio-read') {
      // A running etcd reads neither its WAL (only at start) nor its bbolt file (mmap pages already in
      // memory) through read(): the fault is not landed, and its evidence says why.
      t.regex(String(ev?.reason), /0 read\(s\) of the aimed files answered EIO/, `${name}: ${ev?.reason}`);
    } else {
      t.regex(String(ev?.reason), REFUSAL, `${name}: a refusal names the missing capability`);
      t.false(mustLand.has(step.kind) || substituted.has(name), `${name} must land here: ${ev?.reason}`);
    }
  });
  t.log(table.join('\n'));
  // Disk faults on their own filesystem never need a host capability this machine lacks.
  for (const [i, rec] of r.faults.entries()) {
    const step = windows[i]?.step as NemesisStep;
    if (step.kind === 'disk' && step.action !== 'flakey')
      t.true(rec.evidence?.landed, `disk ${step.action}: ${rec.evidence?.reason}`);
  }
  t.true(r.heal?.clean, `every node clean after the run: ${JSON.stringify(r.heal?.sweep)}`);
}

fx.test.serial(
  'every plan action lands with injector and victim evidence and is healed, or is refused naming the capability',
  (t) => runCatalogue(t, everyAction()),
);

fx.test.serial(
  'every lazyfs action lands on etcd’s data directory with filesystem and database evidence, or is refused naming the capability',
  (t) => runCatalogue(t, lazyfsActions()),
);
