import { spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { LOCAL_NODE_DATA_ROOT, STATE_ROOT as NODE_STATE_ROOT } from '../../../nemeses/node-state.ts';
import { knownHostsName } from '../../core/control/known-hosts.ts';
import { connectRemote } from '../../core/control/ssh-remote.ts';
import type { NodeSpec } from '../../core/control/types.ts';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { UserError } from '../../core/util/errors.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import { log } from '../../core/util/log.ts';
import { pathName } from '../../core/util/paths.ts';
import { clearStaleLock, type LockHolder, lockHolder } from '../../core/util/pid-lock.ts';
import { waitFor } from '../../core/util/retry.ts';
import { bridgedClusterFields, newBridgedCluster } from './bridged-cluster.ts';
import { clusterInUse, clusterLeaseHolder } from './cluster-lease.ts';
import { assertLocalClusterPossible, run, runQuiet, sshdPath, which } from './host-tools.ts';
import { type LocalCluster, renderLocalInventory } from './local-inventory.ts';
import {
  checkLoginUser,
  type LoginUser,
  type LoginUserOptions,
  LoginUserSchema,
  loginUserMounts,
  writeAccountFiles,
  writeNodeHome,
} from './local-login-user.ts';
import { bridgeName, isClusterNetns, netnsName, vethHostName, vethPeerName } from './local-names.ts';
import { startSshForwards, stopSshForwards } from './ssh-forward.ts';
import { sshdSettings } from './sshd-config.ts';
import { clusterDir, clusterLeasePath, clustersDir } from './state-dir.ts';
import { releaseSubnetsOf } from './subnet.ts';

/**
 * A cluster of N "nodes" on this host. Each node is a network namespace joined to a private bridge by a
 * veth pair, and inside it an sshd that is PID 1 of its own PID namespace, with its own UTS namespace
 * (hostname n1…) and mount namespace (own /proc, /root, /tmp and an /etc/hosts naming every node). So
 * `pkill` on one node cannot see another's processes, killing a node's sshd ends everything on it, and
 * root's shell start-up files on this host (pyenv …) are not paid on every command. All nodes share the
 * host kernel, hence its clock: the inventory says so (`sharedKernelClock: true`).
 *
 * Each node's /var/lib/faultline (where every database keeps its data, and where disk faults land) and its
 * /tmp are the node's own size-limited tmpfs filesystems, mounted inside its mount namespace: a database,
 * a `disk-full` or a runaway log fills them, never the host's disk; the host's /var/lib/faultline (cluster
 * keys included) is out of the node's sight; the data is gone with the namespace when the node's PID 1
 * dies (`cluster down`). Disk faults on such a node are refused outside these two (nemeses/disk.ts).
 * Everything else the node writes (packages it installs, logs under /var/log) lands in its own
 * copy-on-write layer over the host's root filesystem, gone with it too (nodeInitScript).
 */

/** Where each node's own bounded filesystem is mounted, inside the node (disk faults stay under it). */
export const NODE_DATA_ROOT = LOCAL_NODE_DATA_ROOT;
/** Default size of each of those filesystems (tmpfs pages are only used as written). */
export const DEFAULT_NODE_DATA_BYTES = 512 * 1024 ** 2;
const MIN_NODE_DATA_BYTES = 16 * 1024 ** 2;
/**
 * The node's own directory (sshd's config, host key, log) as the node sees it: bound here before the
 * node's data filesystem covers the host's /var/lib/faultline, where the cluster's state lives.
 */
const NODE_SELF_DIR = '/run/faultline-node';
/**
 * Where, inside a node's mount namespace, the node's root layer (a tmpfs holding the overlay's upper and
 * work directories, and the overlay itself) is mounted before the node moves into it.
 */
const NODE_ROOT_LAYER = '/run/faultline-node-root';
/**
 * Default size of each node's copy-on-write layer over the host's root filesystem: what a node may write
 * outside its data filesystem and /tmp (packages it installs, logs under /var/log), in memory as written.
 */
export const DEFAULT_NODE_ROOT_BYTES = 1024 ** 3;

const NodeStateSchema = z.object({
  name: z.string(),
  netns: z.string(),
  address: z.string(),
  vethHost: z.string(),
  vethPeer: z.string(),
  launcherPid: z.number().int().nullable(),
});

const ClusterStateSchema = z.object({
  ...bridgedClusterFields,
  nodes: z.array(NodeStateSchema),
  /** Lab-like mode: SSH through 127.0.0.1 port forwards, cluster traffic on the namespace addresses. */
  sshForward: z
    .object({ pid: z.number().int().nullable(), ports: z.record(z.string(), z.number()) })
    .optional(),
  /** Nodes log in as this user and reach root through sudo. */
  loginUser: LoginUserSchema.optional(),
  /** Size of each node's own data and /tmp filesystems (tmpfs inside the node). */
  dataBytes: z.number().int().positive().optional(),
  /** Size of each node's copy-on-write layer over the host's root filesystem (tmpfs inside the node). */
  rootBytes: z.number().int().positive().optional(),
});

export type LocalClusterState = z.infer<typeof ClusterStateSchema>;

export type { LocalCluster } from './local-inventory.ts';

export interface LocalClusterUpOptions {
  nodes: number;
  name?: string;
  /** A /24 like 10.213.9.0/24; default: the first free one in 10.213.0.0/16. */
  subnet?: string;
  /** How long to wait for every sshd to accept connections. */
  readyTimeoutMs?: number;
  /**
   * Lab-like addressing: each node's sshd is reached through its own port forward on 127.0.0.1 (as
   * through Vagrant's NAT), while peers, clients, partitions and probes use the namespace address.
   */
  sshViaForward?: boolean;
  /** Log in as this non-root user with sudo (NOPASSWD, or a password from an environment variable). */
  loginUser?: LoginUserOptions;
  /** Size of each node's data and /tmp filesystems in bytes (default DEFAULT_NODE_DATA_BYTES). */
  dataBytes?: number;
  /** Size of each node's copy-on-write layer over the host's root filesystem (default DEFAULT_NODE_ROOT_BYTES). */
  rootBytes?: number;
}

export const DEFAULT_CLUSTER_NAME = 'local';
const MAX_NODES = 64;

const statePath = (name: string) => join(clusterDir(name), 'state.json');

function writeState(state: LocalClusterState): void {
  writeFileAtomicSync(statePath(state.name), `${JSON.stringify(state, null, 2)}\n`);
}

export function readClusterState(name: string): LocalClusterState | null {
  const p = statePath(name);
  if (!existsSync(p)) return null;
  const parsed = ClusterStateSchema.safeParse(readJsonOrNull(p));
  if (!parsed.success)
    throw new UserError(
      `${p}: corrupt cluster state (${parsed.error.issues[0]?.message ?? 'invalid'}); run cluster down --name ${name}`,
    );
  return parsed.data;
}

function nodeSpecs(state: LocalClusterState, identityFile: string): NodeSpec[] {
  const forwarded = state.sshForward?.ports;
  return state.nodes.map((n) => ({
    name: n.name,
    host: n.address,
    port: 22,
    ...(forwarded?.[n.name] !== undefined && {
      host: '127.0.0.1',
      port: forwarded[n.name] as number,
      address: n.address,
      clusterSshPort: 22,
    }),
    user: state.loginUser?.name ?? 'root',
    ...(state.loginUser?.sudoPasswordEnv && { sudoPasswordEnv: state.loginUser.sudoPasswordEnv }),
    identityFile,
    sharedKernelClock: true,
    labels: { cluster: state.name, netns: n.netns },
  }));
}

function describe(state: LocalClusterState): LocalCluster {
  const dir = clusterDir(state.name);
  const identityFile = join(dir, 'id_ed25519');
  return {
    name: state.name,
    inventoryPath: join(dir, 'inventory.yaml'),
    knownHostsPath: join(dir, 'known_hosts'),
    identityFile,
    subnet: state.subnet,
    nodes: nodeSpecs(state, identityFile),
  };
}

/** sshd's configuration, with paths as the node sees them (its own directory at NODE_SELF_DIR). */
function sshdConfig(node: string, address: string, loginUser?: LoginUser): string {
  return [
    `# faultline local cluster node ${node}`,
    `ListenAddress ${address}:22`,
    'PidFile none',
    // A login user cannot read root's 0600 key file; its key is in its own home.
    `AuthorizedKeysFile ${NODE_SELF_DIR}/authorized_keys${loginUser ? ' .ssh/authorized_keys' : ''}`,
    ...sshdSettings({
      hostKey: `${NODE_SELF_DIR}/ssh_host_ed25519_key`,
      // A login user with a password (its sudo password) may also log in with it, as in password-only labs.
      passwordLogin: Boolean(loginUser?.sudoPasswordEnv),
    }),
    'ClientAliveInterval 0',
    'Subsystem sftp internal-sftp',
    '',
  ].join('\n');
}

/**
 * The script run as PID 1's parent inside a node's fresh namespaces (propagation private: none of these
 * mounts reaches the host). It builds the node's root and moves into it:
 * - an overlay whose lower layer is the host's root filesystem and whose upper layer is on the node's own
 *   tmpfs (`--root-size`): the node sees the host's files as they are, and every write it makes outside
 *   its other filesystems (a package install into /usr, /etc, /var, /opt, a file under /root or /work)
 *   lands in that upper layer only, so neither the host nor a peer node sees it, and each node has its
 *   own dpkg database and lock;
 * - the kernel's filesystems (/dev, /sys, a /proc of the node's PID namespace) and a /dev/shm of its own;
 * - its own /root, /tmp and /etc/hosts, its directory where sshd finds it, and its bounded data
 *   filesystem over /var/lib/faultline (which also hides the cluster's state, keys included);
 * then `pivot_root` into it and detach the host's root, and become sshd. Every bind comes from a host path
 * before the switch, while the host's root is still the node's.
 */
function nodeInitScript(
  dir: string,
  cluster: string,
  node: string,
  loginUser: boolean,
  dataBytes: number,
  rootBytes: number,
): string {
  const nodeDir = join(dir, 'nodes', node);
  const layer = NODE_ROOT_LAYER;
  const root = `${layer}/root`;
  const state = clustersDir();
  // A state directory outside the node's data filesystem (FAULTLINE_STATE_DIR) is covered too.
  const hideState =
    state === NODE_DATA_ROOT || state.startsWith(`${NODE_DATA_ROOT}/`) || state.startsWith('/tmp/')
      ? []
      : [`mount -t tmpfs -o size=4k,mode=0700 faultline-hidden ${root}${state}`];
  return [
    'set -e',
    `hostname ${node}`,
    `mount -t tmpfs -o size=${rootBytes},mode=0755 ${nodeFsSource('root', cluster, node)} ${layer}`,
    `mkdir ${layer}/upper ${layer}/work ${root}`,
    `mount -t overlay -o lowerdir=/,upperdir=${layer}/upper,workdir=${layer}/work ${nodeFsSource('overlay', cluster, node)} ${root}`,
    `mount --rbind /dev ${root}/dev`,
    `mount -t tmpfs -o size=${dataBytes},mode=1777 ${nodeFsSource('shm', cluster, node)} ${root}/dev/shm`,
    `mount --rbind /sys ${root}/sys`,
    `mount -t proc proc ${root}/proc`,
    `mount --bind ${join(nodeDir, 'root')} ${root}/root`,
    `mount -t tmpfs -o size=${dataBytes},mode=1777 ${nodeFsSource('tmp', cluster, node)} ${root}/tmp`,
    // Read-only: the file is the cluster's, shared by every node.
    `mount --bind ${join(dir, 'hosts')} ${root}/etc/hosts`,
    `mount -o remount,bind,ro ${root}/etc/hosts`,
    ...(loginUser ? loginUserMounts(dir, nodeDir, root) : []),
    `mount --bind ${nodeDir} ${root}${NODE_SELF_DIR}`,
    ...hideState,
    `mount -t tmpfs -o size=${dataBytes},mode=0755 ${nodeFsSource('data', cluster, node)} ${root}${NODE_DATA_ROOT}`,
    // pivot_root . . stacks the old root under the new one; the lazy unmount detaches it (and every host
    // mount below it) from this namespace.
    `cd ${root}`,
    'pivot_root . .',
    'umount -l .',
    'cd /',
    `exec ${sshdPath()} -D -f ${NODE_SELF_DIR}/sshd_config -E ${NODE_SELF_DIR}/sshd.log`,
  ].join('\n');
}

/** The tmpfs source name of a node's data or /tmp filesystem: how a mountinfo line names it. */
export function nodeFsSource(
  which: 'data' | 'tmp' | 'shm' | 'root' | 'overlay',
  cluster: string,
  node: string,
): string {
  return `faultline-${which}-${cluster}-${node}`;
}

function startNodeSshd(state: LocalClusterState, node: string, netns: string): number {
  const dir = clusterDir(state.name);
  const nodeDir = join(dir, 'nodes', node);
  const out = openSync(join(nodeDir, 'launcher.log'), 'a');
  // --kill-child: if the launcher dies, the node's PID 1 (sshd) and with it the whole node die too.
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      netns,
      'unshare',
      '--uts',
      '--pid',
      '--mount',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      nodeInitScript(
        dir,
        state.name,
        node,
        !!state.loginUser,
        state.dataBytes ?? DEFAULT_NODE_DATA_BYTES,
        state.rootBytes ?? DEFAULT_NODE_ROOT_BYTES,
      ),
    ],
    { detached: true, stdio: ['ignore', out, out] },
  );
  child.unref();
  closeSync(out);
  if (child.pid === undefined) throw new Error(`cannot start sshd for ${node}`);
  return child.pid;
}

/** True once host:port answers with an SSH banner. */
export function tcpOpen(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    // Wait for the SSH banner, not just the accept: sshd is really serving then.
    sock.once('data', (d) => done(d.toString('latin1').startsWith('SSH-')));
    sock.once('error', () => done(false));
  });
}

async function waitForSshd(state: LocalClusterState, timeoutMs: number): Promise<void> {
  const pending = new Set(state.nodes);
  const allUp = async () => {
    for (const n of [...pending]) if (await tcpOpen(n.address, 22, 500)) pending.delete(n);
    return pending.size === 0;
  };
  if (await waitFor(allUp, timeoutMs, 50)) return;
  const names = [...pending].map((n) => n.name).join(', ');
  const nodeDir = (n: { name: string }) => join(clusterDir(state.name), 'nodes', n.name);
  const logs = [...pending].map((n) => join(nodeDir(n), 'sshd.log')).join(' ');
  // A node whose init script stopped (a mount the kernel refused, e.g. no overlayfs) says why here.
  const first = [...pending][0];
  const why = first ? lastLine(join(nodeDir(first), 'launcher.log')) : '';
  throw new Error(
    `sshd did not come up on ${names} within ${timeoutMs} ms${why ? `: ${why}` : ''} (see ${logs})`,
  );
}

function lastLine(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').at(-1)?.trim() ?? '';
  } catch {
    return '';
  }
}

export async function keygen(path: string, comment: string): Promise<string> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path]);
  return readFileSync(`${path}.pub`, 'utf8').trim();
}

/** Build a local cluster. Anything half-built is torn down again if a step fails. */
export async function localClusterUp(opts: LocalClusterUpOptions): Promise<LocalCluster> {
  assertLocalClusterPossible();
  const name = opts.name ?? DEFAULT_CLUSTER_NAME;
  pathName('cluster', name);
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > MAX_NODES) {
    throw new UserError(`--nodes ${opts.nodes}: expected an integer from 1 to ${MAX_NODES}`);
  }
  if (opts.loginUser) checkLoginUser(opts.loginUser);
  for (const [flag, bytes] of [
    ['--data-size', opts.dataBytes],
    ['--root-size', opts.rootBytes],
  ] as const)
    if (bytes !== undefined && (!Number.isSafeInteger(bytes) || bytes < MIN_NODE_DATA_BYTES))
      throw new UserError(`${flag} ${bytes}: expected at least ${MIN_NODE_DATA_BYTES} bytes (16M)`);
  const holder = clusterLeaseHolder(name);
  if (holder) throw clusterInUse(name, holder, 'not brought up again beside it');
  const dir = clusterDir(name);
  if (existsSync(statePath(name))) {
    throw new UserError(
      `local cluster ${name} already exists (${dir}); run: faultline cluster down --name ${name}`,
    );
  }
  const bridged = await newBridgedCluster(name, opts.subnet);
  const nodeNames = Array.from({ length: opts.nodes }, (_, i) => `n${i + 1}`);
  const dataBytes = opts.dataBytes ?? DEFAULT_NODE_DATA_BYTES;
  const state: LocalClusterState = {
    ...bridged,
    nodes: nodeNames.map((n, i) => ({
      name: n,
      netns: netnsName(name, n),
      address: `${bridged.prefix}.${11 + i}`,
      vethHost: vethHostName(name, i + 1),
      vethPeer: vethPeerName(name, i + 1),
      launcherPid: null,
    })),
    dataBytes,
    rootBytes: opts.rootBytes ?? DEFAULT_NODE_ROOT_BYTES,
  };
  // Recorded before anything exists, so a crash at any later point can still be cleaned up.
  writeState(state);
  try {
    const identityFile = join(dir, 'id_ed25519');
    const clusterPub = await keygen(identityFile, `faultline-cluster-${name}`);
    if (opts.loginUser) {
      state.loginUser = await writeAccountFiles(dir, opts.loginUser);
      writeState(state);
    }
    writeFileSync(
      join(dir, 'hosts'),
      `127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n${state.nodes.map((n) => `${n.address} ${n.name}`).join('\n')}\n`,
    );
    chmodSync(join(dir, 'hosts'), 0o644);

    const batch: string[] = [
      `link add ${state.bridge} type bridge`,
      `addr add ${state.bridgeAddress}/24 dev ${state.bridge}`,
      `link set ${state.bridge} up`,
    ];
    for (const n of state.nodes) {
      batch.push(
        `netns add ${n.netns}`,
        `link add ${n.vethHost} type veth peer name ${n.vethPeer}`,
        `link set ${n.vethPeer} netns ${n.netns}`,
        `link set ${n.vethHost} master ${state.bridge} up`,
      );
    }
    await run('ip', ['-batch', '-'], { input: `${batch.join('\n')}\n` });
    await Promise.all(
      state.nodes.map((n) =>
        run('ip', ['-n', n.netns, '-batch', '-'], {
          input: `link set ${n.vethPeer} name eth0\naddr add ${n.address}/24 dev eth0\nlink set eth0 up\nlink set lo up\n`,
        }),
      ),
    );

    const hostKeys = await Promise.all(
      state.nodes.map(async (n) => {
        const nodeDir = join(dir, 'nodes', n.name);
        mkdirSync(join(nodeDir, 'root', '.ssh'), { recursive: true, mode: 0o700 });
        // Empty shell start-up files: commands on a node must not pay for the host's ~/.bashrc.
        writeFileSync(join(nodeDir, 'root', '.bashrc'), '');
        writeFileSync(join(nodeDir, 'root', '.profile'), '');
        writeFileSync(join(nodeDir, 'sshd_config'), sshdConfig(n.name, n.address, state.loginUser));
        writeFileSync(join(nodeDir, 'authorized_keys'), `${clusterPub}\n`, { mode: 0o600 });
        if (state.loginUser) writeNodeHome(nodeDir, state.loginUser, clusterPub);
        const pub = await keygen(join(nodeDir, 'ssh_host_ed25519_key'), `faultline-${name}-${n.name}`);
        return [n.name, pub.split(' ').slice(0, 2).join(' ')] as const;
      }),
    );

    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege-separation directory
    // Mount points only: every node mounts its own filesystem on them, in its own namespace.
    for (const p of [NODE_SELF_DIR, NODE_DATA_ROOT, NODE_ROOT_LAYER])
      mkdirSync(p, { recursive: true, mode: 0o755 });
    for (const n of state.nodes) n.launcherPid = startNodeSshd(state, n.name, n.netns);
    writeState(state);
    await waitForSshd(state, opts.readyTimeoutMs ?? 15_000);
    if (opts.sshViaForward) {
      state.sshForward = { pid: null, ports: {} };
      writeState(state);
      state.sshForward = await startSshForwards(
        dir,
        Object.fromEntries(state.nodes.map((n) => [n.name, n.address])),
      );
      writeState(state);
      for (const [node, port] of Object.entries(state.sshForward.ports))
        if (!(await tcpOpen('127.0.0.1', port, 5000)))
          throw new Error(`the SSH forward 127.0.0.1:${port} does not reach ${node}'s sshd`);
    }
    const specs = nodeSpecs(state, identityFile);
    writeFileAtomicSync(
      join(dir, 'known_hosts'),
      `${hostKeys.map(([node, key], i) => `${knownHostsName(specs[i]?.host ?? node, specs[i]?.port ?? 22)} ${key}`).join('\n')}\n`,
    );

    const cluster = describe(state);
    writeFileAtomicSync(cluster.inventoryPath, renderLocalInventory(cluster));
    log().info(
      { cluster: name, nodes: opts.nodes, subnet: state.subnet, inventory: cluster.inventoryPath },
      'local cluster up',
    );
    return cluster;
  } catch (err) {
    await localClusterDown(name).catch(() => undefined);
    throw err instanceof UserError
      ? err
      : new UserError(`cluster up ${name} failed: ${(err as Error).message}`, { cause: err });
  }
}

export interface LocalClusterDownReport {
  name: string;
  removedNetns: string[];
  removedLinks: string[];
  killedPids: number[];
  existed: boolean;
}

async function listNetns(): Promise<string[]> {
  const out = await run('ip', ['netns', 'list']).catch(() => '');
  return out
    .split('\n')
    .map((l) => l.split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

async function netnsPids(netns: string): Promise<number[]> {
  const out = await run('ip', ['netns', 'pids', netns]).catch(() => '');
  return out
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((p) => Number.isInteger(p) && p > 0);
}

async function linkExists(link: string): Promise<boolean> {
  return runQuiet('ip', ['link', 'show', 'dev', link]);
}

/**
 * Remove everything a cluster made: processes in its namespaces, the namespaces, veths, the bridge, the
 * subnet claim and the state directory (keys included). Names are derived from the cluster name, so this
 * works without a state file and running it twice is harmless.
 */
export async function localClusterDown(
  name: string = DEFAULT_CLUSTER_NAME,
  o: { force?: boolean } = {},
): Promise<LocalClusterDownReport> {
  pathName('cluster', name);
  assertLocalClusterPossible();
  const holder = clusterLeaseHolder(name);
  if (holder && !o.force)
    throw clusterInUse(name, holder, 'not removed (--force removes it anyway, and that run fails)');
  // The lease of a run that was killed goes with its cluster; a live one stays for its run to give back.
  clearStaleLock(clusterLeasePath(name));
  const state = (() => {
    try {
      return readClusterState(name);
    } catch {
      return null;
    }
  })();
  const report: LocalClusterDownReport = {
    name,
    removedNetns: [],
    removedLinks: [],
    killedPids: [],
    existed: false,
  };
  report.killedPids.push(...(await stopSshForwards(state?.sshForward?.pid)));
  const namespaces = (await listNetns()).filter((ns) => isClusterNetns(name, ns));
  for (const ns of namespaces) {
    const pids = await netnsPids(ns);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        report.killedPids.push(pid);
      } catch {}
    }
  }
  for (const ns of namespaces) {
    // A killed PID namespace may need a moment to release the netns; retry briefly.
    for (let i = 0; i < 20; i++) {
      if (await runQuiet('ip', ['netns', 'del', ns])) {
        report.removedNetns.push(ns);
        break;
      }
      await sleep(50);
    }
  }
  const links = [bridgeName(name), ...(state?.nodes.map((n) => n.vethHost) ?? [])];
  for (let i = 1; i <= MAX_NODES && !state; i++) links.push(vethHostName(name, i));
  for (const link of links) {
    if ((await linkExists(link)) && (await runQuiet('ip', ['link', 'del', 'dev', link])))
      report.removedLinks.push(link);
  }
  releaseSubnetsOf(name);
  const dir = clusterDir(name);
  report.existed =
    state !== null || namespaces.length > 0 || report.removedLinks.length > 0 || existsSync(dir);
  rmSync(dir, { recursive: true, force: true });
  // Markers now live in each node's own root layer and go with it; a cluster built before that kept them
  // on this host's /run.
  rmSync(join(NODE_STATE_ROOT, name), { recursive: true, force: true });
  return report;
}

export interface NodeHealth {
  name: string;
  address: string;
  /** Where the control host reaches sshd (`127.0.0.1:<port>` through a forward in lab-like mode). */
  sshAddress: string;
  netns: boolean;
  processes: number;
  sshd: boolean;
  /** A command ran over SSH with the cluster key and host-key checking, and the hostname was right. */
  ssh: boolean;
  sshLatencyMs: number | null;
  error?: string;
}

export interface LocalClusterStatus {
  name: string;
  exists: boolean;
  subnet?: string;
  bridge?: { name: string; up: boolean };
  inventoryPath?: string;
  /** The live run holding the cluster's lease (this process included), or null when it is free. */
  heldBy?: LockHolder | null;
  nodes: NodeHealth[];
  healthy: boolean;
}

export async function localClusterStatus(name: string = DEFAULT_CLUSTER_NAME): Promise<LocalClusterStatus> {
  pathName('cluster', name);
  const state = readClusterState(name);
  if (!state) return { name, exists: false, nodes: [], healthy: false };
  const namespaces = new Set(which('ip') ? await listNetns() : []);
  const bridgeUp = (await run('ip', ['-o', 'link', 'show', 'dev', state.bridge]).catch(() => '')).includes(
    'UP',
  );
  const cluster = describe(state);
  const remote = await connectRemote(cluster.nodes, {
    knownHostsFiles: [cluster.knownHostsPath],
    eager: false,
    connectAttempts: 1,
    connectTimeoutMs: 3000,
  });
  const nodes = await Promise.all(
    state.nodes.map(async (n, i): Promise<NodeHealth> => {
      const has = namespaces.has(n.netns);
      const spec = cluster.nodes[i];
      const health: NodeHealth = {
        name: n.name,
        address: n.address,
        sshAddress: `${spec?.host}:${spec?.port}`,
        netns: has,
        processes: has ? (await netnsPids(n.netns)).length : 0,
        sshd: await tcpOpen(n.address, 22, 1000),
        ssh: false,
        sshLatencyMs: null,
      };
      if (health.sshd) {
        try {
          const r = await remote.exec(n.name, 'hostname', { timeoutMs: 5000 });
          health.ssh = r.stdout.trim() === n.name;
          health.sshLatencyMs = Math.round(r.durationMs * 10) / 10;
          if (!health.ssh) health.error = `hostname is ${JSON.stringify(r.stdout.trim())}`;
        } catch (err) {
          health.error = (err as Error).message;
        }
      }
      return health;
    }),
  );
  await remote.close();
  return {
    name,
    exists: true,
    subnet: state.subnet,
    bridge: { name: state.bridge, up: bridgeUp },
    inventoryPath: cluster.inventoryPath,
    heldBy: lockHolder(clusterLeasePath(name)),
    nodes,
    healthy: bridgeUp && nodes.every((n) => n.netns && n.sshd && n.ssh),
  };
}

/** The cluster handle for an existing cluster (e.g. one brought up by another process). */
export function localCluster(name: string = DEFAULT_CLUSTER_NAME): LocalCluster {
  const state = readClusterState(name);
  if (!state) throw new UserError(`no local cluster named ${name}; run: faultline cluster up --name ${name}`);
  return describe(state);
}

export function listLocalClusters(): string[] {
  try {
    return readdirSync(clustersDir()).filter((n) => existsSync(statePath(n)));
  } catch {
    return [];
  }
}

/**
 * The local cluster `name` with `nodes` nodes: reused when it is already up with that size and every
 * node's sshd answers, rebuilt when its sshds are gone (or it predates per-node filesystems), brought up
 * when absent. `created` tells the caller whether it owns the teardown.
 */
export async function ensureLocalCluster(
  name: string,
  nodes: number,
): Promise<{ cluster: LocalCluster; created: boolean }> {
  const existing = readClusterState(name);
  if (existing && existing.nodes.length !== nodes)
    throw new UserError(
      `local cluster ${name} has ${existing.nodes.length} nodes, not ${nodes}; run: faultline cluster down --name ${name}`,
    );
  if (existing) {
    // A cluster whose sshds are gone (the host rebooted, or a killed run took its namespaces' processes
    // with it) is rebuilt rather than handed out: every command on it would be refused.
    const up = await Promise.all(existing.nodes.map((n) => tcpOpen(n.address, 22, 1000)));
    // A cluster from a faultline that kept node data on the host's disk (no own filesystems), or whose
    // nodes wrote through to the host's root filesystem (no copy-on-write root), is rebuilt too.
    const contained = existing.dataBytes !== undefined && existing.rootBytes !== undefined;
    if (up.every(Boolean) && contained) return { cluster: localCluster(name), created: false };
    const down = existing.nodes.filter((_, i) => !up[i]).map((n) => n.name);
    log().warn(
      { cluster: name, sshdDown: down, ownFilesystems: contained },
      'local cluster is not serving SSH or has no per-node filesystems; rebuilding it',
    );
    await localClusterDown(name);
  }
  return { cluster: await localClusterUp({ nodes, name }), created: true };
}
