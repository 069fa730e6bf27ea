import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * OpenSSH known_hosts: `[@marker] patterns keytype base64key [comment]`. Patterns are comma-separated
 * host names or `[host]:port`, may use `*`/`?` wildcards and `!` negation, or be one hashed entry
 * `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`. Lines are kept as parsed entries; a file that does not
 * exist is an empty set (strict checking then rejects every host, which is the point).
 */
export interface KnownHostEntry {
  marker: 'cert-authority' | 'revoked' | null;
  patterns: string;
  keyType: string;
  key: Buffer;
  file: string;
  line: number;
}

export function parseKnownHosts(text: string, file = '<known_hosts>'): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? '').trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const fields = raw.split(/\s+/);
    let marker: KnownHostEntry['marker'] = null;
    if (fields[0]?.startsWith('@')) {
      const m = fields.shift();
      if (m === '@cert-authority') marker = 'cert-authority';
      else if (m === '@revoked') marker = 'revoked';
      else continue; // unknown marker: OpenSSH ignores the line too
    }
    const [patterns, keyType, b64] = fields;
    if (!patterns || !keyType || !b64) continue; // malformed lines are skipped, as ssh does
    const key = Buffer.from(b64, 'base64');
    if (key.length === 0) continue;
    out.push({ marker, patterns, keyType, key, file, line: i + 1 });
  }
  return out;
}

export function loadKnownHosts(files: readonly string[]): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  for (const f of files) {
    if (!existsSync(f)) continue;
    out.push(...parseKnownHosts(readFileSync(f, 'utf8'), f));
  }
  return out;
}

/** The name OpenSSH looks up: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 'i');
}

function hashedMatches(pattern: string, name: string): boolean {
  const parts = pattern.split('|'); // ['', '1', salt, hash]
  if (parts.length !== 4 || parts[1] !== '1') return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64');
  const want = Buffer.from(parts[3] ?? '', 'base64');
  const got = createHmac('sha1', salt).update(name).digest();
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Does the pattern list of one entry cover this host name (already in `[host]:port` form if needed)? */
export function patternsMatch(patterns: string, name: string): boolean {
  if (patterns.startsWith('|')) return hashedMatches(patterns, name);
  let matched = false;
  for (const p of patterns.split(',')) {
    const negated = p.startsWith('!');
    const glob = negated ? p.slice(1) : p;
    if (globToRegExp(glob).test(name)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

export function fingerprintSha256(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH public key blob (uint32 length + name). */
export function keyTypeOfBlob(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const len = key.readUInt32BE(0);
  return key.subarray(4, 4 + len).toString('latin1');
}

export type HostKeyVerdict =
  | { status: 'match' }
  | { status: 'unknown' }
  | { status: 'changed'; expected: KnownHostEntry[] }
  | { status: 'revoked'; entry: KnownHostEntry };

export function checkHostKey(entries: readonly KnownHostEntry[], name: string, key: Buffer): HostKeyVerdict {
  const forHost = entries.filter((e) => patternsMatch(e.patterns, name));
  const revoked = forHost.find((e) => e.marker === 'revoked' && e.key.equals(key));
  if (revoked) return { status: 'revoked', entry: revoked };
  const plain = forHost.filter((e) => e.marker === null);
  if (plain.some((e) => e.key.equals(key))) return { status: 'match' };
  // OpenSSH treats a different key *of the same type* as a change; another type is merely unknown, but
  // we ask the server for the known types first (see preferredHostKeyAlgorithms), so any mismatch here
  // after that negotiation is a real change.
  if (plain.length > 0) return { status: 'changed', expected: plain };
  return { status: 'unknown' };
}

/** ssh2 host-key algorithm names for known_hosts key types, so the server presents a key we know. */
export function preferredHostKeyAlgorithms(entries: readonly KnownHostEntry[], name: string): string[] {
  const types = new Set(
    entries.filter((e) => e.marker === null && patternsMatch(e.patterns, name)).map((e) => e.keyType),
  );
  const algs: string[] = [];
  for (const t of types) {
    if (t === 'ssh-rsa') algs.push('rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa');
    else algs.push(t);
  }
  return algs;
}

/** Append one entry (trust on first use). Creates the file 0600 and its directory 0700. */
export function appendKnownHost(file: string, name: string, key: Buffer): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  appendFileSync(file, `${name} ${keyTypeOfBlob(key)} ${key.toString('base64')}\n`, { mode: 0o600 });
}
