import type { Command } from 'commander';
import { parseSize } from '../../../core/util/size.ts';
import { helpEpilogue } from '../help.ts';

interface UpFlags {
  nodes: string;
  name: string;
  subnet?: string;
  json?: boolean;
  vm?: boolean;
  vagrant?: boolean;
  memory?: string;
  rebuildImage?: boolean;
  sshViaForward?: boolean;
  user?: string;
  sudoPasswordEnv?: string;
  dataSize: string;
  rootSize: string;
}

/** `cluster up --vm`: progress on stderr, the inventory path (or JSON) on stdout, as for namespaces. */
async function vmUpAction(nodes: number, o: UpFlags): Promise<void> {
  const vm = await import('../../../lib/clusters/vm-cli.ts');
  const print = (line: string) => process.stderr.write(`${line}\n`);
  const r = await vm.vmUp({
    nodes,
    name: o.name,
    print,
    ...(o.memory && { memory: o.memory }),
    ...(o.subnet && { subnet: o.subnet }),
    ...(o.rebuildImage && { rebuildImage: true }),
  });
  for (const line of vm.vmUpSummary(r)) print(line);
  process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.cluster.inventoryPath}\n`);
}

/** `cluster up --vagrant`: vagrant's own output and a summary on stderr, the inventory path last on stdout. */
async function vagrantUpAction(nodes: number, o: UpFlags): Promise<void> {
  const v = await import('../../../lib/clusters/vagrant-cluster.ts');
  const print = (line: string) => process.stderr.write(`${line}\n`);
  const r = await v.vagrantClusterUp({
    nodes,
    name: o.name,
    print,
    ...(o.subnet && { subnet: o.subnet }),
    ...(o.sudoPasswordEnv && { sudoPasswordEnv: o.sudoPasswordEnv }),
  });
  for (const line of v.vagrantUpSummary(r)) print(line);
  process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.inventoryPath}\n`);
}

/** `faultline cluster up|down|status|list|vagrant`: local namespace or VM clusters and Vagrant imports. */
export function register(program: Command): void {
  const cluster = program
    .command('cluster')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline cluster up --nodes 5 --name lab-a',
        'faultline cluster status --name lab-a',
        'faultline cluster down --name lab-a',
      ]),
    )
    .description('build, inspect and remove test clusters');

  cluster
    .command('up')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline cluster up --nodes 5 --name lab-a',
        'faultline cluster up --vm --nodes 3 --name vm-a',
        'faultline cluster up --vagrant --nodes 3 --name vg-a   # the shipped Vagrantfile; libvirt here',
      ]),
    )
    .description(
      'build a local cluster of network namespaces with sshd on each node; prints the inventory path',
    )
    .option('--nodes <n>', 'number of nodes', '5')
    .option('--name <name>', 'cluster name (several may coexist)', 'local')
    .option('--subnet <cidr>', 'a private /24 to use (default: first free in 10.213.0.0/16)')
    .option('--json', 'print the cluster as JSON')
    .option('--vm', 'qemu VMs with their own kernels (netem, dm-flakey, settime) instead of namespaces')
    .option(
      '--vagrant',
      'vagrant up the shipped Vagrantfile in a per-cluster directory (libvirt when installed; box from FAULTLINE_BOX, else one built locally)',
    )
    .option('--memory <size>', 'memory per VM node (--vm)', '512M')
    .option(
      '--data-size <size>',
      "size of each namespace node's own data filesystem and /tmp (tmpfs inside the node, at /var/lib/faultline and /tmp; disk-full fills them, never the host)",
      '512M',
    )
    .option(
      '--root-size <size>',
      "size of each namespace node's copy-on-write layer over the host's root filesystem (tmpfs inside the node): what it installs or writes outside its data filesystem and /tmp lands there, never on the host",
      '1G',
    )
    .option('--rebuild-image', 'rebuild the cached VM node image (--vm)')
    .option(
      '--ssh-via-forward',
      'lab-like addressing: SSH through a 127.0.0.1 port forward per node, cluster traffic and faults on the namespace addresses',
    )
    .option('--user <name>', 'nodes log in as this non-root user and reach root through sudo (NOPASSWD)')
    .option(
      '--sudo-password-env <var>',
      'with --user: sudo asks for a password, read from this environment variable (here and at run time); the user may also log in over SSH with it',
    )
    .action(async (o: UpFlags) => {
      const nodes = Number(o.nodes);
      if (o.vm) return vmUpAction(nodes, o);
      if (o.vagrant) return vagrantUpAction(nodes, o);
      const { localClusterUp } = await import('../../../lib/clusters/local.ts');
      const c = await localClusterUp({
        nodes,
        name: o.name,
        ...(o.subnet && { subnet: o.subnet }),
        ...(o.sshViaForward && { sshViaForward: true }),
        dataBytes: parseSize(o.dataSize, '--data-size'),
        rootBytes: parseSize(o.rootSize, '--root-size'),
        ...(o.user && {
          loginUser: { name: o.user, ...(o.sudoPasswordEnv && { sudoPasswordEnv: o.sudoPasswordEnv }) },
        }),
      });
      if (o.json) process.stdout.write(`${JSON.stringify(c, null, 2)}\n`);
      else process.stdout.write(`${c.inventoryPath}\n`);
    });

  cluster
    .command('down')
    .addHelpText(
      'after',
      helpEpilogue(['faultline cluster down --name lab-a', 'faultline cluster down --name vm-a']),
    )
    .description('remove every namespace, link, bridge, sshd and key of a local cluster (idempotent)')
    .option('--name <name>', 'cluster name', 'local')
    .option('--all', 'remove every local cluster faultline knows about')
    .option('--force', 'remove a local cluster even while a run holds it (that run fails)')
    .action(async (o: { name: string; all?: boolean; force?: boolean }) => {
      const { listLocalClusters } = await import('../../../lib/clusters/local.ts');
      const vm = await import('../../../lib/clusters/vm-cli.ts');
      const extras = o.all ? vm.vmDownAllExtras() : null;
      const names = o.all ? [...new Set([...listLocalClusters(), ...(extras?.names ?? [])])] : [o.name];
      const force = o.force === true;
      if (!o.all) process.stdout.write(`${await vm.downAnyCluster(o.name, { force })}\n`);
      else {
        // A cluster a live run holds is left alone and said so; the others still go.
        const { UserError } = await import('../../../core/util/errors.ts');
        for (const name of names) {
          try {
            process.stdout.write(`${await vm.downAnyCluster(name, { force })}\n`);
          } catch (err) {
            if (!(err instanceof UserError)) throw err;
            process.stderr.write(`faultline: ${err.message}\n`);
            process.exitCode = err.exitCode;
          }
        }
      }
      if (extras?.lockLine) process.stdout.write(`${extras.lockLine}\n`);
    });

  cluster
    .command('status')
    .addHelpText(
      'after',
      helpEpilogue(['faultline cluster status --name lab-a', 'faultline cluster status --name lab-a --json']),
    )
    .description('show the nodes of a local cluster and their health')
    .option('--name <name>', 'cluster name', 'local')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; json?: boolean }) => {
      const vm = await import('../../../lib/clusters/vm-cli.ts');
      if (vm.isVmCluster(o.name)) {
        const v = await vm.vmClusterStatus(o.name);
        process.stdout.write(
          o.json ? `${JSON.stringify(v, null, 2)}\n` : `${vm.vmStatusLines(v).join('\n')}\n`,
        );
        if (!v.healthy) process.exitCode = 1;
        return;
      }
      const { localClusterStatus } = await import('../../../lib/clusters/local.ts');
      const { describeHolder } = await import('../../../core/util/pid-lock.ts');
      const s = await localClusterStatus(o.name);
      if (o.json) process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
      else if (!s.exists) process.stdout.write(`${o.name}: no such local cluster\n`);
      else {
        const lines = [
          `cluster ${s.name}  subnet ${s.subnet}  bridge ${s.bridge?.name} ${s.bridge?.up ? 'up' : 'DOWN'}  ${s.healthy ? 'healthy' : 'UNHEALTHY'}`,
          `inventory ${s.inventoryPath}`,
          s.heldBy ? `held by ${describeHolder(s.heldBy)}` : 'free: no run holds it',
          ...s.nodes.map(
            (n) =>
              `  ${n.name.padEnd(4)} ${n.address.padEnd(15)} ${n.sshAddress === `${n.address}:22` ? '' : `ssh ${n.sshAddress}  `}netns ${n.netns ? 'yes' : 'MISSING'}  sshd ${n.sshd ? 'up' : 'DOWN'}  ssh ${n.ssh ? `ok ${n.sshLatencyMs} ms` : 'FAILED'}  processes ${n.processes}${n.error ? `  (${n.error})` : ''}`,
          ),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      if (!s.healthy) process.exitCode = 1;
    });

  cluster
    .command('list')
    .addHelpText('after', helpEpilogue(['faultline cluster list']))
    .description('list local clusters')
    .action(async () => {
      const { listLocalClusters } = await import('../../../lib/clusters/local.ts');
      const { listVmClusters } = await import('../../../lib/clusters/vm.ts');
      for (const n of listLocalClusters()) process.stdout.write(`${n}\n`);
      for (const n of listVmClusters()) process.stdout.write(`${n} (vm)\n`);
    });

  cluster
    .command('vagrant-box')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline cluster vagrant-box',
        'faultline cluster vagrant-box --out /tmp/faultline.box --add',
      ]),
    )
    .description(
      'build a libvirt Vagrant box (Debian 12, user vagrant, sudo) from the VM node image; prints its path',
    )
    .option('--out <file>', 'box file to write (default: in the VM image cache)')
    .option('--add', `register it with \`vagrant box add --force --name faultline/bookworm\``)
    .action(async (o: { out?: string; add?: boolean }) => {
      const box = await import('../../../lib/clusters/vagrant-box.ts');
      const print = (line: string) => process.stderr.write(`${line}\n`);
      const r = await box.buildVagrantBox({ print, ...(o.out && { out: o.out }) });
      print(
        `box built in ${r.seconds} s (VM image ${r.imageKey} ${r.imageBuilt ? 'built now' : 'cached'}): ${(r.bytes / 1024 ** 2).toFixed(0)} MiB, disk ${r.virtualSizeGiB} GiB`,
      );
      if (o.add) {
        const removed = await box.addVagrantBox(r.path);
        print(`registered as ${box.BOX_NAME} (vagrant box list)`);
        for (const v of removed) print(`removed the box's earlier base volume ${v} (libvirt pool default)`);
      }
      process.stdout.write(`${r.path}\n`);
    });

  cluster
    .command('vagrant')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline cluster vagrant --dir vagrant',
        'faultline cluster vagrant --ssh-config recorded.txt --out nodes.yaml',
      ]),
    )
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
