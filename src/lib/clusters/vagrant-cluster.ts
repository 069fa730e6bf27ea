import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defaultAcceptedKnownHostsFile } from '../../core/control/ssh-connection.ts';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { UserError } from '../../core/util/errors.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import { aptProxyUrl, spawnAptProxy, stopAptProxy } from './apt-proxy-process.ts';
import { run, runQuiet, which } from './host-tools.ts';
import { clusterDir } from './state-dir.ts';
import { claimSubnet, releaseSubnetsOf } from './subnet.ts';
import { importVagrant } from './vagrant.ts';
import { addVagrantBox, BOX_NAME, buildVagrantBox, nonEmptyLines, virsh } from './vagrant-box.ts';
import { chooseAccel } from './vm-accel.ts';
import { guestAptSources, readHostAptSources } from './vm-apt-sources.ts';
import { ensureVmImage } from './vm-image.ts';

/**
 * `cluster up --vagrant`: the shipped vagrant/Vagrantfile, copied into the cluster's state directory and
 * brought up there with per-cluster settings in its environment (node count, box, private /24, libvirt
 * driver and network name). The inventory comes from `vagrant ssh-config` (vagrant.ts). `cluster down`
 * runs `vagrant destroy -f` there and then checks libvirt for anything of the cluster that is left.
 */
const StateSchema = z.object({
  kind: z.literal('vagrant'),
  name: z.string(),
  nodes: z.number().int(),
  box: z.string(),
  provider: z.string(),
  driver: z.string(),
  privateNet: z.string(),
  libvirtNetwork: z.string(),
  inventoryPath: z.string().optional(),
  sshPorts: z.array(z.number()).default([]),
  sshPortBase: z.number().int(),
  /** Whether the nodes' apt goes through a proxy on the host's private address. */
  aptProxy: z.boolean().default(false),
  /** That proxy's process, once started. */
  aptProxyPid: z.number().int().nullable().default(null),
});
type VagrantState = z.infer<typeof StateSchema>;

const SHIPPED_VAGRANTFILE = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'vagrant',
  'Vagrantfile',
);
const statePath = (name: string) => join(clusterDir(name), 'vagrant.json');
export const vagrantDir = (name: string) => join(clusterDir(name), 'vagrant');

export function isVagrantCluster(name: string): boolean {
  return existsSync(statePath(name));
}

function readState(name: string): VagrantState | null {
  const parsed = StateSchema.safeParse(readJsonOrNull(statePath(name)));
  return parsed.success ? parsed.data : null;
}

/** Why `up --vagrant` cannot run here, or null. */
export async function vagrantUnavailableReason(): Promise<string | null> {
  if (!which('vagrant'))
    return 'vagrant not found: apt-get install -y vagrant (or https://developer.hashicorp.com/vagrant/install)';
  return null;
}

async function libvirtReady(): Promise<string | null> {
  const plugins = await run('vagrant', ['plugin', 'list'], { timeoutMs: 120_000 }).catch(() => '');
  if (!/vagrant-libvirt/.test(plugins))
    return 'the vagrant-libvirt plugin is not installed (apt-get install -y vagrant-libvirt)';
  if (!which('virsh')) return 'virsh not found: apt-get install -y libvirt-clients';
  // libvirt starts dnsmasq for the management network (DHCP gives each VM its address).
  if (!which('dnsmasq')) return 'dnsmasq not found: apt-get install -y dnsmasq-base';
  if (!(await runQuiet('virsh', ['-c', 'qemu:///system', 'version'])))
    return 'libvirtd is not running (systemctl start libvirtd; on a host without systemd: virtlogd -d && libvirtd -d)';
  return null;
}

/** The host's address on the cluster's private network (the Vagrantfile's libvirt__host_ip). */
const hostAddress = (s: VagrantState) => `${s.privateNet}.1`;

/**
 * The nodes' sources.list, from the host's Debian sources; empty when the host has no plain-http
 * Debian archive (then the nodes keep the box's own sources and no proxy runs).
 */
function guestSourceLines(): string[] {
  try {
    return guestAptSources(readHostAptSources()).lines;
  } catch {
    return [];
  }
}

/** Vagrant's environment for this cluster: what the shipped Vagrantfile reads. */
function vagrantEnv(s: VagrantState, sudoPassword?: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FAULTLINE_NODES: String(s.nodes),
    FAULTLINE_BOX: s.box,
    FAULTLINE_PRIVATE_NET: s.privateNet,
    FAULTLINE_LIBVIRT_DRIVER: s.driver,
    FAULTLINE_LIBVIRT_NETWORK: s.libvirtNetwork,
    FAULTLINE_LIBVIRT_PREFIX: libvirtPrefix(s.name),
    FAULTLINE_SSH_PORT_BASE: String(s.sshPortBase),
    FAULTLINE_SUDO_PASSWORD: sudoPassword ?? '',
    FAULTLINE_APT_PROXY: s.aptProxy ? aptProxyUrl(hostAddress(s)) : '',
    FAULTLINE_APT_SOURCES: s.aptProxy ? guestSourceLines().join('\n') : '',
    ...(s.provider !== 'default' && { VAGRANT_DEFAULT_PROVIDER: s.provider }),
  };
}

/** Run vagrant in the cluster directory, its output going to `print` line by line. */
function vagrant(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('vagrant', args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const onData = (buf: Buffer) => {
      // Progress bars redraw with escapes and carriage returns: keep only real lines.
      const text = buf.toString('utf8').replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
      for (const raw of text.split('\n')) {
        const line = raw.split('\r').pop() ?? '';
        if (!line.trim() || /^\s*Progress: \d+%/.test(line)) continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        print(`  vagrant: ${line}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new UserError(
            `vagrant ${args.join(' ')} in ${dir} failed (${signal ?? `exit ${code}`}): ${tail.slice(-3).join(' | ')}`,
          ),
        );
    });
  });
}

/**
 * A base B with 127.0.0.1 ports B+1..B+n all free: n<i>'s SSH forward is B+i. Chosen here because
 * vagrant-libvirt's own choice, made in parallel per machine, gave two machines the same port.
 */
async function freePortRun(n: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((res) => {
      const srv = createServer();
      srv.once('error', () => res(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
    });
  for (let base = 2300; base < 2900; base += 10) {
    let ok = true;
    for (let i = 1; i <= n && ok; i++) ok = await free(base + i);
    if (ok) return base;
  }
  throw new UserError('no run of free 127.0.0.1 ports in 2301-2899 for the SSH forwards');
}

async function boxInstalled(box: string): Promise<boolean> {
  const list = await run('vagrant', ['box', 'list', '--machine-readable'], { timeoutMs: 120_000 });
  return list.split('\n').some((l) => l.split(',')[3] === box && l.split(',')[2] === 'box-name');
}

/** Forget host keys recorded for these 127.0.0.1 forwards: every new VM has new keys on the same ports. */
async function forgetForwardKeys(ports: readonly number[]): Promise<void> {
  const file = defaultAcceptedKnownHostsFile();
  if (!existsSync(file)) return;
  for (const p of ports) await runQuiet('ssh-keygen', ['-R', `[127.0.0.1]:${p}`, '-f', file]);
}

export interface VagrantUpReport {
  name: string;
  dir: string;
  inventoryPath: string;
  nodes: { name: string; ssh: string; address: string }[];
  box: string;
  boxBuilt: boolean;
  provider: string;
  driver: string;
  driverReason: string;
  upSeconds: number;
}

export async function vagrantClusterUp(opts: {
  name: string;
  nodes: number;
  subnet?: string;
  sudoPasswordEnv?: string;
  print: (line: string) => void;
}): Promise<VagrantUpReport> {
  const { name, print } = opts;
  const why = await vagrantUnavailableReason();
  if (why) throw new UserError(`cannot run Vagrant here: ${why}`);
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > 9)
    throw new UserError(`--nodes ${opts.nodes}: a Vagrant cluster has 1 to 9 nodes`);
  if (isVagrantCluster(name))
    throw new UserError(`Vagrant cluster ${name} exists: cluster down --name ${name} first`);
  let sudoPassword: string | undefined;
  if (opts.sudoPasswordEnv) {
    sudoPassword = process.env[opts.sudoPasswordEnv];
    if (!sudoPassword)
      throw new UserError(`--sudo-password-env ${opts.sudoPasswordEnv}: that variable is empty`);
  }
  const libvirtWhy = await libvirtReady();
  const provider = process.env.VAGRANT_DEFAULT_PROVIDER ?? (libvirtWhy ? 'default' : 'libvirt');
  if (provider === 'libvirt' && libvirtWhy)
    throw new UserError(`cannot use the libvirt provider: ${libvirtWhy}`);
  const t0 = Date.now();

  // KVM only where a KVM guest really runs (vm-accel.ts); otherwise libvirt's `qemu` domain type (TCG).
  let driver = process.env.FAULTLINE_LIBVIRT_DRIVER ?? '';
  let driverReason = 'FAULTLINE_LIBVIRT_DRIVER';
  if (!driver) {
    const image = await ensureVmImage({ print });
    const qemu = which('qemu-system-x86_64') ?? 'qemu-system-x86_64';
    const accel = await chooseAccel(qemu, image.kernel);
    driver = accel.accel === 'kvm' ? 'kvm' : 'qemu';
    driverReason = accel.reason;
  }

  // Without FAULTLINE_BOX: the locally built box, built and added first when missing.
  let box = process.env.FAULTLINE_BOX ?? '';
  let boxBuilt = false;
  if (!box) {
    box = BOX_NAME;
    if (!(await boxInstalled(box))) {
      print(`box ${box} is not installed: building it (faultline cluster vagrant-box)`);
      const r = await buildVagrantBox({ print });
      for (const v of await addVagrantBox(r.path)) print(`removed the box's earlier base volume ${v}`);
      boxBuilt = true;
    }
  }

  const subnet = await claimSubnet(name, opts.subnet);
  const dir = vagrantDir(name);
  const state: VagrantState = {
    kind: 'vagrant',
    name,
    nodes: opts.nodes,
    box,
    provider,
    driver,
    privateNet: subnet.prefix,
    libvirtNetwork: `faultline-${name}`.slice(0, 40),
    sshPorts: [],
    sshPortBase: await freePortRun(opts.nodes),
    aptProxy: guestSourceLines().length > 0,
    aptProxyPid: null,
  };
  mkdirSync(dir, { recursive: true });
  copyFileSync(SHIPPED_VAGRANTFILE, join(dir, 'Vagrantfile'));
  writeFileAtomicSync(statePath(name), `${JSON.stringify(state, null, 2)}\n`);
  print(
    `Vagrant cluster ${name}: ${opts.nodes} nodes, box ${box}, provider ${provider}, libvirt driver ${driver} (${driverReason}), private net ${subnet.cidr}`,
  );
  let imported: Awaited<ReturnType<typeof importVagrant>>;
  try {
    await vagrant(dir, ['up'], vagrantEnv(state, sudoPassword), print, 60 * 60_000);
    imported = await importVagrant({
      dir,
      privateBase: `${subnet.prefix}.100`,
      env: vagrantEnv(state),
      // The Vagrantfile forwards 127.0.0.1:<base+i> to n<i>:22 (libvirt: an ssh -L process per machine).
      sshForwards: Object.fromEntries(
        Array.from({ length: opts.nodes }, (_, i) => [`n${i + 1}`, state.sshPortBase + i + 1]),
      ),
    });
    // The private network exists now: the nodes' apt (pointed here by the Vagrantfile) gets its proxy.
    if (state.aptProxy) state.aptProxyPid = await spawnAptProxy(name, hostAddress(state), clusterDir(name));
    writeFileAtomicSync(statePath(name), `${JSON.stringify(state, null, 2)}\n`);
  } catch (err) {
    // A half-built cluster is not left behind: whatever vagrant made is destroyed.
    print(`vagrant up failed: destroying what it made (cluster down --name ${name})`);
    await vagrantClusterDown(name, print).catch(() => undefined);
    throw err;
  }
  state.sshPorts = imported.nodes.flatMap((n) => (n.host === '127.0.0.1' && n.port ? [n.port] : []));
  await forgetForwardKeys(state.sshPorts);
  if (opts.sudoPasswordEnv) addSudoPasswordEnv(imported.inventoryPath, opts.sudoPasswordEnv);
  state.inventoryPath = imported.inventoryPath;
  writeFileAtomicSync(statePath(name), `${JSON.stringify(state, null, 2)}\n`);
  return {
    name,
    dir,
    inventoryPath: imported.inventoryPath,
    nodes: imported.nodes.map((n) => ({
      name: n.name,
      ssh: `${n.host}:${n.port ?? 22}`,
      address: n.address ?? n.host,
    })),
    box,
    boxBuilt,
    provider,
    driver,
    driverReason,
    upSeconds: Math.round((Date.now() - t0) / 100) / 10,
  };
}

/** The inventory names the variable (never the password): every sudo then asks for it. */
function addSudoPasswordEnv(inventoryPath: string, envName: string): void {
  const text = readFileSync(inventoryPath, 'utf8');
  writeFileAtomicSync(
    inventoryPath,
    text.replace(/^nodes:/m, `defaults:\n  sudoPasswordEnv: ${envName}\nnodes:`),
  );
}

export interface VagrantDownReport {
  existed: boolean;
  /** Why `vagrant destroy -f` failed, when it did (the sweep below still runs). */
  destroyError?: string;
  /** Whether the cluster's apt proxy was running and has been stopped. */
  stoppedAptProxy: boolean;
  /** libvirt objects of the cluster that `vagrant destroy -f` left, removed here with virsh. */
  swept: string[];
  /** What is still there after the sweep (should be empty). */
  leftovers: string[];
}

/** Domains are <prefix><machine> and their disks <prefix><machine>.img (vagrant-libvirt's naming). */
const libvirtPrefix = (name: string) => `${name}_`;

/** libvirt domains, volumes and the private network of this cluster that exist now. */
export async function vagrantLeftovers(
  name: string,
  libvirtNetwork: string,
): Promise<{ domains: string[]; volumes: string[]; networks: string[] }> {
  const none = { domains: [], volumes: [], networks: [] };
  if (!which('virsh') || !(await runQuiet('virsh', ['-c', 'qemu:///system', 'version']))) return none;
  const prefix = libvirtPrefix(name);
  const domains = nonEmptyLines(await virsh(['list', '--all', '--name'])).filter((d) => d.startsWith(prefix));
  const volumes = nonEmptyLines(await virsh(['vol-list', 'default']).catch(() => ''))
    .map((l) => l.split(/\s+/)[0] ?? '')
    .filter((v) => v.startsWith(prefix));
  const networks = nonEmptyLines(await virsh(['net-list', '--all', '--name'])).filter(
    (n) => n === libvirtNetwork,
  );
  return { domains, volumes, networks };
}

const describe = (l: { domains: string[]; volumes: string[]; networks: string[] }) => [
  ...l.domains.map((d) => `domain ${d}`),
  ...l.volumes.map((v) => `volume ${v}`),
  ...l.networks.map((n) => `network ${n}`),
];

export async function vagrantClusterDown(
  name: string,
  print: (line: string) => void = () => undefined,
): Promise<VagrantDownReport> {
  const state = readState(name);
  if (!state) return { existed: false, stoppedAptProxy: false, swept: [], leftovers: [] };
  const dir = vagrantDir(name);
  const stoppedProxy = await stopAptProxy(state.aptProxyPid, name);
  let destroyError: string | undefined;
  if (existsSync(join(dir, 'Vagrantfile')))
    await vagrant(dir, ['destroy', '-f'], vagrantEnv(state), print, 30 * 60_000).catch((err: Error) => {
      destroyError = err.message;
    });
  // What vagrant could not remove (it failed, or was killed mid-up) goes through virsh.
  const found = await vagrantLeftovers(name, state.libvirtNetwork);
  for (const d of found.domains) {
    await runQuiet('virsh', ['-c', 'qemu:///system', 'destroy', d]);
    await runQuiet('virsh', ['-c', 'qemu:///system', 'undefine', d, '--nvram']);
  }
  for (const v of found.volumes)
    await runQuiet('virsh', ['-c', 'qemu:///system', 'vol-delete', v, '--pool', 'default']);
  for (const n of found.networks) {
    await runQuiet('virsh', ['-c', 'qemu:///system', 'net-destroy', n]);
    await runQuiet('virsh', ['-c', 'qemu:///system', 'net-undefine', n]);
  }
  const leftovers = describe(await vagrantLeftovers(name, state.libvirtNetwork));
  await forgetForwardKeys(state.sshPorts);
  if (leftovers.length === 0) {
    releaseSubnetsOf(name);
    rmSync(clusterDir(name), { recursive: true, force: true });
  }
  return {
    existed: true,
    ...(destroyError && { destroyError }),
    stoppedAptProxy: stoppedProxy,
    swept: describe(found),
    leftovers,
  };
}

export function vagrantUpSummary(r: VagrantUpReport): string[] {
  return [
    `Vagrant cluster ${r.name}: ${r.nodes.length} nodes, box ${r.box}${r.boxBuilt ? ' (built now)' : ''}, provider ${r.provider}, libvirt driver ${r.driver}`,
    ...r.nodes.map((n) => `  ${n.name.padEnd(4)} ssh ${n.ssh.padEnd(16)} address ${n.address}`),
    `up in ${r.upSeconds.toFixed(1)} s; directory ${r.dir}; inventory ${r.inventoryPath}`,
  ];
}
