import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { NodeSpec } from '../../core/control/types.ts';
import { UserError } from '../../core/util/errors.ts';

/**
 * Nodes the way Jepsen's CLI names them: `--nodes n1,n2,…` or `--nodes-file FILE` (one host per line),
 * all logging in as `--username` (default root) with `--ssh-private-key`. Each node is named by its host,
 * as in Jepsen; `host:port` gives another SSH port.
 */
export interface NodeListFlags {
  nodes?: string;
  nodesFile?: string;
  username?: string;
  sshPrivateKey?: string;
}

const HOST = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const USER = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function nodeSpec(entry: string, where: string, user: string, key: string | undefined): NodeSpec {
  const m = /^([^:\s]+)(?::(\d+))?$/.exec(entry);
  const host = m?.[1] ?? '';
  const port = m?.[2] === undefined ? 22 : Number(m[2]);
  if (!m || !HOST.test(host) || port < 1 || port > 65535)
    throw new UserError(`${where}: "${entry}" is not a host or host:port`);
  return { name: host, host, port, user, ...(key && { identityFile: key }) };
}

function fileEntries(file: string): { entry: string; line: number }[] {
  if (!existsSync(file)) throw new UserError(`--nodes-file ${file}: no such file`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l, i) => ({ entry: l.replace(/#.*/, '').trim(), line: i + 1 }))
    .filter((e) => e.entry !== '');
}

/** The node specs the flags name, or undefined when neither `--nodes` nor `--nodes-file` is given. */
export function nodesFromFlags(f: NodeListFlags): NodeSpec[] | undefined {
  if (f.nodes === undefined && f.nodesFile === undefined) {
    if (f.username !== undefined || f.sshPrivateKey !== undefined)
      throw new UserError('--username and --ssh-private-key go with --nodes or --nodes-file');
    return undefined;
  }
  if (f.nodes !== undefined && f.nodesFile !== undefined)
    throw new UserError('--nodes and --nodes-file exclude each other');
  const user = f.username ?? 'root';
  if (!USER.test(user)) throw new UserError(`--username: "${user}" is not a login name`);
  let key: string | undefined;
  if (f.sshPrivateKey !== undefined) {
    const p = f.sshPrivateKey.startsWith('~/') ? homedir() + f.sshPrivateKey.slice(1) : f.sshPrivateKey;
    key = isAbsolute(p) ? p : resolve(p);
    if (!existsSync(key)) throw new UserError(`--ssh-private-key ${f.sshPrivateKey}: no such file`);
  }
  const specs =
    f.nodes !== undefined
      ? f.nodes
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((e) => nodeSpec(e, '--nodes', user, key))
      : fileEntries(f.nodesFile as string).map(({ entry, line }) =>
          nodeSpec(entry, `${f.nodesFile}:${line}`, user, key),
        );
  if (specs.length === 0)
    throw new UserError(`${f.nodes !== undefined ? '--nodes' : '--nodes-file'}: no nodes`);
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name)) throw new UserError(`node ${s.name} is listed twice`);
    seen.add(s.name);
  }
  return specs;
}
