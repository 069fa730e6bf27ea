// The options a connection takes from the command line's SSH flags, carried down to the connectors as
// plain data, so the layers below the application never see the command-line parser (src/app/cli/ssh-flags.ts).

/** What the caller says about reaching nodes: host-key policy, known_hosts files, password variables. */
export interface SshCliOptions {
  inventory?: string;
  acceptNewHostKeys?: boolean;
  insecureSkipHostKeyCheck?: boolean;
  knownHosts?: string[];
  /** Every node logs in with the password held by this environment variable (over the inventory's). */
  passwordEnv?: string;
  /** sudo on every node takes the password held by this environment variable (over the inventory's). */
  sudoPasswordEnv?: string;
}
