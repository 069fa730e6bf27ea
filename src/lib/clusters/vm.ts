import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { alignClock } from '../../../nemeses/clock.ts';
import { connectRemote } from '../../core/control/ssh-remote.ts';
import type { NodeSpec, Remote } from '../../core/control/types.ts';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { UserError } from '../../core/util/errors.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import { log } from '../../core/util/log.ts';
import { pathName } from '../../core/util/paths.ts';
import { clearStaleLock } from '../../core/util/pid-lock.ts';
import { waitFor } from '../../core/util/retry.ts';
import { aptProxyUrl, isAptProxyOf, spawnAptProxy, stopAptProxy } from './apt-proxy-process.ts';
import { bridgedClusterFields, newBridgedCluster } from './bridged-cluster.ts';
import { run, runQuiet } from './host-tools.ts';
import { keygen, tcpOpen } from './local.ts';
import { type LocalCluster, renderLocalInventory } from './local-inventory.ts';
import { bridgeName, clusterId } from './local-names.ts';
import { clusterDir, clustersDir } from './state-dir.ts';
import { releaseSubnetsOf } from './subnet.ts';
import { type AccelChoice, chooseAccel } from './vm-accel.ts';
import { DATA_DEVICE, DATA_MOUNT, guestInitScript } from './vm-guest.ts';
import { ensureVmImage, imageLockPath, vmImageUnavailableReason } from './vm-image.ts';
import {
  clustersWithQemu,
  cmdlineOf,
  QEMU_BINARY,
  qemuArgs,
  qemuMarker,
  qemuPids,
  rssMiB,
  stopPids,
} from './vm-qemu.ts';

/**
 * A cluster of N qemu VMs on this host, each a Debian 12 node with its own kernel: netem qdiscs,
 * device-mapper (a dm-linear data device under /var/lib/faultline that dm-flakey can replace) and its
 * own clock (no time synchronisation), so the faults a namespace cluster cannot host land here. Each VM
 * has a tap device on a private bridge holding the cluster's /24 (claimed like a namespace cluster's),
 * sshd with faultline's key and a host key generated here (so known_hosts is exact), and apt pointed at
 * an apt proxy on the bridge that reaches only the host's own Debian sources. VMs have no default
 * route: they reach each other, the proxy and nothing else.
 */

const MAX_VM_NODES = 16;
const DATA_DISK_SIZE = '1G';

const VmNodeStateSchema = z.object({
  name: z.string(),
  address: z.string(),
  tap: z.string(),
  mac: z.string(),
  qemuPid: z.number().int().nullable(),
  bootToSshMs: z.number().nullable(),
});

const VmStateSchema = z.object({
  kind: z.literal('vm'),
  ...bridgedClusterFields,
  memory: z.string(),
  accel: z.object({ accel: z.enum(['kvm', 'tcg']), cpu: z.string(), reason: z.string() }).nullable(),
  image: z
    .object({ key: z.string(), dir: z.string(), built: z.boolean(), buildSeconds: z.number() })
    .nullable(),
  aptProxyPid: z.number().int().nullable(),
  nodes: z.array(VmNodeStateSchema),
});
export type VmClusterState = z.infer<typeof VmStateSchema>;

export interface VmClusterUpOptions {
  nodes: number;
  name: string;
  /** qemu -m, e.g. 512M. */
  memory?: string;
  subnet?: string;
  /** Rebuild the node image even when one is cached. */
  rebuildImage?: boolean;
  /** How many VMs boot at once (default: the host's CPU count). */
  bootParallel?: number;
  /** Per-VM limit for boot-to-SSH. */
  bootTimeoutMs?: number;
  print?: (line: string) => void;
}

export interface VmClusterUpReport {
  cluster: LocalCluster;
  accel: AccelChoice;
  image: { key: string; built: boolean; buildSeconds: number; packages: number; kernel: string };
  /** Per node: ms from qemu start to a verified SSH login. */
  bootToSshMs: Record<string, number>;
  /** Per node: clock offset to this host after alignment (ms). */
  clockOffsetMs: Record<string, number>;
  /** Per node: qemu's resident memory after boot, and what the guest itself uses (MiB). */
  memory: Record<string, { qemuRssMiB: number | null; guestUsedMiB: number | null }>;
  totalMs: number;
}

const statePath = (name: string) => join(clusterDir(name), 'vm.json');
const tapName = (name: string, i: number) => `flt${clusterId(name)}${i}`;
const macOf = (name: string, i: number) => {
  const id = clusterId(name);
  return `52:54:00:${id.slice(0, 2)}:${id.slice(2, 4)}:${i.toString(16).padStart(2, '0')}`;
};

function writeState(s: VmClusterState): void {
  writeFileAtomicSync(statePath(s.name), `${JSON.stringify(s, null, 2)}\n`);
}

export function isVmCluster(name: string): boolean {
  return existsSync(statePath(name));
}

/** A VM cluster's qemu or first tap still exists (its state directory may be gone). */
export async function hasVmLeftovers(name: string): Promise<boolean> {
  return qemuPids(qemuMarker(name)).length > 0 || (await linkExists(tapName(name, 1)));
}

export function readVmState(name: string): VmClusterState | null {
  const p = statePath(name);
  if (!existsSync(p)) return null;
  const parsed = VmStateSchema.safeParse(readJsonOrNull(p));
  if (!parsed.success)
    throw new UserError(`${p}: corrupt VM cluster state; run: faultline cluster down --name ${name}`);
  return parsed.data;
}

export function listVmClusters(): string[] {
  try {
    return readdirSync(clustersDir()).filter((n) => existsSync(statePath(n)));
  } catch {
    return [];
  }
}

function describe(s: VmClusterState): LocalCluster {
  const dir = clusterDir(s.name);
  const identityFile = join(dir, 'id_ed25519');
  const nodes: NodeSpec[] = s.nodes.map((n) => ({
    name: n.name,
    host: n.address,
    port: 22,
    user: 'root',
    identityFile,
    sharedKernelClock: false,
    labels: {
      cluster: s.name,
      vm: 'qemu',
      dataDevice: DATA_DEVICE,
      dataMount: DATA_MOUNT,
    },
  }));
  return {
    name: s.name,
    inventoryPath: join(dir, 'inventory.yaml'),
    knownHostsPath: join(dir, 'known_hosts'),
    identityFile,
    subnet: s.subnet,
    nodes,
    kind: 'vm',
  };
}

function parseMemory(m: string): string {
  if (!/^\d+[MG]$/.test(m)) throw new UserError(`--memory ${m}: expected a size like 512M or 1G`);
  const mib = m.endsWith('G') ? Number(m.slice(0, -1)) * 1024 : Number(m.slice(0, -1));
  if (mib < 256) throw new UserError(`--memory ${m}: VM nodes need at least 256M`);
  return m;
}

async function prepareNode(
  s: VmClusterState,
  i: number,
  imageRootfs: string,
): Promise<Record<string, string>> {
  const dir = clusterDir(s.name);
  const n = s.nodes[i] as VmClusterState['nodes'][number];
  const nodeDir = join(dir, 'nodes', n.name);
  const fw = join(nodeDir, 'fw_cfg');
  mkdirSync(fw, { recursive: true, mode: 0o700 });
  await run('qemu-img', [
    'create',
    '-q',
    '-f',
    'qcow2',
    '-b',
    imageRootfs,
    '-F',
    'raw',
    join(nodeDir, 'root.qcow2'),
  ]);
  await run('qemu-img', ['create', '-q', '-f', 'qcow2', join(nodeDir, 'data.qcow2'), DATA_DISK_SIZE]);
  writeFileSync(
    join(fw, 'init'),
    guestInitScript({
      name: n.name,
      address: n.address,
      prefixLength: 24,
      aptProxy: aptProxyUrl(s.bridgeAddress),
    }),
  );
  writeFileSync(join(fw, 'hosts'), readFileSync(join(dir, 'hosts')));
  writeFileSync(join(fw, 'authorized_keys'), readFileSync(join(dir, 'id_ed25519.pub')));
  const hostKey = join(nodeDir, 'ssh_host_ed25519_key');
  writeFileSync(join(fw, 'host_key'), readFileSync(hostKey), { mode: 0o600 });
  writeFileSync(join(fw, 'host_key.pub'), readFileSync(`${hostKey}.pub`));
  return Object.fromEntries(
    ['init', 'hosts', 'authorized_keys', 'host_key', 'host_key.pub'].map((f) => [f, join(fw, f)]),
  );
}

/** Until `ssh root@node hostname` answers with the node's name through the cluster's known_hosts. */
async function waitForLogin(
  remote: Remote,
  n: { name: string; address: string },
  timeoutMs: number,
): Promise<void> {
  let last = '';
  const loggedIn = await waitFor(
    async () => {
      if (!(await tcpOpen(n.address, 22, 5000))) return false;
      try {
        const r = await remote.exec(n.name, 'hostname', { timeoutMs: 15_000 });
        if (r.stdout.trim() === n.name) return true;
        last = `hostname is ${JSON.stringify(r.stdout.trim())}`;
      } catch (err) {
        last = (err as Error).message;
      }
      return false;
    },
    timeoutMs,
    500,
  );
  if (!loggedIn)
    throw new Error(`${n.name} (${n.address}) did not accept an SSH login in time${last ? `: ${last}` : ''}`);
}

/** Boot every node (at most `parallel` booting at once); resolves with each node's boot-to-SSH ms. */
async function bootNodes(
  s: VmClusterState,
  args: (i: number) => string[],
  remote: Remote,
  o: {
    parallel: number;
    timeoutMs: number;
    print: (l: string) => void;
    clockOffsets: Record<string, number>;
  },
): Promise<Record<string, number>> {
  const dir = clusterDir(s.name);
  const times: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < s.nodes.length) {
      const i = next++;
      const n = s.nodes[i] as VmClusterState['nodes'][number];
      const t0 = Date.now();
      await run(QEMU_BINARY, args(i), { timeoutMs: 30_000 });
      n.qemuPid = Number(readFileSync(join(dir, 'nodes', n.name, 'qemu.pid'), 'utf8').trim());
      writeState(s);
      try {
        await waitForLogin(remote, n, o.timeoutMs - (Date.now() - t0));
      } catch (err) {
        const console = join(dir, 'nodes', n.name, 'console.log');
        throw new Error(`${(err as Error).message} (console: ${console})`);
      }
      n.bootToSshMs = Date.now() - t0;
      times[n.name] = n.bootToSshMs;
      // The guest clock starts from the emulated RTC (whole seconds) and nothing syncs it: align it to
      // this host's, so clock faults start from zero offset.
      o.clockOffsets[n.name] = await alignClock(remote, n.name);
      writeState(s);
      o.print(
        `  ${n.name} ${n.address}: SSH up ${(n.bootToSshMs / 1000).toFixed(1)} s after qemu started; clock aligned (${o.clockOffsets[n.name]} ms off)`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.parallel, s.nodes.length)) }, worker));
  return times;
}

/** The cluster key, each node's host key, known_hosts (exact: the keys made here) and /etc/hosts. */
async function writeKeys(s: VmClusterState): Promise<void> {
  const dir = clusterDir(s.name);
  await keygen(join(dir, 'id_ed25519'), `faultline-vm-${s.name}`);
  writeFileSync(
    join(dir, 'hosts'),
    `127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n${s.nodes.map((n) => `${n.address} ${n.name}`).join('\n')}\n`,
  );
  const known = await Promise.all(
    s.nodes.map(async (n) => {
      const nodeDir = join(dir, 'nodes', n.name);
      mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
      const pub = await keygen(join(nodeDir, 'ssh_host_ed25519_key'), `faultline-${s.name}-${n.name}`);
      return `${n.address} ${pub.split(' ').slice(0, 2).join(' ')}`;
    }),
  );
  writeFileAtomicSync(join(dir, 'known_hosts'), `${known.join('\n')}\n`);
}

/** The bridge with the host's address on the cluster subnet, and a tap per node on it. */
async function hostNetwork(s: VmClusterState): Promise<void> {
  const batch = [
    `link add ${s.bridge} type bridge`,
    `addr add ${s.bridgeAddress}/24 dev ${s.bridge}`,
    `link set ${s.bridge} up`,
  ];
  for (const n of s.nodes)
    batch.push(`tuntap add dev ${n.tap} mode tap`, `link set ${n.tap} master ${s.bridge} up`);
  await run('ip', ['-batch', '-'], { input: `${batch.join('\n')}\n` });
}

/** qemu's resident memory and what each guest itself uses, per node (MiB). */
async function memoryUse(s: VmClusterState, remote: Remote): Promise<VmClusterUpReport['memory']> {
  const out: VmClusterUpReport['memory'] = {};
  for (const n of s.nodes) {
    const used = await remote
      .exec(n.name, "free -m | awk '/^Mem:/ {print $3}'", { timeoutMs: 15_000 })
      .then((r) => Number(r.stdout.trim()))
      .catch(() => null);
    out[n.name] = { qemuRssMiB: n.qemuPid ? rssMiB(n.qemuPid) : null, guestUsedMiB: used };
  }
  return out;
}

/** Build (or reuse) the image, then boot the cluster. Anything half-built is torn down if a step fails. */
export async function vmClusterUp(opts: VmClusterUpOptions): Promise<VmClusterUpReport> {
  const t0 = Date.now();
  const name = pathName('cluster', opts.name);
  const print = opts.print ?? (() => undefined);
  const unavailable = vmImageUnavailableReason();
  if (unavailable) throw new UserError(unavailable);
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > MAX_VM_NODES)
    throw new UserError(
      `--nodes ${opts.nodes}: expected an integer from 1 to ${MAX_VM_NODES} for VM clusters`,
    );
  const memory = parseMemory(opts.memory ?? '512M');
  const dir = clusterDir(name);
  if (existsSync(statePath(name)) || existsSync(join(dir, 'state.json')))
    throw new UserError(
      `cluster ${name} already exists (${dir}); run: faultline cluster down --name ${name}`,
    );
  const bridged = await newBridgedCluster(name, opts.subnet);
  const s: VmClusterState = {
    kind: 'vm',
    ...bridged,
    memory,
    accel: null,
    image: null,
    aptProxyPid: null,
    nodes: Array.from({ length: opts.nodes }, (_, i) => ({
      name: `n${i + 1}`,
      address: `${bridged.prefix}.${11 + i}`,
      tap: tapName(name, i + 1),
      mac: macOf(name, i + 1),
      qemuPid: null,
      bootToSshMs: null,
    })),
  };
  writeState(s); // before anything exists: a crash at any later point can still be cleaned up
  let remote: Remote | undefined;
  try {
    const image = await ensureVmImage({ ...(opts.rebuildImage && { rebuild: true }), print });
    s.image = {
      key: image.manifest.key,
      dir: image.dir,
      built: image.built,
      buildSeconds: image.manifest.buildSeconds,
    };
    print(
      image.built
        ? `image ${image.manifest.key}: built in ${image.manifest.buildSeconds} s`
        : `image ${image.manifest.key}: cached (built ${image.manifest.builtAt} in ${image.manifest.buildSeconds} s)`,
    );
    const accel = await chooseAccel(QEMU_BINARY, image.kernel);
    s.accel = { accel: accel.accel, cpu: accel.cpu, reason: accel.reason };
    print(`accelerator: ${accel.accel.toUpperCase()} (${accel.reason})`);
    writeState(s);

    await writeKeys(s);
    await hostNetwork(s);

    s.aptProxyPid = await spawnAptProxy(s.name, s.bridgeAddress, clusterDir(s.name));
    writeState(s);

    const fwCfg = await Promise.all(s.nodes.map((_, i) => prepareNode(s, i, image.rootfs)));
    const cluster = describe(s);
    remote = await connectRemote(cluster.nodes, {
      knownHostsFiles: [cluster.knownHostsPath],
      hostKeyPolicy: 'strict',
      eager: false,
      connectAttempts: 1,
      connectTimeoutMs: 20_000,
    });
    const parallel = opts.bootParallel ?? availableParallelism();
    const clockOffsets: Record<string, number> = {};
    print(`booting ${s.nodes.length} VMs (${memory} each, ${parallel} at a time)`);
    const bootToSshMs = await bootNodes(
      s,
      (i) => {
        const n = s.nodes[i] as VmClusterState['nodes'][number];
        const nodeDir = join(dir, 'nodes', n.name);
        return qemuArgs({
          cluster: name,
          node: n.name,
          accel,
          memory,
          kernel: image.kernel,
          initrd: image.initrd,
          rootDisk: join(nodeDir, 'root.qcow2'),
          dataDisk: join(nodeDir, 'data.qcow2'),
          tap: n.tap,
          mac: n.mac,
          consoleLog: join(nodeDir, 'console.log'),
          pidFile: join(nodeDir, 'qemu.pid'),
          fwCfg: fwCfg[i] as Record<string, string>,
        });
      },
      remote,
      { parallel, timeoutMs: opts.bootTimeoutMs ?? 300_000, print, clockOffsets },
    );
    const memoryReport = await memoryUse(s, remote);
    writeFileAtomicSync(cluster.inventoryPath, renderLocalInventory(cluster));
    log().info({ cluster: name, nodes: opts.nodes, subnet: s.subnet, accel: accel.accel }, 'VM cluster up');
    return {
      cluster,
      accel,
      image: {
        key: image.manifest.key,
        built: image.built,
        buildSeconds: image.manifest.buildSeconds,
        packages: image.manifest.packages.length,
        kernel: image.manifest.kernel,
      },
      bootToSshMs,
      clockOffsetMs: clockOffsets,
      memory: memoryReport,
      totalMs: Date.now() - t0,
    };
  } catch (err) {
    await remote?.close().catch(() => undefined);
    remote = undefined;
    await vmClusterDown(name).catch(() => undefined);
    throw err instanceof UserError
      ? err
      : new UserError(`cluster up --vm ${name} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    await remote?.close().catch(() => undefined);
  }
}

export interface VmClusterDownReport {
  name: string;
  existed: boolean;
  killedQemu: number[];
  killedProxy: number | null;
  removedLinks: string[];
}

async function linkExists(link: string): Promise<boolean> {
  return runQuiet('ip', ['link', 'show', 'dev', link]);
}

/**
 * Remove everything a VM cluster made: its qemu processes (found by their command-line marker, state
 * file or not), the apt proxy, the taps, the bridge, the subnet claim and the cluster directory (disks,
 * keys). Running it twice is harmless.
 */
export async function vmClusterDown(name: string): Promise<VmClusterDownReport> {
  pathName('cluster', name);
  let state: VmClusterState | null = null;
  try {
    state = readVmState(name);
  } catch {}
  const report: VmClusterDownReport = {
    name,
    existed: false,
    killedQemu: [],
    killedProxy: null,
    removedLinks: [],
  };
  const marker = qemuMarker(name);
  const fromState = (state?.nodes ?? [])
    .map((n) => n.qemuPid)
    .filter((p): p is number => p !== null && cmdlineOf(p).includes(`-name ${marker}`));
  report.killedQemu = await stopPids([...new Set([...fromState, ...qemuPids(marker)])]);
  if (await stopAptProxy(state?.aptProxyPid, name)) report.killedProxy = state?.aptProxyPid ?? null;
  const taps =
    state?.nodes.map((n) => n.tap) ?? Array.from({ length: MAX_VM_NODES }, (_, i) => tapName(name, i + 1));
  for (const link of [...taps, bridgeName(name)]) {
    if ((await linkExists(link)) && (await runQuiet('ip', ['link', 'del', 'dev', link])))
      report.removedLinks.push(link);
  }
  releaseSubnetsOf(name);
  const dir = clusterDir(name);
  report.existed =
    state !== null || report.killedQemu.length > 0 || report.removedLinks.length > 0 || existsSync(dir);
  rmSync(dir, { recursive: true, force: true });
  return report;
}

/** Every VM cluster faultline knows of: state files, plus any qemu still carrying a cluster's marker. */
export function allVmClusterNames(): string[] {
  return [...new Set([...listVmClusters(), ...clustersWithQemu()])];
}

/**
 * The image build lock when nobody holds it any more (its builder died): removed, with the half-built
 * image left by that builder. A live build is reported, never interrupted.
 */
export function clearStaleImageLock(): { removed: boolean; liveOwner: number | null } {
  const r = clearStaleLock(imageLockPath());
  return { removed: r.removed, liveOwner: r.holder?.pid ?? null };
}

export interface VmNodeHealth {
  name: string;
  address: string;
  qemu: boolean;
  qemuRssMiB: number | null;
  tap: boolean;
  sshd: boolean;
  ssh: boolean;
  sshLatencyMs: number | null;
  kernel?: string;
  error?: string;
}

export interface VmClusterStatus {
  name: string;
  exists: boolean;
  subnet?: string;
  bridge?: { name: string; up: boolean };
  accel?: string;
  aptProxy?: boolean;
  inventoryPath?: string;
  nodes: VmNodeHealth[];
  healthy: boolean;
}

export async function vmClusterStatus(name: string): Promise<VmClusterStatus> {
  pathName('cluster', name);
  const s = readVmState(name);
  if (!s) return { name, exists: false, nodes: [], healthy: false };
  const bridgeUp = (await run('ip', ['-o', 'link', 'show', 'dev', s.bridge]).catch(() => '')).includes('UP');
  const cluster = describe(s);
  const remote = await connectRemote(cluster.nodes, {
    knownHostsFiles: [cluster.knownHostsPath],
    hostKeyPolicy: 'strict',
    eager: false,
    connectAttempts: 1,
    connectTimeoutMs: 10_000,
  });
  const marker = qemuMarker(name);
  const nodes = await Promise.all(
    s.nodes.map(async (n): Promise<VmNodeHealth> => {
      const alive = n.qemuPid !== null && cmdlineOf(n.qemuPid).includes(`-name ${marker}`);
      const h: VmNodeHealth = {
        name: n.name,
        address: n.address,
        qemu: alive,
        qemuRssMiB: alive && n.qemuPid ? rssMiB(n.qemuPid) : null,
        tap: await linkExists(n.tap),
        sshd: await tcpOpen(n.address, 22, 10_000), // a busy emulated node takes seconds to send its banner
        ssh: false,
        sshLatencyMs: null,
      };
      if (h.sshd) {
        try {
          const r = await remote.exec(n.name, 'hostname; uname -r', { timeoutMs: 15_000 });
          const [host, kernel] = r.stdout.trim().split('\n');
          h.ssh = host === n.name;
          h.sshLatencyMs = Math.round(r.durationMs * 10) / 10;
          if (kernel) h.kernel = kernel;
          if (!h.ssh) h.error = `hostname is ${JSON.stringify(host)}`;
        } catch (err) {
          h.error = (err as Error).message;
        }
      }
      return h;
    }),
  );
  await remote.close();
  const proxy = s.aptProxyPid !== null && isAptProxyOf(s.aptProxyPid, s.name);
  return {
    name,
    exists: true,
    subnet: s.subnet,
    bridge: { name: s.bridge, up: bridgeUp },
    ...(s.accel && { accel: `${s.accel.accel} (${s.accel.reason})` }),
    aptProxy: proxy,
    inventoryPath: cluster.inventoryPath,
    nodes,
    healthy: bridgeUp && proxy && nodes.every((n) => n.qemu && n.tap && n.ssh),
  };
}

/** The cluster handle for an existing VM cluster. */
export function vmCluster(name: string): LocalCluster {
  const s = readVmState(name);
  if (!s) throw new UserError(`no VM cluster named ${name}; run: faultline cluster up --vm --name ${name}`);
  return describe(s);
}
