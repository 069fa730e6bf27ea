import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pollFor, waitFor } from '../../core/util/retry.ts';
import type { AccelChoice } from './vm-accel.ts';
import { FW_CFG_PREFIX, GUEST_INIT_PATH } from './vm-guest.ts';

/**
 * qemu processes of VM nodes. Every qemu faultline starts carries `-name faultline-vm/<cluster>/<node>`
 * on its command line, so teardown finds its own processes (and only those) even without a state file.
 */
export const QEMU_BINARY = 'qemu-system-x86_64';

export function qemuMarker(cluster: string, node?: string): string {
  return `faultline-vm/${cluster}/${node ?? ''}`;
}

export interface QemuNodeArgs {
  cluster: string;
  node: string;
  accel: AccelChoice;
  memory: string;
  kernel: string;
  initrd: string;
  rootDisk: string;
  dataDisk: string;
  tap: string;
  mac: string;
  consoleLog: string;
  pidFile: string;
  /** fw_cfg file name (under opt/faultline/) → host path. */
  fwCfg: Record<string, string>;
}

export function qemuArgs(a: QemuNodeArgs): string[] {
  return [
    '-name',
    `${qemuMarker(a.cluster, a.node)},process=fl-${a.node}`,
    '-nodefaults',
    '-no-user-config',
    '-accel',
    // TCG's translation cache defaults to 1 GiB per VM; 128 MiB keeps a node's footprint near its RAM.
    a.accel.accel === 'tcg' ? 'tcg,tb-size=128' : a.accel.accel,
    '-cpu',
    a.accel.cpu,
    '-smp',
    '1',
    '-m',
    a.memory,
    '-display',
    'none',
    '-monitor',
    'none',
    '-serial',
    `file:${a.consoleLog}`,
    '-kernel',
    a.kernel,
    '-initrd',
    a.initrd,
    '-append',
    `root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet mitigations=off init=${GUEST_INIT_PATH}`,
    // cache=unsafe: the guest still sees its own fsyncs complete in order; only the host skips them.
    '-drive',
    `file=${a.rootDisk},if=virtio,format=qcow2,cache=unsafe`,
    '-drive',
    `file=${a.dataDisk},if=virtio,format=qcow2,cache=unsafe`,
    '-netdev',
    `tap,id=net0,ifname=${a.tap},script=no,downscript=no`,
    '-device',
    `virtio-net-pci,netdev=net0,mac=${a.mac}`,
    '-object',
    'rng-random,filename=/dev/urandom,id=rng0',
    '-device',
    'virtio-rng-pci,rng=rng0',
    ...Object.entries(a.fwCfg).flatMap(([name, file]) => [
      '-fw_cfg',
      `name=${FW_CFG_PREFIX}/${name},file=${file}`,
    ]),
    '-daemonize',
    '-pidfile',
    a.pidFile,
  ];
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Live qemu processes whose command line carries the marker (prefix) given. */
export function qemuPids(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const line = cmdline(pid);
    if (line.startsWith(QEMU_BINARY) || line.includes(`/${QEMU_BINARY} `)) {
      if (line.includes(`-name ${marker}`)) out.push(pid);
    }
  }
  return out;
}

/** Cluster names of every live qemu faultline started. */
export function clustersWithQemu(): string[] {
  const names = new Set<string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const m = /-name faultline-vm\/([a-z0-9-]+)\//.exec(cmdline(Number(entry)));
    if (m && cmdline(Number(entry)).includes(QEMU_BINARY)) names.add(m[1] as string);
  }
  return [...names];
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Until a helper process just started (port forwards, apt proxy) is `ready`: false when it exited first
 * (it never will be) or `timeoutMs` passed.
 */
export async function helperReady(
  pid: number,
  ready: () => Promise<boolean>,
  o: { timeoutMs: number; stepMs: number },
): Promise<boolean> {
  const state = await pollFor(
    async () => ((await ready()) ? 'ready' : pidAlive(pid) ? 'starting' : 'exited'),
    (s) => s !== 'starting',
    o,
  );
  return state === 'ready';
}

/** SIGTERM, then SIGKILL after graceMs; resolves once every pid is gone. Returns the pids signalled. */
export async function stopPids(pids: readonly number[], graceMs = 3000): Promise<number[]> {
  const signalled: number[] = [];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
      signalled.push(pid);
    } catch {}
  }
  await waitFor(async () => !signalled.some(pidAlive), graceMs, 100);
  for (const pid of signalled.filter(pidAlive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  for (let i = 0; i < 50 && signalled.some(pidAlive); i++) await sleep(100);
  return signalled;
}

export function cmdlineOf(pid: number): string {
  return cmdline(pid);
}

/** Resident memory of a process in MiB (VmRSS), or null when it is gone. */
export function rssMiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}
