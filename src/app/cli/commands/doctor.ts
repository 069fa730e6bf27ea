import type { Command } from 'commander';
import { addSshOptions, type SshCliOptions } from '../../../core/control/connect.ts';
import { helpEpilogue } from '../help.ts';

/** `faultline doctor`: per-node preflight report (SSH, sudo, fault tooling, clock ownership, disk). */
export function register(program: Command): void {
  const cmd = program
    .command('doctor')
    .addHelpText(
      'after',
      helpEpilogue([
        'faultline doctor --inventory nodes.yaml',
        'faultline doctor --inventory nodes.yaml --json',
      ]),
    )
    .description(
      'check every node of an inventory: SSH, sudo, iptables, tc/netem, libfaketime, dm-flakey, FUSE, clock, disk',
    )
    .requiredOption('--inventory <file>', 'nodes file (YAML)')
    .option('--json', 'print the report as JSON')
    .option('--log-dir <dir>', 'write per-node command logs here');
  addSshOptions(cmd).action(
    async (o: SshCliOptions & { inventory: string; json?: boolean; logDir?: string }) => {
      const { connectCluster } = await import('../../../lib/clusters/connect.ts');
      const { runDoctor, renderDoctorTable, doctorExitCode } = await import(
        '../../../core/control/doctor.ts'
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
