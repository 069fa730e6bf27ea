import { homedir } from 'node:os';
import { InputError } from '../util/errors.ts';

/**
 * OpenSSH client configuration (ssh_config(5)), enough of it for inventories: `Host` blocks with
 * patterns, keywords case-insensitive, `Key value` or `Key=value`, double-quoted values, comments.
 * Resolution follows OpenSSH: for each keyword the first value obtained from a matching block wins.
 * `Match` blocks are conditional on things we cannot evaluate, so their contents are skipped.
 */
export interface SshConfigBlock {
  patterns: string[];
  line: number;
  options: Map<string, { values: string[]; line: number }[]>;
}

export interface SshConfig {
  file: string;
  blocks: SshConfigBlock[];
}

/** Split one line into words, honouring double quotes (`IdentityFile "/path with space/key"`). */
function words(s: string, file: string, line: number): string[] {
  const out: string[] = [];
  let cur = '';
  let inQuote = false;
  let has = false;
  for (const ch of s) {
    if (ch === '"') {
      inQuote = !inQuote;
      has = true;
    } else if (!inQuote && /\s/.test(ch)) {
      if (has) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (inQuote) throw new InputError(file, line, null, 'unterminated double quote');
  if (has) out.push(cur);
  return out;
}

export function parseSshConfig(text: string, file = '<ssh_config>'): SshConfig {
  // Options before the first Host apply to every host: model them as `Host *`.
  const blocks: SshConfigBlock[] = [{ patterns: ['*'], line: 0, options: new Map() }];
  let current: SshConfigBlock | null = blocks[0] ?? null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const trimmed = (lines[i] ?? '').trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const m = /^([A-Za-z][A-Za-z0-9]*)\s*(?:=\s*|\s+)(.*)$/.exec(trimmed);
    if (!m) {
      if (/^[A-Za-z][A-Za-z0-9]*$/.test(trimmed))
        throw new InputError(file, lineNo, trimmed, 'keyword has no value');
      throw new InputError(file, lineNo, null, `cannot parse line: ${JSON.stringify(trimmed.slice(0, 60))}`);
    }
    const key = (m[1] ?? '').toLowerCase();
    const values = words(m[2] ?? '', file, lineNo);
    if (values.length === 0) throw new InputError(file, lineNo, m[1] ?? key, 'keyword has no value');
    if (key === 'host') {
      current = { patterns: values, line: lineNo, options: new Map() };
      blocks.push(current);
      continue;
    }
    if (key === 'match') {
      current = null; // conditions we cannot evaluate: skip this block's options
      continue;
    }
    if (!current) continue;
    const list = current.options.get(key) ?? [];
    list.push({ values, line: lineNo });
    current.options.set(key, list);
  }
  return { file, blocks };
}

function globMatch(glob: string, name: string): boolean {
  const re = new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  );
  return re.test(name);
}

export function hostPatternsMatch(patterns: readonly string[], alias: string): boolean {
  let matched = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), alias)) return false;
    } else if (globMatch(p, alias)) matched = true;
  }
  return matched;
}

export interface ResolvedSshHost {
  alias: string;
  hostName: string;
  user?: string;
  port?: number;
  identityFile?: string;
  proxyJump?: string;
  userKnownHostsFile?: string;
  strictHostKeyChecking?: string;
}

function expandTokens(v: string, alias: string, hostName: string, user: string | undefined): string {
  let out = v.replace(/%(.)/g, (_, c: string) => {
    switch (c) {
      case 'h':
        return hostName;
      case 'n':
        return alias;
      case 'd':
        return homedir();
      case 'r':
        return user ?? '';
      case '%':
        return '%';
      default:
        return `%${c}`;
    }
  });
  if (out === '~' || out.startsWith('~/')) out = homedir() + out.slice(1);
  return out;
}

/** What `ssh <alias>` would use, for the keywords faultline understands. */
export function resolveSshHost(config: SshConfig, alias: string): ResolvedSshHost {
  const first = new Map<string, { values: string[]; line: number }>();
  for (const b of config.blocks) {
    if (!hostPatternsMatch(b.patterns, alias)) continue;
    for (const [k, entries] of b.options) if (!first.has(k) && entries[0]) first.set(k, entries[0]);
  }
  const get = (k: string) => first.get(k)?.values[0];
  const hostName = expandTokens(get('hostname') ?? alias, alias, alias, undefined);
  const user = get('user');
  const resolved: ResolvedSshHost = { alias, hostName };
  if (user) resolved.user = user;
  const port = first.get('port');
  if (port) {
    const n = Number(port.values[0]);
    if (!Number.isInteger(n) || n < 1 || n > 65535)
      throw new InputError(config.file, port.line, 'Port', `invalid port ${JSON.stringify(port.values[0])}`);
    resolved.port = n;
  }
  const id = get('identityfile');
  if (id) resolved.identityFile = expandTokens(id, alias, hostName, user);
  const jump = get('proxyjump');
  if (jump && jump.toLowerCase() !== 'none') resolved.proxyJump = jump;
  const ukh = get('userknownhostsfile');
  if (ukh) resolved.userKnownHostsFile = expandTokens(ukh, alias, hostName, user);
  const strict = get('stricthostkeychecking');
  if (strict) resolved.strictHostKeyChecking = strict.toLowerCase();
  return resolved;
}

/** Concrete host names declared by the config (patterns without wildcards or negation). */
export function concreteHosts(config: SshConfig): string[] {
  const out: string[] = [];
  for (const b of config.blocks) {
    for (const p of b.patterns) if (!/[*?!]/.test(p) && !out.includes(p)) out.push(p);
  }
  return out;
}
