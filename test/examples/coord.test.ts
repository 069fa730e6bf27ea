import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { execa } from 'execa';
import type { ExecOptions, ExecResult, Remote } from '../../src/core/control/types.ts';
import { DaemonDatabase } from '../../src/lib/databases/daemon-db.ts';
import { readDaemonDescription } from '../../src/lib/databases/daemon-file.ts';
import type { DbContext } from '../../src/lib/databases/types.ts';
import { ensureExampleDependencies, expectAllMet, runShippedPlan } from '../helpers/plan-run.ts';

/**
 * examples/zookeeper and examples/nats end to end on a 3-node local cluster (root on Debian 12 with
 * zookeeperd, nats-server and FUSE; each example's npm dependencies are installed when missing). The
 * smoke runs in `npm test`, the two negative controls at once (about 3 minutes): ZooKeeper's plain
 * reads from a follower cut off from the quorum must FAIL reproducibly naming the stale read (key,
 * node n1, the fault window), and a power failure of every NATS server must FAIL reproducibly naming
 * the lost acknowledged messages. `npm run test:coord` (FAULTLINE_COORD_TESTS=1) runs both plans whole:
 * `faultline run` must exit 0, every scenario meeting the `Expected verdict:` its plan declares.
 */
const root = new URL('../../', import.meta.url).pathname;
const full = process.env.FAULTLINE_COORD_TESTS === '1';

/**
 * A plan of these examples on a fresh local cluster; the plan's binding names the example's plugin (module:)
 * and its landing evidence a command (ZooKeeper's own view): code the operator vouches for.
 */
function runPlan(plan: string, cluster: string, opts: { scenarios?: string[]; reductions: number }) {
  return runShippedPlan(plan, cluster, {
    ...opts,
    seed: 7,
    pluginArgs: ['--trust-plan-modules', '--trust-plan-commands'],
  });
}

/**
 * ZooKeeper S1's headline: the first anomaly's key, op, the node that answered it, when, and the fault
 * window: during it, or after its heal while n1 was still catching up. Usually a stale read on n1; the
 * checker may lead with another op the stale view made impossible (a cas that failed on n2 against a
 * version only n1's lagging view explains), so any op and node are accepted. A plain read is only
 * sequentially consistent even without a fault: on a loaded host a follower a few milliseconds behind
 * answers stale before the window too (a CI run led with a read on n2 at 4.82 s, 180 ms before w1), and
 * the headline then says no fault was active.
 */
const STALE_READ =
  /^On key \d+, \S+.* \(op \d+, process \d+ on n\d, [\d.]+–[\d.]+ s, (?:during w1: n1 isolated from n2 n3|with no fault active, [\d.]+ s after w1 healed \(n1 isolated from n2 n3\)|with no fault active)\) cannot be linearized/;
/**
 * NATS S1's headline: an acknowledged publish (by value) missing from the final state, with its op,
 * process, node, time and fault context. Usually the loss was acknowledged during the power-failure
 * window; under load the headline's message has also been one acknowledged after it, with no fault
 * active (docs/findings/coordination.md, "Not yet understood"), so both contexts are accepted.
 */
const LOST_ACKS =
  /acknowledged add of \d+ \(op \d+, process \d+ on n\d, [\d.]+–[\d.]+ s, (?:during w1: lazyfs lose-unfsynced on n1 n2 n3|with no fault active(?:, [\d.]+ s after w1 healed \(lazyfs lose-unfsynced on n1 n2 n3\))?)\) is missing from the final state/;

test.before(async () => {
  await ensureExampleDependencies('zookeeper', 'node-zookeeper-client');
  await ensureExampleDependencies('nats', 'nats');
});

/** A DbContext over three nodes with cluster addresses, for the descriptions' configs. */
const ctx3 = {
  nodes: ['n1', 'n2', 'n3'],
  remote: { node: (n: string) => ({ name: n, host: `10.9.0.${n.slice(1)}`, port: 22 }) },
} as unknown as DbContext;

/**
 * An example's plugin module, by path (its dependencies are the example's own, installed by the before
 * hook). Its `faultline` import resolves to these sources, as bin/faultline.js resolves it in a checkout.
 */
let resolvesFaultline = false;
async function loadPlugin(example: string): Promise<unknown> {
  if (!resolvesFaultline) {
    register(pathToFileURL(join(root, 'bin', 'source-hook.mjs')));
    resolvesFaultline = true;
  }
  return import(pathToFileURL(join(root, 'examples', example, 'plugin.ts')).href);
}

/**
 * Every config file an example's daemon description writes on each node of a 3-node cluster (ctx3), by
 * path relative to the node's directory: rendered by the description's own setup, over a remote that
 * records its commands instead of running them.
 */
async function renderedConfigs(example: string, yaml: string): Promise<Map<string, Map<string, string>>> {
  const db = new DaemonDatabase(readDaemonDescription(join(root, 'examples', example, yaml)));
  const started = new Set<string>();
  const files = new Map<string, Map<string, string>>();
  const remote = {
    node: (n: string) => ({ name: n, host: `10.9.0.${n.slice(1)}`, port: 22, labels: { cluster: 'lab' } }),
    async exec(node: string, cmd: string, opts?: ExecOptions): Promise<ExecResult> {
      const dir = `/var/lib/faultline/${db.name}/lab/${node}/`;
      const written = / && cat > '?([^' ]+)'?/.exec(cmd)?.[1];
      if (written?.startsWith(dir) && opts?.stdin !== undefined) {
        if (!files.has(node)) files.set(node, new Map());
        files.get(node)?.set(written.slice(dir.length), String(opts.stdin));
      }
      if (cmd.includes('setsid')) started.add(node);
      // The daemon's running probe: not running before its start, running after.
      const code = /test -n "\$p"$/.test(cmd) && !started.has(node) ? 1 : 0;
      return { node, command: cmd, stdout: '', stderr: '', code, durationMs: 1 };
    },
  } as unknown as Remote;
  const ctx = { ...ctx3, remote } as DbContext;
  for (const n of ctx.nodes) await db.setup(ctx, n);
  return files;
}

test("zookeeper description: zoo.cfg names every server by id and address, myid is the node's id; srvr gives mode and zxid", async (t) => {
  const files = await renderedConfigs('zookeeper', 'zookeeper.yaml');
  for (const [i, node] of ctx3.nodes.entries()) {
    const cfg = files.get(node)?.get('zoo.cfg') ?? '';
    t.regex(cfg, new RegExp(`^clientPortAddress=10\\.9\\.0\\.${i + 1}$`, 'm'));
    t.regex(cfg, new RegExp(`^dataDir=/var/lib/faultline/zookeeper/lab/${node}/data$`, 'm'));
    t.regex(
      cfg,
      /^server\.1=10\.9\.0\.1:2888:3888\nserver\.2=10\.9\.0\.2:2888:3888\nserver\.3=10\.9\.0\.3:2888:3888$/m,
    );
    t.regex(cfg, /^syncLimit=10$/m, 'a cut-off follower notices after syncLimit × tickTime = 20 s');
    t.regex(cfg, /^tickTime=2000$/m);
    t.regex(cfg, /^clientPort=2181$/m);
    t.regex(cfg, /^4lw\.commands\.whitelist=\*$/m);
    t.is(files.get(node)?.get('data/myid'), `${i + 1}\n`);
  }
  const zk = (await loadPlugin('zookeeper')) as {
    parseSrvr(text: string): { mode: string; zxid: string | null };
  };
  t.deepEqual(
    zk.parseSrvr(
      'Zookeeper version: 3.8.0\nLatency min/avg/max: 0/1.2/40\nZxid: 0x1000000e9\nMode: follower\n',
    ),
    {
      mode: 'follower',
      zxid: '0x1000000e9',
    },
  );
  t.deepEqual(zk.parseSrvr('This ZooKeeper instance is not currently serving requests\n'), {
    mode: 'not-serving',
    zxid: null,
  });
});

test('nats description: each server listens on its own address and routes to the two others; nats-server accepts the file', async (t) => {
  const files = await renderedConfigs('nats', 'nats.yaml');
  const dir = mkdtempSync(join(tmpdir(), 'fl-nats-conf-'));
  for (const [i, node] of ctx3.nodes.entries()) {
    const cfg = files.get(node)?.get('nats.conf') ?? '';
    const me = `10\\.9\\.0\\.${i + 1}`;
    t.regex(cfg, new RegExp(`^server_name: ${node}$`, 'm'));
    t.regex(cfg, new RegExp(`^listen: ${me}:4222$`, 'm'));
    t.regex(cfg, new RegExp(`^http: ${me}:8222$`, 'm'));
    t.regex(cfg, new RegExp(`store_dir: "/var/lib/faultline/nats/lab/${node}/data/js"`));
    t.regex(cfg, new RegExp(`^  listen: ${me}:6222$`, 'm'));
    const routes = [...cfg.matchAll(/^ +nats:\/\/(\S+)$/gm)].map((m) => m[1]);
    t.deepEqual(
      routes,
      ctx3.nodes.filter((n) => n !== node).map((n) => `10.9.0.${n.slice(1)}:6222`),
    );
    // The server's own check of the file (-t: parse and validate, then exit), where it is installed.
    if (existsSync('/usr/sbin/nats-server')) {
      const file = join(dir, `${node}.conf`);
      writeFileSync(file, cfg);
      const r = await execa('/usr/sbin/nats-server', ['-t', '-c', file], { reject: false });
      t.is(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    }
  }
});

// Serial: the two smokes each run a whole cluster, and the NATS negative control needs JetStream to
// recover from its restart onto the lazy filesystem within the window, which a second cluster slows.
const smoke = full ? test.skip : test.serial;

smoke(
  'zookeeper smoke: plain reads from a cut-off follower FAIL reproducibly, naming key, node and window',
  async (t) => {
    t.timeout(8 * 60_000);
    const r = await runPlan('zookeeper-reads.md', 'coord-smoke-zk', { scenarios: ['S1'], reductions: 0 });
    const s1 = r.rows.get('S1');
    t.log(`S1 ${s1?.verdict} in ${r.seconds}s: ${s1?.headline}`);
    t.is(s1?.verdict, 'FAIL-reproducible', r.output);
    t.regex(s1?.headline ?? '', STALE_READ);
    t.is(s1?.expectationMet, true);
    t.is(r.exitCode, 0, 'the only scenario run met its expectation');
  },
);

smoke('nats smoke: a power failure of every server loses acknowledged messages, reproducibly', async (t) => {
  t.timeout(8 * 60_000);
  const r = await runPlan('nats-durability.md', 'coord-smoke-nats', { scenarios: ['S1'], reductions: 0 });
  const s1 = r.rows.get('S1');
  t.log(`S1 ${s1?.verdict} in ${r.seconds}s: ${s1?.headline}`);
  t.is(s1?.verdict, 'FAIL-reproducible', r.output);
  t.regex(s1?.headline ?? '', LOST_ACKS);
  t.is(s1?.expectationMet, true);
  t.is(r.exitCode, 0, 'the only scenario run met its expectation');
});

const fullTest = full ? test.serial : test.skip;

fullTest('zookeeper plan: every scenario meets its expected verdict', async (t) => {
  t.timeout(30 * 60_000);
  const r = await runPlan('zookeeper-reads.md', 'coord-zk', { reductions: 1 });
  expectAllMet(t, r);
  t.regex(r.rows.get('S1')?.headline ?? '', STALE_READ);
});

fullTest('nats plan: every scenario meets its expected verdict', async (t) => {
  t.timeout(40 * 60_000);
  const r = await runPlan('nats-durability.md', 'coord-nats', { reductions: 1 });
  expectAllMet(t, r);
  t.regex(r.rows.get('S1')?.headline ?? '', LOST_ACKS);
});
