/**
 * The sshd settings of every node faultline builds itself (local network-namespace nodes, VM guests):
 * root logs in by key only, no PAM and no DNS lookup (a login is one key check), no banners (a command's
 * output is only its own), and room for the control node's parallel channels and connections.
 */
export function sshdSettings(o: { hostKey: string; passwordLogin?: boolean }): string[] {
  return [
    `HostKey ${o.hostKey}`,
    'PermitRootLogin prohibit-password',
    `PasswordAuthentication ${o.passwordLogin ? 'yes' : 'no'}`,
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'UseDNS no',
    'PrintMotd no',
    'PrintLastLog no',
    // OpenSSH's default: the control node's channel semaphore must keep us under it.
    'MaxSessions 10',
    'MaxStartups 64:30:128',
  ];
}
