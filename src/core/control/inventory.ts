import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { InputError, UserError } from '../util/errors.ts';
import { regularInput } from '../util/input-file.ts';
import { isPathName } from '../util/paths.ts';
import { parseYamlDocument, yamlIssueError, yamlKeyLine, yamlLine } from '../util/yaml.ts';
import { refuseCommandField } from './command-fields.ts';
import { packageFamilySchema } from './packages.ts';
import { jumpHostsFor, loadSshConfig, type SshConfigResolver } from './ssh-config.ts';
import type { HostKeyPolicy } from './ssh-connection.ts';
import type { NodeSpec } from './types.ts';

/**
 * The nodes file. Example:
 *
 *   knownHosts: ./known_hosts          # optional, extra known_hosts files (string or list)
 *   hostKeyCheck: strict               # strict | accept-new | insecure (CLI flags override)
 *   sshConfig: ~/.ssh/config           # optional: resolve host/user/port/key/ProxyJump/ProxyCommand
 *                                      # through it, with OpenSSH's own resolution (ssh -G) when installed
 *   defaults: { user: admin, identityFile: ~/.ssh/id_ed25519, sudoPasswordEnv: NODE_SUDO_PW }
 *   nodes:
 *     n1: 10.0.0.11                    # just the host
 *     n2: { host: 10.0.0.12, port: 2222 }
 *     n3: { host: 127.0.0.1, port: 2201, address: 192.168.56.103 }   # SSH through a forward; peers,
 *                                      # clients, partitions and probes use `address`
 *
 * Secrets are only ever *names of environment variables*; a literal password is rejected.
 */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const pathNameSchema = (what: string) =>
  z
    .string()
    .refine(
      isPathName,
      `${what} cannot be used in a path: use letters, digits, _ . - (not starting with . or -, no ..)`,
    );
const ADDRESS = /^(?:[A-Za-z0-9][A-Za-z0-9.-]*|[0-9A-Fa-f:.]+)$/;

/** An SSH host or ssh_config alias: no shell metacharacters, no leading `-` (it is also an argv word). */
const HOST = /^[A-Za-z0-9_.:%[\]][A-Za-z0-9_.:%[\]@-]*$/;

const NodeFields = z
  .object({
    host: z.string().regex(HOST, 'must be a host name, an IP address or an ssh_config alias').optional(),
    port: z.number().int().min(1).max(65535).optional(),
    address: z.string().regex(ADDRESS, 'must be an IP address or host name').optional(),
    clusterSshPort: z.number().int().min(1).max(65535).optional(),
    user: z.string().min(1).optional(),
    identityFile: z.string().min(1).optional(),
    passwordEnv: z.string().regex(ENV_NAME, 'must be an environment variable name').optional(),
    sudoPasswordEnv: z.string().regex(ENV_NAME, 'must be an environment variable name').optional(),
    proxyJump: z.string().min(1).optional(),
    proxyCommand: z.string().min(1).optional(),
    sharedKernelClock: z.boolean().optional(),
    /** SSH handshake timeout per attempt, as OpenSSH's ConnectTimeout (default 10 s). */
    connectTimeoutS: z.number().int().min(1).max(600).optional(),
    /** apt, dnf, yum, apk, zypper, or none (pre-provisioned); absent: detected from /etc/os-release. */
    packageFamily: packageFamilySchema.optional(),
    labels: z
      .record(z.string(), z.string())
      .and(z.object({ cluster: pathNameSchema('cluster label').optional() }))
      .optional(),
  })
  .strict();

const InventorySchema = z
  .object({
    knownHosts: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
    hostKeyCheck: z.enum(['strict', 'accept-new', 'insecure']).optional(),
    sshConfig: z.string().min(1).optional(),
    defaults: NodeFields.optional(),
    // A bare string is the host; an object is checked field by field (errors name the field, not the union).
    nodes: z.record(
      pathNameSchema('node name'),
      z.preprocess((v) => (typeof v === 'string' ? { host: v } : v), NodeFields),
    ),
  })
  .strict();

export interface Inventory {
  path: string;
  nodes: NodeSpec[];
  /** known_hosts files named by the inventory (absolute), checked in addition to the defaults. */
  knownHostsFiles: string[];
  hostKeyCheck?: HostKeyPolicy;
}

const SECRET_KEYS = new Set(['password', 'sudoPassword', 'passphrase', 'privateKey']);

function expandPath(p: string, baseDir: string): string {
  const home = p === '~' || p.startsWith('~/') ? homedir() + p.slice(1) : p;
  return isAbsolute(home) ? home : resolve(baseDir, home);
}

type NodeFieldsValue = z.infer<typeof NodeFields>;

/**
 * How a node is reached, OpenSSH's way: the node's own ProxyJump or ProxyCommand, else the ssh_config's,
 * else the inventory defaults'. One level never gives both.
 */
function routeFor(
  own: NodeFieldsValue,
  viaConfig: { proxyJump?: string; proxyCommand?: string } | undefined,
  defaults: NodeFieldsValue,
): { proxyJump?: string; proxyCommand?: string; from?: 'node' | 'sshConfig' | 'defaults' } {
  for (const [from, level] of [
    ['node', own],
    ['sshConfig', viaConfig ?? {}],
    ['defaults', defaults],
  ] as const) {
    if (level.proxyJump) return { proxyJump: level.proxyJump, from };
    if (level.proxyCommand) return { proxyCommand: level.proxyCommand, from };
  }
  return {};
}

export function parseInventory(text: string, file: string): Inventory {
  const yaml = parseYamlDocument(text, file);
  const raw = yaml.value;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new InputError(file, 1, null, 'expected a mapping with a `nodes` section');
  }
  // A literal secret gets its own message, before zod's generic "unrecognized key".
  const sections: [PropertyKey[], unknown][] = [[['defaults'], (raw as Record<string, unknown>).defaults]];
  const nodesRaw = (raw as Record<string, unknown>).nodes;
  if (nodesRaw && typeof nodesRaw === 'object') {
    for (const [k, v] of Object.entries(nodesRaw)) sections.push([['nodes', k], v]);
  }
  for (const [path, v] of sections) {
    if (!v || typeof v !== 'object') continue;
    for (const key of Object.keys(v)) {
      if (SECRET_KEYS.has(key)) {
        throw new InputError(
          file,
          yamlKeyLine(yaml, path, key),
          [...path, key].join('.'),
          `secrets may not be written in the inventory; name an environment variable instead (${key === 'sudoPassword' ? 'sudoPasswordEnv' : key === 'password' ? 'passwordEnv' : 'identityFile'})`,
        );
      }
    }
  }
  const parsed = InventorySchema.safeParse(raw);
  if (!parsed.success) throw yamlIssueError(file, yaml, parsed.error.issues[0]);
  const inv = parsed.data;
  const baseDir = dirname(resolve(file));
  if (Object.keys(inv.nodes).length === 0)
    throw new InputError(file, yamlLine(yaml, ['nodes']), 'nodes', 'no nodes listed');

  let sshConfig: SshConfigResolver | undefined;
  if (inv.sshConfig) {
    const p = expandPath(inv.sshConfig, baseDir);
    if (!existsSync(p))
      throw new InputError(file, yamlLine(yaml, ['sshConfig']), 'sshConfig', `${p} does not exist`);
    sshConfig = loadSshConfig(p);
  }

  const defaults = inv.defaults ?? {};
  for (const [path, level] of [
    [['defaults'], defaults],
    ...Object.entries(inv.nodes).map(([n, v]) => [['nodes', n], typeof v === 'string' ? {} : v] as const),
  ] as const) {
    if (level.proxyJump && level.proxyCommand)
      throw new InputError(
        file,
        yamlKeyLine(yaml, path, 'proxyCommand'),
        [...path, 'proxyCommand'].join('.'),
        'give proxyJump or proxyCommand, not both',
      );
  }
  if (defaults.address)
    throw new InputError(
      file,
      yamlKeyLine(yaml, ['defaults'], 'address'),
      'defaults.address',
      'a cluster address belongs to one node; give it under nodes.<name>.address',
    );
  const nodes: NodeSpec[] = Object.entries(inv.nodes).map(([name, value]) => {
    const own = typeof value === 'string' ? { host: value } : value;
    const merged = { ...defaults, ...own, labels: { ...(defaults.labels ?? {}), ...(own.labels ?? {}) } };
    const alias = merged.host ?? name;
    const viaConfig = sshConfig?.resolve(alias);
    const spec: NodeSpec = {
      name,
      host: viaConfig?.hostName ?? alias,
      port: own.port ?? viaConfig?.port ?? defaults.port ?? 22,
      user: own.user ?? viaConfig?.user ?? defaults.user ?? 'root',
    };
    const identity = own.identityFile ?? viaConfig?.identityFile ?? defaults.identityFile;
    if (identity) spec.identityFile = expandPath(identity, baseDir);
    if (own.address) spec.address = own.address;
    if (own.clusterSshPort !== undefined) spec.clusterSshPort = own.clusterSshPort;
    if (merged.passwordEnv) spec.passwordEnv = merged.passwordEnv;
    if (merged.sudoPasswordEnv) spec.sudoPasswordEnv = merged.sudoPasswordEnv;
    const route = routeFor(own, viaConfig, defaults);
    if (route.proxyJump) {
      spec.proxyJump = route.proxyJump;
      try {
        spec.jumpHosts = jumpHostsFor(route.proxyJump, sshConfig, spec.user);
      } catch (err) {
        if (err instanceof InputError) throw err;
        const reason = (err as Error).message;
        if (route.from === 'sshConfig' && sshConfig)
          throw new InputError(sshConfig.file, null, `Host ${alias}: ProxyJump`, reason);
        const where = route.from === 'node' ? ['nodes', name, 'proxyJump'] : ['defaults', 'proxyJump'];
        throw new InputError(file, yamlLine(yaml, where), where.join('.'), reason);
      }
    } else if (route.proxyCommand) {
      if (route.from === 'sshConfig' && sshConfig)
        refuseCommandField(sshConfig.file, null, `Host ${alias}: ProxyCommand`);
      else {
        const where = route.from === 'node' ? ['nodes', name] : ['defaults'];
        refuseCommandField(
          file,
          yamlKeyLine(yaml, where, 'proxyCommand'),
          [...where, 'proxyCommand'].join('.'),
        );
      }
      spec.proxyCommand = route.proxyCommand;
    }
    const hop = spec.jumpHosts?.find((h) => h.proxyCommand);
    if (hop && sshConfig) refuseCommandField(sshConfig.file, null, `Host ${hop.alias}: ProxyCommand`);
    if (merged.sharedKernelClock !== undefined) spec.sharedKernelClock = merged.sharedKernelClock;
    if (merged.connectTimeoutS !== undefined) spec.connectTimeoutS = merged.connectTimeoutS;
    if (merged.packageFamily) spec.packageFamily = merged.packageFamily;
    if (Object.keys(merged.labels).length > 0) spec.labels = merged.labels;
    return spec;
  });
  const knownHosts =
    inv.knownHosts === undefined ? [] : Array.isArray(inv.knownHosts) ? inv.knownHosts : [inv.knownHosts];
  const result: Inventory = {
    path: resolve(file),
    nodes,
    knownHostsFiles: knownHosts.map((k) => expandPath(k, baseDir)),
  };
  if (inv.hostKeyCheck) result.hostKeyCheck = inv.hostKeyCheck;
  return result;
}

export function loadInventory(path: string): Inventory {
  regularInput(path, 'inventory');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`${path}: cannot read inventory (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseInventory(text, path);
}
