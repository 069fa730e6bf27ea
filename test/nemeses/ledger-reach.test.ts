import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { readLedger } from '../../nemeses/ledger.ts';
import { FaultPlane } from '../../nemeses/plane.ts';
import { remoteOptionsFor } from '../../src/core/control/connect.ts';
import { loadInventory } from '../../src/core/control/inventory.ts';
import { connectRemote } from '../../src/core/control/ssh-remote.ts';
import { renderLocalInventory } from '../../src/lib/clusters/local-inventory.ts';

/**
 * `faultline heal --ledger FILE` with nothing else given must reach the same nodes and verify the same
 * host keys as the run did, on every cluster kind: the ledger's cluster entry carries every node's
 * address, port, user and key path, and the absolute host-key files the run's connections checked
 * (never a secret: password fields are environment variable names). No connection is opened here.
 */
const dir = mkdtempSync(join(tmpdir(), 'fl-ledger-reach-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

async function ledgerOf(inventoryPath: string, name: string) {
  const inv = loadInventory(inventoryPath);
  const remote = await connectRemote(inv.nodes, { ...remoteOptionsFor(inv), eager: false });
  const ledgerPath = join(dir, `${name}.jsonl`);
  const plane = new FaultPlane({ remote, ledgerPath });
  plane.ledger.close();
  await remote.close();
  return { inv, state: readLedger(ledgerPath), raw: readFileSync(ledgerPath, 'utf8') };
}

const cluster = (kind: 'netns' | 'vm') => {
  const base = join(dir, kind);
  return {
    name: `h-${kind}`,
    inventoryPath: join(dir, `${kind}.yaml`),
    knownHostsPath: `${base}/known_hosts`,
    identityFile: `${base}/id_ed25519`,
    subnet: '10.213.9.0/24',
    kind,
    nodes: [1, 2].map((i) => ({
      name: `n${i}`,
      host: kind === 'vm' ? '127.0.0.1' : `10.213.9.${10 + i}`,
      port: kind === 'vm' ? 42_000 + i : 22,
      ...(kind === 'vm' && { address: `10.213.9.${10 + i}`, clusterSshPort: 22 }),
      user: 'root',
      labels: { cluster: `h-${kind}` },
    })),
  };
};

for (const kind of ['netns', 'vm'] as const) {
  test(`${kind === 'vm' ? 'VM' : 'local'} cluster: the ledger alone names addresses, ports, key and known_hosts`, async (t) => {
    const c = cluster(kind);
    writeFileSync(c.inventoryPath, renderLocalInventory(c));
    const { inv, state } = await ledgerOf(c.inventoryPath, kind);
    t.deepEqual(state.nodes, inv.nodes, 'every node spec as the run used it');
    for (const n of state.nodes) t.is(n.identityFile, c.identityFile);
    if (kind === 'vm')
      t.deepEqual(
        state.nodes.map((n) => [n.host, n.port, n.address]),
        [
          ['127.0.0.1', 42_001, '10.213.9.11'],
          ['127.0.0.1', 42_002, '10.213.9.12'],
        ],
      );
    t.true(state.knownHostsFiles?.includes(c.knownHostsPath), `${state.knownHostsFiles}`);
    t.true(
      state.knownHostsFiles?.every((f) => f.startsWith('/')),
      'absolute: heal may run from any directory',
    );
  });
}

test('plain SSH inventory: relative known_hosts and keys become absolute, jump hosts kept, no secret written', async (t) => {
  const path = join(dir, 'lab.yaml');
  writeFileSync(
    path,
    [
      'knownHosts: ./lab_known_hosts',
      'defaults: { user: ops, identityFile: keys/lab, sudoPasswordEnv: LAB_SUDO }',
      'nodes:',
      '  db1: { host: 192.0.2.11, proxyJump: ops@192.0.2.1 }',
      '  db2: { host: 192.0.2.12, port: 2202, passwordEnv: DB2_PW }',
    ].join('\n'),
  );
  process.env.DB2_PW = 'hunter2-secret';
  const { inv, state, raw } = await ledgerOf(path, 'lab');
  delete process.env.DB2_PW;
  t.deepEqual(state.nodes, inv.nodes);
  t.is(state.nodes[0]?.identityFile, join(dir, 'keys/lab'));
  t.truthy(state.nodes[0]?.jumpHosts?.length ?? state.nodes[0]?.proxyJump);
  t.is(state.nodes[1]?.port, 2202);
  t.is(state.nodes[1]?.passwordEnv, 'DB2_PW');
  t.deepEqual(state.knownHostsFiles?.slice(0, 2), [
    join(homedir(), '.ssh', 'known_hosts'),
    join(dir, 'lab_known_hosts'),
  ]);
  t.false(raw.includes('hunter2-secret'), 'a password never reaches the ledger');
});

test('an explicit reach wins over the remote files, and a ledger with an unknown reach field is refused', async (t) => {
  const c = cluster('netns');
  writeFileSync(c.inventoryPath, renderLocalInventory(c));
  const inv = loadInventory(c.inventoryPath);
  const remote = await connectRemote(inv.nodes, { ...remoteOptionsFor(inv), eager: false });
  const ledgerPath = join(dir, 'explicit.jsonl');
  new FaultPlane({
    remote,
    ledgerPath,
    reach: { knownHostsFiles: ['/etc/ssh/ssh_known_hosts'] },
  }).ledger.close();
  await remote.close();
  t.deepEqual(readLedger(ledgerPath).knownHostsFiles, ['/etc/ssh/ssh_known_hosts']);
  const forged = join(dir, 'forged.jsonl');
  const entry = JSON.parse(readFileSync(ledgerPath, 'utf8').split('\n')[0] as string);
  writeFileSync(forged, `${JSON.stringify({ ...entry, knownHostsCommand: 'touch /tmp/x' })}\n`);
  t.throws(() => readLedger(forged), { message: /forged\.jsonl:1/ });
});

test('a Vagrant inventory (connectTimeoutS, packageFamily) round-trips through the ledger heal reads', async (t) => {
  const path = join(dir, 'vagrant.yaml');
  writeFileSync(
    path,
    [
      'hostKeyCheck: accept-new',
      'nodes:',
      '  n1: { host: 127.0.0.1, port: 2301, address: 10.213.3.101, clusterSshPort: 22, user: vagrant,',
      '        identityFile: /k/n1, sharedKernelClock: false, connectTimeoutS: 60, packageFamily: apt }',
    ].join('\n'),
  );
  // Before, the ledger's strict node schema refused both fields: heal --ledger could not read it.
  const { inv, state } = await ledgerOf(path, 'vagrant');
  t.deepEqual(state.nodes, inv.nodes);
  t.is(state.nodes[0]?.connectTimeoutS, 60);
});
