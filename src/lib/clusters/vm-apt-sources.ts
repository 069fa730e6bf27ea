import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/util/errors.ts';

/**
 * The host's configured apt sources, read from /etc/apt/sources.list (one-line format) and
 * /etc/apt/sources.list.d/*.list and *.sources (deb822). VM node images are built from the Debian
 * archive the host already uses, and the VMs' apt reaches the same archives through the cluster's apt
 * proxy: nothing else is ever contacted.
 */
export interface AptSource {
  uri: string;
  suites: string[];
  components: string[];
  file: string;
}

/** The Debian release VM nodes run. */
export const VM_SUITE = 'bookworm';

function oneLineSources(text: string, file: string): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line.startsWith('deb ')) continue;
    // deb [options] uri suite components…
    const rest = line
      .slice(4)
      .replace(/^\[[^\]]*\]\s*/, '')
      .trim()
      .split(/\s+/);
    const [uri, suite, ...components] = rest;
    if (uri && suite) out.push({ uri, suites: [suite], components, file });
  }
  return out;
}

function deb822Sources(text: string, file: string): AptSource[] {
  const out: AptSource[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields: Record<string, string> = {};
    let last = '';
    for (const raw of stanza.split('\n')) {
      if (raw.startsWith('#')) continue;
      if (/^\s/.test(raw) && last) fields[last] = `${fields[last]} ${raw.trim()}`;
      else {
        const m = /^([A-Za-z-]+):\s*(.*)$/.exec(raw);
        if (m) {
          last = (m[1] as string).toLowerCase();
          fields[last] = m[2] as string;
        }
      }
    }
    if (fields.enabled?.trim().toLowerCase() === 'no') continue;
    if (!(fields.types ?? '').split(/\s+/).includes('deb')) continue;
    const words = (k: string) => (fields[k] ?? '').split(/\s+/).filter(Boolean);
    for (const uri of words('uris'))
      out.push({ uri, suites: words('suites'), components: words('components'), file });
  }
  return out;
}

export function readHostAptSources(etcApt = '/etc/apt'): AptSource[] {
  const out: AptSource[] = [];
  const main = join(etcApt, 'sources.list');
  if (existsSync(main)) out.push(...oneLineSources(readFileSync(main, 'utf8'), main));
  const dir = join(etcApt, 'sources.list.d');
  const files = existsSync(dir) ? readdirSync(dir).sort() : [];
  for (const f of files) {
    const p = join(dir, f);
    if (f.endsWith('.list')) out.push(...oneLineSources(readFileSync(p, 'utf8'), p));
    else if (f.endsWith('.sources')) out.push(...deb822Sources(readFileSync(p, 'utf8'), p));
  }
  return out;
}

/** What a VM node's apt uses: the Debian archive and its security archive, as the host names them. */
export interface GuestAptSources {
  /** The archive debootstrap installs from. */
  mirror: string;
  /** sources.list lines for the guest. */
  lines: string[];
  /** Hosts the cluster's apt proxy may forward to. */
  hosts: string[];
}

const isSecurity = (s: AptSource) => /security/.test(s.uri) || s.suites.some((x) => /-security$/.test(x));

/**
 * The guest's sources, derived from the host's: the first plain-HTTP Debian archive (one carrying a
 * Debian suite) becomes the mirror; a security archive, when the host has one, is kept too. Only http:
 * the apt proxy forwards plain requests and never opens tunnels.
 */
export function guestAptSources(sources: readonly AptSource[]): GuestAptSources {
  const debianSuite = /^(bookworm|trixie|bullseye|sid|forky|stable|testing|unstable|oldstable)(-updates)?$/;
  const archive = sources.find(
    (s) => s.uri.startsWith('http://') && !isSecurity(s) && s.suites.some((x) => debianSuite.test(x)),
  );
  if (!archive) {
    const seen = sources.map((s) => `${s.uri} (${s.file})`).join(', ') || 'none';
    throw new UserError(
      `VM nodes are built from the host's Debian apt sources, but none is a plain-http Debian archive (found: ${seen})`,
    );
  }
  const security = sources.find((s) => s.uri.startsWith('http://') && isSecurity(s));
  const components = archive.components.length > 0 ? archive.components.join(' ') : 'main';
  const lines = [
    `deb ${archive.uri} ${VM_SUITE} ${components}`,
    `deb ${archive.uri} ${VM_SUITE}-updates ${components}`,
  ];
  if (security) lines.push(`deb ${security.uri} ${VM_SUITE}-security ${components}`);
  const hosts = [...new Set([archive, ...(security ? [security] : [])].map((s) => new URL(s.uri).host))];
  return { mirror: archive.uri, lines, hosts };
}
