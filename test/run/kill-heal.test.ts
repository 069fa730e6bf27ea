import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { readLedger } from '../../nemeses/ledger.ts';
import { pairEvents } from '../../src/core/history/pair.ts';
import { loadHistory } from '../../src/core/history/read.ts';
import { withCluster } from '../helpers/cluster.ts';

/**
 * kill -9 of `faultline run` in the middle of a scenario with a partition in force, then
 * `faultline heal --ledger` with nothing else (no inventory, no --known-hosts, no key): the ledger alone
 * reaches the nodes and verifies their host keys, every node is clean again (no FAULTLINE chain left)
 * and the history the killed run left is still readable.
 */
const fx = withCluster(test, { nodes: 3, name: 'run-kill' });
const root = new URL('../../', import.meta.url).pathname;
const planPath = join(root, 'plans/etcd-register.md');
const cli = join(root, 'bin/faultline.js');
const env = { ...process.env, FAULTLINE_FROM_SOURCE: '1' };

function find(dir: string, name: string): string | null {
  if (!existsSync(dir)) return null;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const hit = find(p, name);
      if (hit) return hit;
    } else if (e.name === name) return p;
  }
  return null;
}

async function waitFor<T>(what: string, fn: () => T | null, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

fx.test.serial(
  'kill -9 mid-scenario, then faultline heal --ledger alone: the cluster is clean and the history readable',
  async (t) => {
    t.timeout(5 * 60_000);
    const out = mkdtempSync(join(tmpdir(), 'fl-kill-'));
    const inventory = fx.cluster().inventoryPath;
    const child = spawn(
      process.execPath,
      [
        cli,
        'run',
        planPath,
        '--inventory',
        inventory,
        '--scenario',
        'S3',
        '--seed',
        '5',
        '--out',
        out,
        '--yes',
      ],
      { env, stdio: 'ignore' },
    );
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, s) => r(s)));
    // Wait until the partition is in force: the ledger has its evidence entry.
    const ledger = await waitFor(
      'a partition in force',
      () => {
        const p = find(out, 'ledger.jsonl');
        return p && /"t":"evidence"/.test(readFileSync(p, 'utf8')) ? p : null;
      },
      180_000,
    );
    child.kill('SIGKILL');
    t.is(await exited, 'SIGKILL');

    const remote = await fx.remote();
    const chains = async () =>
      (
        await Promise.all(
          remote.nodes.map(async (n) => (await remote.exec(n.name, 'iptables -w -S', { sudo: true })).stdout),
        )
      ).join('\n');
    t.regex(await chains(), /FAULTLINE/, 'the killed run left its partition in force');

    const cluster = readLedger(ledger);
    t.true(cluster.knownHostsFiles?.includes(fx.cluster().knownHostsPath), 'the ledger names known_hosts');
    // From another directory, with HOME elsewhere: nothing but the ledger can tell heal where the nodes are.
    const home = mkdtempSync(join(tmpdir(), 'fl-kill-home-'));
    const heal = spawnSync(process.execPath, [cli, 'heal', '--ledger', ledger], {
      env: { ...env, HOME: home },
      cwd: home,
      encoding: 'utf8',
    });
    t.log(heal.stdout, heal.stderr);
    t.is(heal.status, 0, 'faultline heal reports every node clean');
    t.notRegex(await chains(), /FAULTLINE/, 'no FAULTLINE rule or chain is left on any node');

    const history = join(ledger, '..', 'history.jsonl');
    const events = await loadHistory(history, { format: 'jsonl' });
    t.true(events.length > 0);
    t.true(pairEvents(events).ops.length > 0);
  },
);
