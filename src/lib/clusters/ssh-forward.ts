import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { cmdlineOf, helperReady, stopPids } from './vm-qemu.ts';

/**
 * The control host's side of a lab-like local cluster: one 127.0.0.1 port per node, forwarded to the
 * node's sshd on its namespace address, so SSH and cluster traffic use different addresses as they do
 * through Vagrant's NAT forwards or a bastion.
 */
const MARKER = 'ssh-forward-main';
const PortsSchema = z.record(z.string(), z.number().int().min(1).max(65535));

function forwardCommand(args: object): string[] {
  const self = fileURLToPath(import.meta.url);
  const fromSource = self.endsWith('.ts');
  const entry = join(self, '..', `${MARKER}.${fromSource ? 'ts' : 'js'}`);
  const loader = fromSource ? ['--import', import.meta.resolve('tsx')] : [];
  return [...loader, entry, JSON.stringify(args)];
}

/** Start the forwards for `targets` (node → cluster address); resolves with their pid and ports. */
export async function startSshForwards(
  dir: string,
  targets: Record<string, string>,
  timeoutMs = 15_000,
): Promise<{ pid: number; ports: Record<string, number> }> {
  const portsFile = join(dir, 'ssh-forward.json');
  const out = openSync(join(dir, 'ssh-forward.out'), 'a');
  const child = spawn(
    process.execPath,
    forwardCommand({ targets, portsFile, logFile: join(dir, 'ssh-forward.log') }),
    { detached: true, stdio: ['ignore', out, out] },
  );
  child.unref();
  closeSync(out);
  const pid = child.pid;
  if (pid === undefined) throw new Error('cannot start the SSH port forwards');
  // Written once every forward listens.
  if (!(await helperReady(pid, async () => existsSync(portsFile), { timeoutMs, stepMs: 50 })))
    throw new Error(`the SSH port forwards did not start (see ${join(dir, 'ssh-forward.log')})`);
  return { pid, ports: PortsSchema.parse(JSON.parse(readFileSync(portsFile, 'utf8'))) };
}

/** Stop the forwards' process, only when the pid still is that process. Returns the pids stopped. */
export async function stopSshForwards(pid: number | null | undefined): Promise<number[]> {
  if (!pid || !cmdlineOf(pid).includes(MARKER)) return [];
  return stopPids([pid], 2000);
}
