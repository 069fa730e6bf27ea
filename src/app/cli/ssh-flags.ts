import type { Command } from 'commander';
import type { SshCliOptions } from '../../core/control/ssh-cli-options.ts';

// The SSH flags of the command line, apart from connect.ts: declaring them must not load ssh2 and the
// logger, or every command that reaches nodes (and `faultline --help`, which declares them all) would
// pay for them at start-up.

/** The SSH flags every command that reaches nodes shares. */
export function addSshOptions(cmd: Command): Command {
  return cmd
    .option(
      '--accept-new-host-keys',
      "trust unknown host keys on first use (recorded in faultline's known_hosts); changed keys are still refused",
    )
    .option('--insecure-skip-host-key-check', 'do not verify host keys at all (warns on every run)')
    .option('--known-hosts <file...>', 'extra known_hosts files to check')
    .option(
      '--password <password>',
      "SSH password for every node (Jepsen's flag; visible to other local users in the process list: prefer --password-env)",
    )
    .option('--password-env <var>', 'SSH password for every node, read from this environment variable')
    .option('--sudo-password-env <var>', 'sudo password for every node, read from this environment variable')
    .option(
      '--allow-proxy-command',
      'run ProxyCommand / Match exec commands named by the inventory, its ssh_config or a ledger (refused otherwise)',
    );
}

/** The shared SSH flags out of a commander options object. */
export function sshCliOptionsFrom(f: Record<string, unknown>): SshCliOptions {
  return {
    acceptNewHostKeys: f.acceptNewHostKeys === true,
    insecureSkipHostKeyCheck: f.insecureSkipHostKeyCheck === true,
    ...(Array.isArray(f.knownHosts) && { knownHosts: f.knownHosts.map(String) }),
    ...(typeof f.passwordEnv === 'string' && { passwordEnv: f.passwordEnv }),
    ...(typeof f.sudoPasswordEnv === 'string' && { sudoPasswordEnv: f.sudoPasswordEnv }),
  };
}
