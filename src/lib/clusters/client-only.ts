import { readFileSync } from 'node:fs';
import net from 'node:net';
import { z } from 'zod';
import { formatEndpoint } from '../../../nemeses/proxy/endpoint.ts';
import type { ExecResult, NodeResult, NodeSpec, Remote } from '../../core/control/types.ts';
import { errorMessage, UserError } from '../../core/util/errors.ts';
import { regularInput } from '../../core/util/input-file.ts';
import { parseYamlDocument, yamlIssueError } from '../../core/util/yaml.ts';

/**
 * A client-only run (`--no-ssh`): the database is an endpoint per node (`--nodes host:port,…`), started
 * and kept by someone else (a managed service, a shared lab). faultline opens no SSH connection, installs
 * and starts nothing, and runs no command on the nodes: every attempt is refused with the reason, so a
 * node-side fault, a log download or an install says it cannot run here instead of being skipped.
 */
export interface ClientEndpoint {
  host: string;
  port: number;
}

const ENTRY = /^(?<host>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9][A-Za-z0-9_.-]*):(?<port>\d{1,5})$/;

/** `host:port,host:port` → nodes n1, n2 … with their endpoints. */
export function endpointsFromList(list: string, where: string): Record<string, ClientEndpoint> {
  const entries = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new UserError(`${where}: name the database's endpoints (host:port,…)`);
  return Object.fromEntries(
    entries.map((e, i) => {
      const m = ENTRY.exec(e);
      const port = Number(m?.groups?.port);
      if (!m?.groups || !(port >= 1 && port <= 65_535))
        throw new UserError(
          `${where}: "${e}" is not host:port (a client-only run needs the database's own port)`,
        );
      return [`n${i + 1}`, { host: (m.groups.host as string).replace(/^\[|\]$/g, ''), port }];
    }),
  );
}

/**
 * A client-only inventory (`ssh: false`): node name → the database's endpoint, as a string (`host:port`)
 * or `{ endpoint: host:port }`. Nothing else: no user, key or SSH port, since nothing logs in.
 */
const ClientOnlyInventorySchema = z.strictObject({
  ssh: z.literal(false),
  nodes: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, 'a node name: letters, digits, . _ -'),
      z.union([z.string(), z.strictObject({ endpoint: z.string() })]),
    )
    .refine((n) => Object.keys(n).length > 0, 'at least one node'),
});

/** Does this inventory text say `ssh: false`? (Read before the SSH inventory schema sees it.) */
export function clientOnlyInventory(path: string): Record<string, ClientEndpoint> | null {
  regularInput(path, 'inventory');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`${path}: cannot read inventory (${errorMessage(err)})`);
  }
  const yaml = parseYamlDocument(text, path);
  const value = yaml.value;
  if (typeof value !== 'object' || value === null || (value as { ssh?: unknown }).ssh !== false) return null;
  const r = ClientOnlyInventorySchema.safeParse(value);
  if (!r.success)
    throw yamlIssueError(
      path,
      yaml,
      r.error.issues[0],
      " (an inventory with ssh: false names each node's endpoint, host:port)",
    );
  return Object.fromEntries(
    Object.entries(r.data.nodes).map(([name, v]) => {
      const e = typeof v === 'string' ? v : v.endpoint;
      const one = endpointsFromList(e, `${path}: nodes.${name}`).n1 as ClientEndpoint;
      return [name, one];
    }),
  );
}

export class NoSshError extends UserError {
  override readonly name = 'NoSshError';
}

const refuse = (node: string, what: string): never => {
  throw new NoSshError(
    `${node}: a client-only run has no SSH: cannot ${what} (only proxy faults and the clients run)`,
  );
};

export class ClientOnlyRemote implements Remote {
  readonly nodes: readonly NodeSpec[];
  constructor(readonly endpoints: Readonly<Record<string, ClientEndpoint>>) {
    this.nodes = Object.entries(endpoints).map(([name, e]) => ({
      name,
      host: e.host,
      address: e.host,
      port: 0,
      user: '',
    }));
  }
  node(name: string): NodeSpec {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new UserError(`no node ${name} in this client-only run`);
    return n;
  }
  async exec(node: string, command: string): Promise<ExecResult> {
    return refuse(node, `run \`${command.split('\n')[0]?.slice(0, 60)}\``);
  }
  async upload(node: string, _localPath: string, remotePath: string): Promise<void> {
    refuse(node, `upload ${remotePath}`);
  }
  async download(node: string, remotePath: string, _localPath: string): Promise<void> {
    refuse(node, `download ${remotePath}`);
  }
  async onNodes<T>(nodes: readonly string[], fn: (node: string) => Promise<T>): Promise<NodeResult<T>[]> {
    return Promise.all(
      nodes.map(async (node) => {
        try {
          return { node, ok: true, value: await fn(node) } as NodeResult<T>;
        } catch (error) {
          return { node, ok: false, error } as NodeResult<T>;
        }
      }),
    );
  }
  async close(): Promise<void> {}
}

/** Does a TCP connect to the endpoint succeed within `timeoutMs`? The reason when not. */
export function reachEndpoint(e: ClientEndpoint, timeoutMs = 2000): Promise<string | null> {
  return new Promise((resolve) => {
    const s = net.connect({ host: e.host, port: e.port });
    const done = (why: string | null) => {
      clearTimeout(timer);
      s.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer in ${timeoutMs} ms`), timeoutMs);
    s.once('connect', () => done(null));
    s.once('error', (err) => done(err.message));
  });
}

export interface EndpointCheck {
  node: string;
  endpoint: string;
  reachable: boolean;
  ms: number;
  error?: string;
}

/** `doctor --no-ssh`: a TCP connect to every endpoint (in parallel), timed. */
export async function checkEndpoints(
  endpoints: Readonly<Record<string, ClientEndpoint>>,
  timeoutMs = 3000,
): Promise<EndpointCheck[]> {
  return Promise.all(
    Object.entries(endpoints).map(async ([node, e]) => {
      const t0 = performance.now();
      const why = await reachEndpoint(e, timeoutMs);
      return {
        node,
        endpoint: formatEndpoint(e),
        reachable: why === null,
        ms: Math.round(performance.now() - t0),
        ...(why !== null && { error: why }),
      };
    }),
  );
}

export function renderEndpointTable(rows: readonly EndpointCheck[]): string {
  const lines = rows.map(
    (r) =>
      `${r.node.padEnd(5)} ${r.endpoint.padEnd(24)} ${r.reachable ? `reachable (TCP connect in ${r.ms} ms)` : `UNREACHABLE: ${r.error}`}`,
  );
  const bad = rows.filter((r) => !r.reachable).length;
  lines.push(
    bad === 0
      ? `client-only: ${rows.length} endpoint(s) reachable; no SSH checked (proxy faults only)`
      : `client-only: ${bad} of ${rows.length} endpoint(s) unreachable`,
  );
  return `${lines.join('\n')}\n`;
}
