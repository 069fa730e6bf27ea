import { homedir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../util/errors.ts';
import { log } from '../util/log.ts';
import type { Inventory } from './inventory.ts';
import type { SshCliOptions } from './ssh-cli-options.ts';
import type { HostKeyPolicy } from './ssh-connection.ts';
import type { RemoteOptions } from './ssh-remote.ts';
import type { NodeSpec } from './types.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The nodes with the command line's password variables in place of the inventory's. Only the variables'
 * names are copied: the values stay in the environment (and in the redactor of the connection).
 */
export function withCliPasswords<T extends NodeSpec>(specs: readonly T[], cli: SshCliOptions = {}): T[] {
  for (const [flag, name] of [
    ['--password-env', cli.passwordEnv],
    ['--sudo-password-env', cli.sudoPasswordEnv],
  ] as const) {
    if (name === undefined) continue;
    if (!ENV_NAME.test(name)) throw new UserError(`${flag} ${name}: expected an environment variable name`);
    if (process.env[name] === undefined)
      throw new UserError(`${flag} ${name}: that environment variable is not set`);
  }
  if (!cli.passwordEnv && !cli.sudoPasswordEnv) return [...specs];
  return specs.map((s) => ({
    ...s,
    ...(cli.passwordEnv && { passwordEnv: cli.passwordEnv }),
    ...(cli.sudoPasswordEnv && { sudoPasswordEnv: cli.sudoPasswordEnv }),
  }));
}

/** CLI flags win over the inventory's `hostKeyCheck`; the default is strict checking. */
export function hostKeyPolicyFrom(cli: SshCliOptions, inv?: Inventory): HostKeyPolicy {
  if (cli.insecureSkipHostKeyCheck) return 'insecure';
  if (cli.acceptNewHostKeys) return 'accept-new';
  return inv?.hostKeyCheck ?? 'strict';
}

export function remoteOptionsFor(
  inv: Inventory,
  cli: SshCliOptions = {},
  extra: RemoteOptions = {},
): RemoteOptions {
  const policy = hostKeyPolicyFrom(cli, inv);
  if (policy === 'insecure') {
    // Warned on every run and at every log level, by design: this must never become a silent default.
    const from = cli.insecureSkipHostKeyCheck
      ? 'the --insecure-skip-host-key-check flag'
      : `${inv.path}: hostKeyCheck: insecure`;
    const text = `host key checking disabled by ${from}; a machine in the middle could impersonate the nodes`;
    process.stderr.write(`faultline: warning: ${text}\n`);
    log().warn(text);
  }
  const opts: RemoteOptions = { ...extra, hostKeyPolicy: policy };
  const extraKnown = [...inv.knownHostsFiles, ...(cli.knownHosts ?? [])];
  if (extraKnown.length > 0) {
    opts.knownHostsFiles = [
      join(homedir(), '.ssh', 'known_hosts'),
      ...extraKnown,
      ...(extra.knownHostsFiles ?? []),
    ];
  }
  return opts;
}
