import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/util/errors.ts';
import { readJsonOrNull } from '../../core/util/json-file.ts';
import { describeHolder, lockHolder, takeLock } from '../../core/util/pid-lock.ts';
import { missingToolReason, run, runQuiet } from './host-tools.ts';
import { guestAptSources, readHostAptSources, VM_SUITE } from './vm-apt-sources.ts';
import { GUEST_BOOT_SCRIPT, GUEST_INIT_PATH } from './vm-guest.ts';

/**
 * The VM node image: Debian 12 from the host's configured apt sources (debootstrap), with the stock
 * kernel and its modules (so sch_netem and dm_flakey load), openssh-server, iptables, iproute2, dmsetup,
 * ping and libfaketime, and no time synchronisation service. Nodes boot the small init in vm-guest.ts instead of
 * systemd, which is not installed. Built once into a cache directory outside any
 * checkout, keyed by everything that goes into it; concurrent builds are serialised by a lock file
 * holding the builder's pid (a dead builder's lock is taken over). The package list is recorded.
 */
export const VM_PACKAGES = [
  'linux-image-amd64',
  'initramfs-tools',
  'openssh-server',
  'iptables',
  'iproute2',
  'iputils-ping',
  'dmsetup',
  'libfaketime',
  'faketime',
  'kmod',
  'e2fsprogs',
  'procps',
  'psmisc',
  'netbase',
] as const;

/** Never in the image: they would undo a settime fault within seconds. */
export const TIME_SYNC_PACKAGES = ['systemd-timesyncd', 'chrony', 'ntp', 'ntpsec', 'openntpd'] as const;

/** All the initramfs needs to mount /dev/vda. */
const INITRAMFS_MODULES = ['virtio_pci', 'virtio_blk', 'ext4'];

const IMAGE_FORMAT = 3;
const ROOTFS_SIZE = '2G';

const ManifestSchema = z.object({
  key: z.string(),
  format: z.number(),
  suite: z.string(),
  mirror: z.string(),
  aptSources: z.array(z.string()),
  builtAt: z.string(),
  buildSeconds: z.number(),
  kernel: z.string(),
  packages: z.array(z.string()),
});
export type VmImageManifest = z.infer<typeof ManifestSchema>;

export interface VmImage {
  dir: string;
  rootfs: string;
  kernel: string;
  initrd: string;
  manifest: VmImageManifest;
  /** This call built the image (false: it was cached). */
  built: boolean;
}

/** FAULTLINE_VM_IMAGE_DIR, else /var/cache/faultline/vm for root, else ~/.cache/faultline/vm. */
export function vmImageRoot(): string {
  if (process.env.FAULTLINE_VM_IMAGE_DIR) return process.env.FAULTLINE_VM_IMAGE_DIR;
  return process.getuid?.() === 0 ? '/var/cache/faultline/vm' : join(homedir(), '.cache', 'faultline', 'vm');
}

export const imageLockPath = () => join(vmImageRoot(), 'build.lock');

/** The pid holding the image build lock, or null (no lock, or its owner is gone). */
export function imageLockOwner(): number | null {
  return lockHolder(imageLockPath())?.pid ?? null;
}

/** Take the image build lock, waiting for another build to finish: the release function. */
async function takeImageLock(print: (line: string) => void, timeoutMs: number): Promise<() => void> {
  const path = imageLockPath();
  const r = await takeLock(path, 'a VM image build', {
    timeoutMs,
    stepMs: 2000,
    onWait: (h) => print(`waiting for the VM image build of ${describeHolder(h)} (${path})`),
  });
  if (r.holder) throw new UserError(`the VM image build of pid ${r.holder.pid} holds ${path} too long`);
  return r.release;
}

function imageKey(suite: string, aptSources: readonly string[]): string {
  const input = JSON.stringify({
    format: IMAGE_FORMAT,
    suite,
    aptSources,
    packages: VM_PACKAGES,
    initramfs: INITRAMFS_MODULES,
    boot: GUEST_BOOT_SCRIPT,
  });
  return createHash('sha256').update(input).digest('hex').slice(0, 12);
}

export function readManifest(dir: string): VmImageManifest | null {
  const r = ManifestSchema.safeParse(readJsonOrNull(join(dir, 'manifest.json')));
  return r.success ? r.data : null;
}

function describeImage(dir: string, manifest: VmImageManifest, built: boolean): VmImage {
  return {
    dir,
    rootfs: join(dir, 'rootfs.raw'),
    kernel: join(dir, 'vmlinuz'),
    initrd: join(dir, 'initrd.img'),
    manifest,
    built,
  };
}

export function vmImageUnavailableReason(): string | null {
  if (process.platform !== 'linux') return 'VM clusters need Linux';
  if (process.getuid?.() !== 0) return 'VM clusters need root (tap devices, a bridge, debootstrap)';
  const tools = [
    { cmd: 'qemu-system-x86_64', pkg: 'qemu-system-x86' },
    { cmd: 'qemu-img', pkg: 'qemu-utils' },
    { cmd: 'debootstrap', pkg: 'debootstrap' },
    { cmd: 'mkfs.ext4', pkg: 'e2fsprogs' },
    { cmd: 'ip', pkg: 'iproute2' },
    { cmd: 'ssh-keygen', pkg: 'openssh-client' },
  ];
  const missing = missingToolReason(tools);
  if (missing) return missing;
  if (!existsSync('/dev/net/tun')) return '/dev/net/tun is missing: tap devices cannot be created';
  return null;
}

/** The cached image for the current apt sources and package list, built first when absent. */
export async function ensureVmImage(
  opts: { rebuild?: boolean; print?: (line: string) => void; lockTimeoutMs?: number } = {},
): Promise<VmImage> {
  const print = opts.print ?? (() => undefined);
  const guest = guestAptSources(readHostAptSources());
  const key = imageKey(VM_SUITE, guest.lines);
  const dir = join(vmImageRoot(), 'images', key);
  const cached = readManifest(dir);
  if (cached && !opts.rebuild) return describeImage(dir, cached, false);
  const unlock = await takeImageLock(print, opts.lockTimeoutMs ?? 45 * 60_000);
  try {
    const again = readManifest(dir); // built by the lock's previous owner meanwhile
    if (again && !opts.rebuild) return describeImage(dir, again, false);
    print(`building the VM node image ${key} from ${guest.mirror} (debootstrap ${VM_SUITE}; once)`);
    const manifest = await buildImage(dir, key, guest.mirror, guest.lines, print);
    return describeImage(dir, manifest, true);
  } finally {
    unlock();
  }
}

async function chroot(root: string, script: string, timeoutMs = 20 * 60_000): Promise<string> {
  return run('chroot', [root, '/bin/sh', '-c', `export DEBIAN_FRONTEND=noninteractive LC_ALL=C; ${script}`], {
    timeoutMs,
  });
}

/** Mount points at or below `root`, deepest first. */
function mountPointsUnder(root: string): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m === root || m.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
}

export const mountsUnder = (root: string): boolean => mountPointsUnder(root).length > 0;

export async function unmountUnder(root: string): Promise<void> {
  for (const m of mountPointsUnder(root)) await runQuiet('umount', ['-l', m]);
}

async function buildImage(
  dir: string,
  key: string,
  mirror: string,
  aptLines: readonly string[],
  print: (line: string) => void,
): Promise<VmImageManifest> {
  const t0 = Date.now();
  const work = `${dir}.build`;
  const root = join(work, 'root');
  const debs = join(vmImageRoot(), 'debootstrap-debs');
  // Half-built images of any key (their builders died; this one holds the lock) go first.
  const images = join(vmImageRoot(), 'images');
  for (const stale of existsSync(images) ? readdirSync(images).filter((f) => f.endsWith('.build')) : []) {
    await unmountUnder(join(images, stale));
    rmSync(join(images, stale), { recursive: true, force: true });
  }
  mkdirSync(root, { recursive: true });
  mkdirSync(debs, { recursive: true });
  try {
    await run(
      'debootstrap',
      [
        '--variant=minbase',
        `--include=${VM_PACKAGES.join(',')}`,
        `--exclude=${TIME_SYNC_PACKAGES.join(',')}`,
        `--cache-dir=${debs}`,
        VM_SUITE,
        root,
        mirror,
      ],
      { timeoutMs: 40 * 60_000 },
    );
    print(`  debootstrap done in ${Math.round((Date.now() - t0) / 1000)} s`);
    writeFileSync(join(root, 'etc/apt/sources.list'), `${aptLines.join('\n')}\n`);
    // A small initramfs (only what mounts the root disk): an emulated CPU pays for every byte of it.
    writeFileSync(join(root, 'etc/initramfs-tools/conf.d/faultline.conf'), 'MODULES=list\n');
    writeFileSync(join(root, 'etc/initramfs-tools/modules'), `${INITRAMFS_MODULES.join('\n')}\n`);
    await run('mount', ['-t', 'proc', 'proc', join(root, 'proc')]);
    // The security and update suites: the nodes get the same package versions the host's sources have.
    await chroot(
      root,
      'apt-get update -qq && apt-get -y -qq dist-upgrade && apt-get -y -qq autoremove --purge',
    );
    const present = await chroot(
      root,
      `dpkg-query -W -f='\${Package} \${db:Status-Abbrev}\\n' ${TIME_SYNC_PACKAGES.join(' ')} 2>/dev/null | awk '$2 ~ /^ii/ {print $1}'`,
    );
    if (present.trim())
      throw new Error(`time synchronisation packages ended up in the image: ${present.trim()}`);
    // The kernel mounts the root read-write (root=/dev/vda rw): nothing to list in fstab.
    writeFileSync(join(root, 'etc/fstab'), '# root: mounted by the kernel (root=/dev/vda rw)\n');
    writeFileSync(join(root, GUEST_INIT_PATH.slice(1)), GUEST_BOOT_SCRIPT, { mode: 0o755 });
    await chroot(
      root,
      'update-initramfs -u -k all && rm -f /etc/ssh/ssh_host_* && apt-get clean && rm -rf /var/lib/apt/lists/partial',
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax
    const packages = (await chroot(root, "dpkg-query -W -f='${Package} ${Version}\\n'")).trim().split('\n');
    const kernels = readdirSync(join(root, 'boot'))
      .filter((f) => f.startsWith('vmlinuz-'))
      .map((f) => f.slice('vmlinuz-'.length))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    const kernel = kernels.at(-1);
    if (!kernel) throw new Error('no kernel in the image (/boot/vmlinuz-*)');
    await run('cp', [join(root, 'boot', `vmlinuz-${kernel}`), join(work, 'vmlinuz')]);
    await run('cp', [join(root, 'boot', `initrd.img-${kernel}`), join(work, 'initrd.img')]);
    await unmountUnder(root);
    await run('mkfs.ext4', ['-q', '-F', '-L', 'flroot', '-d', root, join(work, 'rootfs.raw'), ROOTFS_SIZE], {
      timeoutMs: 10 * 60_000,
    });
    rmSync(root, { recursive: true, force: true });
    writeFileSync(join(work, 'packages.txt'), `${packages.join('\n')}\n`);
    const manifest: VmImageManifest = {
      key,
      format: IMAGE_FORMAT,
      suite: VM_SUITE,
      mirror,
      aptSources: [...aptLines],
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((Date.now() - t0) / 100) / 10,
      kernel,
      packages,
    };
    writeFileSync(join(work, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    print(
      `  image ${key} built in ${manifest.buildSeconds} s (${packages.length} packages, kernel ${kernel})`,
    );
    return manifest;
  } catch (err) {
    await unmountUnder(work);
    rmSync(work, { recursive: true, force: true });
    throw new UserError(`VM image build failed: ${(err as Error).message.split('\n').slice(-3).join(' ')}`, {
      cause: err,
    });
  }
}
