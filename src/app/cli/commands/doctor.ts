import type { Command } from 'commander';
import type { SshCliOptions } from '../../../core/control/ssh-cli-options.ts';
import { helpEpilogue } from '../help.ts';
import { addSshOptions } from '../ssh-flags.ts';

/** `faultline doctor`: per-node preflight report (SSH, sudo, fault tooling, clock ownership, disk). */
export function register(program: Command): void {
  const cmd = program
    .command('doctor')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline doctor --inventory nodes.yaml',
        'faultline doctor --no-ssh --nodes db1.example.net:5432,db2.example.net:5432',
        'faultline doctor --inventory managed.yaml   # ssh: false: each endpoint is checked, no SSH',
      ]),
    )
    .description(
      'check every node of an inventory: SSH, sudo, iptables, tc/netem, libfaketime, dm-flakey, FUSE, clock, disk',
    )
    .option('--inventory <file>', 'nodes file (YAML)')
    .option(
      '--no-ssh',
      'client-only: check that each endpoint of --nodes accepts a TCP connection, nothing else',
    )
    .option('--nodes <endpoints>', "with --no-ssh: the database's endpoints, host:port,…")
    .option('--json', 'print the report as JSON')
    .option('--log-dir <dir>', 'write per-node command logs here');
  addSshOptions(cmd).action(
    async (
      o: SshCliOptions & {
        inventory?: string;
        json?: boolean;
        logDir?: string;
        ssh?: boolean;
        nodes?: string;
      },
    ) => {
      const { UserError } = await import('../../../core/util/errors.ts');
      const { endpointsFromList, checkEndpoints, renderEndpointTable, clientOnlyInventory } = await import(
        '../../../lib/clusters/client-only.ts'
      );
      // An inventory with ssh: false is a client-only one: its endpoints are checked, nothing logs in.
      const fromInventory = o.inventory && o.ssh !== false ? clientOnlyInventory(o.inventory) : null;
      if (o.ssh === false || fromInventory) {
        if (o.inventory && o.ssh === false)
          throw new UserError(
            'doctor --no-ssh: give --nodes host:port,… (or an inventory with ssh: false, without --no-ssh)',
          );
        if (!fromInventory && !o.nodes)
          throw new UserError('doctor --no-ssh: name the endpoints with --nodes host:port,…');
        if (fromInventory && o.nodes) throw new UserError('doctor: --nodes goes with --no-ssh');
        const rows = await checkEndpoints(fromInventory ?? endpointsFromList(String(o.nodes), '--nodes'));
        process.stdout.write(o.json ? `${JSON.stringify(rows, null, 2)}\n` : renderEndpointTable(rows));
        // As for SSH: an unreachable node means the node list is wrong (254).
        process.exitCode = rows.every((r) => r.reachable) ? 0 : 254;
        return;
      }
      if (!o.inventory)
        throw new UserError('doctor: give --inventory FILE (or --no-ssh --nodes host:port,…)');
      if (o.nodes) throw new UserError('doctor: --nodes goes with --no-ssh');
      const { connectCluster } = await import('../../../lib/clusters/connect-cluster.ts');
      const { runDoctor, renderDoctorTable, doctorExitCode } = await import(
        '../../../core/control/node-doctor.ts'
      );
      // Lazy connections: an unreachable node becomes a row in the report, not an abort.
      const { remote } = await connectCluster(
        { inventory: o.inventory },
        {
          ssh: o,
          remote: {
            eager: false,
            connectAttempts: 2,
            connectTimeoutMs: 8000,
            ...(o.logDir ? { logDir: o.logDir } : {}),
          },
        },
      );
      try {
        const report = await runDoctor(remote);
        process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorTable(report));
        // 254 for an unreachable node (the inventory is wrong), 1 for a failed required check.
        process.exitCode = doctorExitCode(report);
      } finally {
        await remote.close();
      }
    },
  );
}
