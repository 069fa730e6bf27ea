import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../../core/util/errors.ts';
import { missingToolReason, run, runQuiet } from './host-tools.ts';
import {
  ensureVmImage,
  mountsUnder,
  TIME_SYNC_PACKAGES,
  unmountUnder,
  vmImageRoot,
  vmImageUnavailableReason,
} from './vm-image.ts';

/**
 * A libvirt Vagrant box made from the VM cluster's debootstrap image (vm-image.ts), for hosts that cannot
 * download one. The image's root filesystem becomes partition 1 of a disk with an extlinux boot loader;
 * systemd, udev, ifupdown and a DHCP client are added because Vagrant's Debian guest support drives
 * hostname and network configuration through them, and sudo plus the `vagrant` user with Vagrant's
 * well-known insecure key, which `vagrant up` replaces with a fresh key pair on first boot.
 */
export const BOX_NAME = 'faultline/bookworm';

/** What the box adds to the VM image (which has no init system, no sudo and no DHCP client). */
export const BOX_EXTRA_PACKAGES = [
  'systemd-sysv',
  'udev',
  'dbus',
  'sudo',
  'ifupdown',
  'isc-dhcp-client',
  'rsync',
  'curl',
  'ca-certificates',
  'fuse3',
] as const;

const DISK_GIB = 8;
const PART_OFFSET = 1024 * 1024;
const MBR = '/usr/lib/syslinux/mbr/mbr.bin';

const TOOLS = [
  { cmd: 'qemu-img', pkg: 'qemu-utils' },
  { cmd: 'losetup', pkg: 'mount' },
  { cmd: 'sfdisk', pkg: 'fdisk' },
  { cmd: 'extlinux', pkg: 'extlinux' },
  { cmd: 'resize2fs', pkg: 'e2fsprogs' },
  { cmd: 'tar', pkg: 'tar' },
];

export function vagrantBoxUnavailableReason(): string | null {
  const vm = vmImageUnavailableReason();
  if (vm) return vm;
  const missing = missingToolReason(TOOLS);
  if (missing) return missing;
  if (!existsSync(MBR)) return `${MBR} is missing: apt-get install -y syslinux-common`;
  return null;
}

/** Vagrant's public insecure key, from the installed Vagrant (the same key every public box ships). */
export function vagrantInsecureKey(): string {
  const candidates = [
    process.env.FAULTLINE_VAGRANT_INSECURE_PUB,
    '/usr/share/rubygems-integration/all/gems/vagrant-2.3.4/keys/vagrant.pub',
    '/opt/vagrant/embedded/gems/gems/vagrant/keys/vagrant.pub',
  ].filter((p): p is string => !!p);
  for (const p of candidates) if (existsSync(p)) return readFileSync(p, 'utf8').trim();
  throw new UserError(
    `Vagrant's insecure public key not found (looked in ${candidates.join(', ')}); set FAULTLINE_VAGRANT_INSECURE_PUB to keys/vagrant.pub of your Vagrant`,
  );
}

export const defaultBoxPath = (imageKey: string) =>
  join(vmImageRoot(), 'vagrant', `faultline-bookworm-${imageKey}.box`);

/** The box's own Vagrantfile: merged under the user's, so it only states what this disk needs. */
const BOX_VAGRANTFILE = `# Built by \`faultline cluster vagrant-box\`: Debian 12 on a virtio disk, boots with extlinux.
Vagrant.configure("2") do |config|
  config.vm.provider :libvirt do |lv|
    lv.disk_bus = "virtio"
    lv.nic_model_type = "virtio"
  end
end
`;

function configureScript(uuid: string, kernel: string, insecureKey: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    'set -eu',
    'apt-get update -qq',
    `apt-get install -y -qq --no-install-recommends ${BOX_EXTRA_PACKAGES.join(' ')}`,
    `if dpkg-query -W -f='\${Package} \${db:Status-Abbrev}\\n' ${TIME_SYNC_PACKAGES.join(' ')} 2>/dev/null | grep -q ' ii'; then echo 'time sync package installed' >&2; exit 1; fi`,
    'id vagrant >/dev/null 2>&1 || useradd -m -s /bin/bash vagrant',
    "echo 'vagrant:vagrant' | chpasswd",
    "echo 'vagrant ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/vagrant && chmod 0440 /etc/sudoers.d/vagrant",
    'install -d -m 700 -o vagrant -g vagrant /home/vagrant/.ssh',
    `printf '%s\\n' ${q(insecureKey)} > /home/vagrant/.ssh/authorized_keys`,
    'chown vagrant:vagrant /home/vagrant/.ssh/authorized_keys && chmod 600 /home/vagrant/.ssh/authorized_keys',
    "printf 'UseDNS no\\nPubkeyAuthentication yes\\n' > /etc/ssh/sshd_config.d/vagrant.conf",
    // Host keys are made on the first boot of each VM, never shared between boxes' users.
    'rm -f /etc/ssh/ssh_host_*',
    "printf '[Unit]\\nDescription=SSH host keys\\nBefore=ssh.service\\n[Service]\\nType=oneshot\\nExecStart=/usr/bin/ssh-keygen -A\\n[Install]\\nWantedBy=multi-user.target\\n' > /etc/systemd/system/ssh-hostkeys.service",
    'systemctl enable ssh-hostkeys.service ssh.service',
    "printf 'auto lo\\niface lo inet loopback\\n\\nallow-hotplug eth0\\niface eth0 inet dhcp\\n' > /etc/network/interfaces",
    "echo bookworm > /etc/hostname && printf '127.0.0.1 localhost\\n127.0.1.1 bookworm\\n' > /etc/hosts",
    `printf 'UUID=${uuid} / ext4 errors=remount-ro 0 1\\n' > /etc/fstab`,
    ': > /etc/machine-id && rm -f /var/lib/dbus/machine-id',
    'update-initramfs -u -k all',
    'mkdir -p /boot/extlinux',
    `printf 'DEFAULT debian\\nPROMPT 0\\nTIMEOUT 1\\nLABEL debian\\n  LINUX /boot/vmlinuz-${kernel}\\n  INITRD /boot/initrd.img-${kernel}\\n  APPEND root=UUID=${uuid} ro net.ifnames=0 biosdevname=0 console=tty0 console=ttyS0\\n' > /boot/extlinux/extlinux.conf`,
    'apt-get clean && rm -rf /var/lib/apt/lists/* /etc/resolv.conf',
  ].join('\n');
}

export interface VagrantBoxReport {
  path: string;
  bytes: number;
  seconds: number;
  imageKey: string;
  imageBuilt: boolean;
  virtualSizeGiB: number;
}

/** Build the box file (tar of box.img, metadata.json, Vagrantfile); returns where it is and its size. */
export async function buildVagrantBox(
  opts: { out?: string; print?: (line: string) => void } = {},
): Promise<VagrantBoxReport> {
  const print = opts.print ?? (() => undefined);
  const why = vagrantBoxUnavailableReason();
  if (why) throw new UserError(`cannot build a Vagrant box here: ${why}`);
  const insecureKey = vagrantInsecureKey();
  const t0 = Date.now();
  const image = await ensureVmImage({ print });
  const out = resolve(opts.out ?? defaultBoxPath(image.manifest.key));
  const work = join(vmImageRoot(), `vagrant-box.build-${process.pid}`);
  const mnt = join(work, 'mnt');
  const disk = join(work, 'disk.raw');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(mnt, { recursive: true });
  let loop: string | null = null;
  try {
    print(`  box: root filesystem from VM image ${image.manifest.key} (${image.rootfs})`);
    writeFileSync(disk, '');
    await run('truncate', ['-s', `${DISK_GIB}G`, disk]);
    await run('sfdisk', ['-q', disk], { input: 'label: dos\nstart=2048, type=83, bootable\n' });
    await run('dd', [`if=${image.rootfs}`, `of=${disk}`, 'bs=1M', 'seek=1', 'conv=notrunc,sparse'], {
      timeoutMs: 10 * 60_000,
    });
    loop = (
      await run('losetup', [
        '--find',
        '--show',
        '--offset',
        String(PART_OFFSET),
        '--sizelimit',
        String(DISK_GIB * 1024 ** 3 - PART_OFFSET),
        disk,
      ])
    ).trim();
    await run('e2fsck', ['-fy', loop], { timeoutMs: 5 * 60_000 });
    // extlinux cannot read ext4 with the 64bit feature; then the filesystem fills the partition.
    await run('resize2fs', ['-s', loop], { timeoutMs: 5 * 60_000 });
    await run('resize2fs', [loop], { timeoutMs: 5 * 60_000 });
    await run('tune2fs', ['-U', 'random', loop]);
    const uuid = (await run('blkid', ['-s', 'UUID', '-o', 'value', loop])).trim();
    await run('mount', [loop, mnt]);
    await run('mount', ['-t', 'proc', 'proc', join(mnt, 'proc')]);
    await run('mount', ['--bind', '/dev', join(mnt, 'dev')]);
    await run('mount', ['--bind', '/sys', join(mnt, 'sys')]);
    copyFileSync('/etc/resolv.conf', join(mnt, 'etc/resolv.conf'));
    print(`  box: adding ${BOX_EXTRA_PACKAGES.join(', ')}; user vagrant with Vagrant's insecure key`);
    await run(
      'chroot',
      [
        mnt,
        '/bin/sh',
        '-c',
        `export DEBIAN_FRONTEND=noninteractive LC_ALL=C\n${configureScript(uuid, image.manifest.kernel, insecureKey)}`,
      ],
      { timeoutMs: 30 * 60_000 },
    );
    await run('extlinux', ['--install', join(mnt, 'boot/extlinux')]);
    await unmountUnder(mnt);
    await run('e2fsck', ['-fy', loop], { timeoutMs: 5 * 60_000 }).catch(() => undefined);
    await run('losetup', ['-d', loop]);
    loop = null;
    await run('dd', [`if=${MBR}`, `of=${disk}`, 'bs=440', 'count=1', 'conv=notrunc']);
    print('  box: converting to compressed qcow2');
    await run('qemu-img', ['convert', '-c', '-O', 'qcow2', disk, join(work, 'box.img')], {
      timeoutMs: 30 * 60_000,
    });
    rmSync(disk);
    writeFileSync(
      join(work, 'metadata.json'),
      `${JSON.stringify({ provider: 'libvirt', format: 'qcow2', virtual_size: DISK_GIB })}\n`,
    );
    writeFileSync(join(work, 'Vagrantfile'), BOX_VAGRANTFILE);
    mkdirSync(dirname(out), { recursive: true });
    const tmp = `${out}.tmp-${process.pid}`;
    await run('tar', ['-cf', tmp, '-C', work, 'metadata.json', 'Vagrantfile', 'box.img'], {
      timeoutMs: 10 * 60_000,
    });
    await run('mv', ['-f', tmp, out]);
    return {
      path: out,
      bytes: statSync(out).size,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
      imageKey: image.manifest.key,
      imageBuilt: image.built,
      virtualSizeGiB: DISK_GIB,
    };
  } catch (err) {
    throw new UserError(
      `Vagrant box build failed: ${(err as Error).message.split('\n').slice(-3).join(' ')}`,
      {
        cause: err,
      },
    );
  } finally {
    await unmountUnder(mnt);
    if (loop) await runQuiet('losetup', ['-d', loop]);
    // Never delete through a mount that is still there (the bind of /dev above all).
    if (!mountsUnder(work)) rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `vagrant box add --force` of a built box under BOX_NAME, then the box's earlier base volumes removed
 * from libvirt's default pool (returned by name). vagrant-libvirt uploads a re-added box under a new
 * volume name on the next `up`, so the earlier ones are never used again, yet each keeps the box's size
 * (~435 MiB): a `test:vagrant` per day would fill the pool. A volume some cluster's disk still rests on
 * (its backing file) stays.
 */
export async function addVagrantBox(path: string, name = BOX_NAME): Promise<string[]> {
  await run('vagrant', ['box', 'add', '--force', '--name', name, path], { timeoutMs: 20 * 60_000 });
  return removeUnusedBaseVolumes(name);
}

export const virsh = (args: string[]) =>
  run('virsh', ['-c', 'qemu:///system', ...args], { timeoutMs: 120_000 });
export const nonEmptyLines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** vagrant-libvirt's name for a box's base volume: `<box, / as -VAGRANTSLASH->_vagrant_box_image_<version>_<id>_box.img`. */
const baseVolumePrefix = (box: string) => `${box.replaceAll('/', '-VAGRANTSLASH-')}_vagrant_box_image_`;

export async function removeUnusedBaseVolumes(box: string): Promise<string[]> {
  if (!(await runQuiet('virsh', ['-c', 'qemu:///system', 'pool-info', 'default']))) return [];
  const volumes = nonEmptyLines(await virsh(['vol-list', 'default', '--details']))
    .slice(2)
    .map((l) => l.split(/\s+/)[0] ?? '');
  const backing = new Set<string>();
  for (const v of volumes) {
    const xml = await virsh(['vol-dumpxml', '--pool', 'default', v]).catch(() => '');
    const path = /<backingStore>\s*<path>([^<]+)<\/path>/.exec(xml)?.[1];
    if (path) backing.add(path.trim());
  }
  const removed: string[] = [];
  for (const v of volumes.filter((x) => x.startsWith(baseVolumePrefix(box)))) {
    const path = (await virsh(['vol-path', '--pool', 'default', v]).catch(() => '')).trim();
    if (!path || backing.has(path)) continue;
    if (await runQuiet('virsh', ['-c', 'qemu:///system', 'vol-delete', v, '--pool', 'default']))
      removed.push(v);
  }
  return removed;
}
