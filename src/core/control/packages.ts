import { z } from 'zod';
import { UserError } from '../util/errors.ts';
import { shellQuote } from './quote.ts';
import type { NodeSpec, Remote } from './types.ts';

/**
 * The one package layer: how a node gets the software faultline (or a database) needs. Each node has a
 * package family, detected from its /etc/os-release (ID, ID_LIKE) or set in the inventory
 * (`packageFamily`); `none` is a pre-provisioned image where nothing may be installed: every needed
 * binary is verified and what is missing is reported by name.
 *
 * Packages are named by their Debian names everywhere in faultline (plans' install hints, daemon
 * descriptions, the code); `PACKAGES` maps each to what verifies it on a node (binaries on the PATH, or a
 * file) and to its name in every other family. A name the map does not know is passed to the family's
 * tool unchanged (a daemon description may name its own family's packages) and verified by the family's
 * package database.
 */
export const PACKAGE_FAMILIES = ['apt', 'dnf', 'yum', 'apk', 'zypper', 'none'] as const;
export type PackageFamily = (typeof PACKAGE_FAMILIES)[number];
export const packageFamilySchema = z.enum(PACKAGE_FAMILIES);

type OtherFamily = 'dnf' | 'apk' | 'zypper';

export interface PackageEntry {
  /** Executables the package puts on the PATH (sbin included): present means installed. */
  binaries?: readonly string[];
  /** A shell test that succeeds when it is present (libraries, Python modules). */
  test?: string;
  /** What this is for, in messages. */
  what: string;
  /** The package(s) in the other families (yum uses dnf's names); absent: that family has none we know. */
  dnf?: readonly string[];
  apk?: readonly string[];
  zypper?: readonly string[];
}

const FAKETIME_LIB =
  'ls /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1 >/dev/null 2>&1';

/** Everything faultline itself installs or asks for, by Debian name. */
export const PACKAGES: Record<string, PackageEntry> = {
  iptables: {
    binaries: ['iptables'],
    what: 'partitions',
    dnf: ['iptables'],
    apk: ['iptables'],
    zypper: ['iptables'],
  },
  iproute2: {
    binaries: ['ip', 'tc'],
    what: 'links, tc/netem',
    dnf: ['iproute', 'iproute-tc'],
    apk: ['iproute2'],
    zypper: ['iproute2'],
  },
  libfaketime: {
    test: FAKETIME_LIB,
    what: 'clock faults on a shared kernel',
    dnf: ['libfaketime'],
    apk: ['libfaketime'],
    zypper: ['libfaketime'],
  },
  faketime: {
    binaries: ['faketime'],
    what: 'clock faults',
    dnf: ['libfaketime'],
    apk: ['libfaketime'],
    zypper: ['libfaketime'],
  },
  dmsetup: {
    binaries: ['dmsetup'],
    what: 'dm-flakey disk faults',
    dnf: ['device-mapper'],
    apk: ['device-mapper'],
    zypper: ['device-mapper'],
  },
  fuse3: { binaries: ['fusermount3'], what: 'lazyfs', dnf: ['fuse3'], apk: ['fuse3'], zypper: ['fuse3'] },
  'python3-fusepy': {
    test: `python3 -c 'import fuse' >/dev/null 2>&1`,
    what: 'lazyfs',
    dnf: ['python3-fusepy'],
    zypper: ['python3-fusepy'],
  },
  sudo: { binaries: ['sudo'], what: 'root through sudo', dnf: ['sudo'], apk: ['sudo'], zypper: ['sudo'] },
  coreutils: {
    binaries: ['timeout'],
    what: 'command deadlines',
    dnf: ['coreutils'],
    apk: ['coreutils'],
    zypper: ['coreutils'],
  },
  curl: {
    binaries: ['curl'],
    what: 'downloads, peer probes',
    dnf: ['curl'],
    apk: ['curl'],
    zypper: ['curl'],
  },
  'etcd-server': { binaries: ['etcd'], what: 'etcd', dnf: ['etcd'], apk: ['etcd'], zypper: ['etcd'] },
  'etcd-client': {
    binaries: ['etcdctl'],
    what: 'etcd membership',
    dnf: ['etcd'],
    apk: ['etcd-ctl'],
    zypper: ['etcdctl'],
  },
  'redis-server': {
    binaries: ['redis-server'],
    what: 'Redis',
    dnf: ['redis'],
    apk: ['redis'],
    zypper: ['redis'],
  },
  'redis-tools': {
    binaries: ['redis-cli'],
    what: 'Redis clock evidence',
    dnf: ['redis'],
    apk: ['redis'],
    zypper: ['redis'],
  },
};

/** Parse /etc/os-release (shell-style KEY=value, quotes removed). */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1] as string] = (m[2] as string).replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}

/**
 * The family for an os-release: ID first, then each ID_LIKE word. RHEL-likes before 8 (CentOS 7) have
 * yum only. null when nothing is recognised (set `packageFamily` in the inventory).
 */
export function familyFromOsRelease(osRelease: Record<string, string>): PackageFamily | null {
  const ids = [osRelease.ID ?? '', ...(osRelease.ID_LIKE ?? '').split(/\s+/)].map((s) => s.toLowerCase());
  const major = Number((osRelease.VERSION_ID ?? '').split('.')[0]);
  for (const id of ids) {
    if (['debian', 'ubuntu', 'raspbian', 'linuxmint', 'pop'].includes(id)) return 'apt';
    if (id === 'fedora') return 'dnf';
    if (['rhel', 'centos', 'rocky', 'almalinux', 'ol', 'amzn'].includes(id))
      return Number.isFinite(major) && major > 0 && major < 8 && id !== 'amzn' ? 'yum' : 'dnf';
    if (id === 'alpine') return 'apk';
    if (id === 'suse' || id === 'sles' || id.startsWith('opensuse')) return 'zypper';
  }
  return null;
}

/** The family's names for Debian-named packages; `unmapped` lists those it has none for. */
export function familyPackages(
  family: Exclude<PackageFamily, 'none'>,
  debianNames: readonly string[],
): { packages: string[]; unmapped: string[] } {
  if (family === 'apt') return { packages: [...new Set(debianNames)], unmapped: [] };
  const key: OtherFamily = family === 'yum' ? 'dnf' : family;
  const packages: string[] = [];
  const unmapped: string[] = [];
  for (const name of debianNames) {
    const entry = PACKAGES[name];
    if (!entry) packages.push(name);
    else if (entry[key]) packages.push(...(entry[key] ?? []));
    else unmapped.push(name);
  }
  return { packages: [...new Set(packages)], unmapped };
}

/** The install command of a family (packages already in its names; shell-quoted here). */
export function installCommand(family: Exclude<PackageFamily, 'none'>, packages: readonly string[]): string {
  const q = packages.map(shellQuote).join(' ');
  switch (family) {
    case 'apt':
      // Something else may hold the node's dpkg lock for a while (unattended-upgrades): wait, do not fail.
      return `DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 --no-install-recommends ${q}`;
    case 'dnf':
      return `dnf install -y ${q}`;
    case 'yum':
      return `yum install -y ${q}`;
    case 'apk':
      return `apk add --no-cache ${q}`;
    case 'zypper':
      return `zypper --non-interactive install --no-recommends ${q}`;
  }
}

/** What an operator types, for messages and doctor's fixes (the family's names; `none`: install it on the image). */
export function installHint(family: PackageFamily | null, debianNames: readonly string[]): string {
  const f = family ?? 'apt';
  if (f === 'none')
    return `pre-provisioned node (packageFamily: none): put ${debianNames.join(', ')} on the image`;
  const { packages, unmapped } = familyPackages(f, debianNames);
  const cmd = packages.length > 0 ? installCommand(f, packages).replace(/^DEBIAN_FRONTEND=\S+ /, '') : '';
  const rest =
    unmapped.length > 0 ? `${cmd ? '; ' : ''}no ${f} package known for ${unmapped.join(', ')}` : '';
  return `${cmd.replace(/ -o DPkg::Lock::Timeout=300 --no-install-recommends/, '')}${rest}`;
}

/** A shell command that prints each missing one of `debianNames` on its own line (verification only). */
export function missingCommand(family: PackageFamily, debianNames: readonly string[]): string {
  const lines = debianNames.map((name) => {
    const entry = PACKAGES[name];
    const q = shellQuote(name);
    if (entry?.binaries)
      return `{ ${entry.binaries.map((b) => `command -v ${shellQuote(b)} >/dev/null 2>&1`).join(' && ')}; } || echo ${q}`;
    if (entry?.test) return `{ ${entry.test}; } || echo ${q}`;
    // Not a package faultline knows: ask the family's package database.
    switch (family) {
      case 'apt':
        return `dpkg -s ${q} >/dev/null 2>&1 || echo ${q}`;
      case 'apk':
        return `apk info -e ${q} >/dev/null 2>&1 || echo ${q}`;
      case 'none':
        // Whatever database the image has.
        return `{ dpkg -s ${q} || rpm -q ${q} || apk info -e ${q}; } >/dev/null 2>&1 || echo ${q}`;
      default:
        return `rpm -q ${q} >/dev/null 2>&1 || echo ${q}`;
    }
  });
  return ['PATH="$PATH:/usr/sbin:/sbin"', ...lines].join('\n');
}

const detected = new WeakMap<NodeSpec, Promise<PackageFamily>>();

/** A node's family: the inventory's `packageFamily`, else detected once from its /etc/os-release. */
export function nodePackageFamily(remote: Remote, node: string): Promise<PackageFamily> {
  const spec = remote.node(node);
  if (spec.packageFamily) return Promise.resolve(spec.packageFamily);
  let p = detected.get(spec);
  if (!p) {
    p = remote.exec(node, 'cat /etc/os-release 2>/dev/null', { check: false }).then((r) => {
      const os = parseOsRelease(r.stdout);
      const f = familyFromOsRelease(os);
      if (!f)
        throw new UserError(
          `${node}: cannot tell the package family from /etc/os-release (ID=${os.ID ?? '?'}, ID_LIKE=${os.ID_LIKE ?? ''}); set packageFamily (${PACKAGE_FAMILIES.join(', ')}) for it in the inventory`,
        );
      return f;
    });
    p.catch(() => detected.delete(spec));
    detected.set(spec, p);
  }
  return p;
}

/**
 * Make `debianNames` present on a node: verify, install what is missing with the node's family (as
 * root), verify again. `packageFamily: none` installs nothing: what is missing is a UserError naming
 * the node and each missing package with the binary that verifies it.
 */
export async function ensurePackages(
  remote: Remote,
  node: string,
  debianNames: readonly string[],
): Promise<void> {
  if (debianNames.length === 0) return;
  const family = await nodePackageFamily(remote, node);
  const missing = await missingOn(remote, node, family, debianNames);
  if (missing.length === 0) return;
  if (family === 'none')
    throw new UserError(`${node}: ${describeMissing(missing)} (packageFamily: none installs nothing)`);
  const { packages, unmapped } = familyPackages(family, missing);
  if (unmapped.length > 0)
    throw new UserError(
      `${node}: no ${family} package known for ${describeMissing(unmapped)}; install it on the node`,
    );
  const install = () =>
    remote.exec(node, installCommand(family, packages), { sudo: true, timeoutMs: 600_000 });
  try {
    await install();
  } catch (err) {
    if (family !== 'apt') throw err;
    // Images and boxes ship without package lists (or with stale ones: 404 on the archive): fetch them
    // once and try again. A node that cannot fetch them (no mirror route) reports the install's own error.
    const updated = await remote
      .exec(node, 'apt-get update -q -o DPkg::Lock::Timeout=300', { sudo: true, timeoutMs: 600_000 })
      .then(
        () => true,
        () => false,
      );
    if (!updated) throw err;
    await install();
  }
  const still = await missingOn(remote, node, family, debianNames);
  if (still.length > 0)
    throw new UserError(
      `${node}: after ${family} installed ${packages.join(' ')}: ${describeMissing(still)}`,
    );
}

async function missingOn(
  remote: Remote,
  node: string,
  family: PackageFamily,
  debianNames: readonly string[],
): Promise<string[]> {
  const r = await remote.exec(node, missingCommand(family, debianNames), { check: false, timeoutMs: 30_000 });
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** "missing etcd-server (binary etcd), libfaketime (…)": what a `none` node lacks, exactly. */
export function describeMissing(debianNames: readonly string[]): string {
  const parts = debianNames.map((n) => {
    const e = PACKAGES[n];
    if (e?.binaries) return `${n} (binary ${e.binaries.join(', ')})`;
    if (e?.test) return `${n} (${e.what})`;
    return n;
  });
  return `missing ${parts.join(', ')}`;
}
