import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { UserError } from '../../core/util/errors.ts';

/** Run a host command; resolve stdout, reject with its stderr in the message. */
export function run(
  cmd: string,
  args: readonly string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args as string[],
      { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${String(stderr).trim() || err.message}`));
        else resolve(String(stdout));
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like run() but never rejects: for teardown steps where "already gone" is success. */
export async function runQuiet(cmd: string, args: readonly string[]): Promise<boolean> {
  try {
    await run(cmd, args);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of an executable on PATH (plus the sbin dirs non-login shells may lack), or null. */
export function which(cmd: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const d of dirs) {
    if (!d) continue;
    const p = join(d, cmd);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

/** The host programs the local cluster needs, and the Debian package that provides each. */
export const LOCAL_CLUSTER_TOOLS: readonly { cmd: string; pkg: string }[] = [
  { cmd: 'ip', pkg: 'iproute2' },
  { cmd: 'sshd', pkg: 'openssh-server' },
  { cmd: 'ssh-keygen', pkg: 'openssh-client' },
  { cmd: 'unshare', pkg: 'util-linux' },
  { cmd: 'iptables', pkg: 'iptables' },
  { cmd: 'timeout', pkg: 'coreutils' },
];

/** The first of `tools` missing from this host, as a one-line reason naming its package; null if none. */
export function missingToolReason(tools: readonly { cmd: string; pkg: string }[]): string | null {
  for (const t of tools) if (!which(t.cmd)) return `${t.cmd} not found: apt-get install -y ${t.pkg}`;
  return null;
}

/** Why a local cluster cannot be built here, as one line, or null when it can. */
export function localClusterUnavailableReason(): string | null {
  if (process.platform !== 'linux') return 'the local cluster needs Linux network namespaces';
  if (process.getuid?.() !== 0) return 'the local cluster needs root (network namespaces, bridges, sshd)';
  return missingToolReason(LOCAL_CLUSTER_TOOLS);
}

export function assertLocalClusterPossible(): void {
  const reason = localClusterUnavailableReason();
  if (reason) throw new UserError(reason);
}

export function sshdPath(): string {
  return which('sshd') ?? '/usr/sbin/sshd';
}

export function hostCommandOk(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}
