import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir, hostname, userInfo } from 'node:os';
import { InputError } from '../util/errors.ts';
import { refuseMatchExec } from './command-fields.ts';
import type { SshHop } from './types.ts';

/**
 * OpenSSH client configuration (ssh_config(5)) for inventories. Two resolvers give the same answer:
 *
 * - **OpenSSH's own** (used whenever an `ssh` client is installed): `ssh -G -F FILE ALIAS` prints the
 *   settings OpenSSH would use, after `Include`, `Match`, canonicalisation, token expansion of HostName
 *   and its built-in defaults. A value equal to OpenSSH's built-in default (what `ssh -G -F /dev/null
 *   ALIAS` prints) counts as not set by the file, so the inventory's `defaults` still apply to it.
 * - **A hand parser**, the documented fallback when there is no `ssh` binary (or `FAULTLINE_SSH=none`):
 *   `Host` blocks with patterns, keywords case-insensitive, `Key value` or `Key=value`, double quotes,
 *   comments; for each keyword the first value obtained from a matching block wins. It refuses (exit 254,
 *   naming file:line) what it cannot honour: `Include` and `Match` anywhere in the file, and
 *   `CanonicalizeHostname` for the host resolved.
 *
 * Either way, what faultline's SSH client cannot do is refused rather than ignored: `BindAddress`,
 * `BindInterface`, `ProxyUseFdpass yes`. `ProxyJump` (chains of any length) and `ProxyCommand` are
 * honoured (ssh-connection.ts). faultline keeps its own host-key policy: `StrictHostKeyChecking` and
 * `UserKnownHostsFile` are reported but not applied (the inventory's `hostKeyCheck` / `knownHosts` are).
 */
export interface SshConfigBlock {
  patterns: string[];
  line: number;
  options: Map<string, { values: string[]; line: number; raw: string }[]>;
}

export interface SshConfig {
  file: string;
  blocks: SshConfigBlock[];
  /** Directives the hand parser cannot evaluate (`Include`, `Match`), where they are. */
  unsupported: { keyword: string; line: number }[];
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
  const unsupported: SshConfig['unsupported'] = [];
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
    const raw = (m[2] ?? '').trim();
    const values = words(raw, file, lineNo);
    if (values.length === 0) throw new InputError(file, lineNo, m[1] ?? key, 'keyword has no value');
    if (key === 'host') {
      current = { patterns: values, line: lineNo, options: new Map() };
      blocks.push(current);
      continue;
    }
    if (key === 'match' || key === 'include') {
      unsupported.push({ keyword: m[1] ?? key, line: lineNo });
      // A Match block's conditions cannot be evaluated here: none of its options are kept.
      if (key === 'match') current = null;
      continue;
    }
    if (!current) continue;
    const list = current.options.get(key) ?? [];
    list.push({ values, line: lineNo, raw });
    current.options.set(key, list);
  }
  return { file, blocks, unsupported };
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

/** What `ssh ALIAS` would use. Optional fields are absent when the configuration does not set them. */
export interface ResolvedSshHost {
  alias: string;
  hostName: string;
  user?: string;
  port?: number;
  identityFile?: string;
  /** OpenSSH syntax: `[user@]host[:port]`, comma-separated. */
  proxyJump?: string;
  /** As written, with `%n` expanded; `%h %p %r %%` are expanded when it is started. */
  proxyCommand?: string;
  userKnownHostsFile?: string;
  strictHostKeyChecking?: string;
}

// ---- tokens ----

/** Expands `%x` tokens from `values`; `keep` tokens stay as they are; anything else is an error. */
function expandPercent(
  v: string,
  values: Record<string, string>,
  fail: (token: string) => never,
  keep = '',
): string {
  return v.replace(/%(.)/g, (whole, c: string) => {
    if (c === '%') return keep.includes('%') ? '%%' : '%';
    if (keep.includes(c)) return whole;
    const x = values[c];
    if (x === undefined) fail(`%${c}`);
    return x;
  });
}

function tildeExpand(p: string): string {
  return p === '~' || p.startsWith('~/') ? homedir() + p.slice(1) : p;
}

function tokenValues(alias: string, hostName: string, user: string, port: number): Record<string, string> {
  const local = hostname();
  const me = userInfo();
  return {
    h: hostName,
    n: alias,
    p: String(port),
    r: user,
    d: homedir(),
    u: me.username,
    i: String(me.uid),
    L: local.split('.')[0] ?? local,
    l: local,
  };
}

// ---- the hand parser's resolution ----

const NOT_HONOURED: Record<string, (value: string) => boolean> = {
  bindaddress: () => true,
  bindinterface: () => true,
  proxyusefdpass: (v) => /^(yes|true)$/i.test(v),
};

/** Resolution by the hand parser (the fallback): see the module comment for what it refuses. */
export function resolveSshHost(config: SshConfig, alias: string): ResolvedSshHost {
  const first = config.unsupported[0];
  if (first) {
    throw new InputError(
      config.file,
      first.line,
      first.keyword,
      "cannot be honoured without OpenSSH's own resolution (ssh -G): install an ssh client (openssh-client) or remove it",
    );
  }
  const firsts = new Map<string, { values: string[]; line: number; raw: string }>();
  for (const b of config.blocks) {
    if (!hostPatternsMatch(b.patterns, alias)) continue;
    for (const [k, entries] of b.options) if (!firsts.has(k) && entries[0]) firsts.set(k, entries[0]);
  }
  const get = (k: string) => firsts.get(k)?.values[0];
  const refuse = (k: string, why: string): never => {
    const at = firsts.get(k);
    throw new InputError(config.file, at?.line ?? null, `Host ${alias}: ${k}`, why);
  };
  const canon = get('canonicalizehostname');
  if (canon && !/^(no|false)$/i.test(canon))
    refuse('canonicalizehostname', "cannot be honoured without OpenSSH's own resolution (ssh -G)");
  for (const [k, applies] of Object.entries(NOT_HONOURED)) {
    const v = get(k);
    if (v !== undefined && applies(v)) refuse(k, "is not supported by faultline's SSH client");
  }
  const tokenError = (k: string) => (token: string) =>
    refuse(k, `token ${token} is not supported without OpenSSH's own resolution (ssh -G)`);
  const hostName = expandPercent(get('hostname') ?? alias, { h: alias }, tokenError('hostname'));
  const resolved: ResolvedSshHost = { alias, hostName };
  const user = get('user');
  if (user) resolved.user = user;
  const port = firsts.get('port');
  if (port) {
    const n = Number(port.values[0]);
    if (!Number.isInteger(n) || n < 1 || n > 65535)
      throw new InputError(config.file, port.line, 'Port', `invalid port ${JSON.stringify(port.values[0])}`);
    resolved.port = n;
  }
  const tokens = tokenValues(alias, hostName, user ?? userInfo().username, resolved.port ?? 22);
  const id = get('identityfile');
  if (id) resolved.identityFile = tildeExpand(expandPercent(id, tokens, tokenError('identityfile')));
  const jump = get('proxyjump');
  const command = firsts.get('proxycommand')?.raw;
  // Whichever of ProxyJump and ProxyCommand comes first in the file wins, as in OpenSSH.
  const jumpFirst =
    (firsts.get('proxyjump')?.line ?? Infinity) < (firsts.get('proxycommand')?.line ?? Infinity);
  if (jump && jump.toLowerCase() !== 'none' && (jumpFirst || !command)) resolved.proxyJump = jump;
  else if (command && command.toLowerCase() !== 'none')
    resolved.proxyCommand = expandPercent(command, { n: alias }, tokenError('proxycommand'), 'hpr%');
  const ukh = get('userknownhostsfile');
  if (ukh)
    resolved.userKnownHostsFile = tildeExpand(expandPercent(ukh, tokens, tokenError('userknownhostsfile')));
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

// ---- OpenSSH's resolution ----

/** The ssh client to ask (`FAULTLINE_SSH`, default `ssh` on PATH), or null when there is none. */
export function openSshClient(): string | null {
  const chosen = process.env.FAULTLINE_SSH ?? 'ssh';
  if (chosen === '' || chosen === 'none') return null;
  const probe = spawnSync(chosen, ['-V'], { stdio: 'ignore', timeout: 10_000 });
  return probe.error ? null : chosen;
}

type SshG = Map<string, string[]>;

function sshG(ssh: string, file: string, alias: string): SshG {
  if (alias.startsWith('-') || alias.length === 0)
    throw new InputError(file, null, null, `invalid host alias ${JSON.stringify(alias)}`);
  const r = spawnSync(ssh, ['-G', '-F', file, alias], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 20_000,
  });
  if (r.error) throw new InputError(file, null, null, `${ssh} -G ${alias}: ${r.error.message}`);
  if (r.status !== 0) {
    const lines = (r.stderr ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !/^Pseudo-terminal will not be allocated/.test(l));
    for (const l of lines) {
      const m = /^(.+?): line (\d+): (.+)$/.exec(l);
      if (m) throw new InputError(m[1] as string, Number(m[2]), null, m[3] as string);
    }
    throw new InputError(file, null, null, `ssh -G ${alias} failed: ${lines.at(-1) ?? `exit ${r.status}`}`);
  }
  const out: SshG = new Map();
  for (const line of (r.stdout ?? '').split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const k = line.slice(0, sp).toLowerCase();
    const list = out.get(k) ?? [];
    list.push(line.slice(sp + 1));
    out.set(k, list);
  }
  return out;
}

/** Resolution by OpenSSH (`ssh -G`), reduced to what the file itself sets (see the module comment). */
export function resolveWithOpenSsh(ssh: string, file: string, alias: string): ResolvedSshHost {
  const got = sshG(ssh, file, alias);
  const base = sshG(ssh, '/dev/null', alias);
  const one = (m: SshG, k: string) => m.get(k)?.[0];
  const differs = (k: string) => JSON.stringify(got.get(k) ?? []) !== JSON.stringify(base.get(k) ?? []);
  const refuse = (k: string, why: string): never => {
    throw new InputError(file, null, `Host ${alias}: ${k}`, why);
  };
  for (const [k, applies] of Object.entries(NOT_HONOURED)) {
    const v = one(got, k);
    if (v !== undefined && applies(v) && differs(k)) refuse(k, "is not supported by faultline's SSH client");
  }
  const hostName = one(got, 'hostname') ?? alias;
  const resolved: ResolvedSshHost = { alias, hostName };
  const effectiveUser = one(got, 'user') ?? userInfo().username;
  const port = Number(one(got, 'port') ?? 22);
  const tokenError = (k: string) => (token: string) => refuse(k, `token ${token} is not supported`);
  const tokens = tokenValues(alias, hostName, effectiveUser, port);
  const user = expandPercent(effectiveUser, tokens, tokenError('user'));
  tokens.r = user;
  if (differs('user')) resolved.user = user;
  if (differs('port')) resolved.port = port;
  if (differs('identityfile')) {
    const ids = (got.get('identityfile') ?? []).map((p) =>
      tildeExpand(expandPercent(p, tokens, tokenError('identityfile'))),
    );
    // OpenSSH tries them in order and skips missing files; faultline's client takes one key.
    const id = ids.find((p) => existsSync(p)) ?? ids[0];
    if (id) resolved.identityFile = id;
  }
  const jump = one(got, 'proxyjump');
  if (jump && jump.toLowerCase() !== 'none') resolved.proxyJump = jump;
  const command = one(got, 'proxycommand');
  if (!resolved.proxyJump && command && command.toLowerCase() !== 'none')
    resolved.proxyCommand = expandPercent(command, { n: alias }, tokenError('proxycommand'), 'hpr%');
  if (differs('userknownhostsfile')) {
    const ukh = one(got, 'userknownhostsfile');
    if (ukh) resolved.userKnownHostsFile = ukh;
  }
  if (differs('stricthostkeychecking')) {
    // ssh -G prints yes/no as true/false.
    const strict = one(got, 'stricthostkeychecking')?.toLowerCase();
    if (strict)
      resolved.strictHostKeyChecking = strict === 'false' ? 'no' : strict === 'true' ? 'yes' : strict;
  }
  return resolved;
}

// ---- one interface over both ----

export interface SshConfigResolver {
  file: string;
  /** 'openssh' when `ssh -G` answers, 'parser' for the fallback. */
  via: 'openssh' | 'parser';
  resolve(alias: string): ResolvedSshHost;
}

/** A resolver for one ssh_config file: OpenSSH's when an ssh client is installed, else the parser. */
export function loadSshConfig(file: string, opts: { ssh?: string | null } = {}): SshConfigResolver {
  const ssh = opts.ssh === undefined ? openSshClient() : opts.ssh;
  const cache = new Map<string, ResolvedSshHost>();
  const memo = (f: (alias: string) => ResolvedSshHost) => (alias: string) => {
    let r = cache.get(alias);
    if (!r) {
      r = f(alias);
      cache.set(alias, r);
    }
    return r;
  };
  if (ssh) {
    // `ssh -G` runs a `Match exec` command while resolving: refused before ssh ever reads the file.
    refuseMatchExec(file);
    return { file, via: 'openssh', resolve: memo((alias) => resolveWithOpenSsh(ssh, file, alias)) };
  }
  const config = parseSshConfig(readFileSync(file, 'utf8'), file);
  return { file, via: 'parser', resolve: memo((alias) => resolveSshHost(config, alias)) };
}

// ---- ProxyJump chains ----

export interface JumpSpec {
  user?: string;
  host: string;
  port?: number;
}

/** Parses OpenSSH's ProxyJump: `[user@]host[:port]` or `ssh://[user@]host[:port]`, comma-separated. */
export function parseJumpChain(text: string): JumpSpec[] {
  return text.split(',').map((part) => {
    let s = part.trim().replace(/^ssh:\/\//, '');
    if (s.length === 0) throw new Error(`empty hop in ProxyJump ${JSON.stringify(text)}`);
    const out: JumpSpec = { host: s };
    const at = s.lastIndexOf('@');
    if (at >= 0) {
      out.user = s.slice(0, at);
      s = s.slice(at + 1);
    }
    const bracket = /^\[(.+)\](?::(\d+))?$/.exec(s);
    const plain = /^([^:]+):(\d+)$/.exec(s);
    if (bracket) {
      out.host = bracket[1] as string;
      if (bracket[2]) out.port = Number(bracket[2]);
    } else if (plain) {
      out.host = plain[1] as string;
      out.port = Number(plain[2]);
    } else out.host = s;
    if (out.port !== undefined && (!Number.isInteger(out.port) || out.port < 1 || out.port > 65535))
      throw new Error(`invalid port in ProxyJump ${JSON.stringify(text)}`);
    if (!out.host) throw new Error(`no host in ProxyJump ${JSON.stringify(text)}`);
    return out;
  });
}

/**
 * The hops of a ProxyJump chain, resolved. Each hop's host is an ssh_config alias when a resolver is
 * given (its HostName, User, Port, IdentityFile apply; the chain's own user/port win). As in OpenSSH, the
 * first hop is reached with its own ProxyJump or ProxyCommand, if it has one; later hops are reached
 * through the chain. A hop with no user anywhere logs in as `fallbackUser`.
 */
export function jumpHostsFor(
  chain: string,
  resolver: SshConfigResolver | undefined,
  fallbackUser: string,
  depth = 0,
): SshHop[] {
  if (depth > 8) throw new InputError(resolver?.file ?? '<ProxyJump>', null, 'ProxyJump', 'jump hosts loop');
  const hops: SshHop[] = [];
  parseJumpChain(chain).forEach((j, i) => {
    const r = resolver?.resolve(j.host);
    const hop: SshHop = {
      alias: j.host,
      host: r?.hostName ?? j.host,
      port: j.port ?? r?.port ?? 22,
      user: j.user ?? r?.user ?? fallbackUser,
    };
    if (r?.identityFile) hop.identityFile = r.identityFile;
    if (i === 0 && r?.proxyJump) hops.push(...jumpHostsFor(r.proxyJump, resolver, fallbackUser, depth + 1));
    else if (i === 0 && r?.proxyCommand) hop.proxyCommand = r.proxyCommand;
    hops.push(hop);
  });
  return hops;
}
