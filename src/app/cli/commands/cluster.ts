import type { Command } from 'commander';

/** `faultline cluster up|down|status|list|vagrant`: local namespace clusters and Vagrant imports. */
export function register(program: Command): void {
  const cluster = program.command('cluster').description('build, inspect and remove test clusters');

  cluster
    .command('up')
    .description(
      'build a local cluster of network namespaces with sshd on each node; prints the inventory path',
    )
    .option('--nodes <n>', 'number of nodes', '5')
    .option('--name <name>', 'cluster name (several may coexist)', 'local')
    .option('--subnet <cidr>', 'a private /24 to use (default: first free in 10.213.0.0/16)')
    .option('--json', 'print the cluster as JSON')
    .action(async (o: { nodes: string; name: string; subnet?: string; json?: boolean }) => {
      const { localClusterUp } = await import('../../../lib/clusters/local.ts');
      const nodes = Number(o.nodes);
      const c = await localClusterUp({ nodes, name: o.name, ...(o.subnet ? { subnet: o.subnet } : {}) });
      if (o.json) process.stdout.write(`${JSON.stringify(c, null, 2)}\n`);
      else process.stdout.write(`${c.inventoryPath}\n`);
    });

  cluster
    .command('down')
    .description('remove every namespace, link, bridge, sshd and key of a local cluster (idempotent)')
    .option('--name <name>', 'cluster name', 'local')
    .option('--all', 'remove every local cluster faultline knows about')
    .action(async (o: { name: string; all?: boolean }) => {
      const { localClusterDown, listLocalClusters } = await import('../../../lib/clusters/local.ts');
      const names = o.all ? listLocalClusters() : [o.name];
      for (const name of names) {
        const r = await localClusterDown(name);
        process.stdout.write(
          r.existed
            ? `${name}: removed ${r.removedNetns.length} namespaces, ${r.removedLinks.length} links, ${r.killedPids.length} processes\n`
            : `${name}: nothing to remove\n`,
        );
      }
    });

  cluster
    .command('status')
    .description('show the nodes of a local cluster and their health')
    .option('--name <name>', 'cluster name', 'local')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; json?: boolean }) => {
      const { localClusterStatus } = await import('../../../lib/clusters/local.ts');
      const s = await localClusterStatus(o.name);
      if (o.json) process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
      else if (!s.exists) process.stdout.write(`${o.name}: no such local cluster\n`);
      else {
        const lines = [
          `cluster ${s.name}  subnet ${s.subnet}  bridge ${s.bridge?.name} ${s.bridge?.up ? 'up' : 'DOWN'}  ${s.healthy ? 'healthy' : 'UNHEALTHY'}`,
          `inventory ${s.inventoryPath}`,
          ...s.nodes.map(
            (n) =>
              `  ${n.name.padEnd(4)} ${n.address.padEnd(15)} netns ${n.netns ? 'yes' : 'MISSING'}  sshd ${n.sshd ? 'up' : 'DOWN'}  ssh ${n.ssh ? `ok ${n.sshLatencyMs} ms` : 'FAILED'}  processes ${n.processes}${n.error ? `  (${n.error})` : ''}`,
          ),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      if (!s.healthy) process.exitCode = 1;
    });

  cluster
    .command('list')
    .description('list local clusters')
    .action(async () => {
      const { listLocalClusters } = await import('../../../lib/clusters/local.ts');
      for (const n of listLocalClusters()) process.stdout.write(`${n}\n`);
    });

  cluster
    .command('vagrant')
    .description('write an inventory for Vagrant VMs from `vagrant ssh-config`')
    .option('--dir <dir>', 'directory holding the Vagrantfile', 'vagrant')
    .option('--out <file>', 'inventory to write (default <dir>/inventory.yaml)')
    .option('--ssh-config <file>', 'read recorded `vagrant ssh-config` output instead of running vagrant')
    .option('--private-base <ip>', 'n<i> gets private address base+i', '192.168.56.100')
    .action(async (o: { dir: string; out?: string; sshConfig?: string; privateBase: string }) => {
      const { importVagrant } = await import('../../../lib/clusters/vagrant.ts');
      const r = await importVagrant({
        dir: o.dir,
        privateBase: o.privateBase,
        ...(o.out ? { out: o.out } : {}),
        ...(o.sshConfig ? { sshConfigFile: o.sshConfig } : {}),
      });
      process.stdout.write(`${r.inventoryPath}\n`);
    });
}
