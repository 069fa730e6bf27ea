import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { allowProxyCommands } from '../../src/core/control/command-fields.ts';
import { RemoteConnectError } from '../../src/core/control/connection-errors.ts';
import { loadInventory } from '../../src/core/control/inventory.ts';
import { openSshClient } from '../../src/core/control/ssh-config.ts';
import { connectRemote } from '../../src/core/control/ssh-remote.ts';
import type { NodeSpec, Remote } from '../../src/core/control/types.ts';
import { withCluster } from '../helpers/cluster.ts';

// These tests exercise ProxyCommand itself: the operator's --allow-proxy-command, given.
allowProxyCommands();

/**
 * Jump hosts and ProxyCommand against real sshd instances (a 4-node local cluster), configured the way
 * users configure them: an ssh_config with Include and Match, resolved by OpenSSH (`ssh -G`), named by an
 * inventory. Each node's sshd is made to refuse new connections from everyone but the previous hop, so
 * reaching the last node proves the connection went through every hop; the node then sees the previous
 * hop as its client.
 */
const fx = withCluster(test, { nodes: 4, name: 'jep-ssh' });
const ssh = openSshClient();
const dir = mkdtempSync(join(tmpdir(), 'faultline-jump-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const node = (name: string): NodeSpec => {
  const n = fx.cluster().nodes.find((x) => x.name === name);
  if (!n) throw new Error(`no ${name}`);
  return n;
};
const addr = (name: string) => node(name).host;

/** Only `from` may open new SSH connections to `to` (established ones, like the fixture's, go on). */
async function onlyFrom(r: Remote, to: string, from: string): Promise<() => Promise<void>> {
  const rule = `INPUT -p tcp --dport 22 -m conntrack --ctstate NEW ! -s ${addr(from)} -j DROP`;
  await r.exec(to, `iptables -I ${rule}`);
  return async () => {
    await r.exec(to, `iptables -D ${rule}`, { check: false });
  };
}

function writeConfig(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** An inventory of one node through an ssh_config (and the cluster's known_hosts). */
function inventory(name: string, config: string, nodes: Record<string, string>): string {
  const lines = [`knownHosts: ${fx.cluster().knownHostsPath}`, `sshConfig: ${config}`, 'nodes:'];
  for (const [n, host] of Object.entries(nodes)) lines.push(`  ${n}: { host: ${host} }`);
  return writeConfig(name, `${lines.join('\n')}\n`);
}

async function clientOf(r: Remote, n: string): Promise<{ host: string; client: string }> {
  const out = (await r.exec(n, 'hostname; echo "$SSH_CLIENT"')).stdout.trim().split('\n');
  return { host: out[0] ?? '', client: (out[1] ?? '').split(' ')[0] ?? '' };
}

const sshTest = ssh ? fx.test.serial : test.skip;

sshTest('a ProxyJump chain of three hops, from an Include’d ssh_config with Match, reaches n4', async (t) => {
  const r = await fx.remote();
  const undo = [await onlyFrom(r, 'n2', 'n1'), await onlyFrom(r, 'n3', 'n2'), await onlyFrom(r, 'n4', 'n3')];
  t.teardown(async () => {
    for (const u of undo) await u();
  });
  const direct = await t.throwsAsync(
    connectRemote([node('n4')], {
      knownHostsFiles: [fx.cluster().knownHostsPath],
      connectAttempts: 1,
      connectTimeoutMs: 2000,
    }),
    { instanceOf: RemoteConnectError },
  );
  t.truthy(direct, 'n4 cannot be reached directly');

  const hops = writeConfig(
    'hops.conf',
    ['hop1', 'hop2', 'hop3'].map((h, i) => `Host ${h}\n  HostName ${addr(`n${i + 1}`)}\n`).join(''),
  );
  const config = writeConfig(
    'chain.conf',
    [
      `Include ${hops}`,
      'Host target',
      `  HostName ${addr('n4')}`,
      '  ProxyJump hop1,hop2,hop3',
      'Match originalhost target,hop*',
      '  User root',
      `  IdentityFile ${fx.cluster().identityFile}`,
    ].join('\n'),
  );
  const inv = loadInventory(inventory('chain.yaml', config, { n4: 'target' }));
  t.deepEqual(
    inv.nodes[0]?.jumpHosts?.map((h) => `${h.alias}=${h.user}@${h.host}:${h.port}`),
    ['hop1', 'hop2', 'hop3'].map((h, i) => `${h}=root@${addr(`n${i + 1}`)}:22`),
  );
  const chained = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles });
  t.teardown(() => chained.close());
  t.deepEqual(await clientOf(chained, 'n4'), { host: 'n4', client: addr('n3') });
  // Every command and transfer goes the same way.
  const up = join(dir, 'payload.txt');
  writeFileSync(up, 'through three hops\n');
  await chained.upload('n4', up, '/tmp/payload.txt');
  t.is((await chained.exec('n4', 'cat /tmp/payload.txt')).stdout, 'through three hops\n');
});

sshTest('ProxyCommand: the connection is the command’s stdio (OpenSSH -W through n1)', async (t) => {
  const r = await fx.remote();
  const undo = await onlyFrom(r, 'n3', 'n1');
  t.teardown(undo);
  const c = fx.cluster();
  const viaN1 = `${ssh} -q -i ${c.identityFile} -o BatchMode=yes -o UserKnownHostsFile=${c.knownHostsPath} -W %h:%p root@${addr('n1')}`;
  const config = writeConfig(
    'command.conf',
    [
      'Host viacmd',
      `  HostName ${addr('n3')}`,
      '  User root',
      `  IdentityFile ${c.identityFile}`,
      `  ProxyCommand ${viaN1}`,
    ].join('\n'),
  );
  const inv = loadInventory(inventory('command.yaml', config, { n3: 'viacmd' }));
  t.is(inv.nodes[0]?.proxyCommand, viaN1);
  const viaCommand = await connectRemote(inv.nodes, { knownHostsFiles: inv.knownHostsFiles });
  t.teardown(() => viaCommand.close());
  t.deepEqual(await clientOf(viaCommand, 'n3'), { host: 'n3', client: addr('n1') });
});

sshTest('the first hop of a chain may itself be reached by its ProxyCommand', async (t) => {
  const r = await fx.remote();
  const undo = [await onlyFrom(r, 'n1', 'n3'), await onlyFrom(r, 'n2', 'n1')];
  t.teardown(async () => {
    for (const u of undo) await u();
  });
  const c = fx.cluster();
  const viaN3 = `${ssh} -q -i ${c.identityFile} -o BatchMode=yes -o UserKnownHostsFile=${c.knownHostsPath} -W %h:%p root@${addr('n3')}`;
  // control → (ProxyCommand through n3) → n1 → n2
  const hopConfig = writeConfig(
    'hop-command.conf',
    [
      'Host edge',
      `  HostName ${addr('n1')}`,
      `  ProxyCommand ${viaN3}`,
      'Host inner',
      `  HostName ${addr('n2')}`,
      '  ProxyJump edge',
      'Host *',
      '  User root',
      `  IdentityFile ${c.identityFile}`,
    ].join('\n'),
  );
  const inv2 = loadInventory(inventory('hop-command.yaml', hopConfig, { n2: 'inner' }));
  t.truthy(inv2.nodes[0]?.jumpHosts?.[0]?.proxyCommand);
  const chained = await connectRemote(inv2.nodes, { knownHostsFiles: inv2.knownHostsFiles });
  t.teardown(() => chained.close());
  t.deepEqual(await clientOf(chained, 'n2'), { host: 'n2', client: addr('n1') });
});

fx.test.serial(
  'a ProxyCommand that fails, and a hop that cannot reach the next, are clear errors',
  async (t) => {
    const opts = {
      knownHostsFiles: [fx.cluster().knownHostsPath],
      connectAttempts: 1,
      connectTimeoutMs: 3000,
    };
    const failing = await t.throwsAsync(
      connectRemote([{ ...node('n2'), proxyCommand: "sh -c 'echo no route to %h >&2; exit 3'" }], opts),
      { instanceOf: RemoteConnectError },
    );
    t.regex(failing?.message ?? '', /ProxyCommand .* exited \(code 3\): no route to /);
    const unreachable = await t.throwsAsync(
      connectRemote([{ ...node('n2'), port: 2, proxyJump: `root@${addr('n1')}` }], opts),
      { instanceOf: RemoteConnectError },
    );
    t.regex(
      unreachable?.message ?? '',
      new RegExp(`jump host ${addr('n1')}:22 cannot reach ${addr('n2')}:2`),
    );
  },
);
