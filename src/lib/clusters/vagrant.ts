import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { concreteHosts, parseSshConfig, resolveSshHost } from '../../core/control/ssh-config.ts';
import type { NodeSpec } from '../../core/control/types.ts';
import { writeFileAtomicSync } from '../../core/util/atomic-write.ts';
import { InputError, UserError } from '../../core/util/errors.ts';

/**
 * Nodes from `vagrant ssh-config`: one `Host <machine>` block per VM with HostName 127.0.0.1, a NAT
 * forwarded Port, User vagrant and a per-machine IdentityFile. SSH goes over the forward, but database
 * traffic and partitions must use the private network, so each node also gets its cluster `address`
 * (our Vagrantfile gives n<i> the address <privateBase>+i), with sshd on port 22 there.
 */
export interface VagrantImportOptions {
  /** First address of the private network minus one; n1 gets base+1. Default 192.168.56.100. */
  privateBase?: string;
}

/**
 * SSH handshakes with a Vagrant VM go through its port forward (under libvirt, an ssh -L process into
 * the VM) and, without KVM, an emulated CPU: measured at 10-13 s each on a loaded 2-core host, past the
 * 10 s default.
 */
const VAGRANT_CONNECT_TIMEOUT_S = 60;

function privateAddress(base: string, node: string): string | undefined {
  const m = /^n(\d+)$/.exec(node);
  const parts = base.split('.').map(Number);
  if (!m || parts.length !== 4 || parts.some((p) => !Number.isInteger(p))) return undefined;
  const last = (parts[3] ?? 0) + Number(m[1]);
  return last > 254 ? undefined : `${parts[0]}.${parts[1]}.${parts[2]}.${last}`;
}

export function parseVagrantSshConfig(
  text: string,
  file = '<vagrant ssh-config>',
  opts: VagrantImportOptions = {},
): NodeSpec[] {
  const config = parseSshConfig(text, file);
  const hosts = concreteHosts(config);
  if (hosts.length === 0)
    throw new InputError(file, null, null, 'no `Host` blocks: is this `vagrant ssh-config` output?');
  const base = opts.privateBase ?? '192.168.56.100';
  return hosts.map((alias) => {
    const r = resolveSshHost(config, alias);
    const block = config.blocks.find((b) => b.patterns.includes(alias));
    const line = block?.line ?? null;
    if (!r.port)
      throw new InputError(file, line, `Host ${alias}`, 'no Port (vagrant ssh-config always prints one)');
    if (!r.identityFile) throw new InputError(file, line, `Host ${alias}`, 'no IdentityFile');
    const spec: NodeSpec = {
      name: alias,
      host: r.hostName,
      port: r.port,
      user: r.user ?? 'vagrant',
      identityFile: r.identityFile,
      sharedKernelClock: false,
      connectTimeoutS: VAGRANT_CONNECT_TIMEOUT_S,
      labels: { provider: 'vagrant' },
    };
    const priv = privateAddress(base, alias);
    if (priv) {
      spec.address = priv;
      spec.clusterSshPort = 22;
    }
    if (r.proxyJump) spec.proxyJump = r.proxyJump;
    if (r.proxyCommand) spec.proxyCommand = r.proxyCommand;
    return spec;
  });
}

export function renderVagrantInventory(nodes: readonly NodeSpec[], source: string): string {
  const doc = {
    // Vagrant makes new host keys on every `vagrant destroy`; they are trusted on first use and recorded
    // in faultline's known_hosts. After a destroy, delete the old [127.0.0.1]:<port> lines there.
    hostKeyCheck: 'accept-new',
    nodes: Object.fromEntries(
      nodes.map((n) => [
        n.name,
        {
          host: n.host,
          port: n.port,
          ...(n.address && { address: n.address }),
          ...(n.clusterSshPort !== undefined && { clusterSshPort: n.clusterSshPort }),
          user: n.user,
          identityFile: n.identityFile,
          ...(n.proxyJump && { proxyJump: n.proxyJump }),
          ...(n.proxyCommand && { proxyCommand: n.proxyCommand }),
          sharedKernelClock: n.sharedKernelClock ?? false,
          ...(n.connectTimeoutS !== undefined && { connectTimeoutS: n.connectTimeoutS }),
          labels: n.labels ?? {},
        },
      ]),
    ),
  };
  return `# Written by \`faultline cluster vagrant\` from \`vagrant ssh-config\` in ${source}\n${stringify(doc)}`;
}

function vagrantSshConfig(dir: string, env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((res, rej) => {
    execFile(
      'vagrant',
      ['ssh-config'],
      { cwd: dir, timeout: 120_000, maxBuffer: 4 << 20, ...(env && { env }) },
      (err, stdout, stderr) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
          rej(
            new UserError(
              'vagrant not found: install Vagrant (https://developer.hashicorp.com/vagrant/install) and a provider such as VirtualBox or libvirt',
            ),
          );
        } else if (err) {
          rej(
            new UserError(
              `vagrant ssh-config in ${dir} failed: ${String(stderr).trim().split('\n').slice(0, 2).join(' ') || err.message} (are the VMs up? run: vagrant up)`,
            ),
          );
        } else res(String(stdout));
      },
    );
  });
}

/** Run `vagrant ssh-config` (or read its recorded output) and write an inventory; returns its path. */
export async function importVagrant(opts: {
  dir: string;
  out?: string;
  sshConfigFile?: string;
  /** Vagrant's environment (a Vagrantfile that reads its node count and box from it needs the same). */
  env?: NodeJS.ProcessEnv;
  /**
   * 127.0.0.1 SSH forward per machine. vagrant-libvirt's `vagrant ssh-config` names the management
   * network address even when it runs a forward (forward_ssh_port): the forward is used instead.
   */
  sshForwards?: Record<string, number>;
  privateBase?: string;
}): Promise<{ inventoryPath: string; nodes: NodeSpec[] }> {
  const dir = resolve(opts.dir);
  let text: string;
  let source: string;
  if (opts.sshConfigFile) {
    if (!existsSync(opts.sshConfigFile)) throw new UserError(`${opts.sshConfigFile}: no such file`);
    text = readFileSync(opts.sshConfigFile, 'utf8');
    source = opts.sshConfigFile;
  } else {
    if (!existsSync(join(dir, 'Vagrantfile'))) throw new UserError(`${dir}: no Vagrantfile here (use --dir)`);
    text = await vagrantSshConfig(dir, opts.env);
    source = dir;
  }
  const nodes = parseVagrantSshConfig(
    text,
    source,
    opts.privateBase ? { privateBase: opts.privateBase } : {},
  );
  for (const n of nodes) {
    const port = opts.sshForwards?.[n.name];
    if (port !== undefined) {
      n.host = '127.0.0.1';
      n.port = port;
    }
  }
  const inventoryPath = resolve(opts.out ?? join(dir, 'inventory.yaml'));
  writeFileAtomicSync(inventoryPath, renderVagrantInventory(nodes, source));
  return { inventoryPath, nodes };
}
