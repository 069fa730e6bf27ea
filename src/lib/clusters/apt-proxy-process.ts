import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { guestAptSources, readHostAptSources } from './vm-apt-sources.ts';
import { vmImageRoot } from './vm-image.ts';
import { cmdlineOf, helperReady, stopPids } from './vm-qemu.ts';

/**
 * The apt proxy (vm-apt-proxy.ts) as a cluster's own detached process, listening on the host's address
 * on the cluster's private network: the VM cluster's bridge and the Vagrant cluster's libvirt network
 * both use it, so their nodes install packages from the host's own Debian sources and nothing else.
 */
export const APT_PROXY_PORT = 3142;

/** What a node's apt points at: `Acquire::http::Proxy "<url>";`. */
export const aptProxyUrl = (hostAddress: string) => `http://${hostAddress}:${APT_PROXY_PORT}/`;

/** The proxy's entry: the compiled .js next to this file, or the .ts source through tsx. */
function aptProxyCommand(opts: object): string[] {
  const self = fileURLToPath(import.meta.url);
  const fromSource = self.endsWith('.ts');
  const entry = join(self, '..', `vm-apt-proxy-main.${fromSource ? 'ts' : 'js'}`);
  const loader = fromSource ? ['--import', import.meta.resolve('tsx')] : [];
  return [...loader, entry, JSON.stringify(opts)];
}

async function httpAnswers(host: string, port: number): Promise<boolean> {
  try {
    await fetch(`http://${host}:${port}/`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Start cluster `cluster`'s proxy on `hostAddress` (which must already be up on this host), forwarding
 * only to the hosts of the host's Debian apt sources; logs go to `stateDir`. Returns its pid once it
 * answers.
 */
export async function spawnAptProxy(cluster: string, hostAddress: string, stateDir: string): Promise<number> {
  const hosts = guestAptSources(readHostAptSources()).hosts;
  const out = openSync(join(stateDir, 'apt-proxy.out'), 'a');
  const child = spawn(
    process.execPath,
    aptProxyCommand({
      cluster,
      host: hostAddress,
      port: APT_PROXY_PORT,
      allowHosts: hosts,
      cacheDir: join(vmImageRoot(), 'apt-cache'),
      hostArchives: '/var/cache/apt/archives',
      logFile: join(stateDir, 'apt-proxy.log'),
    }),
    { detached: true, stdio: ['ignore', out, out] },
  );
  child.unref();
  closeSync(out);
  if (child.pid === undefined) throw new Error('cannot start the apt proxy');
  const pid = child.pid;
  const answers = () => httpAnswers(hostAddress, APT_PROXY_PORT);
  if (!(await helperReady(pid, answers, { timeoutMs: 15_000, stepMs: 100 }))) {
    await stopPids([pid]);
    throw new Error(`the apt proxy did not start (see ${join(stateDir, 'apt-proxy.out')})`);
  }
  return pid;
}

/** Whether `pid` is cluster `cluster`'s apt proxy (a recorded pid may have been reused since). */
export function isAptProxyOf(pid: number, cluster: string): boolean {
  const cmd = cmdlineOf(pid);
  return cmd.includes('vm-apt-proxy-main') && cmd.includes(`"cluster":"${cluster}"`);
}

/** Stop cluster `cluster`'s proxy; true when it was running. */
export async function stopAptProxy(pid: number | null | undefined, cluster: string): Promise<boolean> {
  if (!pid || !isAptProxyOf(pid, cluster)) return false;
  await stopPids([pid]);
  return true;
}
